"""explain reads a paste as a person does: the error line wherever it is in the paste, not the
last line and not the same words in a traceback's source line or in a message's own hints."""

from __future__ import annotations

import subprocess
import sys

from torchwise.explain.lookup import explain
from torchwise.explain.paste import Frame, Paste, unwrapped, user_frame

MESSAGE_FIRST = (
    "RuntimeError: Expected all tensors to be on the same device, but found at least two devices,"
    " cuda:0 and cpu!\n"
) + """Traceback (most recent call last):
  File "train.py", line 40, in <module>
    assert torch.cuda.is_available(), "Torch not compiled with CUDA enabled"
  File "train.py", line 52, in step
    out = model(x)
"""


def test_a_message_pasted_before_its_traceback_beats_words_in_a_source_line():
    # the frame's source line quotes another known message, later in the text
    explanation = explain(MESSAGE_FIRST)
    assert explanation is not None and explanation.id == "two-devices"
    assert explanation.line.startswith("RuntimeError: Expected all tensors to be on the same device")


def test_the_message_s_own_hint_lines_are_not_the_error():
    text = (
        "ValueError: Asking to pad but the tokenizer does not have a padding token.\n"
        "Hint: if the run then stops with CUDA out of memory. Tried to allocate 2.00 GiB,"
        " lower the batch size.\n"
    )
    assert Paste(text).kinds == ["error", "suggestion", "other"]
    assert explain(text).id == "hf-no-pad-token"


def test_lines_are_read_by_kind():
    paste = Paste(MESSAGE_FIRST)
    assert paste.kinds == ["error", "other", "frame", "frame", "frame", "frame", "other"]
    assert paste.error_line().startswith("RuntimeError: Expected all tensors")


def test_the_error_line_is_not_the_users_question_below_it():
    text = (
        'Traceback (most recent call last):\n  File "main.py", line 9, in <module>\n'
        "    run()\nKeyError: 'dense_wh_mask'\n\nI use torch 2.1 on Ubuntu, how can I fix this?\n"
    )
    assert Paste(text).error_line() == "KeyError: 'dense_wh_mask'"
    done = subprocess.run([sys.executable, "-m", "torchwise", "explain"], input=text,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 1
    assert "does not know this error yet: KeyError: 'dense_wh_mask'" in done.stdout


def test_a_known_error_says_which_line_it_read_when_the_message_comes_first():
    done = subprocess.run([sys.executable, "-m", "torchwise", "explain"], input=MESSAGE_FIRST,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0
    assert "read from:     RuntimeError: Expected all tensors to be on the same device" in done.stdout


def test_a_message_hard_wrapped_mid_word_is_joined_again():
    # jcyk/BERT#4 as pasted: the terminal broke "is" and "anywhere" across lines
    text = (
        "RuntimeError: one of the variables needed for gradient computation has been modified by"
        " an inplace operation: [torch.cuda.FloatTensor [128, 4, 2304]], which is output 0 of"
        " AddBackward0, i\n"
        "s at version 2; expected version 1 instead. Hint: the backtrace further above shows the"
        " operation that failed to compute its gradient. The variable in question was changed in there or any\n"
        "where later. Good luck!\n"
    )
    lines = text.split("\n")
    assert len(lines[0]) == len(lines[1])  # what a fixed-width wrap leaves
    assert "AddBackward0, is at version 2" in unwrapped(text)
    explanation = explain(text)
    assert explanation.id == "inplace-modified"
    assert "[128, 4, 2304]" in explanation.title


def test_a_log_without_a_wrapped_run_is_left_alone():
    assert unwrapped("RuntimeError: short\nnext line\n") is None


def test_launcher_and_quote_prefixes_do_not_hide_what_a_line_is():
    text = (
        '0: [rank0]:   File "/home/x/train.py", line 535, in <module>\n'
        "0: [rank0]:     main()\n"
        "[rank1]: RuntimeError: boom\n"
        "> OSError: [WinError 126] The specified module could not be found\n"
        "**RuntimeError: DataLoader worker (pid 7579) is killed by signal: Bus error.\n"
    )
    assert Paste(text).kinds == ["frame", "frame", "error", "error", "error", "other"]


def test_the_users_frame_is_the_last_one_outside_installed_code():
    text = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 12, in <module>\n    main()\n'
        '  File "/home/me/proj/lib/data.py", line 40, in __getitem__\n    x = self.cache[key]\n'
        '  File "/usr/lib/python3.10/random.py", line 482, in sample\n    raise ValueError("x")\n'
        '  File "C:\\Python39\\lib\\site-packages\\torch\\serialization.py", line 3, in save\n    f()\n'
        "ValueError: x\n"
    )
    # a project's own lib/ folder is the user's; the standard library and site-packages are not
    assert user_frame(text) == Frame("/home/me/proj/lib/data.py", 40, "__getitem__", "x = self.cache[key]")
    assert user_frame(text, text.index('  File "/home/me')) == Frame("train.py", 12, "<module>", "main()")
    assert user_frame(text).place == "data.py:40 in __getitem__"


def test_ipython_and_cut_short_frames_are_read_with_their_source_line():
    ipython = (
        "<ipython-input-14-e6> in learning()\n    101 \n--> 103     x = sample['input']\n\n"
        "IndexError: too many indices\n"
    )
    assert user_frame(ipython).line == 103 and user_frame(ipython).source == "x = sample['input']"
    cut = '\\proj\\data.py", line 188, in collate_fn\n    a, b = zip(*batch)\nValueError: x\n'
    assert user_frame(cut).function == "collate_fn" and user_frame(cut).source == "a, b = zip(*batch)"
    console = '  File "/opt/py/bin/accelerate", line 8, in <module>\n    sys.exit(main())\n'
    assert user_frame(console) is None  # an installed console script is not the user's code
