"""Issue 21, round 8 (explain8b): precision and reading. Each mechanism is pinned with real texts
(the source of each is named) and with the near misses it must leave alone. Texts of the measured
halves are named by their folder and number."""

from __future__ import annotations

from tests.explain.pinned import answer_text, working_texts

from torchwise.explain.lookup import explain
from torchwise.explain.paste import Paste

HELDOUT6 = working_texts("heldout6")
HELDOUT7 = working_texts("heldout7")
# github.com/WenjieDu/PyPOTS/issues/520: a deprecation warning that states its own remedy
AUTOCAST_WARNING = (
    "/usr/local/lib/python3.10/site-packages/pypots/nn/modules/reformer/local_attention.py:31: FutureWarning:"
    " `torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', args...)` instead\n"
)


def test_a_warning_above_the_exception_that_stopped_the_run_is_not_its_answer():
    # alone, the warning is what the user asks about: its remedy is the answer
    assert "torch.amp.autocast('cuda', args...)" in answer_text(AUTOCAST_WARNING, "stated-remedy")
    # above an exception explain does not know (heldout6 #39, heldout7 #55, both pinned unknown),
    # the warning's remedy was answered for the wrong line; now the paste stays unknown
    for text in (HELDOUT6[39], HELDOUT7[55]):
        assert explain(text) is None
        assert explain(AUTOCAST_WARNING + text) is None
    # above an exception explain knows, the exception's answer is unchanged
    known = explain(HELDOUT6[48])
    assert known is not None and explain(AUTOCAST_WARNING + HELDOUT6[48]) == known


def test_an_exception_class_named_by_its_module_path_is_an_error_line():
    # github.com/pytorch/pytorch/issues/125138: dynamo's exception classes end in no "Error"
    line = (
        "torch._dynamo.exc.Unsupported: comparison AutogradFunctionVariable() <built-in function is_not>"
        " ConstantVariable(NoneType)"
    )
    paste = Paste("Traceback (most recent call last):\n  File \"x.py\", line 3, in f\n    y = g(x)\n" + line)
    assert paste.kinds[-1] == "error" and paste.error_line() == line
    # a sentence with a colon is still not an exception line
    assert Paste("the model: torch.nn.Linear is fine: yes").kinds == ["other"]


def test_advice_for_a_case_the_message_guesses_at_is_not_relayed():
    # github.com/project-baize/baize-chatbot/issues/31: one shard of the download was damaged (the
    # maintainer: clear the cache and download again); transformers' "If you tried to load a PyTorch
    # model from a TF 2.0 checkpoint, please set from_tf=True" guesses at what the user meant
    text = (
        "OSError: Unable to load weights from pytorch checkpoint file for 'model_cache/models--decapoda-research"
        "--llama-30b-hf/snapshots/f991780f9362b2fcaefad066cd235058844562b7/pytorch_model-00039-of-00061.bin'. If"
        " you tried to load a PyTorch model from a TF 2.0 checkpoint, please set from_tf=True.\n\n"
        "The other shard is fine, any suggestion?\n"
    )
    assert explain(text) is None


def test_try_increasing_is_advice_the_message_gives():
    # github.com/BatsResearch/bonito/issues/7 (vLLM): the maintainer's fix is a smaller max_model_len
    text = (
        "```\nValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be"
        " stored in KV cache (16816). Try increasing `gpu_memory_utilization` or decreasing `max_model_len`"
        " when initializing the engine.\nFile <command-609584913430219>, line 5\n```\n"
    )
    answer = answer_text(text, "stated-remedy")
    assert "KV cache (16816)" in answer and "decreasing `max_model_len`" in answer


def test_an_install_remedy_names_the_installed_but_unusable_package_too():
    # github.com/QwenLM/Qwen3/issues/173: accelerate 0.20.3 was installed, too old for that transformers
    text = (
        'Traceback (most recent call last):\n  File "/workspace/liujiu/document-knowledge-qa/test/qwen1.5-test.py",'
        " line 57, in <module>\n    model = AutoModelForCausalLM.from_pretrained(\n"
        '  File "/opt/conda/lib/python3.10/site-packages/transformers/modeling_utils.py", line 2998, in'
        " from_pretrained\n    raise ImportError(\nImportError: Using `low_cpu_mem_usage=True` or a `device_map`"
        " requires Accelerate: `pip install accelerate`\n"
    )
    answer = answer_text(text, "stated-remedy")
    assert "`pip install accelerate`" in answer and "If accelerate is installed already" in answer
    assert "pip install -U accelerate" in answer


def test_python_s_spelling_guess_is_a_fix_only_for_a_misspelling():
    # the message line of github.com/CreamyLong/stable-diffusion/issues/18 (corpus round3): 'Trainer' is a
    # class where an instance was meant (trainer was never created); alone, it is not known
    assert explain("NameError: name 'trainer' is not defined. Did you mean: 'Trainer'?\n") is None
    # with its frame (round 1's working half) the user's own line is read as before
    full = next(t for t in working_texts("working").values() if "Did you mean: 'Trainer'" in t)
    assert "trainer is used before anything assigned it" in answer_text(full, "name-not-defined")


def test_a_conventional_alias_never_defined_is_a_missing_import():
    # github.com/bagavi/CS231N/issues/1: the maintainer's fix is "import numpy as np"
    text = (
        "NameError                                 Traceback (most recent call last)\n"
        "<ipython-input-2-b84da67e4866> in <module>()\n      2 \n      3 N, D, H = 4, 5, 6\n"
        "----> 4 x = np.random.randn(N, D)\n      5 h = np.random.randn(N, H)\n\nNameError: name 'np' is not defined\n"
    )
    answer = answer_text(text, "name-not-defined")
    assert "Add `import numpy as np`" in answer and "Assign np" not in answer
