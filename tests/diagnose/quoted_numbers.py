"""Every number `diagnose` quotes must come from the run: the check the planted runs go through.

A number in a finding's ``why`` or ``fix`` is accepted when it is, at the precision shown:

- a value of the run's record (metrics.jsonl, events.jsonl, summary.json, config.yaml,
  model.json, data_stats.json, facts.json), or
- a value of the finding's own ``evidence`` (numbers computed from the record: a ratio, a
  baseline such as the label entropy), or
- a proposal in ``fix`` written ``key=value`` (``optim.lr=0.0003``): a value to try, not a quote.

A number after "now" must be a record value, and after "now" next to an LR (``optim.lr, now 20``)
one of the LRs the run logged: what the run did, not what its config asked for before a scheduler
(or a warmup) changed it.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

NUMBER = re.compile(r"(?<![\w.])-?\d+(?:,\d{3})*(?:\.\d+)?(?:e[-+]?\d+)?%?")
PROPOSAL = re.compile(r"[\w.\]\[]+=\[?-?[\d.e+-]+")
NOW = re.compile(r"\bnow (-?\d[\d.e+-]*)")
FILES = ("summary.json", "model.json", "data_stats.json", "facts.json")


def numbers_in(value: Any) -> list[float]:
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [float(value)] if math.isfinite(value) else []
    if isinstance(value, dict):
        return [n for v in value.values() for n in numbers_in(v)]
    if isinstance(value, (list, tuple)):
        return [n for v in value for n in numbers_in(v)]
    if isinstance(value, str):
        return [float(m.rstrip("%").replace(",", "")) for m in NUMBER.findall(value) if not m.endswith("%")]
    return []


def record_numbers(run_dir: Path) -> list[float]:
    import yaml

    found: list[float] = []
    for name in ("metrics.jsonl", "events.jsonl"):
        path = run_dir / name
        if path.is_file():
            for line in path.read_text().splitlines():
                if line.strip():
                    found += numbers_in(json.loads(line))
    for name in FILES:
        if (run_dir / name).is_file():
            found += numbers_in(json.loads((run_dir / name).read_text()))
    if (run_dir / "config.yaml").is_file():
        found += numbers_in(yaml.safe_load((run_dir / "config.yaml").read_text()))
    return found


def shown_as(text: str, value: float) -> bool:
    """``value`` shown at the precision of ``text`` (its significant digits) gives ``text``."""
    mantissa = re.sub(r"e.*", "", text.rstrip("%").replace(",", "")).lstrip("-")
    digits = len(mantissa.replace(".", "").lstrip("0")) or 1
    shown = float(text.rstrip("%").replace(",", "")) / (100 if text.endswith("%") else 1)
    if shown == 0:
        return abs(value) < 0.5 * 10 ** -(len(mantissa.split(".")[1]) if "." in mantissa else 0)
    if text.endswith("%"):  # 15% of a share: whole percent points
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        return abs(value * 100 - shown * 100) <= 0.5 * 10 ** -decimals + 1e-9
    if "." in mantissa and "e" not in text:  # 0.0005 or 12.5: its decimals are its precision
        decimals = len(mantissa.split(".")[1])
        close = abs(value - shown) <= 0.5 * 10 ** -decimals + 1e-12
        if close:
            return True
    scale = 10 ** (math.floor(math.log10(abs(shown))) - digits + 1)
    return abs(value - shown) <= 0.5 * scale * 1.0001


def logged_lrs(run_dir: Path) -> list[float]:
    path = run_dir / "metrics.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []
    return [float(r["lr"]) for r in lines if isinstance(r.get("lr"), (int, float))]


def unquoted(finding: dict[str, Any], run_dir: Path, *, record: list[float] | None = None) -> list[str]:
    """The numbers of ``finding``'s why and fix that neither the record nor its evidence holds."""
    record = record_numbers(run_dir) if record is None else record
    allowed, lrs = record + numbers_in(finding.get("evidence") or {}), logged_lrs(run_dir)
    bad: list[str] = []
    for field in ("why", "fix"):
        text = finding.get(field) or ""
        for match in NOW.finditer(text):
            now = match.group(1).rstrip(".")
            about_lr = "lr" in text[max(match.start() - 40, 0):match.start()].lower()
            if not any(shown_as(now, v) for v in (lrs if about_lr else record)):
                bad.append(f"{field}: now {now}" + (" (not a logged LR)" if about_lr else ""))
        if field == "fix":
            text = PROPOSAL.sub(" ", text)
        for number in NUMBER.findall(text):
            if not any(shown_as(number, v) for v in allowed):
                bad.append(f"{field}: {number}")
    return bad
