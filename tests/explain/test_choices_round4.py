"""Where the families added in issue 21's round 4 choose between causes, pinned on round 4's
working half (tests/explain/working4/): which wrapper or GPU the message names, which library the
paste imports, what the failed check at the user's line tests, whether a name is also a file of
the project; and that explain says it does not know where the paste does not bear a cause out.
The held-out half (tests/explain/heldout4/) is measured, not pinned here."""

from __future__ import annotations

import pytest
from tests.explain.pinned import answer_text, pinned_tests, working_texts

from torchwise.explain.lookup import explain

TEXTS = working_texts("working4")


# number in working4 -> (the table entry, phrases the answer must hold)
PINNED = {
    2: ("lightning-missing-dataloader", ["val_dataloader", "limit_val_batches=0"]),
    3: ("method-arguments", ["validation_step", "install the version the code was written for"]),
    6: ("jit-load-failed", ["optimize_for_inference", "the torch version that saved it"]),
    9: ("two-gpus", ["GPU 1 and GPU 0", "register_buffer"]),
    10: ("wrapper-attribute", ["model.module.connect_heads_with_processor"]),
    12: ("two-gpus", ["device=x.device", "DistributedDataParallel"]),
    13: ("forward-arguments", ["torch.jit.trace passed 2", "torch.jit.trace(model, (batch,))"]),
    18: ("save-write-failed", ['join(OUTD, "best_model.pt")', "df -h"]),
    20: ("nvml-init-failed", ["Driver/library version mismatch", "reboot"]),
    21: ("torch-attribute-missing", ["torch.cuda.amp.custom_fwd", "no reinstall"]),
    24: ("download-failed", ["RemoteDisconnected", "HTTPS_PROXY"]),
    28: ("accelerate-gpu-ids", ["accelerate config", "--num_processes 1"]),
    35: ("optimizer-state-mismatch", ["another number of parameters", "skip optimizer.load_state_dict"]),
    39: ("module-for-object", ["optimizer.py", "not an object with .load_state_dict"]),
    40: ("quantized-model-moved", ["8-bit", "Remove the .to call"]),
    41: ("integer-requires-grad", ["int8", "load the float checkpoint"]),
    44: ("trace-constant-output", ["Output 1", "Return only tensors computed from the inputs"]),
    46: ("data-parallel-on-cpu", ["still on cpu", "model = model.to('cuda:0')"]),
    47: ("two-devices", ["cpu and cuda:0", "model.to(device)"]),
    48: ("two-devices", ["self is on cpu"]),
    49: ("two-devices", ["cuda:0 and cpu"]),
    50: ("two-devices", ["cuda:0 and cpu"]),
    51: ("shared-library-missing", ["torchvision wheel", "whl/cpu"]),
    53: ("collate-type", ["PIL images", "ToTensor()"]),
}
NOT_KNOWN = [29, 30]  # a module of the project or a package? "No module named 'x'" alone does not say


(
    test_the_working_half_is_answered_with_its_cause,
    test_what_the_paste_does_not_bear_out_stays_unknown,
    test_the_working_half_is_pinned_whole,
) = pinned_tests(TEXTS, PINNED, NOT_KNOWN)


ASSERT_AT = '  File "train.py", line 9, in main\n    {source}\nAssertionError\n'


@pytest.mark.parametrize(
    ("source", "phrases"),
    [
        ("assert os.path.exists(cfg.root)", ["The path in cfg.root does not exist"]),
        ("assert (h % 32 == 0)", ["The size h is not a multiple of 32"]),
        ("assert torch.cuda.is_available()", ["sees no GPU"]),
        ("assert len(images) == len(labels)", ["The lists images and labels have different lengths"]),
        ("assert x.dim() == 4", ["checks x.dim() == 4", "Print the operands"]),
    ],
)
def test_a_failed_assert_is_read_from_its_condition(source, phrases):
    text = answer_text(ASSERT_AT.format(source=source), "assert-failed")
    assert "train.py:9 in main" in text
    assert all(phrase in text for phrase in phrases), text


def test_an_assert_inside_a_library_or_without_its_line_is_not_known():
    library = (
        '  File "/usr/lib/python3.10/site-packages/lib/x.py", line 3, in f\n    assert ok\nAssertionError\n'
    )
    assert explain(library) is None
    assert explain("AssertionError\n") is None
    assert explain('  File "train.py", line 9, in main\n    run(x)\nAssertionError\n') is None


def test_a_module_name_is_the_projects_file_only_when_the_traceback_runs_through_it():
    message = "AttributeError: module 'optimizer' has no attribute 'step'\n"
    through = '  File "/home/u/proj/optimizer.py", line 7, in run\n    optimizer.step()\n' + message
    assert "optimizer.py:7 in run" in answer_text(through, "module-for-object")
    assert explain(message) is None  # no file of that name in the paste
    installed = through.replace("/home/u/proj/", "/usr/lib/python3.10/site-packages/")
    assert explain(installed) is None
    # a function the project's module lacks is not an object mistaken for the module
    assert explain(through.replace("no attribute 'step'", "no attribute 'build_sgd'")) is None


def test_gpus_apart_are_not_read_as_cpu_against_gpu():
    text = (
        "RuntimeError: Expected all tensors to be on the same device, but found at least two"
        " devices, cuda:0 and cuda:1!"
    )
    assert "GPU 0 and GPU 1" in answer_text(text, "two-gpus")
    assert "cpu and cuda:0" in answer_text(text.replace("cuda:0 and cuda:1", "cpu and cuda:0"), "two-devices")


def test_a_save_cut_short_is_a_disk_unless_memory_ran_out_first():
    cut = "RuntimeError: [enforce fail at inline_container.cc:300] . unexpected pos 60 vs 49\n"
    assert "full" in answer_text(cut, "save-write-failed")
    memory = "MemoryError\n\nDuring handling of the above exception:\n" + cut
    assert "out of memory" in answer_text(memory, "save-write-failed")
