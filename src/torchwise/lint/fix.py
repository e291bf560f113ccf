"""Apply the edits that fixable rules attach to their findings (TW110, TW117, TW123).

Edits are applied from the end of the file backwards so earlier positions stay valid;
an edit that overlaps one already applied is skipped and picked up on the next pass.

>>> fix_source("import torch\\nsd = torch.load('m.pt')\\n")[0]
'import torch\\nsd = torch.load(\\'m.pt\\', map_location="cpu")\\n'
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from torchwise.errors import LintError
from torchwise.lint.config import LintConfig
from torchwise.lint.engine import configured_files, lint_source
from torchwise.lint.findings import Edit, Finding

_MAX_PASSES = 5


def _offset(line_starts: list[int], at: tuple[int, int]) -> int:
    return line_starts[at[0] - 1] + at[1]


def apply_edits(source: str, edits: list[Edit]) -> str:
    """``source`` with every non-overlapping edit applied.

    Columns are UTF-8 byte offsets (as in ``ast``), so the edit works on bytes.
    """
    data = source.encode("utf-8")
    line_starts = [0]
    for line in data.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    spans = sorted(
        ((_offset(line_starts, e.start), _offset(line_starts, e.end), e.text) for e in edits),
        reverse=True,
    )
    applied_from = len(data) + 1
    for start, end, text in spans:
        if end > applied_from:
            continue
        data = data[:start] + text.encode("utf-8") + data[end:]
        applied_from = start
    return data.decode("utf-8")


def fix_source(
    source: str, path: str = "<string>", *, config: LintConfig | None = None
) -> tuple[str, list[Finding]]:
    """The fixed source and the findings left in it.

    >>> fix_source("model.zero_grad(set_to_none=False)\\n")[0]
    'model.zero_grad(set_to_none=True)\\n'
    """
    findings = lint_source(source, path, config=config)
    for _ in range(_MAX_PASSES):
        edits = [e for f in findings for e in f.edits]
        if not edits:
            break
        source = apply_edits(source, edits)
        findings = lint_source(source, path, config=config)
    return source, findings


def fix_paths(
    paths: Sequence[str | Path],
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
    use_config: bool = True,
    errors: list[LintError] | None = None,
) -> tuple[list[Finding], list[Path]]:
    """Rewrite files in place with every available fix: (findings left, files changed).
    ``errors`` works as in `lint_paths`: broken files are recorded there and left alone."""
    remaining: list[Finding] = []
    changed: list[Path] = []
    files = configured_files(paths, select=select, ignore=ignore, use_config=use_config, errors=errors)
    for file, source, config in files:
        try:
            fixed, left = fix_source(source, str(file), config=config)
        except LintError as error:
            if errors is None:
                raise
            errors.append(error)
            continue
        if fixed != source:
            file.write_text(fixed, encoding="utf-8")
            changed.append(file)
        remaining.extend(left)
    return remaining, changed
