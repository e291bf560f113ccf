"""Ctrl-C and SIGTERM during training: finish the step, then stop (the loop checkpoints `last`)."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def stop_on_signals(stop_requested: list[str], *, escalate: bool = True) -> Iterator[None]:
    """SIGINT/SIGTERM ask the loop to stop after the current step instead of killing it mid-step.

    Under torchrun (``escalate`` off) a second signal is not the user insisting: a Ctrl-C reaches
    each rank from the terminal and again from torchrun, which kills the ranks itself if they linger.
    """
    def handler(signum: int, _: Any) -> None:
        name = signal.Signals(signum).name
        if stop_requested and escalate:  # a second Ctrl-C: the user means it
            raise KeyboardInterrupt
        stop_requested.append(name)

    previous = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread: leave signals to the host program
        pass
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
