"""Where the families added from the explain2 held-out round choose between causes: the numbers
of a view, the shapes of a target, the first byte of a file that is not a checkpoint, the
WinError code, the class a DataLoader could not batch, the direction of a 'module.' prefix."""

from __future__ import annotations

import pytest

from torchwise.explain.lookup import explain


def answer_text(message: str, error_id: str) -> str:
    explanation = explain(message)
    assert explanation is not None and explanation.id == error_id, (message, explanation)
    return "\n".join([explanation.title, explanation.meaning, explanation.cause, explanation.fix])


def test_a_view_names_the_square_grid_that_arrived():
    text = answer_text(
        "RuntimeError: shape '[16, 34, 34, 512]' is invalid for input of size 8921088",
        "view-size-invalid",
    )
    assert "needs 9469952 elements" in text
    assert "8921088 = 8192 x 33 x 33: the grid that arrived is 33x33, not 34x34" in text


def test_a_view_lists_each_dimension_that_would_fit():
    text = answer_text(
        "RuntimeError: shape '[1000, 1024, 1]' is invalid for input of size 8192000",
        "view-size-invalid",
    )
    assert "dimension 0 would be 8000, or dimension 1 would be 8192, or dimension 2 would be 8" in text


def test_a_view_with_minus_one_says_the_count_is_not_a_multiple():
    text = answer_text(
        "RuntimeError: shape '[-1, 13, 13, 384]' is invalid for input of size 67968",
        "view-size-invalid",
    )
    assert "needs a multiple of 64896 (the sizes other than -1), the tensor has 67968" in text
    assert "Whole-number fits" not in text


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (  # a single-logit head against a flat target
            "ValueError: Target size (torch.Size([16])) must be the same as input size"
            " (torch.Size([16, 1]))",
            ["output is [16, 1] and the target [16]", "out.squeeze(1)"],
        ),
        (  # RGB masks against a one-channel output
            "ValueError: Target size (torch.Size([1, 3, 256, 256])) must be the same as input"
            " size (torch.Size([1, 1, 256, 256]))",
            ["Dimension 1 differs: the model gives 1 channels/classes, the target has 3",
             "convert('L')"],
        ),
        (  # class indices given to BCELoss over two logits (BCELoss's own wording)
            "ValueError: Using a target size (torch.Size([4])) that is different to the input"
            " size (torch.Size([4, 2])) is deprecated. Please ensure they have the same size.",
            ["output [4, 2] and the target [4]", "use CrossEntropyLoss, not BCELoss"],
        ),
    ],
)
def test_target_and_output_shapes_choose_the_cause(message, expected):
    text = answer_text(message, "target-size")
    for phrase in expected:
        assert phrase in text


def test_a_negative_target_is_an_ignore_value():
    text = answer_text("IndexError: Target -1 is out of bounds.", "target-out-of-bounds")
    assert "A label is -1" in text and "ignore_index=-1" in text


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("v", ["Git LFS pointer", "git lfs pull"]),
        ("<", ["HTML page", "gdown"]),
        ("\\x00", ["partial download", "download it again"]),
    ],
)
def test_the_first_byte_of_a_non_checkpoint_names_what_the_file_is(key, expected):
    text = answer_text(f"_pickle.UnpicklingError: invalid load key, '{key}'.", "invalid-load-key")
    assert f"it starts with {key!r}" in text
    for phrase in expected:
        assert phrase in text


def test_winerror_1455_is_memory_not_a_missing_dll():
    paging = answer_text(
        'OSError: [WinError 1455] The paging file is too small for this operation to complete.'
        ' Error loading "C:\\env\\lib\\site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll" or one'
        " of its dependencies.",
        "windows-dll",
    )
    assert "cudnn_cnn_infer64_8.dll (WinError 1455)" in paging and "Lower num_workers" in paging
    missing = answer_text(
        'OSError: [WinError 126] The specified module could not be found. Error loading'
        ' "C:\\env\\lib\\site-packages\\torch\\lib\\fbgemm.dll" or one of its dependencies.',
        "windows-dll",
    )
    assert "Visual C++ Redistributable" in missing and "paging file" not in missing


@pytest.mark.parametrize(
    ("found", "expected"),
    [
        ("PIL.Image.Image", "transforms.ToTensor()"),
        ("NoneType", "returned None"),
        ("torch_geometric.data.data.Data", "collate_fn that belongs to that data type"),
    ],
)
def test_the_class_the_dataloader_could_not_batch_names_the_fix(found, expected):
    message = (
        "TypeError: default_collate: batch must contain tensors, numpy arrays, numbers, dicts or"
        f" lists; found <class '{found}'>"
    )
    assert expected in answer_text(message, "collate-type")


def test_embedding_indices_int_versus_float():
    as_int = answer_text(
        "RuntimeError: Expected tensor for argument #1 'indices' to have one of the following"
        " scalar types: Long, Int; but got torch.cuda.IntTensor instead (while checking"
        " arguments for embedding)",
        "embedding-index-dtype",
    )
    assert "int32" in as_int and "idx.long()" in as_int
    as_float = answer_text(
        "RuntimeError: Expected tensor for argument #1 'indices' to have scalar type Long; but"
        " got torch.FloatTensor instead (while checking arguments for embedding)",
        "embedding-index-dtype",
    )
    assert "Float indices" in as_float and "never round real-valued features" in as_float


def test_module_prefix_in_missing_keys_means_the_model_is_wrapped():
    text = answer_text(
        "RuntimeError: Error(s) in loading state_dict for DataParallel:\n"
        '\tMissing key(s) in state_dict: "module.conv1.weight", "module.fc.weight". ',
        "state-dict-mismatch",
    )
    assert "wrapped in DataParallel/DistributedDataParallel, which adds 'module.'" in text
    assert "model.module.load_state_dict(state)" in text and "twice" not in text


def test_the_device_number_asked_for_is_echoed():
    text = answer_text(
        "    device = torch.device('cuda:1')\nRuntimeError: CUDA error: invalid device ordinal",
        "invalid-device-ordinal",
    )
    assert "the text names GPU 1" in text and "Use cuda:0" in text


def test_ddp_ready_twice_names_the_parameter():
    text = answer_text(
        "RuntimeError: Expected to mark a variable ready only once. ...\nParameter at index 387"
        " with name hf_model.encoder.layer.23.output.LayerNorm.weight has been marked as ready"
        " twice.",
        "ddp-ready-twice",
    )
    assert "(hf_model.encoder.layer.23.output.LayerNorm.weight)" in text
    assert "use_reentrant=False" in text and "static_graph=True" in text


def test_an_unknown_torch_six_name_lists_every_replacement():
    text = answer_text(
        "ImportError: cannot import name 'something' from 'torch._six'", "torch-six-removed"
    )
    assert "string_classes -> str, int_classes -> int" in text


def test_a_device_string_this_torch_lacks_versus_a_wrong_name():
    old_torch = answer_text(
        "RuntimeError: Expected one of cpu, cuda, xpu, mkldnn, opengl, opencl, ideep, hip, ve,"
        " ort, mlc, xla, lazy, vulkan, meta, hpu device type at start of device string: mps",
        "device-string",
    )
    assert "predates Apple's MPS backend" in old_torch and "torch 1.12" in old_torch
    wrong_name = answer_text(
        "RuntimeError: Expected one of cpu, cuda, mps, meta device type at start of device"
        " string: gpu",
        "device-string",
    )
    assert "Use 'cuda'" in wrong_name and "MPS" not in wrong_name


def test_a_generator_on_the_wrong_device_names_both_devices():
    text = answer_text(
        "RuntimeError: Expected a 'cuda:0' generator device but found 'cpu'", "generator-device"
    )
    assert "A random generator on cpu was given to an operation on cuda:0" in text
    assert "set_default_device('cuda')" in text


def test_a_float16_overflow_echoes_the_constant():
    text = answer_text(
        "RuntimeError: value cannot be converted to type at::Half without overflow: -1e+09",
        "half-overflow",
    )
    assert "(-1e+09)" in text and "65504" in text and "torch.finfo(x.dtype).min" in text


def test_state_dict_sizes_are_read_from_wrapped_lines_and_the_old_wording():
    wrapped = answer_text(
        "RuntimeError: Error(s) in loading state_dict for Net: size mismatch\nfor fc.weight:"
        " copying a param with shape\ntorch.Size([12, 1024]) from checkpoint, the shape in"
        " current model is\ntorch.Size([15, 1024]).",
        "state-dict-mismatch",
    )
    assert "fc.weight is [12, 1024] in the checkpoint but [15, 1024] in the model" in wrapped
    old = answer_text(
        "RuntimeError: While copying the parameter named fc.weight, whose dimensions in the"
        " model are torch.Size([22, 200]) and whose dimensions in the checkpoint are"
        " torch.Size([20, 200]).",
        "state-dict-mismatch",
    )
    assert "fc.weight is [20, 200] in the checkpoint but [22, 200] in the model" in old


def test_only_unexpected_keys_mean_the_model_was_built_with_fewer_parts():
    text = answer_text(
        "RuntimeError: Error(s) in loading state_dict for Net:\n"
        '\tUnexpected key(s) in state_dict: "decoder.tp.conv.weight". ',
        "state-dict-mismatch",
    )
    assert "built with fewer parts than the one that was saved" in text
    assert "code changed" not in text


def test_an_old_thcunn_kernel_assertion_is_read():
    text = answer_text(
        "/work/torch/lib/THCUNN/ClassNLLCriterion.cu:101: void"
        " cunn_ClassNLLCriterion_updateOutput_kernel(Dtype *, Dtype *, long *, int, int) [with"
        " Dtype = float, Acctype = float]: block: [0,0,0], thread: [31,0,0] Assertion"
        " `t >= 0 && t < n_classes` failed.",
        "device-side-assert",
    )
    assert "class label >= the number of classes" in text
