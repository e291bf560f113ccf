"""Train the planted runs of one half and say whether `diagnose` names each planted cause.

    python -m benchmarks.diagnose_planted.measure dev        # the half the rules are worked on
    python -m benchmarks.diagnose_planted.measure heldout    # once, at the end

Prints one line per run (expected, got, ok) and the numbers of any why/fix that the record does
not hold (`tests/diagnose/quoted_numbers.py`); writes benchmarks/results/diagnose_<half>.json. A
run counts as named when one of its warn/error codes is an expected one (``healthy``: no
warn/error at all).
"""

from __future__ import annotations

import importlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.diagnose.quoted_numbers import unquoted

FIT_KEYS = ("model", "train_data", "val_data", "config", "scheduler", "optimizer", "loss")


def train_case(folder: Path, name: str, build) -> Path:
    """Train one planted run (a failing run fails as planted) and return its folder."""
    import torchwise

    kwargs: dict[str, Any] = build()
    try:
        torchwise.fit(**{k: kwargs[k] for k in FIT_KEYS if k in kwargs}, runs_dir=folder, name=name, quiet=True)
    except Exception:  # noqa: BLE001 - a planted failure; its record is what diagnose reads
        pass
    return folder / name


def verdict(expected: str, codes: list[str]) -> bool:
    if expected == "healthy":
        return not codes
    return bool(set(expected.split("|")) & set(codes))


def measure(half: str, *, names: list[str] | None = None) -> list[dict[str, Any]]:
    from torchwise.diagnose.run_diagnosis import diagnose_run

    cases = importlib.import_module(f"benchmarks.diagnose_planted.{half}").CASES
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (expected, build) in cases.items():
            if names and name not in names:
                continue
            started = time.perf_counter()
            run_dir = train_case(Path(tmp), name, build)
            diagnosis = diagnose_run(run_dir).to_json()
            codes = [f["code"] for f in diagnosis["findings"] if f["severity"] in ("warn", "error")]
            bad = [b for f in diagnosis["findings"] for b in unquoted(f, run_dir)]
            rows.append({"run": name, "expected": expected, "got": codes or ["healthy"],
                         "all": [f["code"] for f in diagnosis["findings"]], "ok": verdict(expected, codes),
                         "unquoted": bad, "seconds": round(time.perf_counter() - started, 1)})
            row = rows[-1]
            print(f"{name:30s} expected {expected:34s} got {', '.join(row['all']):40s} "
                  f"{'ok' if row['ok'] else 'MISS'}{'  UNQUOTED ' + str(bad) if bad else ''}", flush=True)
    return rows


def main() -> None:
    half = sys.argv[1] if len(sys.argv) > 1 else "dev"
    rows = measure(half, names=sys.argv[2:] or None)
    sick = [r for r in rows if r["expected"] != "healthy"]
    well = [r for r in rows if r["expected"] == "healthy"]
    print(f"{half}: planted cause named in {sum(r['ok'] for r in sick)} of {len(sick)}; "
          f"no warn/error on {sum(r['ok'] for r in well)} of {len(well)} healthy runs; "
          f"unquoted numbers: {sum(len(r['unquoted']) for r in rows)}")
    if len(sys.argv) <= 2:
        out = Path(__file__).parents[1] / "results" / f"diagnose_{half}.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
