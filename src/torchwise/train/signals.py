"""Ctrl-C and SIGTERM: during training, finish the step, then stop (the loop checkpoints `last`);
during start-up in one process, stop at once (`interrupt_start_up`)."""

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

    with handling(handler):
        yield


class StartUpInterrupted(KeyboardInterrupt):
    """A signal before the first step (one process): start-up stops where it is."""

    def __init__(self, signal_name: str) -> None:
        super().__init__(signal_name)
        self.signal = signal_name


@contextlib.contextmanager
def interrupt_start_up() -> Iterator[None]:
    """SIGINT and SIGTERM raise `StartUpInterrupted` until `stop_on_signals` takes over at the first
    step: nothing is half-done yet, and SIGTERM's default (die at once) would leave a `running` summary."""
    def handler(signum: int, _: Any) -> None:
        raise StartUpInterrupted(signal.Signals(signum).name)

    with handling(handler):
        yield


@contextlib.contextmanager
def handling(handler: Any) -> Iterator[None]:
    """``handler`` for SIGINT and SIGTERM inside the block, the previous handlers after it."""
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
