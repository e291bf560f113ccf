"""A name explain quotes from a message ends where the name ends, not where the line ends: a paste
that lost a closing quote goes on in the user's own words (round 6's held-out CenterNet and
Whisper-WebUI pastes, judged right but rendered with the user's sentence inside the name)."""

from __future__ import annotations

from torchwise.explain.lookup import explain

LOST_QUOTE_LOCAL_CLASS = """Traceback (most recent call last):
  File "main.py", line 102, in <module>
    for batch in train_loader:
AttributeError: Can't pickle local object 'get_dataset.<locals>.Dataset".  Setting num_workers = 0 \
avoids it but training is slow, how to fix?"""


def test_a_local_class_whose_quote_was_lost_is_named_alone_and_called_a_class():
    answer = explain(LOST_QUOTE_LOCAL_CLASS)
    assert answer is not None and answer.id == "pickle-local-object"
    assert answer.title == "A DataLoader worker could not receive get_dataset.<locals>.Dataset"
    assert answer.cause.startswith("get_dataset.<locals>.Dataset is a class defined inside a function")
    assert "Setting" not in answer.cause


def test_a_local_function_is_still_called_a_function():
    answer = explain("AttributeError: Can't pickle local object 'main.<locals>.<lambda>'\n"
                     "  (DataLoader worker process 0)")
    assert answer is not None and answer.id == "pickle-local-object"
    assert answer.cause.startswith("main.<locals>.<lambda> is a lambda or a function defined inside a function")


def test_a_requirement_quoted_by_the_user_is_named_without_the_quote():
    answer = explain('ERROR: Could not find a version that satisfies the requirement torch" (from versions: none)')
    assert answer is not None and answer.id == "no-matching-distribution"
    assert answer.title == "pip found no distribution of torch"


def test_a_pinned_requirement_keeps_its_version_and_build():
    answer = explain("ERROR: Could not find a version that satisfies the requirement torch==1.7.1+cu110 "
                     "(from versions: 1.11.0, 1.12.0)")
    assert answer is not None
    assert answer.title == "pip found no distribution of torch==1.7.1+cu110"
    assert "pip sees only 1.11.0, 1.12.0" in answer.cause


def test_an_unformatted_uri_placeholder_is_not_quoted_as_a_file():
    # torchaudio releases that raise the message without formatting it
    answer = explain("RuntimeError: Couldn't find appropriate backend to handle uri {uri} and format {format}.")
    assert answer is not None and answer.id == "audio-no-backend"
    assert answer.title == "torchaudio has no audio backend that can open the file"


def test_a_real_uri_is_still_named():
    answer = explain("RuntimeError: Couldn't find appropriate backend to handle uri data/clip_01.mp3 and format None.")
    assert answer is not None and answer.title == "torchaudio has no audio backend that can open data/clip_01.mp3"
    assert "FFmpeg's shared libraries" in answer.cause
