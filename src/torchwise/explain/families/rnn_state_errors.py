"""Known errors of the initial hidden state given to an RNN, GRU or LSTM: its shape must be
(num_layers * num_directions, batch, hidden_size) whatever batch_first says. The answer compares
the two shapes the message prints to say which size is off.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, dims, known, shape

LAYOUT = "(num_layers * num_directions, batch, hidden_size)"
# The paste says the model runs on several GPUs in one process.
SEVERAL_GPUS = re.compile(r"DataParallel|data_parallel|multi-?GPU|multiple GPUs|several GPUs", re.IGNORECASE)


def _one_axis_too_many(got: list[int], expected: list[int]) -> bool:
    """``got`` is ``expected`` with one extra axis of size 1 somewhere."""
    return any(size == 1 and got[:i] + got[i + 1 :] == expected for i, size in enumerate(got))


def _other_batch(got: list[int], expected: list[int]) -> bool:
    """Only the batch size (the middle one) differs."""
    return len(got) == len(expected) == 3 and got[1] != expected[1] and got[0::2] == expected[0::2]


def _hidden_size(match: re.Match[str], text: str) -> Explanation:
    which = f"hidden[{match.group(1)}]" if match.group(1) else "hidden"
    expected, got = dims(match.group(2)), dims(match.group(3))
    if _one_axis_too_many(got, expected):
        cause = (
            f"The state has one axis too many: {shape(got)} is the needed {shape(expected)} with an"
            " extra axis of 1 (an unsqueeze(0), or a state built as [layers, ...] around a tensor"
            " that already has the layer axis), typical where a bidirectional or multi-layer state"
            " is assembled by hand."
        )
        fix = f"Build it as {LAYOUT}: h0 = h.view({', '.join(map(str, expected))}) (drop the extra axis)."
    elif _one_axis_too_many(expected, got):
        lstm = (
            " For an LSTM both h0 and c0 need it (the state is the tuple (h0, c0))."
            if which != "hidden" else ""
        )
        cause = (
            f"The state lacks the layer axis: {shape(got)} is {shape(expected)} without its first"
            " size of 1 (a state taken from a Linear layer or another model's output, or a GRU's"
            " code reused for an LSTM)." + lstm
        )
        fix = "Add the axis: h0 = h.unsqueeze(0) (num_layers * num_directions first)."
    elif len(got) == len(expected) == 3 and got[2] != expected[2] and got[:2] == expected[:2]:
        cause = (
            f"The state has {got[2]} features where the layer's hidden_size is {expected[2]}: it"
            " comes from a layer of another size (a bidirectional encoder's concatenated state is"
            " twice the hidden size) or from a model built with another hidden_size."
        )
        fix = (
            f"Give the layer hidden_size={got[2]}, or project the state to {expected[2]} features"
            " (a Linear layer, or sum/average the two directions) before passing it."
        )
    elif len(got) == len(expected) and sorted(got) == sorted(expected) and got != expected:
        cause = (
            f"The sizes are right but in another order ({shape(got)}): the state was built batch"
            " first; an RNN's hidden state keeps the batch in the middle even with batch_first=True."
        )
        fix = f"Build it as {LAYOUT}, or h0 = h.transpose(0, 1).contiguous()."
    elif _other_batch(got, expected) and SEVERAL_GPUS.search(text):
        cause = (
            "The model runs on several GPUs with nn.DataParallel, which splits every forward"
            " argument along dimension 0: the input's batch is split, but the hidden state"
            " passed to forward has its batch on dimension 1, so a replica gets a state for"
            f" {got[1]} samples with an input of {expected[1]} (or the other way round)."
        )
        fix = (
            "Do not pass the hidden state to forward: build it inside forward from the input"
            " (or pass none; zeros are the default), or transpose it to batch-first before the"
            " call and back inside; or use DistributedDataParallel (one process per GPU)."
        )
    elif _other_batch(got, expected):
        cause = (
            f"The state was made for a batch of {got[1]}, the input has {expected[1]}: a state kept"
            " from the previous batch (a smaller last batch), or built once with the configured"
            " batch size."
        )
        fix = (
            "Build the initial state from the input each time (batch = x.size(0) with"
            " batch_first, else x.size(1)), or pass none at all (zeros are the default);"
            " DataLoader(drop_last=True) if the size must stay fixed."
        )
    elif len(got) == len(expected) == 3 and got[0] != expected[0] and got[1:] == expected[1:]:
        cause = (
            f"The first size is {got[0]} where the layer needs {expected[0]} = num_layers *"
            " num_directions: the state was built for another number of layers, or without the 2"
            " of bidirectional=True (or with it, for a one-way RNN)."
        )
        fix = f"Build it with num_layers * (2 if bidirectional else 1) = {expected[0]} as its first size."
    else:
        cause = (
            f"The state's shape {shape(got)} does not match the layer's settings (num_layers,"
            " bidirectional, hidden_size) and the input's batch size."
        )
        fix = f"Build it as {LAYOUT} from the layer's settings and x's batch size, or pass none."
    return answer(
        title=f"The RNN's initial {which} is {shape(got)}, it needs {shape(expected)}",
        meaning=f"An RNN/GRU/LSTM takes its initial state shaped {LAYOUT}; it got {shape(got)}.",
        cause=cause,
        fix=fix,
    )


def _rnn_in_paste(match: re.Match[str], text: str) -> bool:
    """The same words come from other checks; the paste must show an RNN (a frame in rnn.py, or
    an lstm/gru/rnn call)."""
    return bool(re.search(r"rnn\.py|lstm|gru\b|\brnn\b|check_input", text, re.IGNORECASE))


def _input_rank(match: re.Match[str], text: str) -> Explanation:
    wanted, got = match.group(1), match.group(2)
    return answer(
        title=f"The RNN's input has {got} dimensions, it needs {wanted}",
        meaning=(
            f"An RNN/GRU/LSTM (in this torch) takes a {wanted}-D input: (seq, batch, feature), or"
            " (batch, seq, feature) with batch_first=True."
        ),
        cause=(
            "The input lacks an axis: a batch of feature vectors (batch, feature) without a"
            " sequence axis, or one sequence without its batch axis; torch before 1.11 takes no"
            " unbatched input."
        ),
        fix=(
            "Add the missing axis: x.unsqueeze(1) for a sequence of length 1 with batch_first=True"
            " (x.unsqueeze(0) without batch_first), or x.unsqueeze(0) for a single sequence; print"
            " x.shape before the call."
        ),
    )

KNOWN: list[KnownError] = [
    known(
        "rnn-hidden-size",
        r"Expected hidden(?:\[(\d)\])? size \(([\d, ]+)\), got [\[(]([\d, ]+)[\])]",
        _hidden_size,
    ),
    known("rnn-input-rank", r"input must have (\d) dimensions, got (\d)", _input_rank, when=_rnn_in_paste),
]
