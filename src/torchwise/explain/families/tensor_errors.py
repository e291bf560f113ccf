"""Known errors from tensor operations in the user's code: reshapes that cannot fit, integer
indices of the wrong dtype, in-place results that cannot be stored, numbers too large for
float16, indexing a 0-dim tensor, backward on a non-scalar, and a GradScaler given
half-precision parameters.

The numbers decide where they can: a view whose element count is off by a whole factor, or
whose two spatial sizes would fit a square grid of another side, names the size that arrived.
"""

from __future__ import annotations

import math
import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known, shape
from torchwise.explain.paste import user_frame


def _what_arrived(sizes: list[int], elements: int) -> str:
    """The one size (or the square spatial grid) that would make ``elements`` fit ``sizes``:
    the number that says which input is not the one the code assumed."""
    fixed = [size for size in sizes if size != -1]
    total = math.prod(fixed) or 1
    for index in range(len(sizes) - 1):
        side = sizes[index]
        if side > 1 and sizes[index + 1] == side:  # an H x W grid, as in [B, H, W, C]
            rest = total // (side * side)
            root = math.isqrt(elements // rest) if elements % rest == 0 else 0
            if root > 0 and root * root * rest == elements and root != side:
                return (
                    f" {elements} = {rest} x {root} x {root}: the grid that arrived is"
                    f" {root}x{root}, not {side}x{side}."
                )
    options = [
        f"dimension {index} would be {elements // (total // size)}"
        for index, size in enumerate(sizes)
        if size > 0
        and elements % (total // size) == 0
        and elements // (total // size) != size
    ]
    if options:
        return f" Whole-number fits: {', or '.join(options)} (not {shape(sizes)})."
    return ""


def _view_size(match: re.Match[str], text: str) -> Explanation:
    sizes = [int(size) for size in re.findall(r"-?\d+", match.group(1))]
    elements = int(match.group(2))
    fixed = math.prod(size for size in sizes if size != -1)
    holds = (
        f"a multiple of {fixed} (the sizes other than -1)" if -1 in sizes else f"{fixed} elements"
    )
    return answer(
        title=f"Cannot view {elements} elements as {shape(sizes)}",
        meaning=(
            f"view/reshape keeps the element count: {shape(sizes)} needs {holds}, the tensor has"
            f" {elements}.{_what_arrived(sizes, elements)}"
        ),
        cause=(
            "The code hard-codes a size that the data does not have: an image size, sequence"
            " length, resolution or feature-map size fixed in the code or config differs from"
            " the input that arrived (another image size, another dataset), or a hard-coded batch"
            " size meets the smaller last batch."
        ),
        fix=(
            "Print the tensor's shape just before the view and compare it with the sizes"
            " asked for. Take sizes from the tensor instead of constants (B, C = x.shape[:2];"
            " x.view(x.size(0), -1)), or resize the input to the size the model was built for"
            " (the image size / resolution in its config)."
        ),
    )


def _embedding_dtype(match: re.Match[str], text: str) -> Explanation:
    got = match.group(1)
    dtype = got.rsplit(".", 1)[-1].removesuffix("Tensor").removesuffix("Type")
    dtype = dtype.removeprefix("CPU").removeprefix("CUDA")
    if dtype in ("Int", "Short", "Byte"):
        cause = (
            f"The indices are {dtype} (int32 is NumPy's default integer on Windows, and some"
            " datasets store int32), and this torch's embedding takes int64 only."
        )
        fix = "Convert the indices once: idx = idx.long() (or .astype(np.int64) in the dataset)."
    else:
        cause = (
            f"The embedding got {dtype} values: token/category ids that became floats (read as"
            " float, normalised, or a float feature tensor passed where ids belong), or a"
            " summary/profiling tool that feeds random float input."
        )
        fix = (
            "Feed integer ids: idx = idx.long() where they are made (never round real-valued"
            " features into ids); for torchsummary-like tools pass dtypes=[torch.long] or a real"
            " batch."
        )
    return answer(
        title=f"An embedding got {dtype} indices instead of Long",
        meaning=(
            "nn.Embedding looks rows up by integer index; its input must be an integer (Long)"
            f" tensor and it got {got}."
        ),
        cause=cause,
        fix=fix,
    )


def _result_type(match: re.Match[str], text: str) -> Explanation:
    result, output = match.group(1), match.group(2)
    return answer(
        title=f"An in-place operation would store a {result} result into a {output} tensor",
        meaning=(
            f"Operations ending in _ (add_, clamp_, mul_) write into the tensor itself; its dtype"
            f" is {output}, and the result is {result}, which torch will not truncate silently."
        ),
        cause=(
            "An integer tensor is updated in place with a floating-point operand: a bound or"
            " factor that is a float tensor (x.clamp_(0, gain[3] - 1) with a float gain, since"
            " torch 1.12), or a float update added into an integer buffer (add_ on a"
            " num_batches_tracked counter)."
        ),
        fix=(
            "Make the operand the tensor's dtype (x.clamp_(0, int(gain[3]) - 1) or"
            " gain[3].long()), or use the out-of-place form with an explicit dtype"
            " (x = (x + update).to(x.dtype)); when averaging state dicts, skip or cast the"
            " integer entries (if v.is_floating_point())."
        ),
    )


def _non_scalar_backward(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="backward() was called on a tensor with more than one value",
        meaning=(
            "loss.backward() without an argument needs a single number (a 0-dim tensor); this"
            " loss holds several values."
        ),
        cause=(
            "The loss was not reduced to one value: a loss with reduction='none' or a per-sample"
            " loss, or a model wrapped in nn.DataParallel whose loss, computed inside forward,"
            " comes back as one value per GPU."
        ),
        fix=(
            "Reduce it before backward: loss = loss.mean() (or .sum()); under DataParallel"
            " loss.mean() averages the per-GPU values (or run on one GPU: CUDA_VISIBLE_DEVICES=0)."
            " For torch.autograd.grad of a vector, differentiate its .sum()/.mean() or pass"
            " grad_outputs=torch.ones_like(y)."
        ),
    )


def _unscale_fp16(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="GradScaler was given float16 gradients",
        meaning=(
            "GradScaler unscales gradients into float32 parameters; it refuses float16 ones,"
            " because the parameters themselves are float16."
        ),
        cause=(
            "The trainable parameters are float16: the model was cast with .half() or loaded"
            " with torch_dtype=torch.float16, or (LoRA/PEFT) the adapter weights were created"
            " in float16, while fp16 mixed precision expects float32 weights."
        ),
        fix=(
            "Keep the trainable parameters in float32 and let torch.autocast compute in fp16:"
            " load the model in float32, or cast only the trainable ones"
            " (for p in model.parameters(): if p.requires_grad: p.data = p.data.float()); with"
            " PEFT use a version that creates float32 adapters. Or train in bfloat16, which needs"
            " no GradScaler."
        ),
    )


def _half_overflow(match: re.Match[str], text: str) -> Explanation:
    dtype, value = match.group(1), match.group(2)
    shown = f" ({value.strip()})" if value and value.strip() not in ("", "<value>") else ""
    limit = "65504" if dtype == "Half" else "about 3.4e38"
    return answer(
        title=f"A number too large for {dtype}{shown} was written into a {dtype} tensor",
        meaning=(
            f"The largest finite {dtype} value is {limit}; torch refuses to store a Python"
            f" number beyond it{shown} into a {dtype} tensor (or to return a {dtype} result"
            " that large)."
        ),
        cause=(
            "A constant written for float32 meets a half-precision tensor: a mask fill such as"
            " masked_fill(mask, -1e9) or logits[..., ids] = -1e10, a score set to 2**30, or"
            " torch.finfo(torch.float32).min; the tensor is float16 because the model was cast"
            " with .half()/torch_dtype=float16 or runs under fp16 autocast."
        ),
        fix=(
            "Use a value the tensor's own dtype can hold: torch.finfo(x.dtype).min (of the"
            " tensor being filled) or float('-inf') for masks; or compute that part in float32"
            " (x.float(), or torch.autocast(..., enabled=False) around it); or use bfloat16,"
            " whose range is float32's."
        ),
    )


def _zero_dim_index(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="A 0-dim tensor (a single number) was indexed with [0]",
        meaning=(
            "Since torch 0.4 a reduced loss is a 0-dim tensor; it has no dimension to index,"
            " so loss.data[0] (the idiom of torch 0.3 and older) fails."
        ),
        cause="Code written for torch 0.3 or older reads a scalar with .data[0] or [0].",
        fix=(
            "Read the number with .item(): loss.item() instead of loss.data[0] (likewise"
            " acc.item() for any other 0-dim result)."
        ),
    )


def _index_dtype(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="A tensor used as an index is not an integer or bool tensor",
        meaning="Indexing x[idx] takes int64 (long), int, byte or bool index tensors; this index is a float tensor.",
        cause=(
            "The positions were computed in floating point (a division, a rounding with"
            " torch.round/floor, coordinates scaled by a stride) and kept their float dtype."
        ),
        fix="Convert the index before using it: x[idx.long()] (for coordinates, idx = (pos / stride).floor().long()).",
    )


def _dtype_not_torch(match: re.Match[str], text: str) -> Explanation:
    function, kind = match.group(1), match.group(2)
    return answer(
        title=f"{function}() got a {kind} as dtype, not a torch.dtype",
        meaning=(
            f"The dtype argument of {function} must be a torch.dtype (torch.float32, torch.int64);"
            f" it got a Python {kind}."
        ),
        cause=(
            "A Python or NumPy type was passed as the dtype: float, int, bool, np.float32 or"
            " np.int64 (a NumPy dtype object is not a torch.dtype either)."
        ),
        fix=(
            "Pass the torch dtype: torch.tensor(data, dtype=torch.float32) (torch.int64 for int,"
            " torch.bool for bool); where the code maps NumPy dtypes, convert with"
            " torch.from_numpy(np.zeros(0, dtype)).dtype."
        ),
    )


def _distribution_constraint(match: re.Match[str], text: str) -> Explanation:
    parameter, distribution, constraint = match.group(1), match.group(2), match.group(3)
    return answer(
        title=f"{distribution}'s {parameter} has values outside {constraint}",
        meaning=(
            f"torch.distributions checks its parameters: {distribution}(..., {parameter}=...) got"
            f" a tensor with entries that break {constraint} (the values printed)."
        ),
        cause=(
            f"The network's output used as {parameter} has a NaN, or a zero where it must be"
            " positive: training diverged (a NaN loss earlier), or the output is not forced into"
            " range (a std from a plain Linear, or exp/softplus that underflows to 0)."
        ),
        fix=(
            f"Make {parameter} valid by construction: scale = F.softplus(raw) + 1e-5 (or"
            " raw.exp().clamp_min(1e-5)); find where NaNs start (torch.autograd.set_detect_anomaly,"
            " a lower learning rate, gradient clipping)."
        ),
    )


def _mixed_dtype_cpu(match: re.Match[str], text: str) -> Explanation:
    wanted = match.group(1)
    return answer(
        title=f"A normalisation layer on the CPU got a 16-bit input with {wanted} parameters",
        meaning=(
            f"mixed dtype (CPU): a LayerNorm/GroupNorm/BatchNorm kernel on the CPU got an input in"
            f" Half or BFloat16 while its weights are {wanted} (or the other way round)."
        ),
        cause=(
            "The model runs on the CPU with a 16-bit dtype in part of it: a half/bf16 input or a"
            " partly converted model (a GPU recipe with fp16/bf16 that fell back to the CPU)."
        ),
        fix=(
            "Use one dtype on the CPU: model.float() and x.float() (or model.to(torch.bfloat16) and"
            " the input alike), or run under torch.autocast('cpu', dtype=torch.bfloat16); on a GPU"
            " check that the model really moved there."
        ),
    )


def _dim_out_of_range(match: re.Match[str], text: str) -> Explanation:
    low, high, got = int(match.group(1)), int(match.group(2)), int(match.group(3))
    dims = high + 1
    if dims == 1:
        cause = (
            "A 1-D tensor is treated as 2-D: class indices of shape [N] passed where one-hot or"
            " logits [N, C] are expected (torch.max(y, 1), y.argmax(1), softmax(dim=1) on labels"
            " that already are indices), or a batch dimension lost (a single sample, a squeeze)."
        )
        fix = (
            "Print x.shape before the line; if the labels are already class indices, use them as"
            " they are (loss_fn(out, y)); for one sample add the batch dimension (x.unsqueeze(0));"
            " or reduce over dim 0 / -1."
        )
    else:
        cause = (
            f"The tensor has {dims} dimensions, fewer than the code assumes: a batch or channel"
            " dimension missing (an unbatched input, a squeeze, a reduction without keepdim)."
        )
        fix = (
            f"Print x.shape before the line and use a dim from {low} to {high}, or add the missing"
            " dimension (x.unsqueeze(0))."
        )
    return answer(
        title=f"dim={got} for a tensor with {dims} dimension(s)",
        meaning=f"An operation was given dimension {got}; this tensor has {dims}, so dims run from {low} to {high}.",
        cause=cause,
        fix=fix,
    )


def _legacy_index_range(match: re.Match[str], text: str) -> Explanation:
    frame = user_frame(text, match.start())
    at = f" at {frame.place}: {frame.source}" if frame else ""
    return answer(
        title="An index is past the end of the dimension it indexes (torch before 1.0)",
        meaning=(
            f"An indexing operation{at} (index_select, gather, an embedding lookup, x[idx] with"
            " an index tensor) got an index at least as large as that dimension; old torch prints"
            " neither the index nor the size."
        ),
        cause=(
            "The indices do not belong to this tensor: a label or token id at least the number of"
            " classes or the vocabulary size, or an index column taken from the wrong place."
        ),
        fix=(
            "Print idx.min(), idx.max() and x.size(dim) just before the line and find where the"
            " larger index comes from."
        ),
    )


def _summary_tensor(match: re.Match[str], text: str) -> Explanation:
    value = match.group(1)
    return answer(
        title=f"A tensor was logged where a Python number is needed: {value}",
        meaning=(
            "TensorBoard's scalar summary field (Value.simple_value) holds a Python float; it got"
            f" the tensor {value}."
        ),
        cause="add_scalar (or a logger that calls it) was given a loss or metric tensor instead of its value.",
        fix="Log the number: writer.add_scalar('loss', loss.item(), step) (float(x) for any 0-dim tensor).",
    )


KNOWN: list[KnownError] = [
    known(
        "view-size-invalid",
        r"shape '(\[[-\d, ]*\])' is invalid for input of size (\d+)",
        _view_size,
    ),
    known(
        "embedding-index-dtype",
        r"Expected tensor for argument #1 'indices' to have (?:one of the following )?scalar"
        r" types?:? [\w, ]+; but got ([\w.]+) instead",
        _embedding_dtype,
    ),
    known(
        "result-type-cast",
        r"result type (\w+) can.t be cast to the desired output type ([\w ]+?)(?:\s*$|\.|\n)",
        _result_type,
        re.MULTILINE,
    ),
    known(
        "backward-non-scalar",
        r"grad can be implicitly created only for (?:real )?scalar outputs",
        _non_scalar_backward,
    ),
    known("unscale-fp16", r"Attempting to unscale FP16 gradients", _unscale_fp16),
    known(
        "half-overflow",
        r"value cannot be converted to type (?:at::|c10::)?(Half|BFloat16) without"
        r" overflow(?::? ?([^\n]*))?",
        _half_overflow,
    ),
    known("zero-dim-index", r"invalid index of a 0-dim tensor", _zero_dim_index),
    known("index-tensor-dtype", r"tensors used as indices must be long, (?:int, )?byte or bool tensors", _index_dtype),
    known("dtype-not-torch", r"(\w+)\(\): argument 'dtype' must be torch\.dtype, not (\w+)", _dtype_not_torch),
    known(
        "distribution-constraint",
        r"Expected parameter (\w+) \((?:[^()]|\([^()]*\))*\) of distribution (\w+)\(.*?\) to satisfy the constraint"
        r" ([\w.]+\([^)]*\)|\w+)",
        _distribution_constraint,
    ),
    known(
        "mixed-dtype-cpu",
        r"mixed dtype \(CPU\): expect (?:parameter|input) to have scalar type of (\w+)",
        _mixed_dtype_cpu,
    ),
    known(
        "dim-out-of-range",
        r"Dimension out of range \(expected to be in range of \[(-?\d+), (-?\d+)\], but got (-?\d+)\)",
        _dim_out_of_range,
    ),
    known(
        "legacy-index-range",
        r"index out of range at \S*TH\w*[/\\]generic[/\\]THTensorMath\.c",
        _legacy_index_range,
    ),
    known(
        "summary-tensor",
        r"(tensor\([^)]*\)) has type <class 'torch\.Tensor'>, but expected one of: [^\n]*simple_value",
        _summary_tensor,
    ),
]
