"""The docs name what the code has, and only that: config keys, CLI commands and options, the
Python API. Generated tables are compared with their generator (`tests/docs_tables.py`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from docs_tables import GENERATORS, blocks, cli_commands, config_fields, pages_with_blocks, regenerate

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", pages_with_blocks(), ids=lambda page: page.name)
def test_generated_tables_match_the_code(page):
    text = page.read_text()
    assert set(blocks(text)) <= set(GENERATORS)
    assert text == regenerate(text), f"{page.name} is stale: run `python tests/docs_tables.py`"


def test_the_generated_tables_are_on_their_pages():
    found = {name: page.name for page in pages_with_blocks() for name in blocks(page.read_text())}
    assert found == {"config-keys": "config.md", "cli-reference": "cli.md"}


def test_the_config_table_names_every_key_once():
    (table,) = [blocks((ROOT / "docs/config.md").read_text())["config-keys"]]
    listed = re.findall(r"^\| `([\w.]+)` \|", table, flags=re.MULTILINE)
    keys = [key for key, _, _ in config_fields()]
    assert listed == keys
    assert {"optim.lr", "train.epochs", "data.val", "log.grad_stats_every"} <= set(keys)


SECTIONS = ("data", "model", "task", "optim", "schedule", "train", "checkpoint", "early_stop", "log")
# `train.epochs`, `optim.lr=3e-3`, `early_stop.*`; not `model.eval()` or `model.safetensors`
MENTION = re.compile(rf"`((?:{'|'.join(SECTIONS)})\.[a-z_*]+(?:\.[a-z_*]+)*)[`=: ]")
# Not config keys: the export manifest's `task` entries (export.md) and a file a lint example names.
NOT_CONFIG = {"task.class_dim", "task.classes", "task.prediction", "task.targets", "model.chkpt",
              # Python attributes the pages quote: DataParallel's model.module, and explain.md's
              # `model.parameters` passed without its parentheses
              "model.module", "model.parameters"}
FILES = (".py", ".safetensors", ".json", ".jsonl", ".yaml", ".pt", ".pth", ".pt2", ".onnx", ".bin", ".png", ".html")


def mentioned_keys(text: str) -> set[str]:
    return {key for key in MENTION.findall(text) if not key.endswith(FILES) and key not in NOT_CONFIG}


def test_every_config_key_the_docs_mention_exists():
    keys = {key for key, _, _ in config_fields()}
    sections = {key.rsplit(".", 1)[0] for key in keys}
    # data.val and task.metrics hold nested specs whose keys are documented under them
    nested = ("data.val.", "task.loss.", "task.metrics.", "model.kwargs.", "data.kwargs.")

    def exists(key: str) -> bool:
        if key.endswith(".*"):
            return key[:-2] in sections or key[:-2] in keys  # a free-form mapping: model.kwargs.*
        return key in keys or key.startswith(nested)

    missing = {f"{page.name}: {key}" for page in PAGES for key in mentioned_keys(page.read_text())
               if not exists(key)}
    assert not missing, sorted(missing)


def test_every_command_is_in_the_readme_table_and_the_reference():
    names = [name for name, _ in cli_commands()]
    reference = (ROOT / "docs/cli.md").read_text()
    assert [n for n in names if f"## `torchwise {n}`" not in reference] == []
    table = (ROOT / "README.md").read_text().split("## Commands", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `torchwise ([a-z-]+)", table, flags=re.MULTILINE)
    from torchwise.cli import COMMANDS

    assert sorted(rows) == sorted(COMMANDS)


def test_every_command_the_docs_show_exists():
    names = {name for name, _ in cli_commands()}
    groups = {name.split()[0] for name in names if " " in name}
    shown = set()
    for page in PAGES:
        text = page.read_text()
        bash = "\n".join(re.findall(r"^```bash\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL))
        lines = re.findall(r"^torchwise ([a-z][a-z-]*(?: [a-z][a-z-]*)?)", bash, flags=re.MULTILINE)
        lines += re.findall(r"^\$ torchwise ([a-z][a-z-]*(?: [a-z][a-z-]*)?)", text, flags=re.MULTILINE)
        lines += re.findall(r"`torchwise ([a-z][a-z-]*(?: [a-z][a-z-]*)?)[ `]", text)
        shown |= {(page.name, " ".join(line.split()[:2 if line.split()[0] in groups else 1])) for line in lines}
    unknown = {(page, m) for page, m in shown if m not in names | groups | {"runs compare"}}
    assert len(shown) > 20 and not unknown, sorted(unknown)


def test_the_python_api_page_documents_every_public_name():
    import torchwise

    page = (ROOT / "docs/python-api.md").read_text()
    documented = set(re.findall(r"^::: ([\w.]+)$", page, flags=re.MULTILINE))
    public = {target.replace(":", ".") for name, target in torchwise._LAZY.items() if name != "lint_paths"}
    assert documented == public
