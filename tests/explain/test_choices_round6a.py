"""Issue 21, round 6 (explain6a): the generic readings that answer errors no family was written
for, tried only where no family knows the message: a message that states its own remedy
(``remedy``) and a version or install mismatch read from the installed packages' files
(``version_lookup``, ``installed``). Pinned: the working6 rows they answer, and where each one
stays silent (a vague remedy, a remedy the paste contradicts, a module whose names a text search
cannot see)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml
from tests.explain.pinned import answer_text, working_texts

from torchwise.explain import installed
from torchwise.explain.lookup import explain
from torchwise.explain.remedy import REMEDY

# number in working6 -> (the table entry, phrases the answer must hold)
# (rows 8 and 14, which the remedy reader also answers alone, are explain6b's families after the merge)
PINNED = {
    # round 8 (explain8a): torchvision's own family now reads it (the message's remedy before)
    45: ("torchvision-ops-incompatible", ["not a matching pair", "compatibility matrix", "from one index"]),
}
TEXTS = working_texts("working6")


@pytest.mark.parametrize("number", sorted(PINNED))
def test_a_working6_row_is_answered_by_its_own_remedy(number):
    error_id, phrases = PINNED[number]
    text = answer_text(TEXTS[number], error_id)
    assert all(phrase in text for phrase in phrases), (number, text)


def test_a_remedy_is_quoted_with_the_sentence_that_states_the_problem_and_its_example():
    # Marabou#685: onnxruntime's message printed one sentence a line, which the family does not read
    rows = yaml.safe_load((Path(__file__).parent / "corpus" / "generic.yaml").read_text())
    text = next(row["text"] for row in rows if row["source"].endswith("Marabou/issues/685"))
    got = explain(text)
    assert got is not None and got.id == "stated-remedy"
    assert "This ORT build has ['AzureExecutionProvider', 'CPUExecutionProvider'] enabled." in got.cause
    assert got.fix.startswith('The message says what to do: "you are required to explicitly set the providers')
    assert "Its example: \"For example, onnxruntime.InferenceSession(..., providers=" in got.fix


def test_the_library_that_raised_is_named_from_the_frame_above_the_message():
    text = (
        'Traceback (most recent call last):\n  File "run.py", line 3, in <module>\n    main()\n'
        '  File "/env/lib/python3.10/site-packages/transformers/modeling_utils.py", line 9, in load\n'
        "    raise ValueError(msg)\nValueError: The current `device_map` had weights offloaded to the disk."
        " Please provide an `offload_folder` for them.\n"
    )
    assert "from transformers" in explain(text).title


@pytest.mark.parametrize(
    "message",
    [
        "RuntimeError: something odd happened. Please report a bug to PyTorch with `torch.__version__`.",
        "RuntimeError: HIP error: invalid device function\nFor debugging consider passing AMD_SERIALIZE_KERNEL=3",
        "ValueError: Target modules [] not found in the base model. Please check the target modules and try again.",
        "Hi, please help me fix this, you should see my code",
    ],
)
def test_a_vague_remedy_or_a_user_s_sentence_is_no_answer(message):
    assert REMEDY.last_match(message) is None


def test_a_remedy_the_paste_contradicts_is_not_read():
    row = yaml.safe_load((Path(__file__).parent / "generic_contradicted.yaml").read_text())[0]
    assert "accelerate==0.20.3" in row["text"] and explain(row["text"]) is None
    # the keyword the message asks for is already in the call that raised
    text = (
        'Traceback (most recent call last):\n  File "app.py", line 4, in <module>\n'
        "    m = load(path, trust_remote_code=True)\n"
        "ValueError: Loading x requires you to run its code; set the option `trust_remote_code=True`"
        " to remove this error.\n"
    )
    assert REMEDY.last_match(text) is None


def test_a_keyword_passed_to_one_call_but_not_the_one_that_raised_is_named():
    text = (
        "ValueError: Loading m needs its custom layers. Make sure you trust them, then set the option"
        " `allow_custom=True` to remove this error.\n"
        "    tok = load_tokenizer(name, allow_custom=True)\n"
        "    model = load_model(name, low_cpu_mem_usage=True)\n"
    )
    got = explain(text)
    assert got is not None and got.id == "stated-remedy"
    assert "but not in `model = load_model(name, low_cpu_mem_usage=True)`" in got.fix


@pytest.fixture
def fake_package(tmp_path, monkeypatch):
    """An installed package ``fakepkg`` whose top level defines ``new_name`` and has a submodule
    ``extra``; ``hiddenpkg`` adds its names by ``import *``."""
    package = tmp_path / "fakepkg"
    (package / "extra").mkdir(parents=True)
    (package / "__init__.py").write_text(
        "from .core import (\n    new_name,\n    helper as other_helper,\n)\n\n"
        "def prepare_model_for_kbit_training():\n    pass\n"
    )
    (package / "core.py").write_text("def new_name():\n    pass\n")
    (package / "extra" / "__init__.py").write_text("")
    (tmp_path / "hiddenpkg").mkdir()
    (tmp_path / "hiddenpkg" / "__init__.py").write_text("from .core import *\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for cached in (installed.package, installed.look_up):
        cached.cache_clear()
    yield
    for cached in (installed.package, installed.look_up):
        cached.cache_clear()
    sys.modules.pop("fakepkg", None)


def test_the_installed_package_says_whether_it_has_the_name(fake_package):
    assert installed.look_up("fakepkg", "new_name").defines
    assert installed.look_up("fakepkg", "other_helper").defines
    missing = installed.look_up("fakepkg", "prepare_model_for_int8_training")
    assert not missing.defines and missing.complete and missing.closest == ("prepare_model_for_kbit_training",)
    assert not installed.look_up("hiddenpkg", "anything").complete
    assert "fakepkg" not in sys.modules  # read from its files, never imported


def test_a_missing_attribute_is_read_from_the_installed_package(fake_package):
    got = answer_text("AttributeError: module 'fakepkg' has no attribute 'prepare_model_for_int8_training'",
                      "installed-attribute")
    assert "has no prepare_model_for_int8_training" in got and "prepare_model_for_kbit_training?" in got
    got = answer_text("AttributeError: module 'fakepkg' has no attribute 'new_name'", "installed-attribute")
    assert "defines new_name (in __init__.py)" in got and "Upgrade fakepkg" in got
    got = answer_text("AttributeError: module 'fakepkg' has no attribute 'extra'", "installed-attribute")
    assert "import fakepkg.extra" in got
    assert explain("AttributeError: module 'hiddenpkg' has no attribute 'anything'") is None


def test_a_file_named_like_the_package_is_the_cause_when_the_frames_show_it(fake_package):
    text = (
        'Traceback (most recent call last):\n  File "/home/u/proj/fakepkg.py", line 2, in <module>\n'
        "    fakepkg.new_name()\nAttributeError: module 'fakepkg' has no attribute 'new_name'\n"
    )
    assert "Rename /home/u/proj/fakepkg.py" in answer_text(text, "installed-attribute")


def test_a_missing_module_is_named_by_its_pip_name_or_the_installed_release(fake_package):
    assert "python -m pip install opencv-python" in answer_text("ModuleNotFoundError: No module named 'cv2'",
                                                                "installed-module")
    got = answer_text("ModuleNotFoundError: No module named 'fakepkg.gone'", "installed-module")
    assert "has no module fakepkg.gone" in got
    got = answer_text("ModuleNotFoundError: No module named 'fakepkg'", "installed-module")
    assert "installed here" in got and "not in the Python that ran the code" in got
    assert explain("ModuleNotFoundError: No module named 'fakepkg.extra'") is None
    assert explain("ModuleNotFoundError: No module named 'some_unknown_thing_xyz'") is None


def test_the_project_s_own_package_is_named_from_its_frames():
    text = (
        'Traceback (most recent call last):\n  File "/home/u/proj/mylocalpkg/train.py", line 3, in <module>\n'
        "    from mylocalpkg.net import Net\nModuleNotFoundError: No module named 'mylocalpkg'\n"
    )
    assert "Run from the project's root folder" in answer_text(text, "installed-module")


def _traceback(source: str, message: str) -> str:
    return f'Traceback (most recent call last):\n  File "train.py", line 10, in <module>\n    {source}\n{message}\n'


@pytest.mark.parametrize(
    ("source", "attribute", "phrase"),
    [
        ("loss = model(x).logits.mean()", "mean", "model(x).logits is None"),
        ("p.grad.data.add_(1)", "data", "that parameter got no gradient"),
        ("img = load(path).convert('RGB')", "convert", "load(path) returned None: load has no return"),
    ],
)
def test_the_expression_that_was_none_is_quoted_from_the_user_s_line(source, attribute, phrase):
    text = _traceback(source, f"AttributeError: 'NoneType' object has no attribute '{attribute}'")
    assert phrase in answer_text(text, "none-attribute")


def test_a_none_attribute_is_not_placed_when_the_line_is_a_library_s_or_uses_it_twice():
    library = _traceback("x = a.mean()", "AttributeError: 'NoneType' object has no attribute 'mean'").replace(
        "train.py", "/env/lib/python3.10/site-packages/lib/x.py")
    assert explain(library) is None
    twice = _traceback("y = a.mean() + b.mean()", "AttributeError: 'NoneType' object has no attribute 'mean'")
    assert explain(twice) is None


@pytest.mark.parametrize(
    ("message", "phrase"),
    [
        ("TypeError: linear(): argument 'input' (position 1) must be Tensor, not list", "torch.stack(values)"),
        ("TypeError: embedding(): argument 'indices' (position 2) must be Tensor, not numpy.ndarray",
         "torch.from_numpy(array)"),
        ("TypeError: conv2d() received an invalid combination of arguments - got (list, Parameter, Parameter,"
         " tuple, tuple, tuple, int), but expected one of:", "its input (the first argument) must be a Tensor"),
    ],
)
def test_an_argument_of_the_wrong_type_gets_its_conversion(message, phrase):
    got = explain(message)
    assert got is not None and got.id in ("argument-type", "argument-combination")
    assert phrase in "\n".join([got.meaning, got.cause, got.fix])


def test_an_invalid_combination_of_tensors_is_not_read_as_a_type_error():
    message = ("TypeError: conv2d() received an invalid combination of arguments - got (Tensor, Parameter,"
               " Parameter, tuple, str, tuple, int), but expected one of:")
    assert explain(message) is None or explain(message).id != "argument-combination"


def test_the_first_remedy_of_a_message_leads_and_a_later_one_is_its_alternative():
    rows = yaml.safe_load((Path(__file__).parent / "corpus" / "generic.yaml").read_text())
    text = next(row["text"] for row in rows if row["source"].endswith("LLaVA/issues/1553"))
    fix = explain(text).fix
    assert fix.startswith('The message says what to do: "Please provide an `offload_folder` for them".')
    assert 'Or, as it also says: "make sure you have `safetensors` installed' in fix


@pytest.mark.parametrize(
    ("message", "remedy"),
    [
        ('I got "RuntimeError: the input is odd. Use .reshape(...) instead" and then fixed it',
         "Use .reshape(...) instead"),
        ("UserWarning: foo.bar is now deprecated in favor of foo.bar_.", "deprecated in favor of foo.bar_"),
    ],
)
def test_a_remedy_ends_where_the_sentence_or_the_quote_ends(message, remedy):
    got = explain(message)
    assert got is not None and got.id == "stated-remedy"
    assert got.fix == f'The message says what to do: "{remedy}".'


def test_an_upgrade_the_message_asks_for_is_not_contradicted_by_an_older_install_in_the_paste():
    text = ("accelerate 0.17.0\nImportError: Using the Trainer with PyTorch requires accelerate:"
            " Run pip install --upgrade accelerate")
    assert "Run pip install --upgrade accelerate" in answer_text(text, "stated-remedy")


@pytest.mark.parametrize(
    ("source", "message", "entry", "phrase"),
    [
        ("loss = criterion(out, y)", "TypeError: 'Tensor' object is not callable", "not-callable",
         "criterion holds a Tensor"),
        ("model = resnet(pretrained=True)", "TypeError: 'module' object is not callable", "not-callable",
         "resnet is a module"),
        ("a, b = get_pair(x)", "TypeError: 'NoneType' object is not iterable", "none-iterated",
         "get_pair returned nothing"),
        ("total = total + loss", "TypeError: unsupported operand type(s) for +: 'NoneType' and 'Tensor'",
         "none-operand", "total is None"),
        ("opt = optim.Adam(model.parameters, lr=1e-3)", "TypeError: 'method' object is not iterable",
         "method-not-called", "model.parameters()"),
    ],
)
def test_python_s_type_grammar_is_read_at_the_user_s_line(source, message, entry, phrase):
    assert phrase in answer_text(_traceback(source, message), entry)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("out = teacher(x).data().numpy()", "TypeError: 'Tensor' object is not callable"),  # three calls
        ("n = feats.shape(0)", "TypeError: 'torch.Size' object is not callable"),  # an attribute, not a name
        ("y = a + b + c", "TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'"),
    ],
)
def test_python_s_type_grammar_stays_silent_where_the_line_allows_several_readings(source, message):
    got = explain(_traceback(source, message))
    assert got is None or got.id not in ("not-callable", "none-operand")


def test_a_remedy_that_would_leave_the_weights_uninitialised_is_not_quoted():
    # OpenBMB/MiniCPM-V#635 and others: weights left on the meta device by a dispatched load
    message = ("NotImplementedError: Cannot copy out of meta tensor; no data! Please use torch.nn.Module.to_empty()"
               " instead of torch.nn.Module.to() when moving module from meta to a different device.")
    got = explain(message)
    assert got is None or got.id != "stated-remedy"


def test_the_message_s_own_guess_after_its_remedy_joins_the_cause_and_an_install_address_is_kept():
    message = ("ValueError: Unable to create tensor, you should probably activate truncation and/or padding with"
               " 'padding=True' 'truncation=True' to have batched tensors with the same length. Perhaps your"
               " features (`labels` in this case) have excessive nesting.")
    got = explain(message)
    assert got is not None and got.id == "stated-remedy"
    assert got.cause.endswith("Perhaps your features (`labels` in this case) have excessive nesting.")
    assert "activate truncation and/or padding with 'padding=True'" in got.fix
    apex = explain("ImportError: Please install apex from https://www.github.com/nvidia/apex to run this example.")
    assert apex is not None and "Please install apex from https://www.github.com/nvidia/apex" in apex.fix
