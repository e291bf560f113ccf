"""Issue 21, round 10 (explain10c): the floors' recurring "not known" kind that a reading of the message's
grammar can answer: a call whose arguments do not fit the installed definition, between two releases.
Rows of it stayed unknown in four rounds (heldout4 #27, heldout5 #1026, heldout9 #96, working3 #9, #10,
#47); floors-10c.yaml lists them with the verdicts. Each reading is pinned on a text reduced from a real
thread (its address beside it) and on a near miss the grammar matches but the evidence does not bear out,
which stays silent or keeps another entry's answer."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from tests.explain.pinned import answer_text, working_texts

from torchwise.explain.lookup import explain

FLOORS = yaml.safe_load((Path(__file__).parent / "floors-10c.yaml").read_text())

# https://github.com/LeeJunHyun/Image_Segmentation/issues/53 (heldout4 #27), reduced: torchvision's rotate
# hands its fill to PIL, whose C core counts the colour's values as arguments
PIL_FILL = """Traceback (most recent call last):
  File "main.py", line 50, in main
    for i, (images, GT) in enumerate(self.train_loader):
  File "/env/lib/site-packages/torch/utils/data/dataloader.py", line 345, in __next__
    data = self._next_data()
  File "/project/data_loader.py", line 90, in __getitem__
    image = Transform(image)
  File "/env/lib/site-packages/torchvision/transforms/transforms.py", line 1003, in __call__
    return F.rotate(img, angle, self.resample, self.expand, self.center, self.fill)
  File "/env/lib/site-packages/torchvision/transforms/functional.py", line 729, in rotate
    return img.rotate(angle, resample, expand, center, fillcolor=fill)
  File "/env/lib/site-packages/PIL/Image.py", line 2544, in new
    return im._new(core.fill(mode, size, color))
TypeError: function takes exactly 1 argument (3 given)
"""

# https://github.com/asteroid-team/asteroid/issues/664 (heldout9 #96), reduced to the message
HOOK_MISSING = "TypeError: lr_scheduler_step() missing 1 required positional argument: 'metric'"


def test_a_c_function_counted_between_two_packages_is_two_releases():
    text = answer_text(PIL_FILL, "hook-between-packages")
    assert text.startswith("PIL calls a function written in C with 3 arguments, not exactly 1")
    assert "of torchvision and PIL (the traceback's packages)" in text
    assert "released to work together" in text


def test_a_c_count_of_the_users_own_literal_is_left_alone():
    # the same count, where the user's own line writes the three values: the user's value, not a release
    own = PIL_FILL.replace("image = Transform(image)", "image = T.RandomRotation(10, fill=(0, 0, 0))(image)")
    assert explain(own) is None


def test_a_c_count_in_one_package_or_the_users_call_is_left_alone():
    # the user's line calls the C function itself: which side is wrong is not in the message
    assert explain('  File "train.py", line 3, in <module>\n    x = encode(a, b, c)\n'
                   "TypeError: encode() takes at most 2 arguments (3 given)") is None
    # https://github.com/learnables/learn2learn/issues/100: only PIL's own frame is shown, so no second
    # package is seen handing it the call (the thread's cause, torchvision 0.5, is named in a comment only)
    assert explain(
        '  File "/miniconda3/envs/torch-1.4/lib/python3.7/site-packages/PIL/Image.py", line 2544, in new\n'
        "    return im._new(core.fill(mode, size, color))\nTypeError: function takes exactly 1 argument (3 given)"
    ) is None
    # heldout5 #1026 (huggingface/setfit#394): no frames, so no package is seen making the call
    assert explain(working_texts("heldout5")[1026]) is None


def test_a_framework_hook_override_that_requires_what_the_framework_stopped_passing():
    text = answer_text(HOOK_MISSING, "framework-hook-signature")
    assert text.startswith("lr_scheduler_step() is called without 'metric', which the override requires")
    assert "Lightning 2.0 dropped arguments" in text and "give 'metric' a default of None" in text
    assert answer_text(working_texts("heldout9")[96], "framework-hook-signature").startswith(
        "lr_scheduler_step() is called without 'metric'"
    )


def test_a_hook_missing_self_is_a_class_not_a_signature():
    # 'self' missing is a method reached through its class (called-on-class), not a release's signature
    found = explain("TypeError: training_step() missing 1 required positional argument: 'self'")
    assert found is not None and found.id == "called-on-class"
    # a function that is not a framework's hook keeps its own readings (here none: not known)
    assert explain("TypeError: my_step() missing 1 required positional argument: 'metric'") is None


@pytest.mark.parametrize("row", FLOORS, ids=lambda row: f"{row['folder']}-{row['number']}")
def test_floor_rows_answer_as_judged(row: dict) -> None:
    found = explain(working_texts(row["folder"])[row["number"]])
    assert (found.id if found else None) == row["got_after"], row
