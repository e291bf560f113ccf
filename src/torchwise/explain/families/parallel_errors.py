"""Known errors of one process driving several GPUs (``nn.DataParallel``) or of tensors held on
two different GPUs: a method or attribute read from the wrapper instead of the model it wraps,
a model wrapped while still on the CPU, and the older wordings of a GPU-to-GPU clash.

(A tensor on the CPU meeting one on a GPU is ``two-devices`` in ``code_errors``; a model that is
not wrapped but read as ``model.module`` is ``not-wrapped-module`` in ``call_errors``.)
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _wrapper_attribute(match: re.Match[str], text: str) -> Explanation:
    wrapper, name = match.group(1), match.group(2)
    return answer(
        title=f"{name} was read from the {wrapper} wrapper, not from the model it wraps",
        meaning=(
            f"nn.{wrapper}(model) is a new module that holds the model as .module; it forwards"
            f" calls to forward() but not the model's own methods and attributes, so {wrapper}"
            f" has no '{name}'."
        ),
        cause=(
            f"The code wraps the model in {wrapper} (for several GPUs) and then uses"
            f" model.{name}, which the model defines but the wrapper does not; the same code"
            " works on one GPU, where the model is not wrapped."
        ),
        fix=(
            f"Reach through the wrapper: model.module.{name}, or keep the unwrapped model in its"
            f" own variable (net = Model(); model = nn.DataParallel(net); then net.{name}); code"
            f" that runs both wrapped and unwrapped can use getattr(model, 'module', model).{name}."
        ),
    )


def _wrapped_on_cpu(match: re.Match[str], text: str) -> Explanation:
    wanted, found = match.group(1), match.group(2)
    return answer(
        title=f"nn.DataParallel wraps a model that is still on {found}",
        meaning=(
            "DataParallel copies the model from device_ids[0] to the other GPUs at every"
            f" forward, so every parameter and buffer must already be on {wanted}; one is on"
            f" {found}."
        ),
        cause=(
            f"The model (or a part of it: a layer added after .cuda(), a buffer created on the"
            f" CPU, weights loaded after the move) is on {found}: .to(device) was not called"
            " before the forward, or was called on another object than the one wrapped."
        ),
        fix=(
            f"Move the model before wrapping and keep it there: model = model.to('{wanted}');"
            " model = nn.DataParallel(model); load weights before the move (or move again"
            " after loading) and build every layer in __init__."
        ),
    )


# The paste loads the model split across GPUs (transformers' device_map, accelerate's dispatch hooks).
SPLIT_MODEL = re.compile(r"device_map|accelerate[\\/]hooks\.py|_hf_hook|dispatch_model")
# The paste runs one process per GPU (DDP through torchrun or mp.spawn), where no replica exists.
PROCESS_PER_GPU = re.compile(
    r"DistributedDataParallel|mp\.spawn|multiprocessing[\\/.]spawn|torchrun|local_rank|LOCAL_RANK"
)


def _two_gpus(match: re.Match[str], text: str) -> Explanation:
    numbers = [n for n in match.groups() if n]
    which = f" (GPU {numbers[0]} and GPU {numbers[1]})" if len(numbers) == 2 else ""
    wrapped = re.search(r"(?<!Distributed)DataParallel|data_parallel|parallel_apply", text)
    if not wrapped and SPLIT_MODEL.search(text):  # round 8: accelerate placed the model's layers on several GPUs
        return answer(
            title=f"One operation got tensors on two different GPUs{which}, in a model split across GPUs",
            meaning="device_map (accelerate's dispatch) put the model's layers on several GPUs and moves the"
            " tensors between them at each layer's hooks; this operation still got inputs from two GPUs.",
            cause=(
                "The model's own code makes or keeps a tensor on a fixed GPU that the hooks do not move (rotary"
                " or position tensors, a cache, a buffer built in forward, an input moved with .to('cuda:0')),"
                " or a layer's parts were split where they must stay together."
            ),
            fix=(
                "Load the model on one GPU when it fits (device_map={'': 0} or 'cuda', or CUDA_VISIBLE_DEVICES=0);"
                " otherwise keep its blocks whole (no_split_module_classes=[the decoder layer's class]), put the"
                " inputs on model.device, and make tensors in forward on x.device; or use the model code the"
                " project pins, which may handle the split."
            ),
        )
    if not wrapped and PROCESS_PER_GPU.search(text):  # round 8: one process per GPU, so no replicas
        return answer(
            title=f"One operation got tensors on two different GPUs{which}, in a process-per-GPU run",
            meaning="Each process of the run drives one GPU; this one holds a tensor on another process's GPU.",
            cause=(
                "Something in this process went to a GPU other than its own: the model or a tensor moved with"
                " .cuda() or 'cuda:0' before torch.cuda.set_device(local_rank), a checkpoint loaded without"
                " map_location (its tensors return to the GPU they were saved from), or a device computed from"
                " the global rank where the local one was meant."
            ),
            fix=(
                "In each process call torch.cuda.set_device(local_rank) first, put the model and batches on"
                " f'cuda:{local_rank}' (tensors made later on x.device), load checkpoints with"
                " torch.load(path, map_location=f'cuda:{local_rank}') (or 'cpu'), and wrap with"
                " DDP(model, device_ids=[local_rank])."
            ),
        )
    return answer(
        title=f"One operation got tensors on two different GPUs{which}",
        meaning=(
            "A kernel runs on one GPU and needs all its inputs there; torch never copies a"
            " tensor from one GPU to another on its own."
        ),
        cause=(
            ("Under nn.DataParallel" if wrapped else "With several GPUs (nn.DataParallel, or a"
             " model split across GPUs)")
            + " a tensor is pinned to one GPU: created inside forward with .cuda(), device='cuda'"
            " or 'cuda:0', or held by the module as a plain attribute (a tensor that is neither an"
            " nn.Parameter nor a registered buffer, or a module kept in a Python list), so the"
            " replicas on the other GPUs still use GPU 0's copy."
        ),
        fix=(
            "Inside forward create tensors on the input's device (torch.zeros(n, device=x.device),"
            " t.to(x.device)); keep constant tensors as buffers (self.register_buffer('rad', t))"
            " and submodules in nn.ModuleList so DataParallel replicates them; or train with"
            " DistributedDataParallel, one process per GPU, which avoids replicas."
        ),
    )


def _chunk_sizes(match: re.Match[str], text: str) -> Explanation:
    total, size = int(match.group(1)), int(match.group(2))
    return answer(
        title=f"DataParallel's chunk sizes add up to {total}, and the batch has {size}",
        meaning=(
            "Scattering a batch over GPUs with fixed chunk sizes (one per GPU) needs them to sum"
            f" to the batch size; they sum to {total} and this batch holds {size}."
        ),
        cause=(
            "The chunk sizes are set for a full batch (a master_batch / chunk_sizes setting of"
            f" the project) and a smaller batch came: the last batch of the data ({size} left"
            " over), or a batch size changed at evaluation."
        ),
        fix=(
            "Drop the last incomplete batch (DataLoader(..., drop_last=True)), compute the chunk"
            " sizes from each batch's own size, or evaluate on one GPU (the project's single-GPU"
            " command)."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "wrapper-attribute",
        r"'(DataParallel|DistributedDataParallel)' object has no attribute '(?!module')(\w+)'",
        _wrapper_attribute,
    ),
    known(
        "data-parallel-on-cpu",
        r"module must have its parameters and buffers on device ([\w:]+) \(device_ids\[0\]\)"
        r" but found one of them on device: ([\w:]+)",
        _wrapped_on_cpu,
        re.IGNORECASE,
    ),
    known(
        "two-gpus",
        r"to have the same device as tensor for argument #\d+ '\w+'; but device (\d+) does not"
        r" equal (\d+)"
        r"|arguments are located on different GPUs"
        r"|expected device cuda:(\d+) but got device cuda:(\d+)"
        r"|found at least two devices, cuda:(\d+) and cuda:(\d+)",
        _two_gpus,
    ),
    known(
        "data-parallel-chunk-sizes",
        r"given chunk sizes don't sum up to the tensor's size \(sum\(chunk_sizes\) == (\d+), but"
        r" expected (\d+)\)",
        _chunk_sizes,
    ),
]
