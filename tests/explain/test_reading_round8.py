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
