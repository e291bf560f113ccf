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
]
