"""Every user-facing failure is a `TorchwiseError`: what happened, and what to do about it.

The CLI prints ``error: <message>`` and ``hint: <hint>`` on stderr and exits with
``exit_code`` (2 for bad input, 1 for a run that failed), with a traceback only under
``--debug``.

>>> err = ConfigError("unknown key 'optim.lrr'", hint="did you mean 'optim.lr'?")
>>> err.exit_code, err.hint
(2, "did you mean 'optim.lr'?")
"""

from __future__ import annotations


class TorchwiseError(Exception):
    """Base class: a message a newcomer understands and a hint with the fix."""

    exit_code: int = 2

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\nhint: {self.hint}"


class ConfigError(TorchwiseError):
    """The config file or an override is wrong: unknown key, wrong type, value out of range."""


class TargetError(TorchwiseError):
    """A ``package.module:name`` target cannot be imported or called."""


class DataError(TorchwiseError):
    """The data cannot be read or does not fit the task (missing file, NaN, bad labels)."""


class ModelError(TorchwiseError):
    """The model does not fit the data: output shape, device, dtype."""


class CheckpointError(TorchwiseError):
    """A checkpoint is missing, corrupt, or belongs to another model or config."""


class WeightsMismatch(CheckpointError):
    """Saved weights do not fit a model; ``report`` (a `WeightsReport`) lists every key."""

    def __init__(self, message: str, *, report: object, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.report = report


class ResumeError(TorchwiseError):
    """A run cannot be resumed as asked (changed config, overrides that rewrite history)."""


class RunLocked(TorchwiseError):
    """Another live process is writing this run folder (it holds the folder's `.lock`)."""


class TrustError(TorchwiseError):
    """The run-signing key cannot be used (readable by others, not a key torchwise wrote)."""


class UntrustedCodeError(TorchwiseError):
    """A run folder or artefact this user did not sign would run code, and the user has not accepted it."""


class RunFailed(TorchwiseError):
    """A run started but could not finish (non-finite loss, out of memory at micro-batch 1)."""

    exit_code = 1


class LintError(TorchwiseError):
    """A file given to ``torchwise lint`` cannot be read or parsed."""


class ExportError(TorchwiseError):
    """A model cannot be exported, or its artefact does not match the eager model."""
