"""The rule registry: each rule is one function registered with its code, level and hint.

>>> from torchwise.lint.rules import all_rules
>>> all_rules()["TW101"].level.value
'error'
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from torchwise.lint.findings import Hit, Level

if TYPE_CHECKING:
    from torchwise.lint.context import FileContext

RuleFunction = Callable[["FileContext"], Iterator[Hit]]


@dataclass(frozen=True)
class Rule:
    code: str
    level: Level
    name: str
    hint: str
    check: RuleFunction

    @property
    def summary(self) -> str:
        """The first line of the rule's docstring."""
        return (self.check.__doc__ or self.name).strip().splitlines()[0]

    @property
    def blind_spots(self) -> str:
        """The docstring's ``Cannot see:`` paragraph, on one line: what the rule misses or
        deliberately leaves alone."""
        doc = inspect.cleandoc(self.check.__doc__ or "")
        _, _, rest = doc.partition("Cannot see:")
        return " ".join(rest.split("\n\n")[0].split())


RULES: dict[str, Rule] = {}


def rule(code: str, level: Level, *, hint: str) -> Callable[[RuleFunction], RuleFunction]:
    """Register ``check`` under ``code``; ``hint`` is the default one-line fix."""

    def register(check: RuleFunction) -> RuleFunction:
        if code in RULES:
            raise ValueError(f"rule code {code} registered twice")
        RULES[code] = Rule(code, level, check.__name__, hint, check)
        return check

    return register
