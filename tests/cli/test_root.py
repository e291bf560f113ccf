from __future__ import annotations

import subprocess
import sys

from torchwise.cli import COMMANDS, main


def test_every_registered_command_has_help(capsys):
    for name in COMMANDS:
        try:
            main([name, "--help"])
        except SystemExit as exit_:
            assert exit_.code == 0, name
        out = capsys.readouterr().out
        assert "Usage" in out, name


def test_root_help_runs_without_importing_torch():
    code = "import sys; from torchwise.cli import build_app; build_app(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

