"""Every example in the README and on every docs page runs, by one convention:

- the ```python blocks of a page run in page order, in one namespace, in a fresh folder that
  holds a copy of `examples/`; a ```python block written as a `>>>` session is a doctest, and so
  are `>>>` examples outside any block;
- in ```bash blocks, every line that starts with `torchwise ` runs as `python -m torchwise ...`,
  in page order, in one folder per page (with `examples/`, and the lint corpus's scripts as
  `train.py` and `src/`); a line ending in a comment `# (exit N)` must exit N, any other 0;
- a ```text block that quotes `$ torchwise train ...` followed by its output must be exactly what
  the CLI prints for that bad command (exit 2);
- ```text, ```console, ```yaml and ```json blocks are not run (tests of their own page check the
  ones that quote real output).
"""

from __future__ import annotations

import doctest
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Pages whose examples take minutes on a busy 2-core machine run with `make test-slow`.
SLOW_PAGES = {"docs/huggingface.md", "docs/detection.md", "docs/sweep.md"}
# Nothing a page runs may reach the network: Hugging Face reads only what examples/ holds.
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def fenced(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def param(page: Path, *values: object):
    """A test case for a page, marked slow where the page is."""
    return pytest.param(page, *values, marks=[pytest.mark.slow] if page_id(page) in SLOW_PAGES else [])


def page_blocks(page: Path, language: str) -> list[str]:
    return fenced(page.read_text(), language)


def make_sandbox(folder: Path) -> Path:
    """A user's folder with the examples in it, and scripts for `torchwise lint` to read."""
    shutil.copytree(ROOT / "examples", folder / "examples")
    shutil.copy(ROOT / "tests/lint/corpus/buggy/mnist_first_try.py", folder / "train.py")
    shutil.copytree(ROOT / "tests/lint/corpus/clean", folder / "src")
    return folder


# --- python blocks -------------------------------------------------------------------------------

def check_readme(namespace: dict) -> None:
    """The README's fit example reaches what it says and predicts the quadrants right."""
    result = namespace["result"]
    assert result.status == "completed"
    assert result.best["metric"] == "val_accuracy" and result.best["value"] >= 0.95
    assert namespace["predicted"].tolist() == [1, 0, 0]  # same-sign quadrants are class 1
    assert not namespace["model"].training


# What a page's python blocks must leave in their namespace, besides running without an error.
NAMESPACE_CHECKS: dict[str, Callable[[dict], None]] = {"README.md": check_readme}
PYTHON_PAGES = [p for p in PAGES if any(">>>" not in b for b in page_blocks(p, "python"))]


@pytest.mark.parametrize("page", [param(p) for p in PYTHON_PAGES], ids=page_id)
def test_python_blocks_run(page, tmp_path, monkeypatch):
    """In order, in one namespace, as a reader following along: train, then load and predict."""
    monkeypatch.chdir(make_sandbox(tmp_path))
    for key, value in OFFLINE.items():
        monkeypatch.setenv(key, value)
    namespace: dict = {"__name__": "__main__"}
    for block in page_blocks(page, "python"):
        if ">>>" not in block:
            exec(compile(block, page_id(page), "exec"), namespace)
    NAMESPACE_CHECKS.get(page_id(page), lambda namespace: None)(namespace)


def doctest_text(page: Path) -> str:
    return re.sub(r"^```.*$", "", page.read_text(), flags=re.MULTILINE)  # fences end expected outputs


DOCTEST_PAGES = [p for p in PAGES if re.search(r"^>>> ", doctest_text(p), flags=re.MULTILINE)]


@pytest.mark.parametrize("page", [param(p) for p in DOCTEST_PAGES], ids=page_id)
def test_doctest_examples_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(make_sandbox(tmp_path))
    test = doctest.DocTestParser().get_doctest(doctest_text(page), {}, page_id(page), str(page), 0)
    assert test.examples
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


# --- bash blocks ---------------------------------------------------------------------------------

def shell_commands() -> list:
    return [param(page, line) for page in PAGES for block in page_blocks(page, "bash")
            for line in block.splitlines() if line.startswith("torchwise ")]


@pytest.fixture(scope="session")
def page_folders(tmp_path_factory) -> Callable[[Path], Path]:
    """One folder per page for all its commands, run in order: `resume` finds the run that
    `train` wrote, as it would for a reader following along."""
    folders: dict[Path, Path] = {}

    def folder_for(page: Path) -> Path:
        if page not in folders:
            folders[page] = make_sandbox(tmp_path_factory.mktemp(page.stem))
        return folders[page]

    return folder_for


@pytest.mark.parametrize(("page", "line"), shell_commands(), ids=lambda value: page_id(value)
                         if isinstance(value, Path) else value[:60])
def test_shell_commands_run(page_folders, page, line):
    expected = int(m.group(1)) if (m := re.search(r"#.*\(exit (\d+)", line)) else 0
    command = f"{shlex.quote(sys.executable)} -m {line}"
    out = subprocess.run(["bash", "-c", command], capture_output=True, text=True, cwd=page_folders(page),
                         env={**os.environ, **OFFLINE, "COLUMNS": "100"})
    assert out.returncode == expected, out.stderr[-2000:]
    assert "Traceback" not in out.stderr


# --- quoted outputs of bad commands --------------------------------------------------------------

def quoted_sessions() -> list:
    sessions = []
    for page in PAGES:
        for block in page_blocks(page, "text"):
            lines = block.splitlines()
            for i, line in enumerate(lines):
                if line.startswith("$ torchwise train"):
                    output = []
                    for following in lines[i + 1:]:
                        if following.startswith("$ "):
                            break
                        output.append(following)
                    sessions.append(param(page, line[2:], output))
    return sessions


@pytest.mark.parametrize(("page", "command", "output"), quoted_sessions(),
                         ids=lambda value: page_id(value) if isinstance(value, Path) else None)
def test_quoted_train_errors_are_what_the_cli_prints(page, command, output, tmp_path, monkeypatch):
    monkeypatch.chdir(make_sandbox(tmp_path))
    out = subprocess.run([sys.executable, "-m", *shlex.split(command)], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.splitlines() == output


# --- yaml blocks that name real objects ----------------------------------------------------------

def test_the_train_page_config_is_the_example_file():
    (config,) = [block for block in page_blocks(ROOT / "docs/train.md", "yaml") if "name: digits" in block]
    assert yaml.safe_load(config) == yaml.safe_load((ROOT / "examples/digits.yaml").read_text())


def test_yaml_objects_block_builds_what_it_names():
    pytest.importorskip("torchmetrics")
    import torch

    from torchwise.config import load_config
    from torchwise.train.optim import build_optimizer, build_scheduler, steps_on_metric
    from torchwise.train.tasks import build_task

    (block,) = [block for block in page_blocks(ROOT / "docs/batches.md", "yaml") if "class_weights" in block]
    cfg = load_config(None, base=yaml.safe_load(block))
    task = build_task(cfg.task)
    assert type(task.metrics["f1"]).__name__ == "MulticlassF1Score"
    optimizer = build_optimizer(torch.nn.Linear(4, 3), cfg.optim)
    assert isinstance(optimizer, torch.optim.RMSprop) and optimizer.defaults["alpha"] == 0.9
    assert optimizer.param_groups[0]["lr"] == 0.001
    assert steps_on_metric(build_scheduler(optimizer, cfg.schedule))
    logits, target = torch.tensor([[2.0, 0.0, 0.0], [0.0, 2.0, 0.0]]), torch.tensor([0, 1])
    expected = torch.nn.functional.cross_entropy(logits, target, weight=torch.tensor([1.0, 4.0, 1.0]))
    assert torch.allclose(task.loss(logits, target), expected)
