"""docs/sharing-runs-safely.md shows what the CLI really prints (the folder's path aside)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "sharing-runs-safely.md").read_text()
SHOWN_AS = "/home/you/project"  # where the page pretends the sandbox is


def quoted(first_line: str) -> list[str]:
    """The lines of the page's text block that starts with ``first_line``."""
    (block,) = [b for b in re.findall(r"^```text\n(.*?)^```", PAGE, flags=re.MULTILINE | re.DOTALL)
                if b.startswith(first_line)]
    return block.splitlines()


def torchwise(sandbox: Path, *args: str, answer: str = "", config_dir: str | None = None):
    env = {**os.environ, "COLUMNS": "100"}
    if config_dir is not None:
        env["TORCHWISE_CONFIG_DIR"] = config_dir
    out = subprocess.run([sys.executable, "-m", "torchwise", *args], cwd=sandbox, input=answer, env=env,
                         capture_output=True, text=True)
    return out.returncode, out.stdout.replace(str(sandbox), SHOWN_AS), out.stderr.replace(str(sandbox), SHOWN_AS)


def test_sharing_runs_safely_session_is_real(tmp_path):
    sandbox = tmp_path / "project"
    shutil.copytree(ROOT / "examples", sandbox / "examples")
    code, _, err = torchwise(sandbox, "train", "examples/custom_model/config.yaml", "train.epochs=1", "-q",
                             "--run-dir", "colleague")
    assert code == 0, err
    shutil.copytree(sandbox / "colleague" / "custom-model", sandbox / "shared" / "custom-model", symlinks=True)
    code, _, _ = torchwise(sandbox, "trust", "shared/custom-model", "--yes", config_dir=str(tmp_path / "colleague"))
    assert code == 0

    session = quoted("$ torchwise resume shared/custom-model")
    trust_at = session.index("$ torchwise trust shared/custom-model")
    code, _, err = torchwise(sandbox, "resume", "shared/custom-model")
    assert code == 2
    assert err.splitlines() == session[1:trust_at]
    code, out, _ = torchwise(sandbox, "trust", "shared/custom-model", answer="y\n")
    assert code == 0
    # On a terminal the answer is echoed after the prompt; from a pipe it is not.
    assert out.replace("[y/N]: ", "[y/N]: y\n").splitlines() == session[trust_at + 1:]
    code, _, err = torchwise(sandbox, "resume", "shared/custom-model", "-q", "train.epochs=2")
    assert code == 0, err


def test_trust_help_is_what_the_page_shows(tmp_path):
    code, out, _ = torchwise(tmp_path, "trust", "--help")
    assert code == 0
    lines = [line.rstrip() for line in out.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    assert lines == quoted("$ torchwise trust --help")[1:]
