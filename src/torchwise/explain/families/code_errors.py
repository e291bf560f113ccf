"""Known errors that come from the user's own model and training code.

Each entry: a builder that reads the numbers out of the message, then the row in ``KNOWN``.
"""

from __future__ import annotations

import re

from torchwise.explain.encoder_widths import encoder_widths
from torchwise.explain.evidence_gate import flattened_width, library_layer
from torchwise.explain.evidence_readings import integer_input_to_layer, other_width
from torchwise.explain.explanation import Explanation, KnownError, answer, known, sentence
from torchwise.explain.paste_readings import matrix_product_answer, own_matrix_product

NO_HARD_CODED_BATCH = (
    "Never hard-code the batch size (x.view(64, -1)): the last batch of an epoch is smaller."
)


def _folded_batch(rows: int, features: int, expected: int) -> str:
    """The classic last-batch bug: x.view(64, -1) on a smaller final batch spreads its samples
    over 64 rows. Only the smaller-batch direction is claimed; a larger whole-number ratio is
    as often a wrong in_features after a conv stack."""
    samples, remainder = divmod(rows * features, expected)
    if remainder or not 0 < samples < rows:
        return ""
    return (
        f" The {rows}x{features} elements are exactly {samples} samples of {expected} features:"
        f" a view with a hard-coded size (x.view({rows}, -1)) folded a batch of {samples}."
    )


def _linear_shapes(match: re.Match[str], text: str) -> Explanation:
    rows, features, expected, outputs = match.groups()
    product = own_matrix_product(text, match.start())  # the user's own torch.mm / @: no Linear
    if product is not None:
        return matrix_product_answer(product, int(rows), int(features), int(expected), int(outputs))
    folded = _folded_batch(int(rows), int(features), int(expected))
    library = library_layer(text, match.start())  # round 9: a library's layer is sized by its config
    # round 10: two encoders' widths are another encoder, whatever a flatten or a fold would fit
    encoders = encoder_widths(int(features), int(expected))
    if library or encoders or not folded and not flattened_width(int(features), int(expected)):
        return other_width(int(rows), int(features), int(expected), int(outputs), library)
    return answer(
        title=f"A Linear layer expects {expected} input features but got {features}",
        meaning=(
            f"A matrix product got a {rows}x{features} input and a {expected}x{outputs} weight;"
            f" the inner sizes ({features} and {expected}) must be equal. In a model this is an"
            f" nn.Linear(in_features={expected}, out_features={outputs}) fed {rows} rows of"
            f" {features} features each."
        ),
        cause=(
            f"The tensor reaching the layer is not shaped the way in_features={expected}"
            f" assumes: it was not flattened per sample, or in_features was worked out for"
            f" another input size (another image size, a changed conv stack). {rows} is the"
            f" batch size, or the batch size times the other leading dimensions.{folded}"
        ),
        fix=(
            f"Flatten each sample before the layer with x = x.view(x.size(0), -1) (or"
            f" torch.flatten(x, 1)), or, if {features} is the right feature count, build the"
            f" layer as nn.Linear({features}, {outputs}). {NO_HARD_CODED_BATCH} Print x.shape"
            f" just before the layer to see what arrives."
        ),
    )


def _two_devices(match: re.Match[str], text: str) -> Explanation:
    first, second, argument, on, others = match.groups()
    if first:
        return _device_answer(first, second)
    return _device_answer(on, others, which=f" ({argument} is on {on})")


def _device_answer(first: str, second: str, *, which: str = "") -> Explanation:
    return answer(
        title=f"Tensors on two devices: {first} and {second}",
        meaning=(
            f"One operation got inputs on {first} and on {second}{which};"
            " torch never moves data implicitly."
        ),
        cause=(
            "The model was moved to the GPU but the batch was not (or the other way round); or a"
            " tensor created inside forward() or the loss has no device (torch.zeros(n) is on"
            " the CPU); or part of the model is not registered, so model.to(device) skips it:"
            " layers built inside forward() (nn.BatchNorm2d(c)(x)) or kept in a plain Python"
            " list or dict instead of nn.ModuleList/nn.ModuleDict."
        ),
        fix=(
            "Pick one device and use it for both: device = torch.device('cuda' if"
            " torch.cuda.is_available() else 'cpu'); model.to(device); and in the loop"
            " x, y = x.to(device), y.to(device). Inside forward create tensors with"
            " device=x.device, and keep constant tensors as buffers (self.register_buffer)."
            " Build every layer in __init__ and hold lists of layers in nn.ModuleList; the"
            " traceback's last line in your code shows which operation got the stray tensor."
        ),
    )


# Target dtype per loss, the usual cause of a Long/Float clash.
LOSS_TARGETS = (
    "CrossEntropyLoss and NLLLoss want class indices as int64 (y = y.long(), shape [N]);"
    " BCEWithLogitsLoss, BCELoss, MSELoss and L1Loss want float targets shaped like the output"
    " (y = y.float(), and y.unsqueeze(1) for an [N, 1] output)."
)


def _dtype_advice(expected: str, found: str) -> tuple[str, str]:
    """(cause, fix) for a dtype clash, most specific first."""
    pair = {expected.lower(), found.lower()}
    if expected.lower() == "long" and found.lower() == "int":
        return (
            "the labels are int32, not int64: NumPy's default integer on Windows is int32 (and"
            " some datasets store int32), while CrossEntropyLoss and NLLLoss take int64 class"
            " indices",
            f"convert the labels once: y = y.long() (or .astype(np.int64) in the dataset). {LOSS_TARGETS}",
        )
    if expected.lower() == "long" and found.lower() in ("float", "double"):
        return (
            "a loss that takes class indices (CrossEntropyLoss, NLLLoss) got a"
            f" {found} target, e.g. one-hot rows or labels read as floats",
            f"pass class indices: y = y.long() (shape [N]). {LOSS_TARGETS}",
        )
    if found.lower() in ("long", "int") and expected.lower() in ("float", "double"):
        return (
            "integer data reached a loss or layer that computes in floating point: labels"
            " given to MSELoss/BCEWithLogitsLoss, or raw integer inputs",
            f"convert with .float() where the tensor is made. {LOSS_TARGETS}",
        )
    if pair == {"double", "float"}:
        return (
            "data came from NumPy, whose default float64 becomes a Double tensor",
            "convert once when loading: torch.from_numpy(a).float() or torch.tensor(a,"
            " dtype=torch.float32); do not call model.double() (half the speed)",
        )
    if pair == {"half", "bfloat16"}:
        return (
            "float16 and bfloat16 meet: the weights were cast to one half type (model.half(),"
            " torch_dtype=torch.float16, a script's weight_dtype) while mixed precision (autocast,"
            " accelerate's mixed_precision) computes in the other",
            "use one half type: cast the model to the dtype mixed precision runs in (bfloat16 under"
            " bf16 mixed precision), or keep the trained weights float32 and let autocast cast per operation",
        )
    if pair & {"half", "bfloat16"}:
        return (
            "half-precision weights meet float32 activations (or the reverse): part of the"
            " model or its input was cast by hand (.half(), torch_dtype=...) and another part"
            " was not",
            "use one dtype: run the forward pass under torch.autocast(device_type, dtype=...),"
            " which casts per operation, instead of manual .half()/.bfloat16() calls; or cast"
            " the input to the weights' dtype: x = x.to(model.dtype) (Hugging Face models;"
            " next(model.parameters()).dtype for any module)",
        )
    return (
        f"a {found} tensor reached an operation that needs {expected}",
        f"convert it where it is made, e.g. tensor.to(torch.{expected.lower()}). {LOSS_TARGETS}",
    )


# torch's spellings of a dtype, for a name whose letters' case a user changed when retyping it
DTYPE_NAMES = {
    name.lower(): name for name in ("Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Byte", "Bool")
}


def _retyped(name: str) -> str:
    """``FLoat`` -> ``Float``; a name torch prints ("float", "Float", "BFloat16") stays as it is."""
    canonical = DTYPE_NAMES.get(name.lower())
    return canonical if canonical and name not in (canonical, name.lower()) else name


def _scalar_type(match: re.Match[str], text: str) -> Explanation:
    # the regex has numbered alternatives (found2, expected3, ...): fold them onto one name
    groups = {name.rstrip("2345"): value for name, value in match.groupdict().items() if value}
    # torch prints "float != c10::BFloat16" in this wording: name both the way the others do
    expected, found = (groups.get(key, "?") for key in ("expected", "found"))
    expected, found = (_retyped(name) for name in (expected, found))
    expected, found = expected[:1].upper() + expected[1:], found[:1].upper() + found[1:]
    if "op" in groups:  # "nll_loss_forward..." not implemented for 'Float'
        op, found = groups["op"], groups["dtype"]
        expected = "Long" if "nll_loss" in op or "cross_entropy" in op else "another dtype"
    advice = _told(expected, found, text) or integer_input_to_layer(expected, found, text, match.start())
    return _dtype_answer(expected, found, autocast=bool(AUTOCAST.search(text)), advice=advice)


# What the message or the paste says beyond the two dtypes (round 8): the operation that raised is
# torch.cat/stack ("sequence element 1 in sequence argument ... 'tensors'"), or the model is quantized.
SEQUENCE = re.compile(r"for sequence element (\d+) in sequence argument at position #\d+ '(\w+)'")
QUANTIZED = re.compile(r"\bint8\b|\bint4\b|load_in_[48]bit|bitsandbytes|\bqlora\b|\b[48]-?bit\b", re.IGNORECASE)


# Round 10: compiled code that reads a tensor's memory as one C++ type ("(data_ptr<long int> at
# .../TensorMethods.h)"): a kernel of torch's or an extension's asked for the tensor's raw data, not a loss.
DATA_PTR = re.compile(r"data_ptr<\s*(?:long|int64_t|int|float|double)\b[\w ]*>")


def _told(expected: str, found: str, text: str) -> tuple[str, str] | None:
    if DATA_PTR.search(text):
        indices = expected in ("Long", "Int")
        return (
            f"compiled code (an extension's kernel or a torch op) reads one of its inputs' memory as {expected}"
            f" ({DATA_PTR.search(text).group(0)}) and got a {found} tensor"
            + (": it takes that tensor as indices (an index, a batch or cluster vector, an edge list),"
               " which was built as floats" if indices else ""),
            f"create that argument as {expected} where it is made (torch.tensor(..., dtype=torch.{expected.lower()})"
            f" or t.{expected.lower()}() before the call); check the function's documentation for each"
            " argument's dtype",
        )
    sequence = SEQUENCE.search(text)
    if sequence:
        element, argument = sequence.groups()
        return (
            f"torch.cat or torch.stack (its argument '{argument}') got tensors of different dtypes: element"
            f" {element} is {found} where the others are {expected}, typically an integer tensor made from"
            " indices, arange or integer arithmetic",
            f"make element {element} {expected} where it is made (t.float(), or t.to(other.dtype)) before"
            " joining them",
        )
    if {expected.lower(), found.lower()} == {"float", "half"} and QUANTIZED.search(text):
        return (
            "the paste loads the model quantized (int8 or 4-bit): its layers compute in float16 while the"
            " trainable part (LoRA adapters, a new head) or the input stays float32",
            "load the base model in half precision for this recipe (torch_dtype=torch.float16) instead of the"
            " quantized weights, or prepare it for quantized training (peft's prepare_model_for_kbit_training)"
            " and run the step under torch.autocast",
        )
    return None


# The paste says the forward runs under mixed precision.
AUTOCAST = re.compile(r"autocast|torch\.cuda\.amp|GradScaler", re.IGNORECASE)
UNDER_AUTOCAST = (
    "under autocast an operation that autocast does not manage gets float16 activations next to"
    " float32 tensors of its own: a custom CUDA extension op (DCN, a fused kernel) with a float32"
    " kernel only, or a hand-made tensor or buffer combined with autocast's outputs",
    "run that operation in float32: decorate its forward with"
    " @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32) (torch.amp.custom_fwd(device_type='cuda',"
    " cast_inputs=torch.float32) in newer torch), or wrap the call in"
    " torch.autocast('cuda', enabled=False) and pass x.float()",
)


def _dtype_answer(
    expected: str, found: str, *, autocast: bool = False, advice: tuple[str, str] | None = None
) -> Explanation:
    halves = {expected.lower(), found.lower()} == {"float", "half"}
    cause, fix = advice or (UNDER_AUTOCAST if autocast and halves else _dtype_advice(expected, found))
    return answer(
        title=f"Wrong dtype: expected {expected}, found {found}",
        meaning=(
            f"An operation needed {expected} tensors and got {found};"
            " torch does not convert them for you."
        ),
        cause=sentence(cause),
        fix=sentence(fix),
    )


def _input_weight_type(match: re.Match[str], text: str) -> Explanation:
    """``Input type (torch.cuda.HalfTensor) and weight type (torch.FloatTensor)``: a device
    clash, a dtype clash, or both (then the device, which hides the other, comes first)."""
    if match.group(3):
        return _same_type(*match.groups()[2:])
    input_type, weight_type = match.group(1), match.group(2)

    def device(tensor_type: str) -> str:
        return "cuda" if ".cuda." in tensor_type else "cpu"

    def dtype(tensor_type: str) -> str:
        name = tensor_type.rsplit(".", 1)[-1].removeprefix("c10::").removesuffix("Tensor")
        return name[:1].upper() + name[1:]  # "float" in newer wordings, "Float" in older

    if device(input_type) != device(weight_type):
        which = f" (the input is {input_type}, the weights {weight_type})"
        return _device_answer(device(input_type), device(weight_type), which=which)
    return _dtype_answer(dtype(weight_type), dtype(input_type))


def _legacy_type(tensor_type: str) -> tuple[str, str]:
    """(device, dtype) of an older torch's type name: ``torch.cuda.HalfTensor`` or ``CUDABFloat16Type``."""
    backend = re.fullmatch(r"(CUDA|CPU)(\w+)Type", tensor_type)
    if backend:
        return backend.group(1).lower(), backend.group(2)
    return ("cuda" if ".cuda." in tensor_type else "cpu"), tensor_type.rsplit(".", 1)[-1].removesuffix("Tensor")


def _same_type(first: str, second: str, first_type: str, second_type: str) -> Explanation:
    """torch 1.x: ``Expected tensor for argument #1 'input' to have the same type as tensor for argument
    #2 'weight'; but type A does not equal B``: a device clash, a dtype clash, or both (device first)."""
    first_device, first_dtype = _legacy_type(first_type)
    second_device, second_dtype = _legacy_type(second_type)
    if first_device != second_device:
        which = f" ({first} is {first_type}, {second} {second_type})"
        return _device_answer(first_device, second_device, which=which)
    return _dtype_answer(second_dtype, first_dtype)


def _legacy_devices(match: re.Match[str], text: str) -> Explanation:
    """torch 0.4-1.x wordings of a device clash; the same type names can also differ by dtype."""
    groups = {name: (value or "").replace("\n", "") for name, value in match.groupdict().items()}
    if groups["expected"]:
        expected, found, argument = groups["expected"], groups["found"], groups["argument"]

        def device(tensor_type: str) -> str:
            return "cuda" if ".cuda." in tensor_type else "cpu"

        if device(expected) == device(found):
            name = lambda tensor_type: tensor_type.rsplit(".", 1)[-1].removesuffix("Tensor")  # noqa: E731
            return _dtype_answer(name(expected), name(found))
        return _device_answer(device(found), device(expected), which=f" ({argument} is {found})")
    backend, got = groups["backend"] or groups["backend_b"], groups["got"] or groups["got_b"]
    if backend:
        if backend == got and groups["dtype"] != groups["got_dtype"]:
            return _dtype_answer(groups["dtype"], groups["got_dtype"])
        which = f" ({groups['argument2']} is on {got})" if groups["argument2"] else ""
        return _device_answer(got.lower(), backend.lower(), which=which)
    if groups["type_w"]:
        got, wanted = groups["type_g"], groups["type_w"]
        return _device_answer(got, wanted, which=f" ({groups['argument4']} is on {got})")
    if groups["on"]:
        on, wanted = (name.lower().replace("gpu", "cuda") for name in (groups["on"], groups["wanted"]))
        return _device_answer(on, wanted, which=f" ({groups['argument3']} is on {groups['on']})")
    # "the current device": the other side may be the CPU or another GPU than torch.cuda.current_device()
    return _device_answer(
        "the CPU or another GPU", "the current GPU", which=" (an embedding's weight and the indices it looks up)"
    )


KNOWN: list[KnownError] = [
    known(
        "linear-shapes",
        r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)",
        _linear_shapes,
    ),
    known(
        "two-devices",
        r"Expected all tensors to be on the same device, but (?:found at least two devices,"
        r" ([\w:]+) and ([\w:]+)"
        r"|got (\w+) is on ([\w:]+), different from other tensors on ([\w:]+))",
        _two_devices,
    ),
    known(
        "two-devices",
        # older wordings; a terminal may have broken a type name across lines ("torch.Flo\natTensor")
        r"Expected object of type (?:Variable\[)?(?P<expected>torch\.[\w.]+(?:\n[\w.]+)?)\]? but found type"
        r" (?:Variable\[)?(?P<found>torch\.[\w.]+(?:\n[\w.]+)?)\]? for argument #\d+ '(?P<argument>\w+)'"
        r"|expected backend (?P<backend>\w+) and dtype (?P<dtype>\w+) but got backend (?P<got>\w+)"
        r" and dtype (?P<got_dtype>\w+)"
        r"|Expected object of backend (?P<backend_b>\w+) but got backend (?P<got_b>\w+) for argument"
        r" #\d+ '(?P<argument2>\w+)'"
        r"|Tensor for argument #\d+ '(?P<argument3>\w+)' is on (?P<on>CPU|GPU|CUDA), but expected it"
        r" to be on (?P<wanted>CPU|GPU|CUDA)"
        r"|Expected object of device type (?P<type_w>\w+) but got device type (?P<type_g>\w+) for"
        r" argument #\d+ '(?P<argument4>\w+)'"
        r"|Input, output and indices must be on the current device",
        _legacy_devices,
    ),
    known(
        "input-weight-type",
        # the bias is named when the weight already matched: "and bias type (c10::Half)"
        # round 9: a paste cut mid-word ("... should be th") at the end of the text
        r"Input type \(([\w.:]+)\) and (?:weight|bias) type \(([\w.:]+)\) should be(?: the same| ?t?h?e?\s*\Z)"
        # torch 1.x's wording, raised by a convolution's backward too ('grad_output' against 'weight')
        r"|Expected tensor for argument #\d+ '(\w+)' to have the same type as tensor for argument #\d+"
        r" '(\w+)'; but type ([\w.:]+) does not equal ([\w.:]+)",
        _input_weight_type,
    ),
    known(
        "dtype-mismatch",
        r"expected scalar type (?P<expected>\w+) but found (?P<found>\w+)"
        r"|Found dtype (?P<found2>\w+) but expected (?P<expected2>\w+)"
        # a retyped message may change letters' case ("scaLar type Long ... scalar type FLoat")
        r"|(?i:Expected object of scalar type) (?P<expected3>\w+) (?i:but got scalar type) (?P<found3>\w+)"
        r"|must have the same dtype, but got (?P<found4>\w+) and (?P<expected4>\w+)"
        r"|expected mat1 and mat2 to have the same dtype, but got: (?:struct )?(?:c ?10::)?"
        r"(?P<found5>\w+) ?!= ?(?:struct )?(?:c ?10::)?(?P<expected5>\w+)"
        r"|\"(?P<op>\w+)\" not implemented for '(?P<dtype>(?!Half|BFloat16)\w+)'",
        _scalar_type,
    ),
]
