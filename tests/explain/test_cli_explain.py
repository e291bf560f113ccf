from __future__ import annotations

import json
import subprocess
import sys

SHAPES = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x3136 and 784x10)\n"


def run_cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "torchwise", "explain", *args],
        input=stdin, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_explains_a_traceback_file_and_exits_0(tmp_path):
    log = tmp_path / "crash.log"
    log.write_text("Traceback (most recent call last):\n  ...\n" + SHAPES)
    done = run_cli(str(log))
    assert done.returncode == 0, done.stderr
    assert "A Linear layer expects 784 input features but got 3136" in done.stdout
    assert "x.view(x.size(0), -1)" in done.stdout


def test_reads_stdin_by_default_and_as_dash():
    for args in ((), ("-",)):
        done = run_cli(*args, stdin="AssertionError: Torch not compiled with CUDA enabled")
        assert done.returncode == 0
        assert "This torch is a CPU-only build" in done.stdout


def test_unknown_error_says_so_and_exits_1():
    done = run_cli(stdin="Traceback ...\nValueError: too many values to unpack (expected 2)\n")
    assert done.returncode == 1
    assert "torchwise does not know this error yet: ValueError: too many values" in done.stdout


def test_json_output():
    done = run_cli("--json", stdin=SHAPES)
    payload = json.loads(done.stdout)
    assert payload["id"] == "linear-shapes"
    assert "nn.Linear(3136, 10)" in payload["fix"]
    unknown = run_cli("--json", stdin="nothing")
    assert (unknown.returncode, json.loads(unknown.stdout)) == (1, None)


def test_missing_file_is_bad_input(tmp_path):
    done = run_cli(str(tmp_path / "nope.log"))
    assert done.returncode == 2
    assert done.stderr.startswith("error: cannot read ")
    assert "hint: pass a file holding the error message" in done.stderr


def test_empty_input_is_an_error_not_an_unknown_message():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "torchwise", "explain", "-"], input="  \n",
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.splitlines()[0] == "error: stdin holds no error message"


def test_a_long_log_names_the_line_it_read():
    log = (
        "W1130 10:02:11.000000 4242 torch/_dynamo/convert_frame.py:844] [0/8] torch._dynamo hit"
        " config.cache_size_limit (8)\n"
        "Epoch 3:  41%|####      | 410/1000\n"
        "RuntimeError: Expected all tensors to be on the same device, but found at least two"
        " devices, cuda:0 and cpu!\n"
        "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__>\n"
    )
    done = run_cli(stdin=log)
    assert done.returncode == 0
    assert done.stdout.splitlines()[0] == "Tensors on two devices: cuda:0 and cpu"
    assert done.stdout.splitlines()[-1] == (
        "  read from:     RuntimeError: Expected all tensors to be on the same device, but found at"
        " least two devices, cuda:0 and cpu!"
    )
