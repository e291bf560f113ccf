"""The shape of an answer to a known error, and of an entry in the table of known errors.

Pure text work (``re`` and dataclasses): nothing here imports torch.

>>> e = Explanation(id="x", title="T", meaning="M", cause="C", fix="F")
>>> print(e.render())
T
  what it means: M
  likely cause:  C
  fix:           F
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Explanation:
    """What an error means, the most likely cause in the user's code, and the fix.

    ``matched`` is the part of the message that was recognised, ``line`` the whole line of the
    paste it starts on (the error line a reader would point at); ``id`` names the table entry.
    """

    id: str
    title: str
    meaning: str
    cause: str
    fix: str
    matched: str = ""
    line: str = ""

    def render(self, width: int = 100) -> str:
        """Plain text for a terminal or a log, printed under the error itself."""
        rows = [("what it means:", self.meaning), ("likely cause:", self.cause), ("fix:", self.fix)]
        lines = [self.title]
        for label, text in rows:
            lines += _hanging(label, text, width)
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _hanging(label: str, text: str, width: int) -> list[str]:
    """``label`` then ``text`` wrapped under itself; lines that start with spaces stay as code."""
    indent = "  " + " " * 15
    out: list[str] = []
    for number, paragraph in enumerate(text.splitlines() or [""]):
        first = f"  {label:<14} " if number == 0 else indent
        if paragraph.startswith("    "):
            out.append(indent + paragraph.strip("\n"))
            continue
        wrapped = textwrap.wrap(paragraph, width - len(indent)) or [""]
        out.append(first + wrapped[0])
        out += [indent + line for line in wrapped[1:]]
    return out


Builder = Callable[[re.Match[str], str], Explanation]
# Whether the rest of the paste bears the entry out (the frame that raised is the user's own
# code, its source line holds the key the message names): a guard read before the entry is chosen.
Guard = Callable[[re.Match[str], str], bool]


@dataclass(frozen=True)
class KnownError:
    """One row of the table: the regex that recognises the message and the builder that
    turns the match (and the whole text, for details spread over several lines) into an answer."""

    id: str
    regex: re.Pattern[str]
    build: Builder
    # A catch-all message (a device-side assert, a cuBLAS failure) that is usually the echo of an
    # earlier, more specific error: any specific match in the same text wins over it.
    generic: bool = False
    when: Guard | None = None

    def last_match(self, text: str) -> re.Match[str] | None:
        """The last place the message occurs: in a long log the final occurrence is the one
        that stopped the run."""
        matches = [m for m in self.regex.finditer(text) if self.when is None or self.when(m, text)]
        return matches[-1] if matches else None

    def explain(self, text: str, match: re.Match[str] | None = None) -> Explanation | None:
        match = match or self.last_match(text)
        if match is None:
            return None
        answer = self.build(match, text)
        return Explanation(
            id=self.id,
            title=answer.title,
            meaning=answer.meaning,
            cause=answer.cause,
            fix=answer.fix,
            matched=match.group(0),
            line=_line_at(text, match.start()),
        )


def _line_at(text: str, position: int) -> str:
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    return text[start : end if end >= 0 else len(text)].strip()


def known(
    error_id: str,
    pattern: str,
    build: Builder,
    flags: int = 0,
    *,
    generic: bool = False,
    when: Guard | None = None,
) -> KnownError:
    return KnownError(error_id, re.compile(pattern, flags), build, generic, when)


# A builder that answers only where the paste tells a message's usual causes apart, and
# returns None where it cannot (round 7: a catch-all's first guess was most of the wrong answers).
Reading = Callable[[re.Match[str], str], "Explanation | None"]


def told_apart(error_id: str, pattern: str, read: Reading, flags: int = 0, *, generic: bool = False) -> KnownError:
    """An entry for a message with several common causes: ``read`` names the one the paste bears
    out, or returns None, and then the entry does not match at all (another entry, a generic
    reading, or "not known" answers), so a guess is never the answer.

    >>> said = answer(title="T", meaning="M", cause="C", fix="F")
    >>> entry = told_apart("x", r"boom", lambda match, text: said if "because" in text else None)
    >>> entry.last_match("boom") is None, entry.explain("boom, because").title
    (True, 'T')
    """

    def bears_out(match: re.Match[str], text: str) -> bool:
        return read(match, text) is not None

    def build(match: re.Match[str], text: str) -> Explanation:
        found = read(match, text)
        assert found is not None  # the guard above let this match through
        return found

    return KnownError(error_id, re.compile(pattern, flags), build, generic, bears_out)


def answer(*, title: str, meaning: str, cause: str, fix: str) -> Explanation:
    """What a builder returns; ``KnownError.explain`` fills in ``id`` and ``matched``."""
    return Explanation(id="", title=title, meaning=meaning, cause=cause, fix=fix)


def sentence(text: str) -> str:
    """Capitalised and ending in a full stop, for parts assembled from table fragments; a
    sentence that starts with code (``input_size[i] is ...``) keeps its first word as written."""
    if text.split(" ", 1)[0].isalpha():
        text = text[0].upper() + text[1:]
    return text if text.endswith(".") else text + "."


def dims(text: str) -> list[int]:
    """``"3, 224, 224"``, ``"32 x 784"`` or ``"(512,256,256)"`` as a list of sizes.

    >>> dims("torch.Size([1, 512, 1, 1])"), dims("[32 x 784]")
    ([1, 512, 1, 1], [32, 784])
    """
    return [int(number) for number in re.findall(r"\d+", text)]


def shape(sizes: list[int]) -> str:
    """The way torch prints a shape, for echoing it back: ``[1, 512, 1, 1]``."""
    return "[" + ", ".join(str(size) for size in sizes) + "]"


def fact(text: str, pattern: str, flags: int = 0) -> str | None:
    """The first group of ``pattern`` anywhere in ``text``: a detail on another line of a log."""
    found = re.search(pattern, text, flags)
    return found.group(1) if found else None
