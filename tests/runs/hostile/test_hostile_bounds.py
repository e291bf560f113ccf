"""Class 3 of issue 20: reading a folder neither hangs nor eats memory.

FIFOs and devices are refused before a byte is read, documents and lines are read only up to
their limit, YAML alias trees and declared shapes are refused before anything is expanded or
allocated. Every command here runs under 1 GiB of address space and 10 s of CPU (tests/runs/
hostile/attack.py): a bomb that got through would die of MemoryError, not refuse.
"""

from __future__ import annotations

import json
import os
import zipfile

import numpy as np
from tests.runs.hostile.attack import HINT_FOLDER, Bench

HINT_CORRUPT = ("the checkpoint was cut off or corrupted; resume from checkpoints/best or another checkpoint, "
                "or start over")


def not_regular(path) -> str:
    return f"{path} is not a regular file (a FIFO, device or folder)"


def too_large(path, size: int, cap: int) -> str:
    return f"{path} is {size} bytes, over the {cap}-byte limit for a file torchwise reads from a run folder"


def sparse(path, size: int) -> None:
    with open(path, "wb") as handle:
        handle.truncate(size)


def write_inputs(bench: Bench) -> str:
    (bench.root / "in.csv").write_text("0.5\n-0.25\n")
    return str(bench.root / "in.csv")


def test_a_fifo_lock_hangs_no_reader(tmp_path):
    bench = Bench(tmp_path)
    (bench.run / ".lock").unlink()
    os.mkfifo(bench.run / ".lock")
    for command in ("runs", "diagnose", "report"):
        bench.refused(bench.torchwise(command, str(bench.run)), not_regular(bench.run / ".lock"), HINT_FOLDER)


def test_a_fifo_or_dev_zero_tensor_file_hangs_neither_export_nor_predict(tmp_path):
    bench = Bench(tmp_path)
    tensors = bench.last / "model.safetensors"
    tensors.unlink()
    os.mkfifo(tensors)
    bench.refused(bench.torchwise("export", str(bench.run), "--checkpoint", "last"), not_regular(tensors),
                  HINT_CORRUPT)
    tensors.unlink()
    tensors.symlink_to("/dev/zero")
    bench.refused(bench.torchwise("predict", str(bench.run), write_inputs(bench), "--checkpoint", "last"),
                  f"{tensors} is a symbolic link; torchwise does not follow links in a run folder", HINT_CORRUPT)


def test_dev_zero_documents_are_refused_without_reading(tmp_path):
    bench = Bench(tmp_path)
    bench.link("summary.json", "/dev/zero")
    bench.refused(bench.torchwise("runs", str(bench.run)),
                  f"{bench.run / 'summary.json'} is a symbolic link; torchwise does not follow links in a run folder",
                  HINT_FOLDER)
    (bench.run / "summary.json").unlink()
    sparse(bench.run / "summary.json", 100 << 20)  # a real file, 100 MB of nothing
    bench.refused(bench.torchwise("report", str(bench.run)), too_large(bench.run / "summary.json", 100 << 20, 16 << 20),
                  f"if the file is genuine, raise TORCHWISE_MAX_DOCUMENT_BYTES; otherwise {HINT_FOLDER}")
    meta = bench.last / "meta.json"
    meta.unlink()
    meta.symlink_to("/dev/zero")
    bench.refused(bench.torchwise("export", str(bench.run), "--checkpoint", "last"),
                  f"{meta} is a symbolic link; torchwise does not follow links in a run folder", HINT_CORRUPT)


def test_a_billion_laughs_config_is_refused_before_it_expands(tmp_path):
    bench = Bench(tmp_path)
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    (bench.run / "config.yaml").write_text("\n".join(lines) + "\nmodel: {name: linear, kwargs: {x: *a8}}\n")
    hint = f"if it is genuine, raise TORCHWISE_MAX_YAML_NODES; otherwise {HINT_FOLDER}"
    message = (f"{bench.run / 'config.yaml'} expands to more than 100000 YAML nodes (aliases count each time they "
               "are used)")
    for command in (["runs", str(bench.run)], ["resume", str(bench.run)]):
        bench.refused(bench.torchwise(*command), message, hint)


def test_an_npz_bomb_is_refused_by_its_declared_shapes(tmp_path):
    bench = Bench(tmp_path)
    bomb = bench.root / "bomb.npz"
    # 8 GiB of float32 declared by a 1 kB file: the header says (2**31,), the data is deflated zeros.
    header = bytearray()
    np.lib.format.write_array_header_1_0(_Buffer(header), {"descr": "<f4", "fortran_order": False,
                                                          "shape": (1 << 31,)})
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("x.npy", bytes(header) + bytes(1 << 20))  # the header writer adds the magic
    bench.refused(bench.torchwise("predict", str(bench.run), str(bomb)),
                  f"{bomb} declares {4 << 31} bytes of arrays (array 'x.npy': shape [2147483648], float32), over the "
                  f"{2 << 30}-byte input limit",
                  "split the inputs into smaller files, or raise TORCHWISE_MAX_INPUT_BYTES if the file is genuine")


class _Buffer:
    def __init__(self, into: bytearray) -> None:
        self.into = into

    def write(self, data: bytes) -> None:
        self.into += data


def test_a_huge_shape_in_model_json_is_refused_before_allocation(tmp_path):
    bench = Bench(tmp_path)
    record = json.loads((bench.run / "model.json").read_text())
    (bench.run / "model.json").write_text(json.dumps({**record, "sample_shape": [100000, 100000]}))
    hint = f"if it is genuine, raise TORCHWISE_MAX_SAMPLE_ELEMENTS; otherwise {HINT_FOLDER}"
    message = f"{bench.run / 'model.json'} gives a sample shape [100000, 100000] of more than 16777216 elements"
    for command in (["predict", str(bench.run), write_inputs(bench)], ["export", str(bench.run)]):
        bench.refused(bench.torchwise(*command), message, hint)


def test_resume_snapshots_only_what_it_owns_and_refuses_a_huge_document(tmp_path):
    bench = Bench(tmp_path)
    sparse(bench.run / "dataset.bin", 8 << 30)  # not torchwise's: never read
    outcome = bench.torchwise("resume", str(bench.run), "train.epochs=2")
    assert outcome.code == 0, outcome.stderr[-2000:]
    sparse(bench.run / "env.json", 100 << 20)
    bench.refused(bench.torchwise("resume", str(bench.run), "train.epochs=3"),
                  too_large(bench.run / "env.json", 100 << 20, 64 << 20),
                  f"if the file is genuine, raise TORCHWISE_MAX_SNAPSHOT_BYTES; otherwise {HINT_FOLDER}")


def test_a_gigabyte_metrics_line_is_refused_at_the_line_limit(tmp_path):
    bench = Bench(tmp_path)
    metrics = bench.run / "metrics.jsonl"
    lines = len(metrics.read_text().splitlines())
    with open(metrics, "r+b") as handle:
        handle.truncate(metrics.stat().st_size + (1 << 30))  # a 1 GB line of NULs, stored sparse
    message = f"{metrics} line {lines + 1} is longer than the 1048576-byte limit for a line"
    hint = f"if the file is genuine, raise TORCHWISE_MAX_LINE_BYTES; otherwise {HINT_FOLDER}"
    for command in ("runs", "diagnose"):
        bench.refused(bench.torchwise(command, str(bench.run)), message, hint)
