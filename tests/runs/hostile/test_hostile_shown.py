"""Class 4 of issue 20: what is shown from a folder is checked.

Control characters never reach the terminal; a checkpoint whose tensor files do not match its
meta.json is shown as damaged; a malformed or mistyped document is one typed error naming the
file (never `unexpected RecursionError/KeyError/AttributeError`); a metric named like mathtext
or HTML is shown as text.
"""

from __future__ import annotations

import json

from tests.runs.hostile.attack import HINT_FOLDER, Bench

RESTORE = "restore the file from the run's owner, or remove it"


def edit_summary(bench: Bench, **fields) -> None:
    summary = json.loads((bench.run / "summary.json").read_text())
    (bench.run / "summary.json").write_text(json.dumps({**summary, **fields}))


def test_escape_sequences_in_a_summary_never_reach_the_terminal(tmp_path):
    bench = Bench(tmp_path)
    edit_summary(bench, name="line\x1b]0;owned\x07\x1b[2J\x9b1m", reason="\x1b[31mred")
    shown = bench.torchwise("runs", str(bench.run))
    assert shown.code == 0, shown.stderr
    assert "line]0;owned[" in shown.stdout  # the name, stripped, cut to the 80-column table
    assert not any(ch in shown.stdout + shown.stderr for ch in "\x1b\x07\x9b")
    bench.assert_untouched()


def test_cut_tensor_files_show_as_damaged_in_runs_trust_and_report(tmp_path):
    bench = Bench(tmp_path)
    tensors = bench.last / "model.safetensors"
    written = tensors.stat().st_size
    with open(tensors, "r+b") as handle:
        handle.truncate(written // 2)
    rows = json.loads(bench.torchwise("runs", str(bench.run), "--json").stdout)
    assert [row["status"] for row in rows] == ["damaged"]
    damage = f"model.safetensors has {written // 2} bytes where meta.json says {written}"
    assert rows[0]["anomalies"][0] == f"damaged last: {damage}"
    bench.refused(bench.torchwise("trust", str(bench.run), "--yes"),
                  f"{bench.run} is damaged: last: {damage}",
                  "get the checkpoint files again from whoever wrote the run; torchwise cannot resume, export or "
                  "predict from a damaged checkpoint")
    reported = bench.torchwise("report", str(bench.run))
    assert reported.code == 0, reported.stderr
    page = (bench.run / "report.html").read_text()
    assert "status <b>damaged</b>" in page and f"<td>damaged: {damage}</td>" in page


def test_deep_json_is_one_typed_error(tmp_path):
    bench = Bench(tmp_path)
    (bench.run / "summary.json").write_text("[" * 200_000 + "]" * 200_000)
    deep = f"{bench.run / 'summary.json'} nests deeper than 64 levels"
    hint = f"if the file is genuine, raise TORCHWISE_MAX_DEPTH; otherwise {HINT_FOLDER}"
    for command in ("runs", "report"):
        bench.refused(bench.torchwise(command, str(bench.run)), deep, hint)
    (bench.run / "summary.json").write_text(json.dumps({"status": "completed"}))
    (bench.run / "diagnosis.json").write_text('{"findings": ' + "[" * 70 + "]" * 70 + "}")
    bench.refused(bench.torchwise("runs", str(bench.run)),
                  f"{bench.run / 'diagnosis.json'} nests deeper than 64 levels", hint)


def test_mistyped_documents_are_one_typed_error_naming_the_file(tmp_path):
    bench = Bench(tmp_path)
    summary = (bench.run / "summary.json").read_text()
    edit_summary(bench, best=5)
    bench.refused(bench.torchwise("runs", str(bench.run)),
                  f"{bench.run / 'summary.json'}: best has the wrong type (int)", RESTORE)
    edit_summary(bench, best={"metric": ["val_loss"], "value": 0.1})
    bench.refused(bench.torchwise("report", str(bench.run)),
                  f"{bench.run / 'summary.json'}: best.metric has the wrong type (list)", RESTORE)
    (bench.run / "summary.json").write_text("[1, 2]")
    bench.refused(bench.torchwise("runs", str(bench.run)), f"{bench.run / 'summary.json'} does not hold a JSON object",
                  HINT_FOLDER)
    (bench.run / "summary.json").write_text(summary)
    (bench.run / "diagnosis.json").write_text('{"findings": 3}')
    bench.refused(bench.torchwise("runs", str(bench.run)),
                  f"{bench.run / 'diagnosis.json'}: findings is not the list torchwise writes",
                  "restore the file from the run's owner, or remove it (diagnose writes it again)")
    config = bench.config()
    bench.write_config({**config, "optim": 5})
    bench.refused(bench.torchwise("diagnose", str(bench.run)),
                  f"{bench.run / 'config.yaml'}: optim is not a mapping of settings", RESTORE)
    bench.write_config(config)
    record = json.loads((bench.run / "model.json").read_text())
    (bench.run / "model.json").write_text(json.dumps({**record, "sample_shape": "1"}))
    bench.refused(bench.torchwise("export", str(bench.run)),
                  f"{bench.run / 'model.json'} has a shape that is not a list of whole numbers: 1", HINT_FOLDER)
    (bench.run / "model.json").write_text(json.dumps({**record, "out_features": {"a": 1}}))
    bench.refused(bench.torchwise("export", str(bench.run)),
                  f"{bench.run / 'model.json'}: out_features is {{'a': 1}}, not a size torchwise writes", RESTORE)


def test_a_metric_named_like_mathtext_or_html_is_shown_as_text(tmp_path):
    bench = Bench(tmp_path)
    edit_summary(bench, name="<script>alert(1)</script>", final={"$\\frac{$": 0.5, "val_loss": 0.1},
                 best={"metric": "val_$\\frac{$", "value": 0.1, "epoch": 0, "step": 4})
    outcome = bench.torchwise("report", str(bench.run))
    assert outcome.code == 0, outcome.stderr[-2000:]
    page = (bench.run / "report.html").read_text()
    # Unescaped, matplotlib would parse "$\\frac{$" as mathtext and raise ValueError.
    assert 'title="monitored: val_$\\frac{$"' in page and "<td>$\\frac{$</td>" in page
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    bench.assert_untouched()
