"""Run folders: writing them (training) and reading them (diagnose, report, ledger)."""
