"""Known errors of a launcher's command line that the script's own argparse refuses.

``python -m torch.distributed.launch`` hands each worker its local rank as a command-line option
(``--local-rank=N`` since torch 2.0, ``--local_rank=N`` before; not with ``--use-env``); torchrun
passes none and sets ``LOCAL_RANK`` in the environment. A script whose parser declares the other
spelling, or none, stops at argparse with ``prog: error: unrecognized arguments: --local-rank=0``
(exit code 2) in every rank, above the launcher's summary. The spelling given and the one the
``usage:`` line declares tell which of the two the script was written for.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, told_apart

SPELLINGS = ("--local-rank", "--local_rank")


def _local_rank_refused(match: re.Match[str], text: str) -> Explanation | None:
    script, refused = match.group(1).strip("\"'` "), match.group(2)
    given = re.search(r"--local[-_]rank\b", refused)
    if given is None:
        return None  # other options refused: a typo or another version of the script, not told here
    spelling = given.group(0)
    other = SPELLINGS[1] if spelling == SPELLINGS[0] else SPELLINGS[0]
    # the usage block argparse printed above this error (it wraps long option lists over lines)
    start = text.rfind(f"usage: {script}", 0, match.start())
    usage = text[start : match.start()] if start >= 0 else ""
    declared = re.search(rf"{other}\b", usage) is not None
    # which release passes which spelling: the dashed one since torch 2.0
    launcher = "torch 2.0 and later" if spelling == SPELLINGS[0] else "torch before 2.0"
    if declared:
        cause = (
            f"The script's parser declares {other} (its usage line says so), but the launcher passes"
            f" {spelling}: python -m torch.distributed.launch of {launcher} spells it that way, and"
            f" argparse does not treat the two spellings as one. The script was written for another"
            " torch release than the one launching it."
        )
    else:
        cause = (
            f"The script's parser does not accept {spelling}"
            + (" (its usage line declares no local-rank option)" if usage else "")
            + f", which python -m torch.distributed.launch of {launcher} passes to every worker: the"
            " script was written for torchrun, which passes no such option and sets LOCAL_RANK in"
            f" the environment{f', or for the spelling {other}' if not usage else ''}."
        )
    return answer(
        title=f"{script} refuses the launcher's {spelling} option",
        meaning=(
            f"Each worker's argparse stopped at an option it does not declare ({spelling}=N, the"
            " worker's local rank, added by the launcher) and exited with code 2 before training;"
            " the launcher's summary below it only reports those exits."
        ),
        cause=cause,
        fix=(
            "Start it with torchrun (torchrun --nproc-per-node N script.py ...) and read the rank"
            " from the environment: local_rank = int(os.environ['LOCAL_RANK']); or make the parser"
            " accept both spellings: parser.add_argument('--local-rank', '--local_rank',"
            " dest='local_rank', type=int, default=0)."
        ),
    )


KNOWN: list[KnownError] = [
    told_apart(
        "launcher-local-rank",
        # argparse's prog is the script's file name, or whatever the parser was named (spaces too)
        r"^\s*(?:\[rank\d+\]:)?([^:\n]+?): error: unrecognized arguments: ([^\n]*)",
        _local_rank_refused,
        re.MULTILINE,
    ),
]
