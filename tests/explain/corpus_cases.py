"""The corpus of real error texts, loaded by the one loader that the coverage benchmark uses
(benchmarks/explain_coverage.py), so the test and the published figure judge alike."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "explain_coverage.py"
_spec = importlib.util.spec_from_file_location("explain_coverage", _PATH)
assert _spec is not None and _spec.loader is not None
coverage = importlib.util.module_from_spec(_spec)
sys.modules["explain_coverage"] = coverage  # dataclasses look their module up while building
_spec.loader.exec_module(coverage)

load_corpus = coverage.load_corpus
judge = coverage.judge
