from __future__ import annotations

from pathlib import Path

from torchwise.runs.snapshot import restore_snapshot, take_snapshot


def test_restore_puts_back_content_lengths_and_removes_new_entries(tmp_path: Path) -> None:
    (tmp_path / "summary.json").write_text('{"status": "completed"}\n')
    (tmp_path / "metrics.jsonl").write_text('{"step": 1}\n')
    (tmp_path / "checkpoints").mkdir()
    snapshot = take_snapshot(tmp_path)
    (tmp_path / "summary.json").write_text('{"status": "failed"}\n')
    with (tmp_path / "metrics.jsonl").open("a") as log:
        log.write('{"step": 2}\n')
    (tmp_path / "tensorboard").mkdir()
    (tmp_path / "tensorboard" / "events").write_text("x")
    (tmp_path / "env.json").write_text("{}")
    restore_snapshot(snapshot)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoints", "metrics.jsonl", "summary.json"]
    assert (tmp_path / "summary.json").read_text() == '{"status": "completed"}\n'
    assert (tmp_path / "metrics.jsonl").read_text() == '{"step": 1}\n'
