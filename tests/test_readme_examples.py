"""Every example in the README runs: Python blocks, `>>>` examples, shell commands and the
outputs it quotes for `torchwise train`."""

from __future__ import annotations

import doctest
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README, flags=re.MULTILINE | re.DOTALL)


@pytest.fixture
def sandbox(tmp_path, monkeypatch) -> Path:
    """A user's folder with the examples in it."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_python_blocks_run(sandbox):
    """In order, in one namespace, as a reader following along: train, then load and predict."""
    train_block, load_block = [block for block in blocks("python") if ">>>" not in block]
    namespace: dict = {}
    exec(compile(train_block, "README.md", "exec"), namespace)
    result = namespace["result"]
    assert result.status == "completed"
    assert result.best["metric"] == "val_accuracy" and result.best["value"] >= 0.95
    exec(compile(load_block, "README.md", "exec"), namespace)
    assert namespace["predicted"].tolist() == [1, 0, 0]  # same-sign quadrants are class 1
    assert not namespace["model"].training


def test_doctest_examples_run():
    text = re.sub(r"^```.*$", "", README, flags=re.MULTILINE)  # fences end expected outputs
    test = doctest.DocTestParser().get_doctest(text, {}, "README", str(ROOT / "README.md"), 0)
    assert test.examples
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def shell_commands() -> list[str]:
    return [line for block in blocks("bash") for line in block.splitlines() if line.startswith("torchwise ")]


@pytest.fixture(scope="module")
def shell_sandbox(tmp_path_factory) -> Path:
    """One folder for all the README's commands, run in order: `resume` finds the run that
    `train` wrote, as it would for a reader following along."""
    folder = tmp_path_factory.mktemp("readme")
    shutil.copytree(ROOT / "examples", folder / "examples")
    shutil.copy(ROOT / "tests/lint/corpus/buggy/mnist_first_try.py", folder / "train.py")
    shutil.copytree(ROOT / "tests/lint/corpus/clean", folder / "src")
    return folder


@pytest.mark.parametrize("line", shell_commands())
def test_shell_commands_run(shell_sandbox, line):
    expected = int(m.group(1)) if (m := re.search(r"\(exit (\d)", line)) else 0
    command = f"{shlex.quote(sys.executable)} -m {line}"
    out = subprocess.run(["bash", "-c", command], capture_output=True, text=True, cwd=shell_sandbox,
                         env={**os.environ, "COLUMNS": "100"})
    assert out.returncode == expected, out.stderr[-2000:]
    assert "Traceback" not in out.stderr


def quoted_sessions() -> list[tuple[str, list[str]]]:
    sessions = []
    for block in blocks("text"):
        lines = block.splitlines()
        for i, line in enumerate(lines):
            if line.startswith("$ torchwise train"):
                output = []
                for following in lines[i + 1:]:
                    if following.startswith("$ "):
                        break
                    output.append(following)
                sessions.append((line[2:], output))
    return sessions


@pytest.mark.parametrize(("command", "output"), quoted_sessions())
def test_quoted_train_errors_are_what_the_cli_prints(sandbox, command, output):
    out = subprocess.run([sys.executable, "-m", *shlex.split(command)], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.splitlines() == output


def test_the_readme_config_is_the_example_file():
    (config,) = [block for block in blocks("yaml") if "name: digits" in block]
    assert yaml.safe_load(config) == yaml.safe_load((ROOT / "examples/digits.yaml").read_text())


def test_yaml_objects_block_builds_what_it_names():
    pytest.importorskip("torchmetrics")
    import torch

    from torchwise.config import load_config
    from torchwise.train.optim import build_optimizer, build_scheduler, steps_on_metric
    from torchwise.train.tasks import build_task

    (block,) = [block for block in blocks("yaml") if "class_weights" in block]
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
