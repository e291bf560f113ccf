"""Known errors of torch.compile's tracer (dynamo) that name a Python habit it cannot trace, and
(round 10) the two ways torch.compile stops on code: a construct the tracer refuses
(``torch._dynamo.exc.Unsupported: <what>``), and a failure inside the compiler itself (the
tracer's ``InternalTorchDynamoError``, Inductor's ``LoweringException``), read by the grammar of the
exception's class, not by the construct's words."""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, fact, known


def _data_dependent(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="torch.compile met a tensor's value read in Python (data-dependent code)",
        meaning=(
            "While tracing, tensors are symbolic; _local_scalar_dense is the op behind .item(),"
            " int(t), float(t) or a Python if on a tensor, which needs a real value."
        ),
        cause=(
            "The compiled function reads a tensor's value in Python: .item(), .tolist(), int(x),"
            " if x.sum() > 0:, a loop bounded by a tensor, or a shape computed from data, in the"
            " model or a custom layer (often an RNN/LSTM loop written in Python)."
        ),
        fix=(
            "Keep the computation in tensors (torch.where instead of if, masks instead of"
            " variable-length loops), move the value-reading part outside the compiled function"
            " (or mark it with torch.compiler.disable), or set"
            " torch._dynamo.config.capture_scalar_outputs = True on a newer torch."
        ),
    )


# The newer wording explains itself on the next lines ("  Explanation: Dynamo does not know how to trace ...")
EXPLANATION = r"\n\s*Explanation:\s*([^\n]+)"


def _unsupported(match: re.Match[str], text: str) -> Explanation:
    what = match.group(1).strip().rstrip(".") or "a construct"
    if what.count(")") > what.count("("):  # a title line's closing parenthesis
        what = what[: what.rfind(")")]
    detail = fact(text[match.start():], EXPLANATION)
    said = f" ({detail.strip()})" if detail else ""
    return answer(
        title=f"torch.compile cannot trace part of the compiled code: {what[:120]}",
        meaning=(
            f"Dynamo, torch.compile's tracer, met {what[:200]}{said} in the code it was compiling and has no"
            " rule for it. Such code normally only splits the graph (a graph break); it stops the compile where"
            " breaks are not allowed (fullgraph=True, torch.export) or where the tracer is inlining a call."
        ),
        cause=(
            "The compiled function (the model's forward, or a decorator's or library's wrapper it calls) does"
            " something in Python that this torch's tracer does not support: a call on a Python object it has no"
            " model of (hasattr on a tensor, ctypes, a C extension's object), or a library construct newer than"
            " the tracer."
        ),
        fix=(
            "Keep that code out of the compiled region: mark the function that does it with"
            " @torch.compiler.disable (torch._dynamo.disable on older torch), or compile a smaller part (the"
            " model's blocks, not the wrapper); let the graph break by compiling with fullgraph=False; or"
            " rewrite it with tensors. A newer torch traces more constructs. TORCH_LOGS=graph_breaks shows"
            " where it happens."
        ),
    )


def _dynamo_named(match: re.Match[str], text: str) -> bool:
    """The exception is dynamo's: named by its module path, or dynamo's own files are in the paste."""
    return match.group(0).startswith("torch._dynamo") or bool(re.search(r"torch[\\/]_dynamo[\\/]", text))


# The paste shows symbolic sizes (s0, s2 in Mod(s2, 8)) or asks for them: compiled with dynamic shapes.
DYNAMIC = re.compile(r"dynamic\s*=\s*True|\b(?:Mod|FloorDiv|Eq|Ne|Max|Min|CeilDiv)\(s\d+\b|Sym(?:Int|Bool)\b")


def _compiler_bug(match: re.Match[str], text: str) -> Explanation:
    stage = "Inductor, the compiler that generates kernels" if match.group(2) is not None else "Dynamo, the tracer"
    inner = (match.group(1) or match.group(2) or "").strip()
    dynamic = DYNAMIC.search(text)
    shapes = (
        f" The paste shows symbolic sizes ({dynamic.group(0)}): the graph was compiled with dynamic shapes,"
        " the path such failures most often take."
        if dynamic else ""
    )
    return answer(
        title=f"torch.compile failed inside {stage.split(',')[0]} ({inner[:120]})" if inner
        else f"torch.compile failed inside {stage.split(',')[0]}",
        meaning=(
            f"An error was raised inside {stage}, not by the code it compiles: the exception's class marks"
            f" an internal failure.{shapes}"
        ),
        cause=(
            "A bug or gap in this torch's torch.compile, met on this model's code (a decorator or wrapper the"
            " tracer steps through, a shape expression under dynamic shapes); the same code runs without"
            " torch.compile."
        ),
        fix=(
            ("Compile without dynamic shapes (torch.compile(model, dynamic=False)) first; u" if dynamic else "U")
            + "pgrade torch (such failures are often fixed in a later release); keep the function that"
            " triggers it out of the compiled region with @torch.compiler.disable; or train without"
            " torch.compile meanwhile (backend=\"aot_eager\" tells a tracer failure from an Inductor one)."
            " Report it to PyTorch with the minifier (TORCHDYNAMO_REPRO_AFTER=\"aot\")."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "compile-data-dependent",
        r"trying to get value out of a tracing tensor with aten\._local_scalar_dense",
        _data_dependent,
    ),
    # Jupyter prints the class's short name ("Unsupported: call_function ..."): then dynamo's frames must show
    known(
        "compile-unsupported",
        r"(?:torch\._dynamo\.exc\.|^)Unsupported:[ \t]*([^\n]*)",
        _unsupported,
        re.MULTILINE,
        when=_dynamo_named,
    ),
    known(
        "compile-internal-error",
        r"torch\._dynamo\.exc\.InternalTorchDynamoError:?[ \t]*([^\n]*)"
        # torch 2.6+ wraps it: "torch._inductor.exc.InductorError: LoweringException: ..."
        r"|torch\._inductor\.exc\.(?:InductorError: )?LoweringException:?[ \t]*([^\n]*)",
        _compiler_bug,
    ),
]
