"""Known errors of a process asking the operating system for more than its hard limit.

``resource.setrlimit(RLIMIT_NOFILE, (soft, hard))`` may raise the soft limit up to the hard one,
and only root may raise the hard one: asking for more raises "ValueError: not allowed to raise
maximum limit". Training code does this at import to open many files (mmdet/mmcv's dataset builder
raises the open-file limit for DataLoader workers); the frame's source line says which limit.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.paste import last_frame


def _raise_limit(match: re.Match[str], text: str) -> Explanation:
    frame = last_frame(text, match.start())
    at = f" at {frame.place} ({frame.source})" if frame and frame.source else ""
    files = "NOFILE" in text or "nofile" in text
    limit = "the open-file limit (RLIMIT_NOFILE)" if files else "a resource limit"
    return answer(
        title=f"setrlimit asked for more than the hard limit allows{at}",
        meaning=(
            f"The code raises {limit} with resource.setrlimit, to a value above the hard limit this"
            " user or container has; only root may raise a hard limit, so Python refused."
        ),
        cause=(
            "The requested value (often a hard-coded soft limit such as 4096 or 65536, or a hard"
            " limit passed back larger than the current one) is above what this machine, user or"
            " container allows (ulimit -Hn shows the hard open-file limit)."
        ),
        fix=(
            "Ask for at most the current hard limit: soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE);"
            " resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard)) in that line; or raise"
            " the hard limit where it is set (ulimit -Hn as root, the container's --ulimit nofile=...,"
            " /etc/security/limits.conf)."
        ),
    )


KNOWN: list[KnownError] = [
    known("setrlimit-above-hard", r"not allowed to raise maximum limit", _raise_limit),
]
