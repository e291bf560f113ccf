"""Where the families added in issue 21's round 3 choose between causes, pinned on round 3's
working half (tests/explain/working3/): what a line does with the value that failed (the key it
reads, the index it takes, the names it unpacks), what the call site passes, which library's
frame raised; and that explain says it does not know where the traceback does not bear a cause
out. The held-out half (tests/explain/heldout3/) is measured, not pinned here."""

from __future__ import annotations

import pytest
from tests.explain.pinned import answer_text, pinned_tests, working_texts

from torchwise.explain.lookup import explain

TEXTS = working_texts("working3")


# number in working3 -> (the table entry, phrases the answer must hold)
PINNED = {
    1: ("inplace-modified", ["LinalgVectorNorm", "out of place"]),
    5: ("state-dict-mismatch", ["PRENet", "strict=False"]),
    8: ("empty-dataset", ["num_samples=0"]),
    11: ("legacy-autograd-function", ["pre-1.3 style", "MyFunction.apply("]),
    14: ("method-arguments", ["evaluate.py:159 in test_shape calls forward_test with 3 argument(s)"]),
    16: ("none-subscripted", ["self.ckpt['optimizer'] is None", "full checkpoint"]),
    20: ("index-tensor-dtype", ["idx.long()"]),
    22: ("too-many-indices", ["sample is a 1-dimensional tensor", "not the dict", "'input'"]),
    24: ("index-past-end", ["sample 1 of every batch", "holds only 1", "drop_last=True"]),
    31: ("extension-cuda-mismatch", ["CUDA 12.3", "CUDA 11.8", "CUDA_PATH"]),
    33: ("no-cuda-gpus", ["utils.py:60", ".cuda()", "torch.cuda.is_available() else 'cpu'"]),
    35: ("not-implemented-placeholder", ["build_evaluator() is a placeholder", "in your subclass"]),
    36: ("unexpected-keyword", ["Lightning 2.0 removed Trainer(gpus=...)", "devices=N"]),
    37: ("unexpected-keyword", ["'command_file'", "installed version of accelerate"]),
    39: ("not-wrapped-module", ["PoseHigherResolutionNet", "hasattr(model, 'module')"]),
    40: ("not-wrapped-module", ["VanillaNet", "dist", "hasattr(model, 'module')"]),
    42: ("two-devices", ["cpu and cuda", "mat1 is torch.FloatTensor"]),
    44: ("cublas-failed", ["RTX 20xx", "CUDA 10"]),
    46: ("two-devices", ["index is on CPU"]),
    48: ("two-devices", ["an embedding's weight and the indices"]),
    52: ("no-matching-distribution", ["torch==0.3.1", "0.1.2, 0.1.2.post1", "previous-versions"]),
    53: ("name-not-defined", ["ep is used before anything assigned it", "train.py:77 in train"]),
    54: ("save-cannot-open", ["my_out/checkpoints/checkpoint_0.pt", "disk is full"]),
}
NOT_KNOWN = [3, 9, 10, 47]  # an old-torch kernel check, forward() missing inputs with no cause shown


(
    test_the_working_half_is_answered_with_its_cause,
    test_what_the_paste_does_not_bear_out_stays_unknown,
    test_the_working_half_is_pinned_whole,
) = pinned_tests(TEXTS, PINNED, NOT_KNOWN)


def test_a_key_error_needs_the_key_on_the_users_line():
    frame = '  File "train.py", line 9, in main\n    x = cfg[name]\n    y = other[thing]\n'
    assert explain("KeyError: 'lr'") is None  # no frame: the message alone names no cause
    assert explain('  File "train.py", line 9, in main\n    x = f(a, b)\nKeyError: \'lr\'\n') is None
    text = answer_text(frame.replace("    y = other[thing]\n", "") + "KeyError: 'lr'\n", "missing-key")
    assert "cfg has no key 'lr' (train.py:9 in main)" in text and "(the value of name)" in text


@pytest.mark.parametrize(
    ("holder", "expected"),
    [
        ("checkpoint", "saved without 'optimizer'"),
        ("batch", "this dataset does not put 'optimizer' in it"),
        ("outputs", "in training but not in evaluation mode"),
        ("table", "a cached file"),
    ],
)
def test_the_name_of_the_dict_decides_the_cause_of_a_missing_key(holder, expected):
    text = answer_text(
        f'  File "resume.py", line 40, in load\n    opt.load_state_dict({holder}["optimizer"])\n'
        "KeyError: 'optimizer'\n",
        "missing-key",
    )
    assert expected in text


def test_an_index_one_past_the_end_is_an_off_by_one_even_without_a_frame():
    text = answer_text("IndexError: index 10 is out of bounds for dimension 0 with size 10", "index-past-end")
    assert "one past the" in text and "0 to 9" in text
    assert explain("IndexError: index 12 is out of bounds for dimension 0 with size 10") is None


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("h, w, c = img.shape", "grayscale image (H, W)"),
        ("a, b, c, d = zip(*batch)", "Each sample in the batch holds 2 items"),
        ("for x, y, z in loader:", "each batch holds what the dataset's __getitem__ returns"),
        ("x, y, z = make()", "a function whose return changed"),
    ],
)
def test_what_an_unpacking_line_unpacks_decides_the_cause(source, expected):
    text = answer_text(
        f'  File "prep.py", line 3, in run\n    {source}\n'
        "ValueError: not enough values to unpack (expected 4, got 2)\n",
        "unpack-count",
    )
    assert "unpacks 4 values from something that holds 2" in text and expected in text


def test_a_bound_helper_is_told_apart_from_a_call_with_extra_arguments():
    bound = answer_text(
        '  File "/venv/lib/python3.10/site-packages/torch/utils/data/_utils/fetch.py", line 47, in fetch\n'
        "    return self.collate_fn(data)\nTypeError: pad() takes 1 positional argument but 2 were given\n",
        "method-arguments",
    )
    assert "pad is defined without self but called as a method" in bound
    extra = answer_text(
        '  File "run.py", line 5, in main\n    out = net.step(a, b, c)\n'
        "TypeError: step() takes 2 positional arguments but 4 were given\n",
        "method-arguments",
    )
    assert "calls step with 3 argument(s); its definition takes 2 counting self" in extra


def test_a_forward_missing_its_input_is_answered_only_under_data_parallel():
    bare = "TypeError: forward() missing 1 required positional argument: 'x'"
    assert explain(bare) is None
    frame = '  File "/venv/lib/python3.8/site-packages/torch/nn/parallel/data_parallel.py", line 1, in forward\n'
    call = "    outputs = self.parallel_apply(replicas, inputs, kwargs)\n"
    assert "replica no input" in answer_text(frame + call + bare, "forward-missing-input")


def test_a_local_function_pickled_by_nobody_named_is_not_blamed_on_a_dataloader():
    text = answer_text("AttributeError: Can't pickle local object 'build.<locals>.<lambda>'", "pickle-local-object")
    assert "cannot be pickled" in text and "torch.save(model)" in text and "DataLoader workers" in text
    dataset = answer_text("AttributeError: Can't pickle local object 'load.<locals>.Data'", "pickle-local-object")
    assert "A DataLoader worker could not receive" in dataset


def test_sizes_one_apart_in_attention_are_not_read_as_images():
    text = answer_text(
        "--> 136     mask = causal_4d_mask.masked_fill(expanded_attn_mask.bool(), min)\n\n"
        "RuntimeError: The size of tensor a (322) must match the size of tensor b (321) at non-singleton dimension 3\n",
        "size-mismatch",
    )
    assert "transformers version" in text and "pooling" not in text


def test_a_line_that_only_called_into_a_library_is_not_blamed_for_its_error():
    library = '  File "/venv/lib/python3.10/site-packages/pkg/core.py", line 3, in f\n'
    called = '  File "train.py", line 5, in main\n    loss = crit(out[i], y)\n'
    assert explain(called + library + "    w = table[name]\nKeyError: 'weight'\n") is None
    unpacked = '  File "train.py", line 5, in main\n    a, b = run(x)\n'
    raised = "    h, w = img.size\nValueError: too many values to unpack (expected 2)\n"
    assert explain(unpacked + library + raised) is None


def test_a_keyword_forward_does_not_take_is_a_batch_key_not_a_library_version():
    text = answer_text("TypeError: forward() got an unexpected keyword argument 'labels'", "unexpected-keyword")
    assert "model(**batch)" in text and "another version" not in text
