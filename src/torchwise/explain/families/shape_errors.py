"""Known errors where a tensor reaching a layer or an operation has the wrong shape.

Each builder reads the sizes out of the message and lets them pick the cause: a normalised size
that sits in dimension 1 of a 4-D input is a channels-first feature map. (Two sizes meeting in
an elementwise operation are ``broadcast_errors``.)
"""

from __future__ import annotations

import re

from torchwise.explain import evidence_readings as readings
from torchwise.explain.evidence_gate import empty_entry, library_layer, own_stack
from torchwise.explain.explanation import Explanation, KnownError, answer, dims, known, shape, told_apart
from torchwise.explain.stated_facts import collated, collated_rows_reading

GRAYSCALE_MIXED = "Grayscale (1 channel) and colour (3 channel) images are mixed in the dataset."


def _stack(match: re.Match[str], text: str) -> Explanation:
    first, second = dims(match.group(1)), dims(match.group(3))
    index = match.group(4)
    meaning = (
        f"torch.stack (and the DataLoader's default collate, which stacks the samples of a"
        f" batch) needs equal shapes; entry 0 is {shape(first)}, entry {index} is {shape(second)}."
    )
    title = f"Samples of different shapes cannot be stacked: {shape(first)} and {shape(second)}"
    if empty_entry(first, second):  # round 9: a size 0 is a sample with nothing in it, not a short one
        cause, fix = readings.empty_sample_reading(index if 0 in second else "0")
    elif len(first) == 3 and len(second) == 3 and {first[0], second[0]} in ({1, 3}, {3, 4}, {1, 4}):
        rgba = "Images with an alpha channel (RGBA, 4 channels: PNG files) are mixed with other images."  # round 9
        cause = rgba if 4 in (first[0], second[0]) else GRAYSCALE_MIXED
        fix = 'Convert every image when loading: Image.open(path).convert("RGB").'
    elif len(first) == len(second) >= 3 and first[0] == second[0] and (own := own_stack(text, match.start())):
        cause, fix = readings.own_stack_reading(own)  # round 9: the user's collate stacks what it gathered
    elif len(first) == len(second) >= 3 and first[0] == second[0]:
        cause = "Images of different sizes: the transforms do not bring them to one size."
        fix = (
            "Resize or crop to one size in the transform (transforms.Resize((224, 224)) or"
            " RandomCrop), or use batch_size=1 where sizes must stay (evaluation at full size)."
        )
    elif len(first) == 1:
        cause, fix = readings.sequence_reading(first[0], second[0])  # round 10: one element is degenerate
    elif len(first) == len(second) >= 2 and first[1:] == second[1:] and collated(text, match.start()):
        cause, fix = collated_rows_reading(text, first[0], second[0])  # round 9: a batch's samples, not lists
    else:
        cause = f"Lists of different lengths ({first[0]} and {second[0]} rows) are stacked."
        fix = (
            "Concatenate along the first dimension instead (torch.cat(tensors, 0) gives one"
            " tensor of all rows), or pad to a common length before stacking."
        )
    return answer(title=title, meaning=meaning, cause=cause, fix=fix)


def _cat(match: re.Match[str], text: str) -> Explanation:
    if match.group(1) is not None:
        except_dim, expected, got, number = match.group(1), match.group(2), match.group(3), match.group(4)
        where = f" (tensor number {number} in the list)"
    else:
        except_dim, expected, got, number = match.group(5), match.group(6), match.group(7), None
        where = f" in dimension {match.group(8)}"
    title = f"torch.cat: sizes {expected} and {got} differ outside dimension {except_dim}"
    meaning = (
        f"torch.cat joins tensors along dimension {except_dim}; every other dimension must"
        f" match, but one has size {expected} and another {got}{where}."
    )
    if abs(int(expected) - int(got)) == 1:
        cause = (
            "A U-Net style skip connection: an odd image size loses a pixel through pooling,"
            " so the upsampled map is one pixel smaller than the skip it is joined with."
        )
        fix = (
            "Use input sizes that are a multiple of 2**depth (16 for four poolings), or pad the"
            " upsampled map to the skip's size before joining: x = F.pad(x, (0, skip.size(-1) -"
            " x.size(-1), 0, skip.size(-2) - x.size(-2)))."
        )
    else:
        cause = (
            "The tensors come from inputs of different sizes (frames, tokens, batch) or from"
            " branches built for different shapes."
        )
        fix = "Print t.shape for each tensor before torch.cat and make the other dimensions agree."
    return answer(title=title, meaning=meaning, cause=cause, fix=fix)


def _channels(match: re.Match[str], text: str) -> Explanation:
    weight, seen, expected, got = match.groups()
    sizes = dims(seen)
    title = f"A conv layer expects {expected} input channels but got {got}"
    meaning = f"The conv weight [{weight}] wants [N, {expected}, H, W]; the input is [{seen}]."
    if expected == "3" and got == "1":
        cause = (
            "Grayscale images reach a model built for RGB. A pretrained model (an ImageNet"
            f" ResNet's first layer is [{weight}]) learned its first layer on 3 channels."
        )
        fix = (
            "Keep the pretrained weights and give them 3 channels: transforms.Grayscale("
            "num_output_channels=3) in the transform, or x = x.expand(-1, 3, -1, -1) on the"
            " batch. Only when training from scratch change the first conv to in_channels=1."
        )
    elif expected == "3" and got == "4":
        cause = "RGBA images (with an alpha channel) reach a model built for RGB."
        fix = 'Convert when loading: Image.open(path).convert("RGB").'
    elif expected == "1" and got == "3":
        cause = "The model was built for one channel but the images are loaded as RGB."
        fix = 'Load them as grayscale: Image.open(path).convert("L") (or transforms.Grayscale()).'
    elif len(sizes) == 4 and sizes[-1] == int(expected):
        cause = "The batch is channels-last [N, H, W, C] (NumPy/PIL layout) but conv wants [N, C, H, W]."
        fix = "Permute it: x = x.permute(0, 3, 1, 2) (ToTensor() does this for PIL images)."
    elif len(sizes) == 4 and sizes[2] == int(expected) and sizes[1] == sizes[3]:
        # round 8: the channel count is in the input, at dimension 2, between two equal (spatial) sizes
        cause = (
            f"The input holds {expected} at dimension 2, between two sizes of {got} (height and width):"
            f" its axes are in the order [N, H, C, W], so conv reads {got} as the channels."
        )
        fix = f"Permute it before the layer: x = x.permute(0, 2, 1, 3) gives [N, {expected}, {got}, {got}]."
    elif library := library_layer(text, match.start()):  # round 9: a library's conv, built from its options
        cause, fix = readings.library_channels_reading(library, expected, got)
    else:
        cause = "in_channels was set for another layer's output, or the data has another channel count."
        fix = f"Set in_channels={got} on this conv, or fix the layer before it."
    return answer(title=title, meaning=meaning, cause=cause, fix=fix)


def _conv_rank(match: re.Match[str], text: str) -> Explanation:
    if match.group(1):
        low, high, kind, seen = int(match.group(1)), int(match.group(2)), match.group(3), dims(match.group(4))
    else:
        low, high, kind, seen = 3, 4, "conv2d", dims(match.group(5))
    layout = {"conv1d": "[N, C, L]", "conv2d": "[N, C, H, W]", "conv3d": "[N, C, D, H, W]"}.get(kind, "[N, C, ...]")
    title = f"{kind} got a {len(seen)}-D input {shape(seen)}; it takes {low}-D or {high}-D"
    meaning = f"{kind} wants {layout} (or the same without N); the input has {len(seen)} dimensions."
    if len(seen) > high:
        cause = (
            f"The input is {len(seen)}-D: an extra dimension in front (a second unsqueeze(0),"
            " torch.stack of already batched tensors, a summary tool adding its own batch) or"
            " frames/views of a video stacked as their own dimension."
        )
        fix = (
            "Drop the extra unsqueeze(0) (the DataLoader already batches), or merge the leading"
            f" dimensions: x = x.flatten(0, 1) so it becomes {layout}."
        )
    elif len(seen) == 2:
        side = int(round((seen[1]) ** 0.5))
        square = f" x.view(-1, 1, {side}, {side})" if side * side == seen[1] else " x.view(N, C, H, W)"
        cause = f"The images were flattened to {shape(seen)} (a flattening transform, or a dataset of rows)."
        fix = f"Give conv layers image-shaped batches:{square} (flatten only before the Linear layers)."
    else:
        cause = "A single sample without its batch dimension reached the layer."
        fix = f"Add the batch dimension: x.unsqueeze(0) gives {layout}."
    return answer(title=title, meaning=meaning, cause=cause, fix=fix)


def _weight_rank(match: re.Match[str], text: str) -> Explanation | None:
    """torch before 1.11: "Expected 4-dimensional input for 4-dimensional weight [64, 3, 7, 7], but
    got 3-dimensional input of size [3, 224, 224]" names the weight, so the sizes say which
    dimension is missing; a paste that also shows the layer refusing another rank of input (the
    user went back and forth) is a layer of the wrong kind, which the sizes do not settle."""
    wanted, weight, seen = int(match.group(1)), dims(match.group(2)), dims(match.group(4))
    others = re.findall(r"input (?:of size|to conv\w+, but got input of size):?\s*\[([\d, ]+)\]", text)
    if any(dims(other) != seen for other in others):
        return None
    kind = {3: "conv1d", 4: "conv2d", 5: "conv3d"}.get(wanted, "the convolution")
    title = f"{kind} with weight {shape(weight)} got a {len(seen)}-D input {shape(seen)}; it takes {wanted}-D"
    meaning = f"The layer's weight {shape(weight)} takes [N, C, ...] batches of {wanted} dimensions."
    if len(seen) == wanted - 1 and len(weight) > 1 and seen[0] == weight[1]:
        cause = f"A single sample without its batch dimension: {shape(seen)} starts with the {weight[1]} channels."
        fix = f"Add the batch dimension: x.unsqueeze(0) gives {shape([1, *seen])} (a DataLoader batches for you)."
    elif len(seen) == 2 and wanted == 4:
        side = int(round(seen[1] ** 0.5))
        fits = side * side * weight[1] == seen[1]
        square = f"x.view(-1, {weight[1]}, {side}, {side})" if fits else "x.view(N, C, H, W)"
        cause = f"The images were flattened to {shape(seen)} (a flattening transform, or a dataset of rows)."
        fix = f"Give conv layers image-shaped batches: {square} (flatten only before the Linear layers)."
    else:
        return None
    return answer(title=title, meaning=meaning, cause=cause, fix=fix)


def _layernorm(match: re.Match[str], text: str) -> Explanation:
    width, seen = int(match.group(1)), dims(match.group(2))
    title = f"LayerNorm over {width} features got an input of shape {shape(seen)}"
    meaning = f"LayerNorm normalises the last dimension, which must be {width}; it is {seen[-1] if seen else '?'}."
    if len(seen) == 4 and seen[1] == width:
        cause = (
            f"The input is channels-first [N, C, H, W] with C = {width} in dimension 1: a conv"
            " feature map, or a ViT patch embedding that was not turned into tokens (the image"
            " size differs from the one the model expects)."
        )
        fix = (
            "For a conv feature map normalise over channels in channels-last order:"
            " x.permute(0, 2, 3, 1) -> LayerNorm -> x.permute(0, 3, 1, 2) (or nn.GroupNorm(1,"
            f" {width})). For patch embeddings make tokens: x.flatten(2).transpose(1, 2), with"
            " the image size the model was built for."
        )
    else:
        got = seen[-1] if seen else "another"
        cause = (
            f"The features are {got} wide but the layer was built for {width}: the layer before"
            f" it, or a loaded backbone/checkpoint, has another width ({got} vs {width}, e.g. a"
            " base model where a large one was expected)."
        )
        fix = (
            f"Load the checkpoint/backbone the model was built for, or build the norm (and the"
            f" layers around it) for {got} features."
        )
    return answer(title=title, meaning=meaning, cause=cause, fix=fix)


def _rnn_input(match: re.Match[str], text: str) -> Explanation:
    expected, got = match.group(1), match.group(2)
    if expected and got:
        title = f"The RNN expects {expected} features per time step but got {got}"
        cause = (
            f"The vectors fed to the RNN are {got} wide (the embedding or encoder in front of"
            f" it: word vectors, BERT base/large) but it was built with input_size={expected}."
        )
        fix = (
            f"Build it for the real width, nn.LSTM(input_size={got}, ...), or project the"
            f" features to {expected} with nn.Linear. The input is [N, T, F] with"
            " batch_first=True, [T, N, F] without."
        )
    else:
        title = "The RNN's input_size differs from the features it gets"
        cause = "The last dimension of the input is not the input_size the RNN was built with."
        fix = (
            "Set input_size to the real feature count (x.size(-1)); the input is [N, T, F] with"
            " batch_first=True, [T, N, F] without."
        )
    return answer(
        title=title,
        meaning="nn.RNN/LSTM/GRU read the last dimension of the input as the features of one step.",
        cause=cause,
        fix=fix,
    )


def _batchnorm(match: re.Match[str], text: str) -> Explanation:
    seen = dims(match.group(1) or "")
    pooled = " after a pooling to 1x1" if len(seen) > 2 and all(size == 1 for size in seen[2:]) else ""
    size = f" ({shape(seen)})" if seen else ""
    batch = f"{shape(seen)} is a batch of 1{pooled}" if seen else "the input is a batch of 1"
    return answer(
        title=f"BatchNorm in training mode got one value per channel{size}",
        meaning=(
            f"In training BatchNorm computes each channel's mean and variance over the batch"
            f" (and the positions); {batch}, so there is nothing to average."
        ),
        cause=(
            "A batch with a single sample: the last batch of the epoch (the dataset size leaves"
            " a remainder of 1), a batch size of 1, or evaluation run without model.eval()."
        ),
        fix=(
            "Drop the incomplete last batch: DataLoader(..., drop_last=True); train with a batch"
            " size of at least 2; call model.eval() before evaluating or predicting. For batch"
            " size 1 by design use nn.GroupNorm / nn.InstanceNorm or freeze BatchNorm."
        ),
    )


def _view(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="view() needs a contiguous tensor; this one is not",
        meaning=(
            "view() only relabels the existing memory; after transpose/permute, slicing or"
            " channels_last the elements are not laid out in the order the new shape needs."
        ),
        cause=(
            "A .view() after .transpose()/.t()/.permute() (a top-k accuracy on pred.t(), an"
            " attention reshape), or on a feature map in channels_last memory format (which"
            " cuDNN may return on GPU)."
        ),
        fix=(
            "Use .reshape(...) (it copies only when it must), or .contiguous().view(...);"
            " torch.flatten(x, 1) flattens any layout."
        ),
    )


def _embedding(match: re.Match[str], text: str) -> Explanation:
    index, rows = match.group(1), match.group(2)  # torch before 1.0 printed both
    told = (
        f" Here index {index} was looked up in a table of {rows} rows (valid: 0 to"
        f" {int(rows) - 1})."
        if index
        else ""
    )
    return answer(
        title="An index is outside the table it looks up (usually an nn.Embedding)",
        meaning=(
            "nn.Embedding (or index_select) got an index >= the table's num_embeddings, or a"
            f" negative one.{told}"
        ),
        cause=(
            "A token id from a tokenizer larger than the model's vocabulary (tokens added"
            " without resizing the embedding), a sequence longer than the position embeddings"
            " (512 for BERT), class or user ids counted from 1 or more ids than rows, or"
            " padding/ignore values (-1, -100) passed as input ids."
        ),
        fix=(
            "Check before the call: assert 0 <= ids.min() and ids.max() < emb.num_embeddings."
            " Truncate long inputs (tokenizer(..., truncation=True, max_length=512)); after"
            " adding tokens call model.resize_token_embeddings(len(tokenizer)); size tables as"
            " max id + 1."
        ),
    )


def _empty_reduction(match: re.Match[str], text: str) -> Explanation:
    function = match.group(1) or "a reduction"
    return answer(
        title=f"{function} over an empty tensor",
        meaning=f"{function} has no value to return for a tensor with no elements (max of nothing is undefined).",
        cause=(
            "The tensor is empty at this point: no detections above the score threshold, a"
            " mask or filter that selected nothing, or an empty batch."
        ),
        fix=(
            "Guard the reduction: if t.numel() == 0: skip this sample (or return a default);"
            " then find out why it is empty."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "stack-unequal",
        r"stack expects each tensor to be equal size, but got (\[[\d, ]*\]) at entry (\d+) and"
        r" (\[[\d, ]*\]) at entry (\d+)",
        _stack,
    ),
    known(
        "cat-sizes",
        r"Sizes of tensors must match except in dimension (\d+)\. Expected size (\d+) but got"
        r" size (\d+) for tensor number (\d+)"
        r"|Sizes of tensors must match except in dimension (\d+)\. Got (\d+) and (\d+) in"
        r" dimension (\d+)",
        _cat,
    ),
    known(
        "conv-channels",
        # torch < 1.5 printed the weight's sizes without brackets: "weight of size 64 3 3 3"
        r"weight of size \[?([\d, ]+?)\]?, expected input\[([\d, ]+)\] to have (\d+) channels,"
        r" but got (\d+) channels instead",
        _channels,
    ),
    known(
        "conv-input-dims",
        r"Expected (\d)D \(unbatched\) or (\d)D \(batched\) input to (conv\w+), but got input of"
        r" size:? ?(\[[\d, ]*\])"
        r"|3D or 4D input tensor expected but got:? ?(\[[\d x]+\])",
        _conv_rank,
    ),
    told_apart(
        "conv-weight-rank",
        r"Expected (\d)-dimensional input for \1-dimensional weight:? ?\[?([\d, ]+)\]?,? but got"
        r" (\d)-dimensional input of size:? ?\[([\d, ]+)\]",
        _weight_rank,
    ),
    known(
        "layernorm-shape",
        r"Given normalized_shape=\[(\d+)\], expected input with shape \[\*,? ?\d+\], but got input"
        r" of size ?(\[[\d, ]*\])",
        _layernorm,
    ),
    known(
        "rnn-input-size",
        r"input\.size\(-1\) must be equal to input_size(?:\. Expected (\d+), got (\d+))?",
        _rnn_input,
    ),
    known(
        "batchnorm-one-value",
        # torch.nn.functional._verify_batch_size; a paste may quote it without the size
        r"Expected more than 1 value per channel when training(?:, got input size"
        r" (?:torch\.Size\()?(\[[\d, ]*\]))?",
        _batchnorm,
    ),
    known(
        "view-stride",
        r"view size is not compatible with input tensor's size and stride",
        _view,
    ),
    known(
        "embedding-index",
        r"index out of range in self"
        r"|index out of range: Tried to access index (-?\d+) out of table with (\d+) rows",
        _embedding,
    ),
    known(
        "empty-reduction",
        r"cannot perform reduction function (\w+) on tensor with no elements"
        r"|Expected reduction dim \d+ to have non-zero size",
        _empty_reduction,
    ),
]
