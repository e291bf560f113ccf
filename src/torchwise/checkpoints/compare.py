"""How a set of saved weights fits a model: loaded, missing, unexpected and mis-shaped keys.

Its own module because both the checkpoint loader and the foreign-weights reader ask it, and
neither should import the other to get it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import torch

_SHOWN = 5


@dataclass
class WeightsReport:
    """How a set of saved weights fits a model; empty lists mean a perfect fit."""

    loaded: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    # (key, shape in the file, shape in the model)
    shape_mismatches: list[tuple[str, tuple[int, ...], tuple[int, ...]]] = field(
        default_factory=list
    )

    @property
    def ok(self) -> bool:
        return not (self.missing or self.unexpected or self.shape_mismatches)

    def describe(self) -> str:
        """One line per kind of problem, naming the first few keys and counting the rest.

        >>> WeightsReport(unexpected=list("abcdef")).describe()
        "unexpected keys (6): ['a', 'b', 'c', 'd', 'e'] and 1 more"
        """
        parts = []
        if self.missing:
            parts.append(f"missing keys ({len(self.missing)}): {self.missing[:_SHOWN]}{_more(self.missing)}")
        if self.unexpected:
            parts.append(f"unexpected keys ({len(self.unexpected)}): "
                         f"{self.unexpected[:_SHOWN]}{_more(self.unexpected)}")
        if self.shape_mismatches:
            shown = ", ".join(
                f"{key}: file {list(found)} vs model {list(wanted)}"
                for key, found, wanted in self.shape_mismatches[:_SHOWN]
            )
            parts.append(f"shape mismatches ({len(self.shape_mismatches)}): {shown}"
                         f"{_more(self.shape_mismatches)}")
        return "; ".join(parts) or "all keys match"


def _more(items: list) -> str:
    """Beyond the first `_SHOWN`: how many more, so that a count never disagrees with its list."""
    return f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else ""


def compare_state_dicts(
    expected: Mapping[str, torch.Tensor], found: Mapping[str, torch.Tensor]
) -> WeightsReport:
    """Compare a model's ``state_dict()`` (``expected``) with saved weights (``found``).

    >>> model_state = {"w": torch.zeros(2, 3)}
    >>> report = compare_state_dicts(model_state, {"w": torch.zeros(3, 2), "b": torch.zeros(1)})
    >>> report.unexpected, report.shape_mismatches
    (['b'], [('w', (3, 2), (2, 3))])
    """
    report = WeightsReport()
    for key, wanted in expected.items():
        if key not in found:
            report.missing.append(key)
        elif tuple(found[key].shape) != tuple(wanted.shape):
            report.shape_mismatches.append((key, tuple(found[key].shape), tuple(wanted.shape)))
        else:
            report.loaded.append(key)
    report.unexpected = [key for key in found if key not in expected]
    return report
