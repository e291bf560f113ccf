"""Known errors about which device a tensor, a generator or a device name refers to: GPU
numbers the machine does not have, device strings this torch does not know, and random
generators on another device than the tensors they fill.

(A tensor on one device meeting a tensor on another is ``two-devices`` in ``code_errors``.)
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _device_ordinal(match: re.Match[str], text: str) -> Explanation:
    asked = re.findall(r"cuda[:(] ?(\d+)|device_ids?=\[?(\d+)|set_device\((\d+)", text)
    numbers = sorted({int(n) for group in asked for n in group if n})
    named = f" (the text names GPU {', '.join(map(str, numbers))})" if numbers else ""
    return answer(
        title="The code asks for a GPU number this machine does not have",
        meaning=(
            "GPUs are numbered 0 .. torch.cuda.device_count() - 1 among the visible ones;"
            f" a device index outside that range was used{named}."
        ),
        cause=(
            "A device number is hard-coded for a machine with more GPUs (cuda:1, .cuda(1),"
            " --gpu_ids 0,1), or CUDA_VISIBLE_DEVICES hides GPUs so the numbers shift (with"
            " CUDA_VISIBLE_DEVICES=3 the one visible GPU is cuda:0), or a launcher starts more"
            " processes than GPUs (local_rank >= device_count)."
        ),
        fix=(
            "Use cuda:0 (or pass the device as a setting) on a one-GPU machine; check"
            " torch.cuda.device_count() and CUDA_VISIBLE_DEVICES; with torchrun/accelerate set"
            " --nproc_per_node to the number of GPUs and call torch.cuda.set_device(local_rank)."
        ),
    )


def _device_string(match: re.Match[str], text: str) -> Explanation:
    name, known_types = match.group(2), match.group(1)
    if name.startswith("mps") and "mps" not in known_types.split(", "):
        cause = (
            "This torch predates Apple's MPS backend (added in torch 1.12): the device types it"
            " lists do not include mps."
        )
        fix = (
            "Install torch 1.12 or newer (pip install -U torch; on an Apple-silicon Mac, an"
            " arm64 Python), or use 'cpu' on this install; code that should run on older"
            " torch must not build torch.device('mps') unless torch.backends.mps exists."
        )
    elif name.startswith("gpu"):
        cause = "'gpu' is not a torch device name: NVIDIA (and ROCm) GPUs are 'cuda'."
        fix = "Use 'cuda' (or 'cuda:0'): device = 'cuda' if torch.cuda.is_available() else 'cpu'."
    else:
        cause = f"'{name}' is not one of the device types this torch knows (listed in the message)."
        fix = (
            "Pass one of the listed types, optionally with an index ('cuda:1'); check where the"
            " string comes from (a config value, a command-line flag)."
        )
    return answer(
        title=f"torch does not know the device '{name}'",
        meaning=(
            "torch.device (and .to()) parse the device string by its type, then an optional"
            f" ':index'; '{name}' is not a type this torch was built with."
        ),
        cause=cause,
        fix=fix,
    )


def _generator_device(match: re.Match[str], text: str) -> Explanation:
    wanted, got = match.group(1) or match.group(3), match.group(2) or match.group(4)
    return answer(
        title=f"A random generator on {got} was given to an operation on {wanted}",
        meaning=(
            "Random functions (randperm, randn, random_split, the DataLoader's shuffling) need"
            f" a torch.Generator on the device where the numbers are made: {wanted} here, and"
            f" the generator is on {got}."
        ),
        cause=(
            "A global default device makes the sampler's torch.randperm run on the GPU"
            " (torch.set_default_tensor_type('torch.cuda.FloatTensor') or"
            " torch.set_default_device('cuda')) while the DataLoader, random_split or the"
            " library passes a CPU torch.Generator; or (sampling latents/noise) the generator was"
            " made for another device than the tensor it fills."
        ),
        fix=(
            "Do not set a CUDA default tensor type/device; move the model and each batch with"
            " .to(device) instead. Otherwise give the matching generator:"
            " DataLoader(..., generator=torch.Generator(device='cuda')) or"
            " random_split(..., generator=torch.Generator(device='cuda')); for noise, create it"
            " with generator=torch.Generator(device=x.device) or on the generator's device and"
            " then .to(x.device)."
        ),
    )


KNOWN: list[KnownError] = [
    known("invalid-device-ordinal", r"invalid device ordinal", _device_ordinal),
    known(
        "device-string",
        r"Expected one of ([\w, ]+?) device type at start of device string: (\S+)",
        _device_string,
    ),
    known(
        "generator-device",
        r"Expected a '([\w:]+)' device type for generator but found '([\w:]+)'"
        r"|Expected a '([\w:]+)' generator device but found '([\w:]+)'",
        _generator_device,
    ),
]
