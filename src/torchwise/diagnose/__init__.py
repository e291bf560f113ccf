"""Diagnose what went wrong: known error messages (``errors``), and later curves and gradients.

Kept light: importing this package imports no submodule and no torch.
"""
