"""Errors raised by a line of the project's own code whose job is to report a problem.

* A line that reports a failure (``print('loading error: ' + self.data[index])``) and itself
  raises AttributeError, NameError, TypeError, KeyError or IndexError: it runs only once something
  else failed (an ``except`` branch, an error path), and the broken report hides that failure.
* A project's own ``raise ValueError("Instance images root doesn't exists.")``: the project
  checked a path or name it was given and did not find it; the message names what was missing,
  the frame names the check.

Both read the traceback's last frame, which must be the user's (a library's own report lines
and checks are other families'), and its source line, which must be the report or the raise.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, told_apart
from torchwise.explain.paste import Frame, last_frame

BROKEN = r"(AttributeError|NameError|TypeError|KeyError|IndexError): ([^\n]+)"
# What a report of a failure says: the words of a message written for an error path.
FAILURE_WORDS = re.compile(
    r"""["'][^"'\n]*\b(?:fail(?:ed|ure)?|could\s?n[o']t|cannot|can't|unable\s+to|(?:load(?:ing)?|read(?:ing)?|open(?:ing)?)"""
    r"""\s+error|error\s+(?:loading|reading|opening|while|in\s+load)|skipp(?:ing|ed)|corrupt)""",
    re.IGNORECASE,
)
REPORT_CALL = re.compile(r"^\s*(?:print|(?:self\.)?(?:logger|logging|log|warnings)\.\w+|warn|raise\s+\w+)\s*\(")
CHECK = (
    r"(ValueError|FileNotFoundError|RuntimeError|OSError|AssertionError|Exception): ([^\n]*?\b"
    r"(?:does ?n[o']t exists?|not exists?|not found|no such|cannot find|can't find|could not find)\b[^\n]*)"
)


# What a checked path is called, or a path itself: a check of something else (a device, a key) is not read.
PATH_WORDS = re.compile(
    r"\b(?:path|dir|directory|folder|file|root|checkpoint|ckpt|dataset|data|images?|weights)s?\b|[\\/]|\.\w{2,4}\b",
    re.IGNORECASE,
)


def _report_line(match: re.Match[str], text: str) -> Frame | None:
    frame = last_frame(text, match.start())
    if frame is None or frame.in_library:
        return None
    return frame if REPORT_CALL.match(frame.source) and FAILURE_WORDS.search(frame.source) else None


def _broken_report(match: re.Match[str], text: str) -> Explanation | None:
    frame = _report_line(match, text)
    if frame is None:
        return None
    return answer(
        title=f"The line that reports a failure failed itself ({frame.place})",
        meaning=(
            f"{frame.place} ({frame.source}) is an error report, and it raised {match.group(1)}: {match.group(2)}"
            " while building its message."
        ),
        cause=(
            "The report runs only after something else went wrong first (its except branch or error path), and"
            " it refers to a name or value that does not exist there, so its own error hides the first one:"
            " often a file or sample that could not be loaded."
        ),
        fix=(
            "Make the report print what it has (the index or path, and the caught exception: except Exception as"
            " e: print(path, e)), run again, and fix the failure it then shows (a missing or unreadable file, a"
            " wrong data path)."
        ),
    )


def _own_check(match: re.Match[str], text: str) -> Explanation | None:
    frame = last_frame(text, match.start())
    if frame is None or frame.in_library or not re.match(r"\s*raise\s+\w+\s*\(", frame.source):
        return None
    message = match.group(2).strip()
    if not PATH_WORDS.search(message):
        return None  # "CUDA device not found" is no path the project was given
    return answer(
        title=f"The project's own check stopped the run: {message} ({frame.place})",
        meaning=f"{frame.place} ({frame.source}) is the project's check of something it was given; it found nothing.",
        cause=(
            "The path or name it checks does not exist where the script runs: the argument or config value that"
            " sets it is wrong or empty, relative to another working directory, or the data was never"
            " downloaded, uploaded or unpacked there."
        ),
        fix=(
            "Look at what the check tests (the variable in the line above it) and pass an existing path: set the"
            " script's argument or config key for it, and check it with ls before the run."
        ),
    )


KNOWN: list[KnownError] = [
    told_apart("error-report-failed", BROKEN, _broken_report, generic=True),
    told_apart("own-check-not-found", CHECK, _own_check, generic=True),
]
