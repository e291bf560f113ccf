"""Where `explain` has to choose: the real error line in a long log, the cause that the numbers
point to, and a message's own suggestion that is the wrong fix."""

from __future__ import annotations

from torchwise.explain.lookup import explain
from torchwise.explain.paste import Paste

RECOMPILE_WARNINGS = (
    "W1130 10:02:11.000000 4242 torch/_dynamo/convert_frame.py:844] [0/8] torch._dynamo hit"
    " config.cache_size_limit (8)\n"
    "W1130 10:02:11.000000 4242 torch/_dynamo/convert_frame.py:844] [0/8]    function: 'forward'"
    " (model.py:40)\n"
    "W1130 10:02:11.000000 4242 torch/_dynamo/convert_frame.py:844] [0/8]    last reason: 0/0:"
    " tensor 'L['x']' size mismatch at index 0. expected 64, actual 17\n"
    'W1130 10:02:11.000000 4242 torch/_dynamo/convert_frame.py:844] [0/8] To log all'
    ' recompilation reasons, use TORCH_LOGS="recompiles".\n'
)


def answer_text(message: str) -> str:
    explanation = explain(message)
    assert explanation is not None, message
    return "\n".join([explanation.title, explanation.meaning, explanation.cause, explanation.fix])


def test_a_warning_block_whose_last_line_is_not_the_error_is_still_read():
    explanation = explain(RECOMPILE_WARNINGS)
    assert explanation is not None and explanation.id == "recompile-limit"
    assert "'forward'" in explanation.title and "after 8 versions" in explanation.title
    assert "expected 64, actual 17" in explanation.meaning
    assert "dynamic=True" in explanation.fix


def test_the_error_after_a_warning_block_wins_over_the_warning():
    log = RECOMPILE_WARNINGS + (
        "Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (17x300 and 200x10)\n"
    )
    explanation = explain(log)
    assert explanation is not None and explanation.id == "linear-shapes"
    assert explanation.matched == "mat1 and mat2 shapes cannot be multiplied (17x300 and 200x10)"


def test_a_user_warning_line_loses_to_the_error_after_it():
    log = (
        "UserWarning: NVIDIA GeForce RTX 3090 with CUDA capability sm_86 is not compatible with"
        " the current PyTorch installation.\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    )
    assert explain(log).id == "cuda-out-of-memory"


def test_a_catch_all_assert_defers_to_the_kernel_assertion_that_names_the_cause():
    log = (
        "../aten/src/ATen/native/cuda/Indexing.cu:1093: indexSelectSmallIndex: block: [0,0,0],"
        " thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\n"
        "RuntimeError: CUDA error: device-side assert triggered\n"
    )
    explanation = explain(log)
    assert explanation.id == "device-side-assert"
    assert "num_embeddings" in explanation.cause and "CUDA_LAUNCH_BLOCKING=1" in explanation.fix


def test_a_specific_error_beats_a_later_catch_all_cublas_failure():
    log = (
        "IndexError: index out of range in self\n"
        "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle)`\n"
    )
    assert explain(log).id == "embedding-index"
    assert explain(log.splitlines()[1]).id == "cublas-failed"


def test_one_hot_targets_are_named_by_the_ratio_8_to_32():
    text = answer_text("ValueError: Expected input batch_size (8) to match target batch_size (32).")
    assert "32 = 8 x 4" in text and "one-hot" in text and "y.argmax(1)" in text
    assert "hard-code" not in text  # not blamed on a reshape


def test_backward_twice_says_retain_graph_is_the_wrong_fix():
    text = answer_text(
        "RuntimeError: Trying to backward through the graph a second time (or directly access"
        " saved tensors after they have already been freed). Saved intermediate values of the"
        " graph are freed when you call .backward() or autograd.grad(). Specify"
        " retain_graph=True if you need to backward through the graph a second time or if you"
        " need to access saved tensors after calling backward."
    )
    assert "hidden = hidden.detach()" in text
    assert "retain_graph=True, is the wrong fix here" in text


def test_lora_with_checkpointing_is_not_told_to_unfreeze():
    text = answer_text(
        "UserWarning: None of the inputs have requires_grad=True. Gradients will be None\n"
        "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn"
    )
    assert "model.enable_input_require_grads()" in text and "use_reentrant=False" in text
    assert "Unfreezing the base model's parameters is not the fix" in text
    plain = answer_text("RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn")
    assert "p.requires_grad_(True)" in plain


def test_an_int_target_is_int32_not_labels_read_as_floats():
    text = answer_text("RuntimeError: expected scalar type Long but found Int")
    assert "int32" in text and "y = y.long()" in text
    assert "floats" not in text.split("CrossEntropyLoss and NLLLoss want class indices")[0]


def test_a_segmentation_target_is_asked_for_as_n_h_w_not_n():
    text = answer_text(
        "RuntimeError: only batches of spatial targets supported (3D tensors) but got targets of"
        " size: : [8, 1, 128, 128]"
    )
    assert "[8, 1, 128, 128]" in text and "target.squeeze(1)" in text and "[N, H, W]" in text
    assert "shape [N])" not in text


def test_no_kernel_image_uses_the_gpu_arch_and_the_arch_list_in_the_message():
    text = answer_text(
        "UserWarning: NVIDIA GeForce RTX 3080 with CUDA capability sm_86 is not compatible with"
        " the current PyTorch installation.\nThe current PyTorch install supports CUDA"
        " capabilities sm_37 sm_50 sm_60 sm_70.\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    )
    assert "no kernels for sm_86 (NVIDIA GeForce RTX 3080); it has sm_37 sm_50 sm_60 sm_70" in text
    assert "CUDA 11.1 or newer" in text and "/whl/cu126" in text
    assert "RTX 50xx" not in text  # the generic guess is gone when the message says which GPU


def test_an_old_gpu_is_told_the_build_dropped_it():
    text = answer_text(
        "NVIDIA GeForce GTX 1080 with CUDA capability sm_61 is not compatible with the current"
        " PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_75"
        " sm_80 sm_86 sm_90 sm_100 sm_120."
    )
    assert "older than its oldest architecture (sm_75)" in text and "/whl/cu126" in text


def test_grayscale_into_a_pretrained_rgb_model_keeps_the_weights_first():
    text = answer_text(
        "RuntimeError: Given groups=1, weight of size [64, 3, 7, 7], expected input[16, 1, 224,"
        " 224] to have 3 channels, but got 1 channels instead"
    )
    assert text.index("Grayscale(num_output_channels=3)") < text.index("in_channels=1")
    assert "Only when training from scratch" in text


def test_rgba_against_rgb_normalisation_is_named_from_4_and_3():
    text = answer_text(
        "RuntimeError: The size of tensor a (4) must match the size of tensor b (3) at"
        " non-singleton dimension 0"
    )
    assert "RGBA" in text and 'convert("RGB")' in text
    other = answer_text(
        "RuntimeError: The size of tensor a (65) must match the size of tensor b (64) at"
        " non-singleton dimension 3"
    )
    assert "RGBA" not in other and "odd image" in other


def test_a_torchrun_summary_is_not_the_answer_when_the_ranks_own_error_is_in_the_paste():
    # github.com/yangjianxin1/Firefly/issues/32: the rank's exception sits above the summary;
    # "read that rank's traceback" tells the reader nothing the paste does not (round 5: a
    # catch-all that another line of the paste contradicts says it does not know instead)
    log = (
        "[rank0]: Exception: expected value at line 1 column 1\n"
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0"
        " (pid: 24024) of binary: /opt/conda/bin/python\n"
        "Traceback (most recent call last):\n"
        '  File "/opt/conda/bin/torchrun", line 33, in <module>\n'
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
    )
    assert explain(log) is None
    assert Paste(log).error_line() == "[rank0]: Exception: expected value at line 1 column 1"
    alone = log.split("\n", 1)[1]  # the summary alone still points at the rank
    explanation = explain(alone)
    assert explanation is not None and explanation.id == "child-failed"
    assert "local rank 0 exited with code 1" in explanation.title


def test_a_known_error_in_a_rank_beats_the_torchrun_summary_after_it():
    log = (
        "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
        "E1130 failed (exitcode: 1) local_rank: 1 (pid: 4242) of binary: /usr/bin/python\n"
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
    )
    assert explain(log).id == "cuda-out-of-memory"


def test_kernel_assertion_lines_alone_are_read():
    # github.com/Peterande/D-FINE/issues/125: the log was cut before "device-side assert triggered"
    log = (
        "../aten/src/ATen/native/cuda/IndexKernel.cu:93: operator(): block: [550,0,0], thread:"
        ' [57,0,0] Assertion `-sizes[i] <= index && index < sizes[i] && "index out of bounds"` failed.\n'
        "Traceback (most recent call last):\n"
    )
    explanation = explain(log)
    assert explanation.id == "device-side-assert"
    assert "index is out of range" in explanation.title and "CUDA_LAUNCH_BLOCKING=1" in explanation.fix
