"""Where the rules added in issue 21's round 5 (explain5a's share) choose between causes, pinned on
the even positions of round 5's working half (tests/explain/working5/; explain5b pins the odd
ones): what the paste says besides the message (evaluating, accumulating, accelerate, a rank's own
error above torchrun's summary), which byte an unpickler names, what module a worker unpickles
from, which attribute a pickled module lacks. The held-out half (tests/explain/heldout5/) is measured, not pinned."""

from __future__ import annotations

import pytest
from tests.explain.pinned import share_tests

from torchwise.explain.lookup import explain
from torchwise.explain.paste import Paste, evaluation_context, frames

# number in working5 -> (the table entry, phrases the answer must hold); explain5a's share
PINNED = {
    3: ("state-dict-mismatch", ["'module.'", 'k.removeprefix("module.")']),
    6: ("ddp-unused-parameters", ["find_unused_parameters=True"]),
    10: ("conv-channels", ["channels-last", "x.permute(0, 3, 1, 2)"]),
    14: ("tokenizer-class-none", ["'__name__'", "use_fast=False", "pip install sentencepiece"]),
    18: ("pypi-placeholder", ["0.1.2", "Python 2.7", "pytorch.org/get-started"]),
    21: ("scaler-unscale-twice", ["accumulated", "if (i + 1) % accum_steps == 0"]),
    24: ("cannot-import-name", ["_compare_version", "private helper", "older torchmetrics"]),
    26: ("multi-target", ["multi-label", "BCEWithLogitsLoss"]),
    28: ("tensorboard-string-value", ["a string", "float(value)"]),
    33: ("main-class-not-found", ["ImageDataset", "notebook", "num_workers=0"]),
    37: ("cuda-out-of-memory", ["957.12 MiB", 'evaluating ("testing")', "1. run evaluation under torch.no_grad()"]),
    1005: ("export-unregistered-tensor", ["register_buffer", "pass it to forward"]),
    1012: ("zero3-no-sync", ["no_sync()", "ZeRO stage 3", "gradient_accumulation_steps"]),
    1014: ("weights-only-load", ["'v'", "Git LFS", "git lfs pull"]),
    1019: ("pin-memory-thread", ["pin_memory=False"]),
    1024: ("audio-no-backend", ["assets/exampleaudio.mp3", "FFmpeg", "pip install soundfile"]),
    1029: ("lightning-missing-hparams", ["layers", "self.save_hyperparameters()", "classmethod"]),
    1035: ("fsdp-mixed-dtype", ["torch.bfloat16", "one dtype", "MixedPrecision"]),
    1037: ("module-from-older-torch", ["Upsample", "recompute_scale_factor = None", "torch version it was saved with"]),
}


(
    test_the_share_is_the_even_position_rows_of_the_working_half,
    test_the_share_is_answered_with_its_cause,
) = share_tests("working5", PINNED, slice(1, None, 2))


def test_an_unsupported_operand_that_is_a_pickle_opcode_is_not_called_a_broken_file():
    message = "_pickle.UnpicklingError: Weights only load failed.\nWeightsUnpickler error: Unsupported operand {}"
    assert "HTML page" in explain(message.format(60)).cause
    refused = explain(message.format(149))  # 0x95 is FRAME: a real pickle the unpickler refuses
    assert refused.id == "weights-only-load" and "not a torch checkpoint" not in refused.title


def test_torchrun_s_summary_does_not_answer_for_a_rank_error_it_cannot_name():
    summary = (
        "E1126 failed (exitcode: 1) local_rank: 1 (pid: 402435) of binary: /usr/bin/python\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
    )
    assert explain(summary).id == "child-failed"
    assert explain("[rank0]: AssertionError: some check of the library\n" + summary) is None
    killed = "[rank0]: RuntimeError: boom\n" + summary.replace("exitcode: 1", "exitcode: -9")
    assert explain(killed).id == "child-failed"  # the exit code itself names the cause
    assert Paste("[rank0]: ValueError: x\n" + summary).error_line() == "[rank0]: ValueError: x"


@pytest.mark.parametrize(
    ("text", "context"),
    [
        ('  File "eval.py", line 9, in evaluate\n    out = model(x)\nRuntimeError: CUDA out of memory.', "in evaluate"),
        ("I get this after validating 300 images:\nRuntimeError: CUDA out of memory.", '"validating"'),
        ('  File "train.py", line 9, in evaluate\n    loss.backward()\nRuntimeError: CUDA out of memory.', None),
        ("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB", None),
        ("Training runs; it fails at validation:\nRuntimeError: CUDA out of memory.", None),
        ('  File "a.py", line 1, in fit\n    x\n  File "a.py", line 2, in validate\n    y\n'
         "RuntimeError: CUDA out of memory.", "in validate"),
    ],
)
def test_evaluation_is_read_from_a_frame_or_the_user_s_words_unless_it_trains(text, context):
    assert evaluation_context(text) == context
    assert ("torch.no_grad()" in explain(text).fix.split("\n")[0]) == (context is not None)


def test_a_path_shortened_to_its_package_or_a_hub_module_is_not_the_user_s_code():
    text = (
        '  File "transformers/models/auto/tokenization_auto.py", line 1073, in from_pretrained\n    x\n'
        '  File "/root/.cache/huggingface/modules/transformers_modules/m/modeling.py", line 3, in f\n    y\n'
        '  File "train.py", line 3, in main\n    z\n'
    )
    assert [frame.in_library for _, frame in frames(text)] == [True, True, False]


def test_a_bare_exception_line_is_an_error_line():
    assert Paste("Exception: expected value\nmore text").kinds[0] == "error"


@pytest.mark.parametrize(
    ("message", "known"),
    [
        ("AttributeError: 'Conv2d' object has no attribute 'padding_mode'", "module-from-older-torch"),
        ("AttributeError: 'Conv2d' object has no attribute '_non_persistent_buffers_set'", "module-from-older-torch"),
        ("AttributeError: 'Conv2d' object has no attribute 'my_scale'", None),  # the user's own attribute
        ("AttributeError: 'NoneType' object has no attribute '__name__'", None),  # no tokenizer in the paste
        ("  File \"tokenization_auto.py\", line 3, in f\nAttributeError: 'NoneType' object has no attribute"
         " '__name__'", "tokenizer-class-none"),
        ("ImportError: cannot import name 'f' from 'pkg' (most likely due to a circular import)", None),
        ("AttributeError: Can't get attribute 'Net' on <module '__main__' (built-in)>", None),  # who unpickles?
    ],
)
def test_a_message_alone_is_answered_only_where_its_grammar_bears_the_cause_out(message, known):
    got = explain(message)
    assert (got.id if got else None) == known


def test_a_whole_model_pickled_from_main_is_told_apart_from_a_dataloader_worker():
    load = (
        '  File "predict.py", line 4, in <module>\n    model = torch.load("model.pt")\n'
        "AttributeError: Can't get attribute 'Net' on <module '__main__' from 'predict.py'>\n"
    )
    assert "torch.load cannot find the class Net" in explain(load).title


# After the measurement: the three readings round 5's held-out half found wrong (tests/explain/
# corpus/round5.yaml holds those texts); the measured figures stay as measured.


def test_an_rnn_state_of_another_batch_under_several_gpus_is_data_parallel_s_split():
    message = "RuntimeError: Expected hidden size (3, 64, 12), got (3, 16, 12)"
    assert "nn.DataParallel" in explain("On multi-GPU with DataParallel:\n" + message).cause
    assert "previous batch" in explain(message).cause


@pytest.mark.parametrize(
    ("operator", "phrase"),
    [("quantized::conv2d_prepack", "model.cpu().eval()"), ("quantized::conv2d.new", "QuantStub")],
)
def test_a_quantized_operator_without_a_cpu_kernel_names_the_quantization_step(operator, phrase):
    message = f"RuntimeError: Could not run '{operator}' with arguments from the 'CPU' backend."
    assert phrase in explain(message).fix


@pytest.mark.parametrize(
    ("message", "known"),
    [
        ("RuntimeError: input must have 3 dimensions, got 2", None),  # no RNN in the paste
        ('  File "/x/site-packages/torch/nn/modules/rnn.py", line 175, in check_input\n'
         "RuntimeError: input must have 3 dimensions, got 2", "rnn-input-rank"),
        ("AttributeError: 'collections.OrderedDict' object has no attribute 'my_field'", None),
        ("AttributeError: 'collections.OrderedDict' object has no attribute 'eval'", "state-dict-as-model"),
        ("RuntimeError: Couldn't find appropriate backend to handle uri... Error", "audio-no-backend"),
    ],
)
def test_after_the_measurement_the_new_readings_answer_only_what_the_paste_bears_out(message, known):
    got = explain(message)
    assert (got.id if got else None) == known
