"""Issue 21, round 10 (explain10a): the working half's rows of explain10a's share (install, builds,
GPUs and platforms, distributed, the libraries around torch), each pinned to the entry and phrases
judged right, or to "not known" (working10/judged-10a.yaml holds the verdicts and notes); and the
mechanisms of the round, each on a reduced text: whose operator lacks a kernel, NCCL's result code
in the newer wording, what the paste spans, a remedy offered with "instead"."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from tests.explain.pinned import answer_text, pinned_tests, working_texts

from torchwise.explain.lookup import explain

WORKING10 = working_texts("working10")
JUDGED = yaml.safe_load((Path(__file__).parent / "working10" / "judged-10a.yaml").read_text())

PINNED: dict[int, tuple[str, list[str]]] = {
    6: ("no-kernel-for-backend", ["a macOS build", "'mps' if torch.backends.mps.is_available() else 'cpu'"]),
    14: ("process-group-not-initialized", ["'SyncBN' -> 'BN'", "torchrun"]),
    16: ("hf-no-pad-token", ["tokenizer.pad_token = tokenizer.eos_token"]),
    25: ("windows-dll", ["libomp140.x86_64.dll", "Visual C++ Redistributable"]),
    27: ("nccl-system-error", ["On one machine, most often a container with too little shared memory", "--shm-size"]),
    29: ("nccl-system-error", ["NCCL_DEBUG=INFO", "NCCL_SOCKET_IFNAME"]),
    30: ("nccl-system-error", ["too little shared memory", "NCCL_P2P_DISABLE=1", "--ipc=host"]),
    46: ("cannot-import-name", ["Install the transformers version"]),
    66: ("nccl-watchdog-timeout", ["ranks run different numbers of steps"]),
    73: ("peft-targets-not-found", ["query_key_value", "named_modules()"]),
    75: ("peft-targets-not-found", ["Qwen-1 c_attn", "named_modules()"]),
    78: ("audio-no-backend", ["pip install soundfile"]),
    91: ("torchvision-operator-missing", ["torchvision was built for another torch release"]),
    92: ("torchvision-operator-missing", ["torchvision was built for another torch release"]),
    93: ("hip-invalid-device-function", ["gfx803", "HSA_OVERRIDE_GFX_VERSION"]),
}
NOT_KNOWN = [58, 63, 82, 83, 87, 88]


# the share's rows, each pinned to its entry and phrases or to "not known", and together the share
SHARE = {number: WORKING10[number] for number in [*PINNED, *NOT_KNOWN]}
(
    test_the_share_s_rows_are_answered_with_the_judged_cause,
    test_the_share_s_unknown_rows_stay_unknown,
    test_the_pins_are_the_share,
) = pinned_tests(SHARE, PINNED, NOT_KNOWN)


def test_the_judged_file_is_the_pins():
    assert sorted(row["number"] for row in JUDGED) == sorted([*PINNED, *NOT_KNOWN])
    for row in JUDGED:
        assert (row["after"] == "right") == (row["number"] in PINNED), row["number"]
        assert row["got_after"] == (PINNED[row["number"]][0] if row["number"] in PINNED else None)
    before = [sum(row["before"] == kind for row in JUDGED) for kind in ("right", "wrong", "not known")]
    after = [sum(row["after"] == kind for row in JUDGED) for kind in ("right", "wrong", "not known")]
    assert (before, after) == ([13, 1, 7], [15, 0, 6])


NO_KERNEL = (
    "NotImplementedError: Could not run '{op}' with arguments from the 'CUDA' backend. This could be"
    " because the operator doesn't exist for this backend. '{op}' is only available for these backends: {listed}"
)


def test_torch_s_own_operator_listing_mps_without_cuda_is_a_macos_build():
    text = NO_KERNEL.format(op="aten::empty_strided", listed="[CPU, MPS, Meta, QuantizedCPU, BackendSelect,")
    answer = answer_text(text, "no-kernel-for-backend")  # the list cut short by the paste is read
    assert "a macOS build" in answer and "built without CUDA kernels" not in answer


@pytest.mark.parametrize(
    "listed",
    ["[CPU, Meta, QuantizedCPU, BackendSelect, Python]", "[CPU, BackendSelect, Python]", ""],
)
def test_torch_s_own_operator_otherwise_is_not_known(listed):
    # a CPU-only wheel and an operator with CPU kernels only list the same backends
    text = NO_KERNEL.format(op="aten::empty_strided", listed=listed)
    assert explain(text.removesuffix(" is only available for these backends: ")) is None


def test_a_library_s_operator_without_cuda_is_still_the_library_s_build():
    text = NO_KERNEL.format(op="torchvision::nms", listed="[CPU, Meta, QuantizedCPU, BackendSelect]")
    assert "the library that registers it was built without CUDA kernels" in answer_text(text, "no-kernel-for-backend")


def test_nccl_s_newer_wording_names_result_code_2():
    text = "[rank0]: RuntimeError: NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO for details)"
    assert "NCCL_DEBUG=INFO" in answer_text(text, "nccl-system-error")
    # other result codes are other causes (1: a CUDA call, 3: NCCL internal), not this entry's
    assert explain("RuntimeError: NCCL Error 1: unhandled cuda error (run with NCCL_DEBUG=INFO for details)") is None


def test_a_system_error_across_hosts_leads_with_the_network_interface():
    error = (
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970,"
        " unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5"
    )
    launch = "\ntorchrun --nnodes 2 --node_rank 0 --nproc_per_node 8 train.py"
    several = answer_text(error + launch, "nccl-system-error")
    one = answer_text(error, "nccl-system-error")
    assert several.split("\n")[2].startswith("NCCL uses a network interface")
    assert one.split("\n")[2].startswith("On one machine, most often a container with too little shared memory")


def test_a_remedy_offered_with_instead_is_the_fix():
    text = (
        "NotImplementedError: Support for `validation_epoch_end` has been removed in v2.0.0. `Net` implements"
        " this method. You can use the `on_validation_epoch_end` hook instead."
    )
    answer = answer_text(text, "stated-remedy")
    assert "removed in v2.0.0" in answer and "You can use the `on_validation_epoch_end` hook instead" in answer
    # without 'instead' an offer is no remedy
    assert explain("ValueError: the value is out of range. You can use a smaller one.") is None


IMPORT = (
    'Traceback (most recent call last):\n  File "{importer}", line 5, in <module>\n    from utils import get_loader\n'
    "ImportError: cannot import name 'get_loader' from 'utils' ({location})"
)


def test_a_name_missing_from_the_project_s_own_module_is_not_known():
    # utils sits beside the file that imports it: no installed utils is shadowed, no release is at fault
    text = IMPORT.format(importer="/home/u/proj/train.py", location="/home/u/proj/utils/__init__.py")
    assert explain(text) is None
    windows = IMPORT.format(importer="C:\\work\\proj\\train.py", location="C:\\work\\proj\\utils.py")
    assert explain(windows) is None


def test_a_module_from_another_folder_still_reads_as_shadowing():
    text = IMPORT.format(importer="/home/u/proj/train.py", location="/home/u/other/utils/__init__.py")
    assert "outside the installed packages" in answer_text(text, "cannot-import-name")


def test_torchrun_s_root_cause_table_gives_the_exit_code():
    text = (
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
        "Root Cause (first observed failure):\n[0]:\n  host      : node1\n  rank      : 0 (local_rank: 0)\n"
        "  exitcode  : -9 (pid: 1234)\n  error_file: <N/A>\n  traceback : Signal 9 (SIGKILL) received by PID 1234"
    )
    answer = answer_text(text, "child-failed")
    assert "out-of-memory killer" in answer and "local rank 0 exited with code -9" in answer


def test_no_process_group_under_a_launcher_is_not_a_plain_python_start():
    error = "RuntimeError: Default process group has not been initialized, please make sure to call init_process_group."
    launch = "$ torchrun --nproc_per_node 4 tools/train.py cfg.py"
    launched = answer_text(f"{launch}\n{error}", "process-group-not-initialized")
    assert "started by a launcher" in launched and "plain `python train.py`" not in launched
    assert "plain `python train.py`" in answer_text(error, "process-group-not-initialized")


def test_torch_without_cuda_on_a_mac_is_the_mac_s_device():
    error = "AssertionError: Torch not compiled with CUDA enabled"
    mac = answer_text(f'  File "/Users/knox/proj/train.py", line 9, in <module>\n    model.cuda()\n{error}',
                      "torch-not-compiled-with-cuda")
    assert "This is a Mac (the paste shows /Users/knox)" in mac and "'mps' if torch.backends.mps" in mac
    windows = answer_text(f'  File "C:/Users/knox/proj/train.py", line 9, in <module>\n    model.cuda()\n{error}',
                          "torch-not-compiled-with-cuda")
    assert "pip installed the CPU wheel" in windows and "This is a Mac" not in windows
