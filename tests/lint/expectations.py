"""Read ``# expect: TW101`` markers from a fixture or corpus file."""

from __future__ import annotations

import re
from pathlib import Path

_EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>TW\d{3}(?:\s*,\s*TW\d{3})*)")


def expected(path: Path) -> set[tuple[str, int]]:
    """(code, line) for every ``# expect: CODE[, CODE]`` comment in the file."""
    found = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = _EXPECT.search(line)
        if match:
            found.update((code.strip(), number) for code in match.group("codes").split(","))
    return found
