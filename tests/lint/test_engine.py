"""The engine: noqa, select/ignore, pyproject config, folders, unparsable files."""

from __future__ import annotations

import statistics
import sys
import textwrap
from pathlib import Path

import pytest

from torchwise.errors import LintError
from torchwise.lint.config import LintConfig, load_config
from torchwise.lint.engine import lint_paths, lint_source, noqa_lines
from torchwise.lint.rules import all_rules

from . import bench

LOAD = "import torch\nstate = torch.load('ckpt.pt')\nwhole = torch.save(model, 'm.pt')\n"


def codes(findings):
    return [(f.code, f.line) for f in findings]


def test_noqa_silences_the_named_code_only():
    source = (
        "import torch\n"
        "state_a = torch.load('m.pt')  # noqa: TW110\n"
        "state_b = torch.load('m.pt')  # noqa: TW111\n"
        "state_c = torch.load('m.pt')  # noqa\n"
        "state_d = torch.load('m.pt')  # NOQA: tw107, TW110\n"
    )
    assert codes(lint_source(source)) == [("TW110", 3)]
    assert noqa_lines(source)[4] is None


def test_select_and_ignore_take_prefixes():
    assert codes(lint_source(LOAD, config=LintConfig(select=("TW11",)))) == [
        ("TW110", 2),
        ("TW111", 3),
    ]
    assert codes(lint_source(LOAD, config=LintConfig(ignore=("TW110",)))) == [("TW111", 3)]
    assert lint_source(LOAD, config=LintConfig(select=("TW2",))) == []


def test_pyproject_config_is_found_walking_up(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        textwrap.dedent(
            """
            [tool.torchwise.lint]
            ignore = ["TW110"]
            per-file-ignores = { "scripts/*.py" = ["TW111"] }
            """
        )
    )
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "train.py").write_text(LOAD)
    (tmp_path / "top.py").write_text(LOAD)
    found = lint_paths([tmp_path])
    assert [(Path(f.path).name, f.code) for f in found] == [("top.py", "TW111")]
    assert load_config(scripts / "train.py").root == tmp_path.resolve()
    # --select replaces the config's selection, but the config's ignores still hold
    assert lint_paths([tmp_path], select=["TW110"]) == []
    assert [f.code for f in lint_paths([tmp_path], select=["TW1"])] == ["TW111"]
    assert lint_paths([tmp_path], ignore=["TW111"]) == []
    assert len(lint_paths([tmp_path], use_config=False)) == 4


def test_bad_config_value_is_a_lint_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.torchwise.lint]\nignore = "TW1" \nselect = 3\n')
    (tmp_path / "t.py").write_text("x = 1\n")
    with pytest.raises(LintError, match="select must be a list"):
        lint_paths([tmp_path])


def test_unparsable_file_names_file_and_error(tmp_path):
    bad = tmp_path / "broken.py"
    bad.write_text("for x in loader\n    pass\n")
    with pytest.raises(LintError) as caught:
        lint_paths([bad])
    assert str(bad) in caught.value.message and ":1:" in caught.value.message
    assert "expected ':'" in caught.value.message
    assert caught.value.exit_code == 2 and caught.value.hint


def test_missing_path_is_a_lint_error(tmp_path):
    with pytest.raises(LintError, match="no such file"):
        lint_paths([tmp_path / "nope.py"])


def test_folders_skip_virtualenvs_and_caches(tmp_path):
    for folder in (".venv/lib", "__pycache__", "src"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "t.py").write_text(LOAD)
    assert {Path(f.path).parent.name for f in lint_paths([tmp_path])} == {"src"}


def test_a_2000_line_file_lints_in_well_under_a_second():
    """Linear in the file's length, measured as a ratio in one process so that a busy machine
    slows both sides alike; the absolute figure is benchmarks/lint_speed.py's."""
    speed = bench.load("lint_speed")
    small, large = speed.generated_script(250), speed.generated_script(2000)
    assert large.count("\n") >= 2000 and lint_source(large) == []
    times = speed.time_lint({"small": small, "large": large}, repeats=3)
    ratio = statistics.median(times["large"]) / statistics.median(times["small"])
    lines = large.count("\n") / small.count("\n")
    # Linear work gives a ratio near `lines` (about 8); a rule that walks the file once per
    # call (quadratic) gives about 64. Three times linear is the margin for noise.
    assert ratio < 3 * lines, f"{ratio:.1f}x the time for {lines:.1f}x the lines"


def test_lint_never_imports_torch():
    import subprocess

    code = (
        "import sys; from torchwise.lint.engine import lint_source; "
        "lint_source('import torch\\ntorch.load(\"m\")\\n'); print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_without_a_toml_reader_the_config_is_skipped(tmp_path, monkeypatch):
    from torchwise.lint import config

    (tmp_path / "pyproject.toml").write_text('[tool.torchwise.lint]\nignore = ["TW111"]\n')
    monkeypatch.setattr(config, "_toml", None)  # Python 3.10 without tomli
    assert load_config(tmp_path) == LintConfig()


def test_a_code_that_matches_no_rule_is_an_error(tmp_path):
    (tmp_path / "t.py").write_text(LOAD)
    with pytest.raises(LintError, match="'TW999' matches no rule") as caught:
        lint_paths([tmp_path], select=["TW999"])
    assert f"TW101-{max(all_rules())}" in caught.value.hint  # the range of codes that exist
    (tmp_path / "pyproject.toml").write_text('[tool.torchwise.lint]\nignore = ["E501"]\n')
    with pytest.raises(LintError, match="ignore: 'E501' matches no rule"):
        lint_paths([tmp_path])


def test_public_api_exposes_lint_paths():
    import torchwise

    assert torchwise.lint_paths is lint_paths


def test_binary_file_is_a_lint_error_not_a_crash():
    with pytest.raises(LintError, match=r"^bin\.py: cannot parse: .*null bytes"):
        lint_source("x = 1\x00\n", "bin.py")
