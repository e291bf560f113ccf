"""The README's explain section quotes real output: the CLI session, the coverage table, and the
number of errors the table knows. Each is rerun here so none of them can go stale."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from torchwise.explain.lookup import KNOWN

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
SECTION = README[README.index("### Explain an error") : README.index("## Lint your training script")]


def quoted(command_start: str) -> tuple[str, list[str]]:
    """The console session whose command starts with ``command_start``: (command, output lines)."""
    for block in re.findall(r"^```console\n(.*?)^```", SECTION, flags=re.MULTILINE | re.DOTALL):
        first, *output = block.rstrip("\n").splitlines()
        if first.startswith(f"$ {command_start}"):
            return first[2:], output
    raise AssertionError(f"no console session for {command_start}")


def run(command: str) -> subprocess.CompletedProcess[str]:
    python = sys.executable
    command = command.replace("torchwise explain", f"{python} -m torchwise explain")
    command = re.sub(r"^python ", f"{python} ", command)
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "COLUMNS": "100"}, timeout=300)


def test_the_quoted_explain_session_is_what_the_cli_prints():
    command, output = quoted("echo")
    done = run(command)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip("\n").splitlines() == output


def test_the_quoted_coverage_table_is_what_the_benchmark_prints():
    command, output = quoted("python benchmarks/explain_coverage.py")
    done = run(command)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip("\n").splitlines() == output


def test_the_number_of_known_errors_is_the_table_size():
    count = int(re.search(r"It knows (\d+) errors", SECTION).group(1))
    assert count == len(KNOWN)
