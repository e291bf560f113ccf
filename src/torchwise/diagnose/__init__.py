"""Diagnose a run: its record (curves, gradient statistics, baselines) -> findings with evidence.

Known error messages are explained by ``torchwise.explain``. Kept light: importing this package
imports no submodule and no torch.
"""
