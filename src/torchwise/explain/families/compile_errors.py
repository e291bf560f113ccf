"""Known errors from torch.compile, torch.export and ONNX export.

A recompilation warning is not a crash: the function falls back to eager and the run goes on,
slower. Its guard reason names what changed between calls, and the answer follows it.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, fact, known

TRITON = re.compile(r"triton", re.I)


def _backend_failed(match: re.Match[str], text: str) -> Explanation:
    backend = match.group(1)
    inner = (match.group(2) or "").strip() or (fact(text, r"raised:\s*\n\s*(\S[^\n]*)") or "")
    shown = f" ({inner[:160]})" if inner else ""
    if TRITON.search(inner) or TRITON.search(text[match.start():]):
        driver = (
            " With 'device kernel image is invalid' the NVIDIA driver is too old for the code"
            " triton generates: update the driver."
            if "kernel image is invalid" in text
            else ""
        )
        return answer(
            title=f"torch.compile's {backend} backend failed in triton{shown}",
            meaning=(
                f"torch.compile traced the model, then the {backend} backend failed to compile"
                " the graph: inductor generates GPU kernels with triton, and triton did not work."
            ),
            cause=(
                "The installed triton is not the one this torch was built with (each torch"
                " release pins one triton version; a separate `pip install triton` or another"
                " package replaced it), or triton is missing (it ships for Linux; on Windows it"
                " is a separate package)." + driver
            ),
            fix=(
                "Reinstall torch from its index so its own triton comes with it:"
                " pip install --force-reinstall torch --index-url <the index you installed"
                " from> (pip show triton then shows the pinned version). To keep training"
                ' meanwhile, drop torch.compile or use torch.compile(model, backend="eager"),'
                " which checks the graph capture without inductor."
            ),
        )
    return answer(
        title=f"torch.compile's {backend} backend failed{shown}",
        meaning=f"torch.compile traced the model, then the {backend} backend raised while compiling the graph.",
        cause="An operator or pattern the backend cannot compile, or a bug in the backend.",
        fix=(
            'Check the capture alone with torch.compile(model, backend="eager"); run with'
            " TORCH_LOGS=\"+dynamo\" for the failing graph, and report it with the minifier"
            " (TORCHDYNAMO_REPRO_AFTER=\"aot\"). Drop torch.compile meanwhile."
        ),
    )


def _recompile_limit(match: re.Match[str], text: str) -> Explanation:
    limit = match.group(1) or match.group(2) or match.group(3) or "8"
    name = fact(text, r"function:? '(\w+)'")
    function = f"'{name}'" if name else "a compiled function"
    reason = fact(text, r"last reason: (?:\d+/\d+: )?([^\n]+)") or fact(
        text, r"guard failures: \[\['([^']+)'\]"
    )
    because = f" The last guard that failed: {reason.strip()}" if reason else ""
    if reason and re.search(r"size mismatch|stride mismatch|tensor '.*' size", reason):
        cause = "The input shapes change from call to call, and each new shape is compiled anew."
    elif reason and re.search(r"len\(|== \d|___check_obj_id|id\(", reason):
        cause = (
            "A Python value read by the function (a list's length, an int argument, a new"
            " object each call) changes every call, and each value is compiled anew."
        )
    else:
        cause = "Something the compiled code depends on (shapes, Python values) changes every call."
    return answer(
        title=f"torch.compile gave up recompiling {function} after {limit} versions",
        meaning=(
            f"torch.compile compiled {function} {limit} times, each time for new inputs that"
            " broke its guards, and now runs it without compilation (eager) - slower, not"
            f" wrong; with fullgraph=True it raises instead.{because}"
        ),
        cause=cause,
        fix=(
            "Let one compiled version serve all shapes: torch.compile(model, dynamic=True), or"
            " torch._dynamo.mark_dynamic(x, 0) for the dimension that varies; pad inputs to a"
            " few fixed sizes; keep changing Python values (counters, growing lists) out of the"
            " compiled function. TORCH_LOGS=recompiles prints every recompilation and why. Raise"
            " torch._dynamo.config.cache_size_limit only when the number of variants is known"
            " and small."
        ),
    )


RANDOM_OPS = re.compile(r"rand|uniform|normal|bernoulli|multinomial|dropout", re.I)


def _onnx_operator(match: re.Match[str], text: str) -> Explanation:
    op, opset = match.group(1), match.group(2)
    since = fact(text, r"Support for this operator was added in version (\d+)")
    if since:
        cause = f"{op} exists in ONNX from opset {since} on; the export asked for opset {opset}."
        fix = f"Export with that opset: torch.onnx.export(model, args, path, opset_version={since})."
    elif RANDOM_OPS.search(op):
        cause = (
            f"{op} is a random operator inside forward (sampling, noise); ONNX has no"
            " equivalent for it in this exporter."
        )
        fix = (
            "Export the model in model.eval() with the random part taken out of the exported"
            " path (do the sampling outside the model, or pass the noise as an input)."
        )
    else:
        cause = f"The exporter has no ONNX translation for {op} at opset {opset}."
        fix = (
            "Try a newer opset (opset_version=17) and a newer torch; torch.onnx.export(...,"
            " dynamo=True) uses the newer exporter, which covers more operators; or rewrite that"
            " step with supported operations."
        )
    return answer(
        title=f"ONNX export: {op} is not supported at opset {opset}",
        meaning=f"torch.onnx.export translates each operator into ONNX; {op} has no translation at opset {opset}.",
        cause=cause,
        fix=fix,
    )


def _data_dependent(match: re.Match[str], text: str) -> Explanation:
    expression = match.group(1).strip()
    return answer(
        title=f"torch.export cannot decide {expression}: it depends on tensor values",
        meaning=(
            f"While tracing, a size or value computed from the data (an unbacked symbol such as"
            f" u0) reached a check: {expression}. Export must produce one graph for all inputs,"
            " so it cannot branch on it."
        ),
        cause=(
            "A value read from a tensor (.item(), .tolist(), nonzero(), a boolean mask, unique)"
            " is used in Python control flow or to pick a shape."
        ),
        fix=(
            "Tell export what holds right after the value is made: torch._check(n > 0) or"
            " torch._check_is_size(n); or replace the Python branch with torch.cond /"
            " torch.where. TORCH_LOGS=\"dynamic\" shows the line that asked. For ONNX, the"
            " legacy exporter (dynamo=False) traces without this check."
        ),
    )


# The first torch release whose torch.compile runs on each Python (dynamo follows CPython's
# bytecode, so each new Python needs a new torch).
COMPILE_PYTHON = {"3.11": "2.1", "3.12": "2.4", "3.13": "2.6"}


def _compile_platform(match: re.Match[str], text: str) -> Explanation:
    python = match.group(1) or match.group(2)
    if python:
        first = COMPILE_PYTHON.get(python)
        since = f" torch {first} is the first release whose compile runs on Python {python}." if first else ""
        return answer(
            title=f"This torch's torch.compile does not run on Python {python}+",
            meaning=(
                "torch.compile (dynamo) rewrites Python bytecode, and each Python release changes"
                f" it; this torch predates Python {python}.{since}"
            ),
            cause=f"The environment has Python {python} or newer with an older torch.",
            fix=(
                "Upgrade torch (pip install -U torch with your CUDA index), or run on an older"
                " Python; meanwhile train without compile (drop torch.compile, the project's"
                " compile=False option, or TORCHDYNAMO_DISABLE=1)."
            ),
        )
    return answer(
        title="This torch has no torch.compile on Windows",
        meaning=(
            "torch.compile's default backend (inductor) generates kernels with triton, which"
            " this torch does not support on Windows, so it refuses to compile there."
        ),
        cause="torch.compile (or a project's compile option) was called on Windows.",
        fix=(
            "Run without compile: drop torch.compile, pass the project's compile=False option, or"
            " set TORCHDYNAMO_DISABLE=1 - the model runs the same, in eager mode. To compile,"
            " use Linux or WSL2 (recent torch releases also compile on Windows)."
        ),
    )


def _triton_gpu_too_old(match: re.Match[str], text: str) -> Explanation:
    gpu, capability = match.group(1), match.group(2)
    if gpu:
        return answer(
            title=f"{gpu.strip()} (CUDA capability {capability}) is too old for triton",
            meaning=(
                "torch.compile's inductor backend writes its GPU kernels in triton, and triton"
                f" needs CUDA capability 7.0 or newer (Volta); this GPU has {capability}."
            ),
            cause="torch.compile (or a library's triton kernels) on a Pascal or older GPU.",
            fix=(
                "Train without compile on this GPU: drop torch.compile, the project's"
                " compile=False option, or TORCHDYNAMO_DISABLE=1; torch.compile(model,"
                ' backend="aot_eager") still traces without triton. Or use a GPU of capability'
                " 7.0 or newer. bf16 needs capability 8.0: use float16 or float32 there."
            ),
        )
    return answer(
        title="triton failed compiling a kernel for this GPU generation (an mma layout assertion)",
        meaning=(
            "triton's compiler asserted while lowering a matrix multiply: its tensor-core"
            " (mma) path for older GPUs such as V100 (sm_70) is barely supported, and half"
            " precision takes that path."
        ),
        cause="A triton kernel (torch.compile's, or a library's own) in fp16 on a pre-Ampere GPU.",
        fix=(
            "Train that part in float32 on this GPU (no fp16/mixed precision), or use the"
            " library's plain PyTorch path instead of its triton kernels; an Ampere or newer"
            " GPU runs them as written."
        ),
    )


def _export_constraint(match: re.Match[str], text: str) -> Explanation:
    name = match.group(1) or match.group(4) or match.group(5)
    where = match.group(2) or ""
    constant = match.group(3) or match.group(6) or fact(text, rf"{re.escape(name)} = (\d+)\s*$", re.MULTILINE)
    dimension = f" ({where})" if where else ""
    value = f" {constant}" if constant else " the example's size"
    if constant == "1":
        cause = (
            f"The example input has size 1 in {name}: export treats sizes 0 and 1 as special and"
            " fixes them, so a dimension meant to vary must not be 1 in the example."
        )
        fix = f"Export with an example whose {name} dimension is 2 or more (a batch of 2)."
    else:
        cause = (
            f"The model's code fixes {name}{dimension} to{value}: a view or reshape with a"
            f" literal size, a branch on x.shape, a buffer or positional table of length{value},"
            " or a Python int taken from the shape."
        )
        fix = (
            f"Find the line with TORCH_LOGS=\"+dynamic\" and compute the size from the tensor"
            " (x.shape[1], -1 in view) instead of a constant; if that dimension is really fixed,"
            f" drop it from dynamic_shapes (the suggested fix: {name} ={value}). torch >= 2.5"
            " also takes Dim.AUTO, which lets export decide."
        )
    return answer(
        title=f"torch.export: dimension {name} was declared dynamic but the model fixes it to{value}",
        meaning=(
            f"dynamic_shapes said {name}{dimension} may vary, but tracing found code that only"
            f" works for{value}, so the exported program could not accept other sizes."
        ),
        cause=cause,
        fix=fix,
    )


def _trace_constant_output(match: re.Match[str], text: str) -> Explanation:
    which = match.group(1)
    return answer(
        title=f"Output {which} of the traced model does not depend on its inputs",
        meaning=(
            "torch.jit.trace (and torch.onnx.export, which traces) records the operations from"
            f" the inputs to each output; output {which} came out of none of them, so the tracer"
            " cannot tell how to compute it."
        ),
        cause=(
            "forward returns a value built from constants or Python numbers (a scale, a"
            " parameter-free tensor made with torch.tensor(...), a number turned into a tensor),"
            " or one computed through .item()/.numpy() so the link to the inputs was cut."
        ),
        fix=(
            "Return only tensors computed from the inputs; drop the constant output from the"
            " exported forward (a wrapper module that returns the others), or keep the link"
            " (avoid .item()/.numpy()/torch.tensor(x) on traced values)."
        ),
    )


def _jit_hooks(match: re.Match[str], text: str) -> Explanation:
    module = match.group(1)
    return answer(
        title="torch.jit cannot script or trace a module that has hooks",
        meaning=(
            f"TorchScript compiles forward only; {module} has hooks registered (forward or"
            " backward), which it cannot carry into the compiled module, so it refuses."
        ),
        cause=(
            "A library or the code registered hooks on the model (opacus for per-sample"
            " gradients, feature extractors, pruning or visualisation tools) before jit."
        ),
        fix=(
            "Remove the hooks first (keep the handles register_*_hook returns and call"
            " handle.remove()), or export a copy of the model made before they were added;"
            " torch.export / torch.compile handle hooked models better than torch.jit."
        ),
    )


def _onnx_attribute(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="ONNX export: an operator attribute is computed at run time",
        meaning=(
            "ONNX needs some operator arguments (kernel sizes, output sizes, axes, pads) as"
            " constants in the graph; one was computed from a tensor while tracing."
        ),
        cause=(
            "The model derives such an argument from data or a tensor's size, e.g."
            " F.adaptive_avg_pool2d / F.interpolate with a size that is a tensor, a kernel size"
            " from x.shape turned into a tensor, or .item() on a traced value."
        ),
        fix=(
            "Make the argument a Python int fixed for the export (a constant, or int(...) of a"
            " static shape), or use an operator whose size ONNX takes as an input; a newer"
            " exporter (torch.onnx.export(..., dynamo=True)) handles more of these."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "compile-backend-failed",
        r"BackendCompilerFailed: backend='(\w+)' raised:?([^\n]*)",
        _backend_failed,
    ),
    known(
        "recompile-limit",
        r"hit config\.(?:cache_size_limit|recompile_limit) \((\d+)\)"
        r"|hit recompilation cache limit \((\d+)\)"
        r"|(?:recompile_limit|cache_size_limit) reached(?: with fullgraph=True)?()",
        _recompile_limit,
    ),
    known(
        "onnx-unsupported-operator",
        r"Exporting the operator '?([\w:.]+)'? to ONNX opset version (\d+) is not supported",
        _onnx_operator,
    ),
    known(
        "export-data-dependent",
        r"Could not guard on data-dependent expression (.+?)(?: \(unhinted|\.?\s*$)",
        _data_dependent,
        re.MULTILINE,
    ),
    known(
        "compile-unsupported-platform",
        r"Windows not yet supported for torch\.compile"
        r"|Python (3\.\d+)\+ not yet supported for torch\.compile"
        r"|Dynamo is not supported on Python (3\.\d+)\+",
        _compile_platform,
    ),
    known(
        "triton-gpu-too-old",
        r"Found (.+?) which is too old to be supported by the triton GPU compiler.*?"
        r"your device is of CUDA capability (\d+\.\d+)"
        r"|Unexpected mma -> mma layout conversion()()",
        _triton_gpu_too_old,
    ),
    known(
        "export-constraint-violation",
        r"Not all values of (\w+) = (L\[[^\]]+\]\.size\(\)\[\d+\]) in the specified range[^\n]*?"
        r" are valid because \1 was inferred to be a constant \((\d+)\)"
        r"|Constraints violated \((\w+)\)!"
        r"|You marked (\w+) as dynamic but your code specialized it to be a constant \((\d+)\)",
        _export_constraint,
    ),
    known(
        "trace-constant-output",
        r"output (\d+) \([^)]*\) of traced region did not have observable data dependence",
        _trace_constant_output,
        re.DOTALL,
    ),
    known(
        "jit-hooks",
        r"Modules that have (?:backward )?hooks assigned can't be compiled(?:: ([\w.]+))?",
        _jit_hooks,
    ),
    known(
        "onnx-attribute-not-constant",
        r"Failed to export an ONNX attribute,? since it's not constant",
        _onnx_attribute,
    ),
]
