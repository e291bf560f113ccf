"""Class 2 of issue 20: no read or write escapes the folder through a link planted in it.

Every file torchwise opens in a run or artefact folder is opened with O_NOFOLLOW and checked to be
a regular file (`runs.safe_io`); `checkpoints/last` may only name a hidden sibling folder;
temporary files have mkstemp names, so a name planted in advance is never written through.
"""

from __future__ import annotations

import os
import shutil

from tests.runs.hostile.attack import HINT_FOLDER, Bench


def linked(bench: Bench, name: str) -> str:
    return f"{bench.run / name} is a symbolic link; torchwise does not follow links in a run folder"


def test_a_linked_lock_is_refused_by_the_writer_and_the_readers(tmp_path):
    bench = Bench(tmp_path)
    bench.link(".lock", bench.outside / "victim.txt")
    for command in (["resume", str(bench.run), "train.epochs=2"], ["runs", str(bench.run)],
                    ["diagnose", str(bench.run)]):
        bench.refused(bench.torchwise(*command), linked(bench, ".lock"), HINT_FOLDER)


def test_linked_logs_are_neither_appended_to_nor_read(tmp_path):
    bench = Bench(tmp_path)
    bench.link("metrics.jsonl", bench.outside / "victim.txt")
    bench.refused(bench.torchwise("resume", str(bench.run), "train.epochs=2"), linked(bench, "metrics.jsonl"),
                  HINT_FOLDER)
    bench.refused(bench.torchwise("diagnose", str(bench.run)), linked(bench, "metrics.jsonl"), HINT_FOLDER)
    (bench.run / "metrics.jsonl").unlink()
    shutil.copy(bench.outside / "victim.txt", bench.run / "metrics.jsonl")
    bench.link("events.jsonl", bench.outside / "victim.txt")
    bench.refused(bench.torchwise("report", str(bench.run)), linked(bench, "events.jsonl"), HINT_FOLDER)


def test_a_linked_report_is_not_written_through(tmp_path):
    bench = Bench(tmp_path)
    bench.link("report.html", bench.outside / "victim.txt")
    bench.refused(bench.torchwise("report", str(bench.run)),
                  f"{bench.run / 'report.html'} is a symbolic link; torchwise does not write through links in a "
                  "run folder", HINT_FOLDER)


def test_a_linked_config_is_not_copied_into_the_report(tmp_path):
    bench = Bench(tmp_path)
    shutil.copy(bench.run / "config.yaml", bench.outside / "secret.yaml")
    bench.settle()
    bench.link("config.yaml", bench.outside / "secret.yaml")
    bench.refused(bench.torchwise("report", str(bench.run)), linked(bench, "config.yaml"), HINT_FOLDER)
    assert not (bench.run / "report.html").exists()


def test_a_linked_export_folder_is_refused(tmp_path):
    bench = Bench(tmp_path)
    bench.link("export", bench.outside / "victim-folder")
    bench.refused(bench.torchwise("export", str(bench.run), "--format", "torchscript"), linked(bench, "export"),
                  HINT_FOLDER)


def test_a_linked_checkpoints_folder_is_refused(tmp_path):
    bench = Bench(tmp_path)
    shutil.copytree(bench.run / "checkpoints", bench.outside / "checkpoints", symlinks=True)
    bench.settle()
    bench.link("checkpoints", bench.outside / "checkpoints")
    hint = "restore the run's checkpoints folder; a folder someone sent you may be hostile"
    for command in (["resume", str(bench.run), "train.epochs=2"], ["export", str(bench.run), "--checkpoint", "last"]):
        bench.refused(bench.torchwise(*command), linked(bench, "checkpoints"), hint)


def test_a_last_link_out_of_the_folder_is_refused(tmp_path):
    bench = Bench(tmp_path)
    shutil.copytree(bench.last, bench.outside / "ckpt")
    bench.settle()
    bench.link("checkpoints/last", bench.outside / "ckpt")
    bench.refused(bench.torchwise("resume", str(bench.run), "train.epochs=2"),
                  f"{bench.run / 'checkpoints' / 'last'} points to {bench.outside / 'ckpt'}, outside its "
                  "checkpoints folder", f"a checkpoint link must name a hidden folder beside it; {HINT_FOLDER}")
    os.unlink(bench.run / "checkpoints" / "last")
    (bench.run / "checkpoints" / "last").symlink_to("../../outside/ckpt")
    bench.refused(bench.torchwise("export", str(bench.run), "--checkpoint", "last"),
                  f"{bench.run / 'checkpoints' / 'last'} points to ../../outside/ckpt, outside its checkpoints "
                  "folder", f"a checkpoint link must name a hidden folder beside it; {HINT_FOLDER}")


def test_planted_temporary_names_are_never_written_through(tmp_path):
    bench = Bench(tmp_path)
    # The names the writers used to take: fixed, or the writer's pid (here: every pid up to 4096,
    # and the next ones the kernel would hand out).
    bench.link(".config.yaml.tmp", bench.outside / "victim.txt")
    start = os.getpid()
    for pid in sorted({*range(300, 4096, 7), *range(start, start + 64)}):  # a set: the two ranges can meet
        for name in ("summary.json", "env.json", "diagnosis.json", "model.json", "signature.json"):
            (bench.run / f".{name}.tmp-{pid}").symlink_to(bench.outside / "victim.txt")
    outcome = bench.torchwise("resume", str(bench.run), "train.epochs=2")
    assert outcome.code == 0, outcome.stderr[-2000:]
    bench.assert_untouched()


def test_a_linked_signature_is_neither_read_nor_written_through(tmp_path):
    bench = Bench(tmp_path)
    bench.link("signature.json", bench.outside / "victim.txt")
    bench.refused(bench.torchwise("resume", str(bench.run), "train.epochs=2"), linked(bench, "signature.json"),
                  HINT_FOLDER)
    # `trust` reads it as "unreadable" (a foreign folder), and will not sign through it.
    bench.refused(bench.torchwise("trust", str(bench.run), "--yes"),
                  f"{bench.run / 'signature.json'} is a symbolic link; torchwise does not write through links in a "
                  "run folder", HINT_FOLDER)
