"""A path that is None: ``expected str, bytes or os.PathLike object, not NoneType``.

Python's path functions (``os.path.join``, ``open``, ``pathlib.Path``) raise this, from the standard
library's own frame, when a path is None. In training scripts the None is almost always a setting
that was never given: an argparse option without a default (``args.data_dir``), a config key left
empty (``cfg.log_path``), ``os.environ.get`` of an unset variable. The traceback says which: the
last frame outside the standard library makes the call, and its line names the value, either as
a setting's attribute (``os.path.join(args.data_dir, 'train')``) or as a parameter that the calling
frame filled (``ImageToImage2D(args.train_dataset, ...)`` for ``dataset_path``), which is followed
back frame by frame. Where the line names no single value, nothing is said.
"""

from __future__ import annotations

import ast
import re

from torchwise.explain.explanation import Explanation, KnownError, answer, told_apart
from torchwise.explain.families.grammar_none_errors import call_of, value_passed
from torchwise.explain.paste import Frame, frames

PATH_NONE = (
    r"TypeError: (?:expected str, bytes or os\.PathLike object, not NoneType|argument should be a"
    r" (?:path or str object|str(?: object)? or an os\.PathLike object[^\n]*?), not <class 'NoneType'>)"
)
# Where a script keeps its settings: argparse's namespace, a config object, absl's FLAGS.
SETTINGS = r"(?:args|opt|opts|cfg|config|conf|FLAGS|hparams|hp|params|settings|options)"
SETTING = re.compile(rf"(?<![\w.])({SETTINGS}(?:\.[A-Za-z_]\w*)+)(?![\w.])(?!\s*\()")
STANDARD = re.compile(r"[\\/](?:posixpath|ntpath|genericpath|pathlib|os|shutil|glob|codecs|io)\.py$|^<frozen")


def _parsed(source: str) -> ast.Module | None:
    """A frame's source line as Python: a compound statement's header gets a body, and the closing
    brackets of a call that began on an earlier line are dropped."""
    line = source.strip().removeprefix("return ")
    for attempt in (line, line + " pass", line.rstrip(")"), line.rstrip(")") + ")"):
        try:
            return ast.parse(attempt, mode="exec")
        except SyntaxError:
            continue
    return None


def _path_names(frame: Frame) -> list[str]:
    """The plain names the line passes to a call, in order: the candidates for the path that was None."""
    names: list[str] = []
    tree = _parsed(frame.source)
    for node in ast.walk(tree) if tree else []:
        if isinstance(node, ast.Call):
            for argument in [*node.args, *(keyword.value for keyword in node.keywords)]:
                if isinstance(argument, ast.Name) and argument.id not in names:
                    names.append(argument.id)
    return names


def _setting(text: str, before: int) -> tuple[str, Frame] | None:
    """(the setting or value that was None, the frame whose line names it), followed back from the call."""
    found = [frame for _, frame in frames(text[:before])]
    while found and STANDARD.search(found[-1].file):
        found.pop()
    while found:
        frame = found.pop()
        settings = list(dict.fromkeys(SETTING.findall(frame.source)))
        if settings:
            return (settings[0], frame) if len(settings) == 1 else None
        names = _path_names(frame)
        if len(names) != 1 or not found:
            return None
        call = call_of(found[-1].source, frame.function)
        value = value_passed(call, names[0]) if call else None
        if value is None:
            return None
        if SETTING.fullmatch(value):
            return value, found[-1]
        if not re.fullmatch(r"[A-Za-z_]\w*", value):
            return None
    return None


def _path_none(match: re.Match[str], text: str) -> Explanation | None:
    found = _setting(text, match.start())
    if found is None:
        return None
    setting, frame = found
    option = setting.rsplit(".", 1)[-1]
    return answer(
        title=f"{setting} is None where a path is expected ({frame.place})",
        meaning=(
            f"A path function (os.path.join, open, pathlib) was given None; {frame.place} ({frame.source})"
            f" passes {setting} there."
        ),
        cause=(
            f"{setting} was never set: the command-line option or config key for it ({option}) was not given,"
            " and its default is None (an argparse option without default=, a config file without the key, a"
            " mode of the script that needs an option the others do not)."
        ),
        fix=(
            f"Give it: pass --{option} <path> on the command line (or set {option} in the config the script"
            " loads; the README's command shows the options it expects), or give the option a default."
        ),
    )


KNOWN: list[KnownError] = [
    told_apart("path-is-none", PATH_NONE, _path_none, generic=True),
]
