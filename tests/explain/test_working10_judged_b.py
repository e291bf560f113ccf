"""Issue 21, round 10 (explain10b): the mechanisms behind the share's wrong and unknown answers, each
pinned on a reduced text with the class's boundary, and the share of the working half
(working10/judged-10b.yaml) answered with the entry its judged verdict names."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from tests.explain.pinned import answer_text, working_texts

from torchwise.explain.checkpoint_keys import cut_keys, whole_checkpoint
from torchwise.explain.encoder_widths import encoder_widths
from torchwise.explain.lookup import explain

WORKING10 = working_texts("working10")
JUDGED = yaml.safe_load((Path(__file__).parent / "working10" / "judged-10b.yaml").read_text())

# (message, entry, phrases the answer must hold); reduced from the threads named beside them
CASES = [
    # https://github.com/12wang3/rrl/issues/17: keys cut by k[7:] where they never had 'module.'
    (
        'RuntimeError: Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "t",'
        ' "layer_list.0.cl", "binary1.cl", "lr3.fc1.weight". \n\tUnexpected key(s) in state_dict: "",'
        ' "ist.0.cl", ".cl", ".weight". ',
        "state-dict-mismatch",
        ["cuts the first 7 characters off every key", "k.removeprefix('module.')", "instead of k[7:]"],
    ),
    # https://github.com/ankitajaiswal00/Try-First/issues/26: a dict that only wraps the weights
    (
        'RuntimeError: Error(s) in loading state_dict for ResNet: Missing key(s) in state_dict: "conv1.weight",'
        ' "bn1.weight", "bn1.bias".\nUnexpected key(s) in state_dict: "state_dict".',
        "state-dict-mismatch",
        ["the weights under 'state_dict'", "model.load_state_dict(checkpoint['state_dict'])"],
    ),
    # https://github.com/paulengstler/syncity/issues/11: a ViT-S's features into a head built after a ViT-L
    (
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (1370x384 and 1024x2048)",
        "linear-shapes",
        ["384 and 1024 are both encoders' hidden sizes", "Use the encoder the layer was built after"],
    ),
    # https://github.com/rusty1s/pytorch_cluster/issues/41: an extension reads a float batch vector as int64
    (
        "RuntimeError: expected scalar type Long but found Float (data_ptr<long int> at"
        " /venv/lib/python3.5/site-packages/torch/include/ATen/core/TensorMethods.h:5747)",
        "dtype-mismatch",
        ["(data_ptr<long int>)", "takes that tensor as indices", "dtype=torch.long"],
    ),
    # https://github.com/huggingface/diffusers/issues/3357
    (
        "torch._dynamo.exc.Unsupported: hasattr: TensorVariable()",
        "compile-unsupported",
        ["hasattr: TensorVariable()", "@torch.compiler.disable", "fullgraph=False"],
    ),
    # https://github.com/kijai/ComfyUI-KJNodes/issues/533 (the newer wording explains itself)
    (
        "torch._dynamo.exc.Unsupported: Unsupported method call\n  Explanation: Dynamo does not know how to"
        " trace method `__mul__` of class `PyCSimpleType`\n  Hint: Avoid calling `PyCSimpleType.__mul__`.",
        "compile-unsupported",
        ["(Dynamo does not know how to trace method `__mul__` of class `PyCSimpleType`)"],
    ),
    # https://github.com/pytorch/pytorch/issues/103615: Jupyter names the class short, dynamo's frames show it
    (
        "File /opt/conda/lib/python3.10/site-packages/torch/_dynamo/eval_frame.py:209, in _fn(*args, **kwargs)\n\n"
        "Unsupported: call_function allow_in_graph in skip_files /pt/torch/_dynamo/__init__.py",
        "compile-unsupported",
        ["call_function allow_in_graph", "fullgraph=False"],
    ),
    # https://github.com/patrick-kidger/jaxtyping/issues/196
    (
        "torch._dynamo.exc.InternalTorchDynamoError: '<' not supported between instances of 'NoneType' and 'int'",
        "compile-internal-error",
        ["inside Dynamo", "Upgrade torch", "@torch.compiler.disable"],
    ),
    # https://github.com/pytorch/pytorch/issues/103587: symbolic sizes mark dynamic shapes
    (
        "torch._inductor.exc.LoweringException: AssertionError: Found <class 'sympy.core.relational.Unequality'>,"
        " which is not a supported top level IR node.\n  target: <built-in function ne>\n  args[0]: Mod(s2, 8)",
        "compile-internal-error",
        ["inside Inductor", "symbolic sizes (Mod(s2)", "dynamic=False"],
    ),
    # https://github.com/Megvii-BaseDetection/YOLOX/issues/797: the item counts differ, nothing else
    (
        "ValueError: Target size (torch.Size([8400, 1])) must be the same as input size (torch.Size([16800, 1]))",
        "target-size",
        ["the output has 16800 items where the other has 8400 (2 times as many)", "same batch and grid"],
    ),
    # https://github.com/rasbt/LLMs-from-scratch/issues/365: a one-token window beside full ones
    (
        "RuntimeError: stack expects each tensor to be equal size, but got [5] at entry 0 and [1] at entry 1",
        "stack-unequal",
        ["A sample of one element beside one of 5", "padding would only hide it"],
    ),
]


@pytest.mark.parametrize(("message", "error_id", "phrases"), CASES)
def test_each_mechanism_reads_its_reduced_text(message, error_id, phrases):
    text = answer_text(message, error_id)
    assert all(phrase in text for phrase in phrases), [phrase for phrase in phrases if phrase not in text]


def test_the_mechanisms_keep_to_their_class():
    # keys that carry the wrapper's prefix are the prefix's reading, not a cut
    assert cut_keys(["conv.weight", "conv.bias"], ["module.conv.weight", "module.conv.bias"]) is None
    assert cut_keys(["layer_list.0.cl", "binary1.cl"], ["ist.0.cl", ".cl"]) == 7
    # one dotless key beside keys the model misses that are not all weights' is no wrapper
    assert whole_checkpoint(["t", "w"], ["state_dict"]) is None
    assert whole_checkpoint(["a.weight", "a.bias"], ["state_dict"]) == "state_dict"
    # a flattened LeNet map (16x5x5 against 16x4x4) and a whole multiple stay the flatten reading
    assert not encoder_widths(400, 256) and not encoder_widths(512, 1024)
    assert not encoder_widths(1152, 2048)  # 128x3x3 against 128x4x4: one conv map at two image sizes
    flat = explain("RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x400 and 256x10)")
    assert flat is not None and "encoders' hidden sizes" not in flat.cause
    # "Unsupported:" of anything but dynamo is not the tracer's
    unsupported = explain("RuntimeError: Unsupported: ONNX export of operator foo")
    assert unsupported is None or unsupported.id != "compile-unsupported"
    wrapped = explain("torch._inductor.exc.InductorError: LoweringException: AssertionError: x\n  args[0]: Mod(s2, 8)")
    assert wrapped is not None and wrapped.id == "compile-internal-error"
    # sequences longer than one element are still variable-length sequences to pad
    padded = "RuntimeError: stack expects each tensor to be equal size, but got [62] at entry 0 and [63] at entry 1"
    assert "Variable-length sequences" in answer_text(padded, "stack-unequal")
    labels = padded.replace("[62]", "[1]").replace("[63]", "[3]")  # one label beside three: a list by design
    assert "Variable-length sequences" in answer_text(labels, "stack-unequal")
    # a dtype clash without data_ptr keeps the loss reading
    loss = answer_text("RuntimeError: expected scalar type Long but found Float", "dtype-mismatch")
    assert "CrossEntropyLoss" in loss and "data_ptr" not in loss
    # shapes that differ beyond the first size are not an item count
    other = answer_text(
        "ValueError: Target size (torch.Size([8, 3])) must be the same as input size (torch.Size([4, 5]))",
        "target-size",
    )
    assert "agree in every size but the first" not in other


def test_the_share_is_judged_whole_and_each_right_answer_is_the_one_given():
    assert all(row["number"] in WORKING10 for row in JUDGED)
    assert len({row["number"] for row in JUDGED}) == len(JUDGED) == 29
    for row in JUDGED:
        got = explain(WORKING10[row["number"]])
        if row["after"] == "not known":
            assert got is None, row["number"]
        else:
            assert got is not None and got.id == row["got_after"], (row["number"], got and got.id)


def test_the_share_s_before_and_after_counts():
    count = lambda key, kind: sum(row[key] == kind for row in JUDGED)  # noqa: E731
    assert [count("before", kind) for kind in ("right", "wrong", "not known")] == [18, 7, 4]
    assert [count("after", kind) for kind in ("right", "wrong", "not known")] == [29, 0, 0]


FLOORS = yaml.safe_load((Path(__file__).parent / "working10" / "floors-10b.yaml").read_text())


@pytest.mark.parametrize("row", FLOORS, ids=lambda row: f"{row['folder']}-{row['number']}")
def test_the_floor_texts_the_round_changed_are_answered_as_judged(row):
    got = explain(working_texts(row["folder"])[row["number"]])
    assert row["after"] == "right" and got is not None and got.id == row["got_after"]


def test_an_empty_parameter_list_is_read_from_the_line_that_built_the_optimizer():
    frame = '  File "train.py", line 51, in <module>\n    optimizer = optim.SGD({}, lr=0.001)\n'
    torch_frame = (
        '  File "/venv/lib/python3.10/site-packages/torch/optim/optimizer.py", line 187, in __init__\n'
        '    raise ValueError("optimizer got an empty parameter list")\n'
        "ValueError: optimizer got an empty parameter list\n"
    )
    module = answer_text(frame.format("model.parameters()") + torch_frame, "empty-parameter-list")
    assert "model.parameters() is empty at train.py:51" in module and "nn.Parameter(" in module
    chosen = answer_text(frame.format("gates_params") + torch_frame, "empty-parameter-list")
    assert "gates_params, the collection the script gives the optimizer" in chosen
    # a call or a list of groups is neither case; without the optimizer's line the message stays unknown
    assert explain(frame.format("[{'params': head}]") + torch_frame) is None
    assert explain("ValueError: optimizer got an empty parameter list") is None
