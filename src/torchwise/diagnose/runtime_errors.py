"""Known errors raised while a training step runs: autograd, GPU memory, kernel asserts."""

from __future__ import annotations

import re

from torchwise.diagnose.explanation import Explanation, KnownError, answer, known


def _no_grad(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="backward() on a tensor that is not connected to any parameter",
        meaning="The loss has no grad_fn, so autograd has nothing to differentiate.",
        cause=(
            "The loss was computed inside torch.no_grad() or torch.inference_mode() (a shared"
            " evaluate helper, a decorator); or it was cut from the graph by .detach(), .item(),"
            " .numpy() or torch.tensor(value); or every parameter has requires_grad=False."
        ),
        fix=(
            "Compute the training loss outside no_grad blocks and keep it a tensor (do not"
            " rebuild it with torch.tensor); check loss.requires_grad and"
            " any(p.requires_grad for p in model.parameters()); unfreeze with"
            " p.requires_grad_(True)."
        ),
    )


def _out_of_memory(match: re.Match[str], text: str) -> Explanation:
    def amount(*patterns: str) -> str | None:
        for pattern in patterns:
            found = re.search(pattern, text)
            if found:
                return found.group(1)
        return None

    size = r"([\d.]+ [KMGT]?i?B)"
    tried = match.group(1)
    gpu = amount(r"GPU (\d+)") or "0"
    total = amount(rf"total capacity of {size}", rf"{size} total capacity")
    free = amount(rf"of which {size} is free", rf"{size} free")
    unallocated = amount(rf"{size} is reserved by PyTorch but unallocated")
    facts = f"needed {tried} more" if tried else "an allocation failed"
    facts += f", {free} free of {total}" if free and total else ""
    checklist = [
        "halve the batch size (torchwise tune batch-size CONFIG finds the largest that fits)",
        "keep the effective batch with gradient accumulation over several smaller batches",
        "train in mixed precision (torch.autocast with bf16/fp16) to halve activation memory",
        "call optimizer.zero_grad(set_to_none=True)",
        "free references that keep graphs alive: log loss.item(), not loss; validate under"
        " torch.no_grad(); del large tensors you no longer need",
        "torch.cuda.empty_cache() does not free live tensors; it only returns cached blocks"
        " to the driver",
    ]
    if unallocated:
        checklist.append(
            f"{unallocated} is reserved but unallocated (fragmentation): set"
            " PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
        )
    return answer(
        title=f"GPU {gpu} ran out of memory: {facts}",
        meaning="An allocation did not fit in what is left of the GPU's memory.",
        cause=(
            "The batch (and the activations kept for backward) is too large for this GPU, or"
            " memory is held by tensors kept from earlier steps, or another process uses the"
            " GPU (see nvidia-smi)."
        ),
        fix="\n".join(f"{number}. {step}" for number, step in enumerate(checklist, 1)),
    )


def _inplace(match: re.Match[str], text: str) -> Explanation:
    tensor_type, shape, _output, op, version, expected = match.groups()
    made_by = f", the output of {op.removesuffix('Backward0')}" if op else ""
    return answer(
        title=(
            f"A tensor autograd still needs was changed in place ({tensor_type} [{shape}]{made_by})"
        ),
        meaning=(
            f"Backward needs the [{shape}] tensor{made_by} as it was in the forward pass"
            f" (version {expected}), but an in-place operation changed it (now version {version})."
        ),
        cause=(
            "An in-place operation after the tensor was used: x += y, x.relu_(), x[:, 0] = ...,"
            " nn.ReLU(inplace=True), or optimizer.step() between a forward pass and a second"
            " backward through it (a GAN updating one network before the other's backward)."
        ),
        fix=(
            "Write the operation out of place (x = x + y, torch.relu(x), nn.ReLU(inplace=False),"
            " x = x.clone() before slicing assignment), or call backward before optimizer.step()."
            " To find the line, run once with torch.autograd.set_detect_anomaly(True)."
        ),
    )


def _device_assert(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="A CUDA kernel hit an assertion (almost always an index out of range)",
        meaning=("A check inside a GPU kernel failed; the CUDA context is unusable until restart."),
        cause=(
            "A class label >= the number of classes (or negative) given to CrossEntropyLoss, or a"
            " token id >= num_embeddings given to nn.Embedding."
        ),
        fix=(
            "Check the labels: assert 0 <= y.min() and y.max() < num_classes. Run the same batch on"
            " the CPU (or with CUDA_LAUNCH_BLOCKING=1) to get the real error at the right line."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "no-grad",
        r"element 0 of tensors does not require grad and does not have a grad_fn",
        _no_grad,
    ),
    known(
        "cuda-out-of-memory",
        r"(?:CUDA|HIP) (?:error: )?out of memory\.?(?: Tried to allocate ([\d.]+ [KMGT]?i?B))?",
        _out_of_memory,
    ),
    known(
        "inplace-modified",
        r"one of the variables needed for gradient computation has been modified by an inplace"
        r" operation: \[(\S+) \[([\d, ]*)\]\](?:, which is output (\d+) of (\w+),)? is at version"
        r" (\d+); expected version (\d+) instead",
        _inplace,
    ),
    known("device-side-assert", r"device-side assert triggered", _device_assert),
]
