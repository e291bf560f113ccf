"""Reading a pasted error the way a person does.

A paste is rarely one clean message. People paste the message first and the traceback after,
cut the traceback short, add their own question or ``pip list`` below it, or quote a message
that carries its own "Suggested fixes:" or "Hint:" lines. A reader knows which lines are the
error and which are frames, source lines, suggestions or chatter; this module says so for
each line, so that ``lookup`` can prefer a message on the error line over the same words in a
frame's source line (``raise RuntimeError("...")``) or in a suggestion. Pure text work.

>>> paste = Paste("RuntimeError: boom\\nTraceback (most recent call last):\\n"
...               '  File "train.py", line 3, in <module>\\n    loss.backward()\\n')
>>> paste.error_line()
'RuntimeError: boom'
>>> paste.kind_at(paste.text.index("loss.backward"))
'frame'
>>> user_frame(paste.text)
Frame(file='train.py', line=3, function='<module>', source='loss.backward()')
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# "  File "x.py", line 3, in f", IPython's "File ~/x.py:3, in f(...)" and "<ipython-input-1> in f",
# C++ "frame #0:", rich's boxed tracebacks, and the "^^^^" / "~~~~" markers under a source line.
FRAME_START = re.compile(
    r"""^\s*(?:
        File\ ["'~/\\.\w]        # CPython and IPython 8 frames
      | <ipython-input-[^>]*>\ in\ # IPython 7 frames
      | Cell\ In\s*\[            # Jupyter cells
      | frame\ \#\d+:            # c10 C++ stack
      | at\ [\w.$]+\(            # Java/JS-style stacks in logs
    )""",
    re.VERBOSE,
)
BOXED = re.compile(r"^\s*[│╭╰|]")  # rich tracebacks: every line sits inside a box
MARKER = re.compile(r"^\s*[\^~\s]+$")
IPYTHON_SOURCE = re.compile(r"^\s*(?:-+>\s*)?\d+\s")  # "---> 12 model(x)", "     11 x = 1"
# The line a Python exception is printed on: "RuntimeError: ...", "torch._dynamo.exc.X: ...",
# "KeyError: 'x'", markdown's "**RuntimeError: ...**", and c10's "what():  ...".
EXCEPTION = re.compile(
    r"^\s*[*`]*(?:[A-Za-z_][\w]*\.)*(?:[A-Za-z_]\w*)?"  # a bare "Exception: ..." too
    r"(?:Error|Exception|Exit|Interrupt|Failed|Warning)\b(?:\[[^\]]*\])?:(?:\s|$)"
    r"|^\s*what\(\):\s"
    # an exception class of a package named by its module path, whatever its name ends in
    # (torch._dynamo.exc.Unsupported, ...symbolic_shapes.GuardOnDataDependentSymNode)
    r"|^\s*[*`]*(?:[a-z_]\w*\.){2,}[A-Z]\w*:(?:\s|$)"
)
# What a launcher or a quote puts before each line: torchrun's "0: [rank0]:", a "> " quote.
# (round 8) and pytest's "E       " before each line of the exception it reports.
PREFIX = re.compile(r"^(?:\s*(?:\d+:|\[rank\d+\]:|>)(?= |$))+ ?|^E(?= {3}|\t)[ \t]+")
# A message's own advice, after the message: torch.export's "Suggested fixes:", autograd's
# "Hint:", dynamo's "Set TORCH_LOGS=...", "You can suppress this exception ...".
SUGGESTION = re.compile(
    r"^\s*(?:Suggested fixes|Suggestions?|Possible (?:fix|solution)s?|Hint|HINT|To fix|"
    r"You can suppress|Set TORCH_LOGS|For more information, run with|"
    r"Please (?:select|try|check|consider)|You may (?:want|need) to)\b"
)


# What a launcher prints when a worker process failed: a summary, not the worker's error.
# (round 8) accelerate launch and deepspeed re-raise a failed worker as CalledProcessError below its traceback.
LAUNCHER_SUMMARY = re.compile(
    r"ChildFailedError|ProcessRaisedException|failed \(exitcode|CalledProcessError: Command .* returned non-zero exit"
)


@dataclass
class Paste:
    """A pasted text with each line's kind: ``error``, ``frame``, ``suggestion`` or ``other``."""

    text: str
    starts: list[int] = field(init=False)
    kinds: list[str] = field(init=False)

    def __post_init__(self) -> None:
        lines = self.text.split("\n")
        self.starts, position = [], 0
        for line in lines:
            self.starts.append(position)
            position += len(line) + 1
        self.kinds = _kinds(lines)

    def line_number(self, position: int) -> int:
        low, high = 0, len(self.starts) - 1
        while low < high:  # the last line that starts at or before position
            middle = (low + high + 1) // 2
            if self.starts[middle] <= position:
                low = middle
            else:
                high = middle - 1
        return low

    def kind_at(self, position: int) -> str:
        return self.kinds[self.line_number(position)]

    def line_at(self, position: int) -> str:
        number = self.line_number(position)
        end = self.starts[number + 1] - 1 if number + 1 < len(self.starts) else len(self.text)
        return self.text[self.starts[number] : end]

    def error_line(self) -> str:
        """The line a reader would call the error: the exception that ends the last traceback,
        else the last exception-shaped line, else the last line that is not a frame. A
        launcher's summary that a worker failed (torchrun's ChildFailedError) is not the error
        when the worker's own exception is in the paste."""
        lines = self.text.split("\n")
        errors = [n for n, kind in enumerate(self.kinds) if kind == "error"]
        own = [n for n in errors if not LAUNCHER_SUMMARY.search(lines[n])]
        errors = own or errors
        if errors:
            return lines[errors[-1]].strip()
        rest = [n for n, kind in enumerate(self.kinds) if kind == "other" and lines[n].strip()]
        return lines[rest[-1]].strip() if rest else self.text.strip().splitlines()[-1].strip()


def _kinds(lines: list[str]) -> list[str]:
    kinds: list[str] = []
    in_frame = in_suggestion = False
    for line in (PREFIX.sub("", line) for line in lines):
        if EXCEPTION.search(line) and not BOXED.match(line):
            kind, in_frame, in_suggestion = "error", False, False
        elif FRAME_START.search(line) or BOXED.match(line):
            kind, in_frame, in_suggestion = "frame", True, False
        elif in_frame and (line.startswith((" ", "\t")) or MARKER.match(line) and line.strip()):
            kind = "frame"  # the source line(s) printed under a frame, and their ^^^ markers
        elif in_frame and IPYTHON_SOURCE.match(line):
            kind = "frame"
        elif SUGGESTION.search(line) or in_suggestion and line.strip():
            kind, in_frame, in_suggestion = "suggestion", False, True
        else:
            kind, in_frame = "other", False
            in_suggestion = in_suggestion and bool(line.strip())
        kinds.append(kind)
    return kinds


# A frame's header: CPython's '  File "x.py", line 3, in f', IPython 8's "File ~/x.py:3, in f(...)",
# IPython 7's "<ipython-input-1-ab> in f(...)"; the source line under it, IPython's "---> 12 x = f()".
FRAME_HEADER = re.compile(
    r"""^\s*(?:File\ "(?P<file>[^"]+)",\ line\ (?P<line>\d+),\ in\ (?P<function>\S+)
      | File\ (?P<file2>[^\s:][^:]*):(?P<line2>\d+),\ in\ (?P<function2>[\w<>.]+)
      | (?P<file3><ipython-input-[^>]*>)\ in\ (?P<function3>[\w<>.]+)\(
      | (?P<file4>[^"\s][^"]*)",\ line\ (?P<line4>\d+),\ in\ (?P<function4>\S+))  # cut short""",
    re.VERBOSE,
)
IPYTHON_ARROW = re.compile(r"^\s*-+>\s*(\d+)\s(.*)$")
# Where installed code lives: site-packages, the standard library, compiled modules; a path
# that a paste shortened to the package ("transformers/models/auto/x.py"); and a hub model's own
# code that transformers downloaded (trust_remote_code), which is not the user's code either.
LIBRARY = re.compile(
    r"site-packages|dist-packages|[\\/]lib[\\/]python\d|[Pp]ython\d+[\\/][Ll]ib[\\/]|<frozen|\.pyx$"
    r"|^<(?:string|stdin|__array_function__)|[\\/]bin[\\/][\w-]+$"  # and console scripts (bin/accelerate)
    r"|^(?:torch|torchvision|torchaudio|transformers|accelerate|datasets|diffusers|peft|deepspeed|"
    r"lightning|pytorch_lightning|timm|numpy|huggingface_hub|tokenizers)[\\/]"
    r"|transformers_modules[\\/]|[\\/]\.cache[\\/]huggingface[\\/]"
)

PACKAGE_IN_PATH = re.compile(r"(?:site|dist)-packages[\\/]+([A-Za-z_]\w*)")


@dataclass(frozen=True)
class Frame:
    """One traceback frame: the file, the line number, the function and its source line."""

    file: str
    line: int
    function: str
    source: str

    @property
    def in_library(self) -> bool:
        return bool(LIBRARY.search(self.file))

    @property
    def package(self) -> str | None:
        """The installed package whose file this is (``site-packages/<name>/...``), else None."""
        found = PACKAGE_IN_PATH.search(self.file)
        return found.group(1) if found else None

    @property
    def place(self) -> str:
        """``file:line in function``, for an answer that points at the line."""
        name = re.split(r"[\\/]", self.file)[-1]
        where = f" in {self.function}" if self.function not in ("<module>", "") else ""
        return f"{name}:{self.line}{where}"


def frames(text: str) -> list[tuple[int, Frame]]:
    """Every traceback frame in ``text`` with the position it starts at, in order."""
    found: list[tuple[int, Frame]] = []
    lines = text.split("\n")
    position = 0
    for number, raw in enumerate(lines):
        line = PREFIX.sub("", raw)
        header = FRAME_HEADER.match(line)
        if header:
            file = header["file"] or header["file2"] or header["file3"] or header["file4"]
            line_number = int(header["line"] or header["line2"] or header["line4"] or 0)
            function = (header["function"] or header["function2"] or header["function3"]
                        or header["function4"])
            source = _source_under(lines, number)
            if source and not line_number:
                arrow = IPYTHON_ARROW.match(source[1])
                line_number = int(arrow.group(1)) if arrow else 0
            found.append((position, Frame(file, line_number, function, source[0] if source else "")))
        position += len(raw) + 1
    return found


def _source_under(lines: list[str], number: int) -> tuple[str, str] | None:
    """The source line printed under the frame header at ``number`` (IPython: the ``--->`` one)."""
    for raw in lines[number + 1 : number + 12]:
        line = PREFIX.sub("", raw)
        if FRAME_HEADER.match(line) or EXCEPTION.search(line):
            return None
        arrow = IPYTHON_ARROW.match(line)
        if arrow:
            return arrow.group(2).strip(), line
        if line.strip() and not MARKER.match(line) and not IPYTHON_SOURCE.match(line):
            return line.strip(), line
    return None


def user_frame(text: str, before: int | None = None) -> Frame | None:
    """The last frame in the user's own code (not an installed package or the standard
    library) that starts before ``before``: the line of their code that raised, or that called
    into the library that raised."""
    candidates = [frame for start, frame in frames(text) if before is None or start < before]
    own = [frame for frame in candidates if not frame.in_library]
    return own[-1] if own else None


def at_user_line(text: str, before: int | None = None) -> str:
    """`` at file:line in f (source)`` for the user's frame before ``before``, else ``""``: the
    place an answer quotes when the user's own line is the one that handed the value over."""
    frame = user_frame(text, before)
    return f" at {frame.place} ({frame.source})" if frame else ""


def last_frame(text: str, before: int | None = None) -> Frame | None:
    """The last frame that starts before ``before``, wherever its file is."""
    candidates = [frame for start, frame in frames(text) if before is None or start < before]
    return candidates[-1] if candidates else None


def unwrapped(text: str, *, width: int = 60) -> str | None:
    """The text with hard-wrapped lines joined again, or None when nothing looks wrapped.

    A terminal or a web page that breaks a long message at a fixed column leaves two or more
    consecutive lines of the same length (``...output 0 of AddBackward0, i`` / ``s at version
    2``); such a run and the line after it are one line of the original.

    >>> unwrapped("ab" * 40 + "\\n" + "cd" * 40 + "\\nef\\nnext")
    'abababababababababababababababababababababababababababababababababababababababab\
cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdef\\nnext'
    """
    lines = text.split("\n")
    out: list[str] = []
    number, joined = 0, False
    while number < len(lines):
        run = number
        while (run + 1 < len(lines) and len(lines[run]) >= width
               and len(lines[run + 1]) == len(lines[run])):
            run += 1
        if run > number and run + 1 < len(lines):
            out.append("".join(lines[number : run + 2]))
            number, joined = run + 2, True
        else:
            out.append(lines[number])
            number += 1
    return "\n".join(out) if joined else None


# What a person calls running a model without training it: in a frame's function name
# (evaluate, validation_step, predict) or in their own words around the paste ("while testing");
# and what they call training, which outweighs it (a validation loop inside trainer.fit is
# evaluation only where its frame is the deeper one).
EVALUATION_FUNCTION = re.compile(
    r"^(?:_?(?:eval\w*|valid\w*|val_\w+|test\w*|predict\w*|infer\w*|inference\w*|\w+_(?:eval|evaluate|"
    r"validation|validate|test|predict|inference)(?:_\w+)?))$",
    re.IGNORECASE,
)
TRAINING_FUNCTION = re.compile(r"^(?:_?(?:train\w*|fit\w*|\w+_(?:train|training|fit)(?:_\w+)?))$", re.IGNORECASE)
EVALUATION_WORDS = re.compile(
    r"\b(?:testing|test (?:set|time|phase|stage)|evaluat(?:e|ion|ing)|validat(?:ion|ing)|inference|"
    r"predict(?:ion|ions|ing)?|eval\(\)|eval mode)\b",
    re.IGNORECASE,
)
PATH_WORD = re.compile(r"\S*[\\/]\S*|\S+\.py\b\S*")
TRAINING_WORDS = re.compile(r"\btrain(?:ing|s|ed)?\b", re.IGNORECASE)


def evaluation_context(text: str) -> str | None:
    """Where the paste says the error happened while evaluating, not training: the frame or the
    words that say so (``evaluate`` from a frame ``in evaluate``, or "testing" from the user's
    sentence); None when a frame runs backward or the optimizer, when the innermost frame named
    for either is a training one, or when the user's words also speak of training."""
    found = frames(text)
    if any(re.search(r"\bbackward\b|\.step\(|training_step", f.source + " " + f.function) for _, f in found):
        return None
    for _, frame in reversed(found):
        if EVALUATION_FUNCTION.match(frame.function):
            return f"in {frame.function}"
        if TRAINING_FUNCTION.match(frame.function):
            return None
    paste = Paste(text)
    # the user's own words, without the paths a line quotes (a file evaluation.py says nothing)
    said = [
        PATH_WORD.sub(" ", line)
        for line, kind in zip(paste.text.split("\n"), paste.kinds, strict=True)
        if kind == "other"
    ]
    if any(TRAINING_WORDS.search(line) for line in said):
        return None
    words = next((found for line in said if (found := EVALUATION_WORDS.search(line))), None)
    return f'"{words.group(0)}"' if words else None
