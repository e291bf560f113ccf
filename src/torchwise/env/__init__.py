"""The environment doctor: small checks that return findings with the exact fix.

Importing this package is cheap; torch is imported when ``doctor()`` runs.

>>> from torchwise.env import Finding, pick_precision
>>> pick_precision("cuda", bf16_supported=True)
'bf16'
"""

from __future__ import annotations

from torchwise.env.doctor import CHECKS, doctor
from torchwise.env.findings import DoctorReport, Finding
from torchwise.env.precision import pick_precision

__all__ = ["CHECKS", "DoctorReport", "Finding", "doctor", "pick_precision"]
