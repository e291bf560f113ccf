"""Small things a new user hit (issue 22, item 9)."""

from __future__ import annotations

import subprocess
import sys


def test_lint_of_a_missing_file_prints_the_error_and_no_all_passed_before_it(tmp_path):
    done = subprocess.run([sys.executable, "-m", "torchwise", "lint", "nosuch.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "All checks passed." not in done.stdout
    assert done.stderr.splitlines()[0] == "error: nosuch.py: no such file or folder"
