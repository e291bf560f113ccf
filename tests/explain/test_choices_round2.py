"""Where the families added in issue 21's round 2 choose between causes: what a tensor lacks,
what a loss is instead of a tensor, where an object failed to pickle, whether torch or another
package loaded the DLL, which derivative is missing, and how many inputs a forward got."""

from __future__ import annotations

import pytest

from torchwise.explain.lookup import explain


def answer_text(message: str, error_id: str) -> str:
    explanation = explain(message)
    assert explanation is not None and explanation.id == error_id, (message, explanation)
    return "\n".join([explanation.title, explanation.meaning, explanation.cause, explanation.fix])


@pytest.mark.parametrize(
    ("attribute", "expected"),
    [
        ("append", "losses.append(loss.item())"),
        ("width", "h, w = img.shape[-2:]"),
        ("astype", "x.to(torch.float32)"),
        ("tensors", "NestedTensor"),
        ("dtpye", "misspelt"),
    ],
)
def test_the_missing_attribute_names_the_object_the_code_expected(attribute, expected):
    text = answer_text(f"AttributeError: 'Tensor' object has no attribute '{attribute}'", "tensor-attribute")
    assert f"no attribute '{attribute}'" in text and expected in text


def test_a_real_tensor_attribute_is_another_librarys_tensor_and_not_claimed():
    # torch tensors have .numpy(): this message comes from TensorFlow's Tensor
    assert explain("AttributeError: 'Tensor' object has no attribute 'numpy'") is None


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("float", "unpacked from the wrong position"),
        ("int", "returns a constant such as 0"),
        ("tuple", "loss, *parts = criterion(out, y)"),
        ("NoneType", "a missing return"),
    ],
)
def test_what_the_loss_is_instead_of_a_tensor_decides_the_cause(kind, expected):
    text = answer_text(f"AttributeError: '{kind}' object has no attribute 'backward'", "loss-not-a-tensor")
    assert f"a Python {kind}" in text and expected in text


def test_a_tensor_key_echoes_its_value_and_device():
    text = answer_text("KeyError: tensor(312, device='cuda:0')", "tensor-as-key")
    assert "tensor(312) is not the int 312" in text and "on cuda:0" in text and "vocab[idx.item()]" in text


def test_pickling_in_torch_save_is_told_apart_from_a_worker():
    saving = answer_text(
        '  File "/venv/lib/python3.10/site-packages/torch/serialization.py", line 840, in _save\n'
        "    pickler.dump(obj)\n"
        "AttributeError: Can't pickle local object 'main.<locals>.optimizer_hook'\n",
        "pickle-local-object",
    )
    assert "torch.save could not pickle main.<locals>.optimizer_hook" in saving
    assert "model.state_dict()" in saving
    worker = answer_text(
        '  File "C:\\Python36\\lib\\multiprocessing\\reduction.py", line 60, in dump\n'
        "    ForkingPickler(file, protocol).dump(obj)\n"
        "AttributeError: Can't pickle local object 'gt_roidb.<locals>.<lambda>'\n",
        "pickle-local-object",
    )
    assert "A DataLoader worker could not receive gt_roidb.<locals>.<lambda>" in worker
    writer = answer_text("TypeError: cannot serialize '_io.BufferedWriter' object", "pickle-local-object")
    assert "an open _io.BufferedWriter object" in writer


def test_a_bare_winerror_126_names_torch_only_when_torch_loaded_the_dll():
    torch_import = answer_text(
        '  File "C:\\Python37\\lib\\site-packages\\torch\\__init__.py", line 81, in <module>\n'
        "    ctypes.CDLL(dll)\n"
        "OSError: [WinError 126] The specified module could not be found\n",
        "windows-dll",
    )
    assert "import torch could not load one of torch's DLLs" in torch_import
    other = answer_text("OSError: [WinError 126] The specified module could not be found", "windows-dll")
    assert "a DLL that a Python package needs" in other and "torch" not in other.split("\n")[0]


def test_a_missing_derivative_for_the_target_is_a_target_that_requires_grad():
    text = answer_text("RuntimeError: the derivative for 'target' is not implemented", "no-derivative")
    assert "criterion(output, target.detach())" in text
    text = answer_text("RuntimeError: the derivative for 'linalg_lstsq' is not implemented.", "no-derivative")
    assert "no derivative for 'linalg_lstsq'" in text and "torch version the code was written for" in text


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            "TypeError: forward() takes 2 positional arguments but 4 were given",
            ["takes 1 input(s) but was called with 3"],
        ),
        (
            "TypeError: Linear.forward() takes 2 positional arguments but 3 were given",
            ["Linear.forward takes 1"],
        ),
        (
            "TypeError: forward() takes exactly 2 arguments (129 given)",
            ["called with 128", "unpacked into separate arguments"],
        ),
    ],
)
def test_forward_arguments_are_counted_without_self(message, expected):
    text = answer_text(message, "forward-arguments")
    for phrase in expected:
        assert phrase in text
    if "129" not in message:
        assert "unpacked" not in text


@pytest.mark.parametrize(
    ("library", "expected"),
    [
        ("libpython3.7m.so.1.0", "--enable-shared"),
        ("libgomp.so.1", "OpenMP"),
        ("libcudnn.so.8", "CUDA library"),
        ("libGL.so.1", "libgl1"),
    ],
)
def test_a_missing_shared_library_is_read_by_its_name(library, expected):
    message = f"ImportError: {library}: cannot open shared object file: No such file or directory"
    text = answer_text(message, "shared-library-missing")
    assert library in text and expected in text


def test_an_empty_target_is_named_instead_of_dividing_by_zero():
    message = "ValueError: Expected input batch_size (1324) to match target batch_size (0)."
    text = answer_text(message, "batch-size-mismatch")
    assert "The target is empty (output 1324 rows, target 0)" in text


def test_the_new_torch_wording_of_a_missing_forward_names_the_module():
    message = 'NotImplementedError: Module [ModuleList] is missing the required "forward" function'
    text = answer_text(message, "forward-not-implemented")
    assert text.startswith("ModuleList has no forward method") and "iterate an nn.ModuleList" in text


def test_a_checkpoint_path_tells_loading_saving_and_a_folder_apart():
    missing = answer_text("FileNotFoundError: [Errno 2] No such file or directory: '/path/to/ckpt/'", "checkpoint-path")
    assert "The checkpoint to load does not exist: /path/to/ckpt/" in missing
    saving = answer_text(
        "    torch.save(model.state_dict(), checkpoint_path)\n"
        "FileNotFoundError: [Errno 2] No such file or directory: 'log_st/model.pth'\n",
        "checkpoint-path",
    )
    assert "its folder does not exist" in saving and "os.makedirs" in saving
    message = "IsADirectoryError: [Errno 21] Is a directory: 'runs/version_12/checkpoints/'"
    folder = answer_text(message, "checkpoint-path")
    assert "A folder was given" in folder
    # a missing data file is not a checkpoint: not claimed (round 9 reads it as a data file, by its path)
    data = explain("FileNotFoundError: [Errno 2] No such file or directory: 'data/train.csv'")
    assert data is not None and data.id == "file-not-found"


def test_a_framework_hook_called_with_more_arguments_is_a_version_change():
    message = "TypeError: Trainer.training_step() takes 3 positional arguments but 4 were given"
    text = answer_text(message, "framework-hook-signature")
    assert "training_step() is called with more arguments" in text and "num_items_in_batch=None" in text
