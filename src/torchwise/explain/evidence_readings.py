"""The readings the evidence supports where a family's usual reading does not fit the paste (issue 21,
round 9; ``evidence_gate`` holds the checks): counts that are not one batch reshaped, a Linear's
input from a part of another width, a checkpoint whose weights are laid out in another order or
whose every block holds a tensor the code no longer registers, and Windows DLLs named by what
they are. Pure text work.
"""

from __future__ import annotations

import re

from torchwise.explain.encoder_widths import encoder_reading, encoder_widths
from torchwise.explain.evidence_gate import BATCH_FACTOR, layer_owner, raising_frame
from torchwise.explain.explanation import Explanation, answer
from torchwise.explain.paste import Frame


def item_counts(rows: int, targets: int) -> Explanation:
    """Counts that share no batch-sized factor (511 against 23): not one batch reshaped, so the
    model and the data gave different numbers of items for the batch."""
    return answer(
        title=f"The output has {rows} items but the target {targets}, and no reshape of the batch relates them",
        meaning=(
            "The loss pairs each output row with one target; the counts must be equal. A view that merges or"
            f" splits the batch leaves both counts sharing the batch's size; {rows} and {targets} share no"
            f" factor of {BATCH_FACTOR} or more."
        ),
        cause=(
            "The model and the data produced different numbers of items for this batch: labels that are not"
            " aligned with the inputs (token labels of another length than the input ids, from a dataset"
            " format or template other than the one the code expects), or a varying number of predictions"
            " (detections, pairs, keypoints) scored against the targets without matching them first."
        ),
        fix=(
            "Print output.shape and target.shape just before the loss and follow the one that differs back to"
            " where it is built: give every input position its label (pad or truncate inputs and labels alike"
            " in the dataset or collator, in the format the project documents), or match predictions to"
            " targets before the loss."
        ),
    )




def other_width(rows: int, features: int, expected: int, outputs: int, library: Frame | None = None) -> Explanation:
    """Round 9: a width that no flatten turns into the layer's (7 against 256), or a layer of an installed
    library's model (``library``, the frame that called it): the input comes from a part built for
    another width, not from a sample the user left unflattened."""
    if library is not None:
        why = (
            f" The layer is {library.package or 'a library'}'s ({library.place}: {library.source}), sized from its"
            " model's config, so no flatten of yours is involved."
        )
        source = (
            f"what you hand {library.package or 'the library'} (features, an embedding, a conditioning or encoder"
            f" output from a model of another family or size) is {features} wide, or its config or checkpoint is"
            f" of another variant than the inputs"
        )
        change = (
            f"Give the library inputs of the width its model was built for ({expected}): models of one family"
            " and size throughout (checkpoint, encoders, adapters), or the config that matches the weights."
        )
    elif encoder_widths(features, expected):  # round 10: two encoders' widths, not a flatten
        why = f" {features} and {expected} are not whole multiples of each other: no flatten of a sample relates them."
        source, change = encoder_reading(features, expected)
    else:
        why = (
            f" Flattening a sample multiplies its width, and {features} and {expected} are neither whole multiples"
            " of each other nor a flattened map of one channel count, so this is not an unflattened input."
        )
        source = (
            f"the layer or encoder before it outputs {features} features (its output size, hidden size or number"
            f" of classes set to {features}) where this layer was built for {expected}, or the input comes from"
            f" data or another model (an embedding, an encoder of another size or family) {features} wide"
        )
        change = (
            f"Make the two widths agree where they are set: the producing part's output size (or the data's"
            f" feature count) equal to {expected}, or this layer's in_features={features} if {features} is the"
            " width meant; with a project's config, the options that set both (hidden and output dimensions)"
            " must match."
        )
    return answer(
        title=f"A Linear layer built for {expected} input features got {features}",
        meaning=(
            f"A matrix product got a {rows}x{features} input and a {expected}x{outputs} weight: an"
            f" nn.Linear(in_features={expected}, out_features={outputs}) fed rows of {features} features.{why}"
        ),
        cause=f"The tensor comes from a part built for another width than the layer: {source}.",
        fix=f"{change} Print the input's shape just before the layer.",
    )


# The tensors a layer registers by name whatever the code's version: not evidence of a version when they
# are the only keys (a whole extra layer has its weight and bias; running statistics follow an option).
PARAMETER_LEAVES = ("weight", "bias", "running_mean", "running_var")


def repeated_tensor(keys: list[str]) -> str | None:
    """The one tensor name every listed key ends with, layer after layer ("levels.0.blocks.1.attn.rpb":
    ``attn.rpb``; "layer1.0.bn1.num_batches_tracked"), when the keys are nothing else and it is no
    layer's weight or bias: one side's code registers it in each such layer and the other side's does not."""
    if len(keys) < 2:
        return None
    parts = [key.split(".") for key in keys]
    common: list[str] = []
    while all(len(p) > len(common) + 1 for p in parts) and len({p[-1 - len(common)] for p in parts}) == 1:
        common.insert(0, parts[0][-1 - len(common)])
    if not common or common[-1] in PARAMETER_LEAVES or common[0].isdigit():
        return None
    return ".".join(common)


def repeated_tensor_reading(name: str, count: int, *, side: str) -> tuple[str, str]:
    """(cause, fix) for keys that are one tensor of every layer (``repeated_tensor``); ``side`` says whose
    they are: the checkpoint's extra keys (its code registered them) or the model's missing ones."""
    if side == "checkpoint":
        return (
            f"every one of the {count} extra keys is the same tensor, {name}, in each layer: the code that saved"
            f" the checkpoint registered {name} there and the installed code does not (another release of the"
            " project, of the library that defines the layer, or of torch), not a model built with fewer parts",
            f"install the version of the project and its libraries the checkpoint was made with; or, where the"
            f" installed code no longer needs it, drop those keys before loading: state = {{k: v for k, v in"
            f' state.items() if not k.endswith("{name}")}}',
        )
    return (
        f"every one of the {count} missing keys is the same tensor, {name}, in each layer: the installed code"
        f" registers {name} there and the code that saved the checkpoint did not (an older release of the"
        " project, of the library that defines the layer, or of torch), not parts the checkpoint never had",
        f"where {name} is a buffer the layer rebuilds or counts itself, load with strict=False after checking"
        f" that only these keys are missing; otherwise install the version the checkpoint was made with",
    )


def permuted_layout_reading(names: list[str]) -> tuple[str, str]:
    """(cause, fix) for size mismatches that are all the same sizes in another order."""
    shown = ", ".join(names[:2]) + (f" and {len(names) - 2} more" if len(names) > 2 else "")
    return (
        f"the mismatched weights ({shown}) have the same sizes as the model's, in another order (or with a"
        " size-1 axis more or less): the layer stores its weight in another layout in the installed code than"
        " in the code that saved the checkpoint (a library release that changed it, such as a sparse or custom"
        " convolution kernel-first against channels-first, or a 1x1 convolution against a Linear), not a"
        " model built with other sizes",
        "install the version of the library that defines the layer that the checkpoint was made with; or"
        " permute or reshape each saved weight into the model's layout before loading (state[k] ="
        " state[k].permute(...) to the shape the model prints) and check the outputs on a known input",
    )


# The CUDA libraries of torch's CUDA build on Windows (cudnn64_9.dll, cublas64_12.dll, torch_cuda.dll, ...)
CUDA_DLL = re.compile(r"^(?:cudnn|cublas|cudart|cufft|curand|cusparse|cusolver|nvrtc|nvjitlink|caffe2_nvrtc|"
                      r"torch_cuda|c10_cuda)", re.IGNORECASE)


def procedure_not_found(name: str) -> Explanation:
    """[WinError 127]: the DLL was found and loaded, but a function it imports is missing from a DLL
    of the same name loaded before it: another version, not a missing runtime."""
    return answer(
        title=f"{name} loaded, but a DLL it links to is another version ([WinError 127])",
        meaning=(
            f"WinError 127 is 'the specified procedure could not be found': Windows found {name} and the"
            " DLLs it names, but one of them lacks a function it needs, so a DLL of that name from"
            " somewhere else (another version) was loaded first."
        ),
        cause=(
            "Another copy of a DLL torch links to is found before torch's own: an application that embeds"
            " Python loads its own (older) CUDA or runtime DLLs, another torch or CUDA install sits earlier"
            " on the PATH, or an upgrade left files of two torch releases in torch\\lib."
        ),
        fix=(
            "Reinstall torch cleanly in this environment (pip uninstall torch until none is left, then pip"
            " install from the official index; the CPU build where no NVIDIA GPU is needed), and remove"
            " other CUDA or torch folders from the PATH; inside a host application, use the torch build its"
            " own instructions name."
        ),
    )


def cuda_dll(name: str, text: str) -> Explanation:
    """[WinError 126] on one of torch's CUDA libraries: what it links to is CUDA's and the driver's."""
    zluda = "ZLUDA" in text.upper()
    replaced = (
        "ZLUDA (named in the paste), which runs CUDA code on an AMD GPU by standing in for CUDA's DLLs,"
        " provides copies that do not fit this torch's CUDA version; or "
        if zluda else ""
    )
    return answer(
        title=f"Windows could not load {name}, a CUDA library of this torch, or a DLL it needs",
        meaning=(
            f"import torch loads {name} from torch\\lib; it is one of the CUDA libraries of torch's CUDA build,"
            " and Windows could not load it or the CUDA and NVIDIA DLLs it depends on ([WinError 126])."
        ),
        cause=(
            f"{replaced}the CUDA side of this machine does not serve this build: no NVIDIA driver (or one too"
            " old for the build's CUDA), or the install is incomplete (a download cut short, files missing"
            " from torch\\lib)."
        ),
        fix=(
            ("Set ZLUDA up for the torch version its instructions name (or install that torch); otherwise c" if zluda
             else "C")
            + "heck nvidia-smi and update the NVIDIA driver; reinstall torch from the official index for a"
            " CUDA the driver supports (pip install --force-reinstall torch --index-url"
            " https://download.pytorch.org/whl/cu126), or the CPU build (/whl/cpu) on a machine without an"
            " NVIDIA GPU."
        ),
    )


# What from_pretrained takes to load a model, and no trainer, pipeline step or plain module does.
LOADING_OPTIONS = ("torch_dtype", "device_map", "quantization_config", "load_in_8bit", "load_in_4bit",
                   "low_cpu_mem_usage", "attn_implementation", "max_memory", "offload_folder")


def loading_option(argument: str, function: str) -> bool:
    """A model-loading keyword given to a callable that is not a loader: the version reading (the
    argument existed in another release) assumes a keyword of that callable's own kind."""
    return argument in LOADING_OPTIONS and not re.search(r"from_pretrained|from_config|^load|pipeline", function)


def loading_option_reading(argument: str, what: str) -> tuple[str, str]:
    return (
        f"'{argument}' is an option for loading a model (from_pretrained's, like torch_dtype, device_map and"
        f" quantization_config), and {what} is not a loader: it takes a model already loaded (or its"
        " name) and its own settings, so the option went to the wrong call, whatever the version.",
        f"Load the model yourself with it (AutoModel...from_pretrained(name, {argument}=...)) and pass the"
        f" model to {what}, or pass it through the option {what} documents for loading (model_init_kwargs"
        " in trl's config, model_kwargs in a pipeline); drop it from this call.",
    )


def empty_sample_reading(entry: str) -> tuple[str, str]:
    """(cause, fix) for a stack whose entry has a size 0 (``evidence_gate.empty_entry``)."""
    return (
        f"Entry {entry} is empty (a size of 0): a sample whose loading or preprocessing produced nothing (a clip"
        " or file with no frames, features never extracted, a filter that kept no rows), batched with full ones.",
        "Find the empty samples (check each item's shape in the Dataset, e.g. assert x.shape[0] > 0) and redo"
        " their preprocessing or leave them out of the dataset; padding would only hide them.",
    )


def own_stack_reading(frame: Frame) -> tuple[str, str]:
    """(cause, fix) for same-rank samples of different sizes stacked on the user's own line: what their
    collate gathered (latents, features), not images default_collate got from the transforms."""
    return (
        f"Your own code stacks them ({frame.place}: {frame.source}): the samples of one batch have different sizes,"
        " so what the dataset gives varies in size (images, latents or features at several resolutions or"
        " aspect ratios) and the batch sampler put two sizes in one batch.",
        "Batch only samples of one size (a batch sampler that groups them by size or aspect-ratio bucket), or"
        " bring every sample to one size in the dataset, or use batch_size=1.",
    )


def collated_lengths_reading(first: int, second: int) -> tuple[str, str]:
    """(cause, fix) for samples of one batch whose first dimension differs, stacked by the DataLoader's
    collate (``evidence_gate.in_collate``): a variable count per sample, never lists to concatenate."""
    return (
        f"The DataLoader's collate stacks the samples of one batch, and their first dimension differs ({first}"
        f" and {second}): each sample holds a variable number of rows (frames of audio or video, tokens,"
        " boxes or points per image).",
        "Pad them in a collate_fn (torch.nn.utils.rnn.pad_sequence(batch, batch_first=True), with the lengths"
        " kept for masking), or return such fields as lists from a collate_fn (detection targets); or bring"
        " every sample to one length in the Dataset, or use batch_size=1.",
    )


SMALLER = "nvidia-smi shows what else holds the GPU; a smaller model or a GPU with more memory if it still does not fit"


def loading_memory_reading(frame: Frame) -> tuple[str, list[str]]:
    """(cause, steps) for a GPU out of memory raised while weights were loading (``loading_frame``)."""
    where = f"{frame.place} ({frame.source})" if frame.source else frame.place
    if "from_pretrained(" in frame.source:
        return (
            f"It ran out while loading the model ({where}), before any batch: the model's weights at this dtype"
            " do not fit in what is free on this GPU (a model too large for it, or memory already held by"
            " another process).",
            ["load the model smaller: torch_dtype=torch.float16 or bfloat16, 8-bit or 4-bit weights"
             " (quantization_config), or device_map='auto' to spread it over the GPUs and the CPU", SMALLER],
        )
    return (
        f"It ran out while loading weights ({where}), before any batch: torch.load puts every tensor back on"
        " the device it was saved from, so a checkpoint saved on a GPU (with its optimizer state) fills this"
        " GPU on top of the model (on GPU 0 for every process when several load it).",
        ["load to the CPU first, torch.load(path, map_location='cpu'), then model.load_state_dict(...) and"
         " model.to(device); delete the loaded dict once copied (del state)", SMALLER],
    )


def library_channels_reading(library: Frame, expected: str, got: str) -> tuple[str, str]:
    """(cause, fix) for a conv of an installed library's model (``evidence_gate.library_layer``) given
    another channel count: the user did not size that layer, so "set in_channels" is not theirs to do."""
    package = library.package or "the library"
    return (
        f"The conv is {package}'s ({library.place}: {library.source}), built for {expected} input channels by the"
        f" model's options, and the data reaching it has {got}: images or arrays with another channel count"
        " (an alpha, depth or extra band channel, grayscale, or channels in the last axis), or a model built"
        " for another input than this data.",
        f"Give the model {expected}-channel input (convert or select the channels when loading, permute a"
        f" channels-last array), or build the {package} model for {got} channels with its own option (timm's"
        " in_chans, a config's num_channels) where the data really has them.",
    )


# A GPU this small (2 GiB laptop and entry cards) holds little beside a model's weights: lowering the batch
# alone rarely gets a training run to fit (a 4 GiB card often fits with a smaller batch, so it is not read).
SMALL_GPU_GIB = 2.0


def small_gpu_reading(total: str) -> tuple[str, str]:
    """(cause, first step) for a GPU out of memory where the message's own total capacity is small."""
    return (
        f"This GPU has {total} in all, little for this model at this input size: weights, activations and, in"
        " training, gradients and optimizer state must all fit, and even a batch of one or two may not."
        " Memory kept from earlier steps or another process makes it worse.",
        "with a GPU this small, shrink the work itself: a smaller model or input size (image resolution,"
        " sequence length), batch size 1-2 with gradient accumulation and mixed precision; or a GPU with more"
        " memory (or the CPU)",
    )


# A layer's product raised the dtype message, not a loss: the input is what has the other dtype.
LAYER_OP = re.compile(r"\b(?:linear|conv[123]d|_conv_forward|matmul|addmm|bmm)\b")
LOSS_OP = re.compile(r"loss|nll|cross_entropy|criterion", re.IGNORECASE)


def integer_input_to_layer(expected: str, found: str, text: str, before: int) -> tuple[str, str] | None:
    """(cause, fix) for "expected scalar type Long but found Float" raised by a layer (F.linear, a conv,
    matmul) rather than a loss: the Long-target reading assumes a loss; the frame shows integer data
    meeting a layer's float weights."""
    frame = raising_frame(text, before)
    if (expected, found) != ("Long", "Float") or frame is None:
        return None
    where = f"{frame.function} {frame.source}"
    if not LAYER_OP.search(where) or LOSS_OP.search(where):
        return None
    at = layer_owner(text, before) or frame  # the line that called the layer names it best
    return (
        f"integer data (a Long tensor: raw pixel or feature values, token ids, labels used as input) reached a"
        f" layer whose weights are float, at {at.place} ({at.source}): the input was never converted",
        "convert the input where it is made: x = x.float() (or x.to(next(model.parameters()).dtype)); token"
        " ids go through an nn.Embedding first, not into a Linear",
    )


def leading_count(output: list[int], target: list[int]) -> tuple[str, str] | None:
    """Round 10: (cause, fix) for an element-wise loss's output and target that agree in every size but
    the first ([16800, 1] against [8400, 1]): not a layout or a head's width, but different numbers of
    items (predictions against the targets assigned to them). None for any other pair of shapes."""
    if len(output) != len(target) or output[1:] != target[1:] or output[0] == target[0]:
        return None
    low, high = sorted((output[0], target[0]))
    times = f" ({high // low} times as many)" if high % low == 0 else ""
    more = "output" if output[0] > target[0] else "target"
    return (
        f"The two agree in every size but the first: the {more} has {high} items where the other has {low}"
        f"{times}. The targets were built for another number of items than the model predicted: for another"
        " batch (one image's targets against a batch of two, a batch merged or split on one side), or for"
        " another grid (anchors or positions counted for another input size or stride than the model's).",
        "Build the targets from the same batch and grid as the predictions: print both shapes where the"
        " targets are assigned, and give the target builder the batch size, input size and strides the"
        " model ran with.",
    )


def sequence_reading(first: int, second: int) -> tuple[str, str]:
    """(cause, fix) for 1-D samples of different lengths. Round 10: a sample of one element is no
    sequence of varying length but a degenerate one (a window cut past the end of the text), which
    padding would only hide; longer ones are sequences batched without padding, and so are short lists
    (one label beside two or three: a multi-label sample's list of labels varies by design)."""
    if min(first, second) > 1 or max(first, second) < 4:
        return (
            "Variable-length sequences (token ids, audio) are batched without padding.",
            "Pad in a collate_fn: torch.nn.utils.rnn.pad_sequence(batch, batch_first=True), or"
            " let the tokenizer pad (padding=True).",
        )
    return (
        f"A sample of one element beside one of {max(first, second)}: the dataset gives a degenerate sample, a"
        " window or chunk cut past the end of its text or signal (or an entry read wrongly), where every"
        " sample should have one length; padding would only hide it.",
        "Find it (print len(dataset[i]) for the first items) and fix where it is cut: stop the windows"
        " max_length before the end (range(0, len(ids) - max_length, stride)) or skip entries shorter than"
        " a window; pad in a collate_fn only where lengths vary by design.",
    )
