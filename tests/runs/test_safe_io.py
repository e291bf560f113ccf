"""runs/safe_io.py: the limits are the documented defaults, each overridable by its variable."""

from __future__ import annotations

import json
import os

import pytest

from torchwise.runs.safe_io import DEFAULTS, FolderFileError, iter_jsonl, limit, read_json, read_yaml


def test_the_defaults_are_the_documented_ones():
    page = open(os.path.join(os.path.dirname(__file__), "..", "..", "docs", "sharing-runs-safely.md")).read()
    shown = {"16 MiB": 16 << 20, "1 MiB": 1 << 20, "64 levels": 64, "100000": 100_000, "16777216": 1 << 24,
             "2 GiB": 2 << 30, "64 MiB": 64 << 20}
    rows = [line for line in page.splitlines() if line.startswith("|") and "TORCHWISE_MAX_" in line]
    documented = {row.split("|")[3].strip().strip("`"): shown[row.split("|")[2].strip()] for row in rows}
    assert documented == DEFAULTS


def test_a_variable_raises_a_limit_and_a_bad_one_is_refused(tmp_path, monkeypatch):
    document = tmp_path / "summary.json"
    document.write_text(json.dumps({"name": "x" * 100}))
    monkeypatch.setenv("TORCHWISE_MAX_DOCUMENT_BYTES", "50")
    with pytest.raises(FolderFileError, match=r"is 112 bytes, over the 50-byte limit"):
        read_json(document)
    monkeypatch.setenv("TORCHWISE_MAX_DOCUMENT_BYTES", "200")
    assert read_json(document) == {"name": "x" * 100}
    monkeypatch.setenv("TORCHWISE_MAX_DOCUMENT_BYTES", "lots")
    with pytest.raises(FolderFileError) as caught:
        limit("TORCHWISE_MAX_DOCUMENT_BYTES")
    assert (caught.value.message, caught.value.hint) == (
        "TORCHWISE_MAX_DOCUMENT_BYTES='lots' is not a whole number",
        "set TORCHWISE_MAX_DOCUMENT_BYTES to a number, e.g. 16777216")


def test_line_depth_and_node_limits_follow_their_variables(tmp_path, monkeypatch):
    log = tmp_path / "metrics.jsonl"
    log.write_text('{"step": 1}\n{"step": 2, "pad": "' + "x" * 64 + '"}\n{"step": 3')  # the last line torn
    assert [r["step"] for r in iter_jsonl(log)] == [1, 2]
    monkeypatch.setenv("TORCHWISE_MAX_LINE_BYTES", "32")
    with pytest.raises(FolderFileError, match=r"metrics.jsonl line 2 is longer than the 32-byte limit"):
        list(iter_jsonl(log))
    config = tmp_path / "config.yaml"
    config.write_text("a: &a [1, 2, 3]\nb: [*a, *a, *a]\n")  # the map, 2 keys, 5 lists, 12 numbers: 20 nodes
    assert read_yaml(config) == {"a": [1, 2, 3], "b": [[1, 2, 3]] * 3}
    monkeypatch.setenv("TORCHWISE_MAX_YAML_NODES", "10")
    with pytest.raises(FolderFileError, match="expands to more than 10 YAML nodes"):
        read_yaml(config)
    (tmp_path / "summary.json").write_text('{"a": {"b": []}}')
    assert read_json(tmp_path / "summary.json") == {"a": {"b": []}}
    monkeypatch.setenv("TORCHWISE_MAX_DEPTH", "2")
    with pytest.raises(FolderFileError, match="nests deeper than 2 levels"):
        read_json(tmp_path / "summary.json")
