"""Where the families added for issue 21 choose between causes or echo the message's numbers:
which ranks share a GPU, how big the NCCL segment was, whether the batches carried labels,
which size export fixed a dimension to (1 is export's own specialisation), the GPU's
capability, the CUDA index torchvision must come from, the Python a compile needs."""

from __future__ import annotations

import pytest

from torchwise.explain.lookup import explain


def answer_text(message: str, error_id: str) -> str:
    explanation = explain(message)
    assert explanation is not None and explanation.id == error_id, (message, explanation)
    return "\n".join([explanation.title, explanation.meaning, explanation.cause, explanation.fix])


def test_duplicate_gpu_names_both_ranks_and_the_bus_id():
    text = answer_text("Last error:\nDuplicate GPU detected : rank 2 and rank 0 both on CUDA device 4000",
                       "nccl-duplicate-gpu")  # fmt: skip
    assert "Ranks 2 and 0 were both put on one GPU (PCI bus id 4000)" in text
    assert "torch.cuda.set_device(local_rank)" in text


def test_nccl_shared_memory_gives_the_segment_size_in_mib():
    text = answer_text(
        "misc/shmutils.cc:112 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-KWfVyt"
        " (size 5967872)", "nccl-shared-memory")  # fmt: skip
    assert "(/dev/shm/nccl-KWfVyt, 5.7 MiB)" in text
    assert "--shm-size=1g" in text


@pytest.mark.parametrize(
    ("inputs", "phrase"),
    [("input_ids,attention_mask", "carry no labels"), ("input_ids,attention_mask,labels", "do carry labels")],
)
def test_no_loss_depends_on_whether_labels_reached_the_model(inputs, phrase):
    text = answer_text(
        "ValueError: The model did not return a loss from the inputs, only the following keys: logits."
        f" For reference, the inputs it received are {inputs}.", "hf-no-loss")  # fmt: skip
    assert phrase in text and "(outputs: logits)" in text


def test_pad_token_for_sequence_classification_names_the_config():
    text = answer_text("ValueError: Cannot handle batch sizes > 1 if no padding token is defined.", "hf-no-pad-token")
    assert "pad_token_id" in text and "model.config.pad_token_id = tokenizer.pad_token_id" in text


@pytest.mark.parametrize(("constant", "phrase"), [("1", "2 or more"), ("32", "to 32")])
def test_export_constraint_tells_export_s_own_specialisation_from_the_model_s(constant, phrase):
    text = answer_text(
        "  - Not all values of batch = L['x'].size()[0] in the specified range batch <= 1024 are valid"
        f" because batch was inferred to be a constant ({constant}).", "export-constraint-violation")  # fmt: skip
    assert phrase in text and "L['x'].size()[0]" in text


def test_export_constraint_in_the_newer_wording():
    text = answer_text(
        "torch._dynamo.exc.UserError: You marked seq as dynamic but your code specialized it to be a"
        " constant (128).", "export-constraint-violation")  # fmt: skip
    assert "fixes it to 128" in text


def test_triton_too_old_names_the_gpu_and_its_capability():
    text = answer_text(
        "RuntimeError: Found Tesla P100-SXM2-16GB which is too old to be supported by the triton GPU"
        " compiler, which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0,"
        " but your device is of CUDA capability 6.0", "triton-gpu-too-old")  # fmt: skip
    assert "Tesla P100-SXM2-16GB (CUDA capability 6.0) is too old for triton" in text
    assert "TORCHDYNAMO_DISABLE=1" in text


@pytest.mark.parametrize(("message", "phrase"), [
    ("RuntimeError: Python 3.11+ not yet supported for torch.compile", "torch 2.1"),
    ("RuntimeError: Dynamo is not supported on Python 3.13+", "torch 2.6"),
    ("RuntimeError: Windows not yet supported for torch.compile", "WSL2"),
])  # fmt: skip
def test_compile_platform_names_what_to_change(message, phrase):
    assert phrase in answer_text(message, "compile-unsupported-platform")


def test_torchvision_cuda_mismatch_points_at_torch_s_index():
    text = answer_text(
        "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major"
        " versions. PyTorch has CUDA Version=12.1 and torchvision has CUDA Version=11.8.",
        "torchvision-cuda-mismatch")  # fmt: skip
    assert "built for CUDA 11.8, this torch for CUDA 12.1" in text
    assert "https://download.pytorch.org/whl/cu121" in text


def test_worker_exit_yields_to_the_signal_that_killed_it():
    log = (
        "RuntimeError: DataLoader worker (pid 3216) is killed by signal: Bus error.\n"
        "    raise RuntimeError('DataLoader worker (pid(s) {}) exited unexpectedly'.format(pids_str))\n"
        "RuntimeError: DataLoader worker (pid(s) 3216) exited unexpectedly\n"
    )
    assert explain(log).id == "dataloader-worker-killed"
    alone = answer_text("RuntimeError: DataLoader worker (pid(s) 3216) exited unexpectedly", "worker-exited")
    assert "num_workers=0" in alone


def test_torch_attribute_tells_a_private_name_from_a_public_one():
    public = answer_text("AttributeError: module 'torch' has no attribute 'compile'", "torch-attribute-missing")
    private = answer_text("AttributeError: module 'torch' has no attribute '_utils_internal'",
                          "torch-attribute-missing")  # fmt: skip
    assert "older than the code" in public and "internal to torch" in private


def test_batchnorm_features_builds_the_layer_for_what_arrives():
    text = answer_text("RuntimeError: running_mean should contain 64 elements not 128", "batchnorm-features")
    assert "built for 128 features got an input with 64" in text and "nn.BatchNorm2d(64)" in text


def test_bce_under_autocast_points_at_the_logits_loss():
    text = answer_text("RuntimeError: torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe"
                       " to autocast.", "bce-unsafe-autocast")  # fmt: skip
    assert "nn.BCEWithLogitsLoss()" in text
