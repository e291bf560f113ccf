"""Known errors where the code calls something differently from how it is defined: a method
given more arguments than its definition takes, a keyword the installed version of a class no
longer (or not yet) accepts, a forward that nn.DataParallel called without its inputs, a base-class placeholder that
raises NotImplementedError, ``model.module`` on a model that is not wrapped.

As in ``user_code_errors``, the traceback decides: the call site (the user's frame) gives the
arguments passed, the frames' paths give the library, and the frame that raised gives the
method that was never implemented.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from torchwise.explain.evidence_readings import loading_option, loading_option_reading
from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.paste import Frame, frames, last_frame, user_frame

# torch's own placeholders have their own entries (forward-not-implemented).
OWN_PLACEHOLDERS = {"forward", "_forward_unimplemented"}


def _arguments_at(source: str, name: str) -> int | None:
    """How many arguments ``source`` passes in its call to ``name`` (top-level commas); a method
    stored under another name (``self.collate_fn = self.__collate_fn``) is the line's last call."""
    start = re.search(rf"\b{re.escape(name)}\s*\(", source)
    if start is None and name == "__init__":  # a class is called: the line's outermost call
        start = re.search(r"[A-Za-z_][\w.]*\s*\(", source)
    if start is None:
        calls = list(re.finditer(r"\.\s*\w+\s*\(", source))
        if not calls:
            return None
        start = calls[-1]
    depth, count, seen = 1, 0, False
    for char in source[start.end() :]:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return count + 1 if seen else 0
        elif char == "," and depth == 1:
            count += 1
        elif not char.isspace() and depth == 1:
            seen = True
    return None  # the call goes on past this line


def _method_arguments(match: re.Match[str], text: str) -> Explanation:
    name, takes, given = match.group(2), int(match.group(3)), int(match.group(4))
    calls = [frame for _, frame in frames(text[: match.start()])]
    site = calls[-1] if calls else None
    passed = _arguments_at(site.source, name) if site else None
    method = site is not None and re.search(r"\.\s*\w+\s*\(", site.source) is not None
    place = site.place if site else "the call"
    if name == "__init__" and site is not None and re.search(r"\bsuper\b[^\n]*\.__init__\(", site.source):
        return _base_constructor(site, takes - 1, given - 1, _library_of(text, match.start()))
    if name == "__init__" and site is not None:
        return _constructor_arguments(site, takes - 1, given - 1)
    if method and passed == takes and given == takes + 1:
        return answer(
            title=f"{name} is defined without self but called as a method",
            meaning=(
                f"{place} calls {name} with {passed} argument(s); Python adds the object itself"
                f" as the first one, hence {given} given to a definition that takes {takes}."
            ),
            cause=(
                f"{name} is written inside a class without a self parameter (a collate_fn or"
                " helper moved into a class), so calling it through the object passes one"
                " argument too many."
            ),
            fix="Add self as its first parameter, mark it @staticmethod, or define it at module level.",
        )
    counted = f"{passed} argument(s)" if passed is not None else f"{given} arguments (Python's count)"
    return answer(
        title=f"{name} takes {takes} positional argument(s) but was given {given}",
        meaning=(
            f"{place} calls {name} with {counted}; its definition takes {takes}"
            + (" counting self." if method else ".")
        ),
        cause=(
            "The call and the definition do not match: they come from different versions of the"
            " code or library (a method whose parameters changed, a call written for another"
            " class or script), or the call passes an extra value."
        ),
        fix=(
            f"Call {name} with the arguments its def line lists (print(inspect.signature(...)))"
            " or use the entry point the project documents for this task; where a library calls"
            " it, install the version the code was written for."
        ),
    )


def _base_constructor(site: Frame, declared: int, passed: int, library: str | None) -> Explanation:
    """super().__init__(...) refused: a subclass written for another release of its base (round 8)."""
    release = f"another release of {library} (the library in the traceback)" if library else "another release"
    return answer(
        title=f"The base class's __init__ takes {declared} argument(s), the subclass passes {passed} ({site.place})",
        meaning=f"{site.place} calls the base class's constructor ({site.source}) with {passed} argument(s).",
        cause=f"The subclass was written for a base class from {release}, whose constructor changed, or the base"
        " class itself was edited.",
        fix=(
            "Install the library version the code was written for (its requirements or README), or call"
            " super().__init__ the way the installed base class declares it (print(inspect.signature(Base.__init__)))."
        ),
    )


def _constructor_arguments(site: Frame, declared: int, passed: int) -> Explanation:
    by = "a library" if site.in_library else "the code"
    return answer(
        title=f"A class is built with {passed} argument(s) but its __init__ takes {declared} ({site.place})",
        meaning=(
            f"{site.place} calls a class ({site.source}); Python passes the {passed} argument(s)"
            f" to its __init__, which declares {declared} besides self."
        ),
        cause=(
            f"The class that {by} builds there is not written for that call: a model, dataset or"
            " callback class whose __init__ does not take the configuration (or other values)"
            f" the caller passes{' (the library builds your class from its config)' if site.in_library else ''},"
            " or the class was changed or swapped for another with a different signature."
        ),
        fix=(
            "Give the class's __init__ the parameters the call passes, e.g. def __init__(self,"
            " config): super().__init__(); ... (and read the settings from it), or pass the"
            " class that the caller expects."
        ),
    )


# A frame that only passes the call on (a decorator's wrapper: transformers' deprecate_kwarg) does not
# own the function that refused the keyword.
FORWARDING = re.compile(r"^return \w+\(\*args, \*\*kwargs\)$")


def _library_of(text: str, before: int) -> str | None:
    """The installed package whose frame raised, from its path: site-packages/<package>/..., passing over
    a decorator's wrapper (round 8: SFTTrainer, a trl class, was named transformers from the wrapper
    transformers put around its __init__)."""
    for _, frame in reversed(frames(text[:before])):
        found = re.search(r"(?:site|dist)-packages[\\/]([A-Za-z_]\w*)", frame.file)
        if found and not FORWARDING.match(frame.source.strip()):
            return found.group(1)
    return None


@dataclass(frozen=True)
class InternalCall:
    library: str
    place: str


def _internal_call(text: str, before: int, argument: str) -> InternalCall | None:
    """The library whose own code passed ``argument=`` when the last frame before the message is
    an installed package's line that passes it (no user code between the call and the error)."""
    frame = last_frame(text, before)
    if frame is None or not frame.in_library or not re.search(rf"\b{argument}\s*=", frame.source):
        return None
    library = _library_of(text, before)
    return InternalCall(library, frame.place) if library else None


def _unexpected_keyword(match: re.Match[str], text: str) -> Explanation:
    owner, function, argument = match.group(1), match.group(2), match.group(3)
    what = f"{owner}.{function}" if owner and function != "__init__" else (owner or function)
    library = _library_of(text, match.start())
    of = f" of {library}" if library else " of the library"
    lightning = argument == "gpus" and (owner in (None, "Trainer") or "lightning" in text.lower())
    if function == "forward":
        cause = (
            f"The module's forward does not declare {argument}: a batch dict unpacked into"
            f" model(**batch) holds a key this model does not take (labels for a model without a"
            f" task head, token_type_ids for a model that has none), or a wrapper passes it."
        )
        fix = (
            f"Pass only the keys forward declares (print(inspect.signature(model.forward))): drop"
            f" '{argument}' from the batch, or use the model class that takes it (a"
            f" ...ForSequenceClassification head for labels)."
        )
    elif internal := _internal_call(text, match.start(), argument):
        cause = (
            f"The call that passed {argument}= is inside the installed {internal.library} itself"
            f" ({internal.place}), not in your code: that release calls a part of itself, or a"
            f" package it depends on, that does not take the argument: a bug of that release, or"
            f" {internal.library} upgraded without the packages it needs (or the other way round)."
        )
        fix = (
            f"Upgrade {internal.library} (pip install -U {internal.library}; its fix is in a later"
            f" release), or install the versions of {internal.library} and its dependencies that"
            f" were released together (its requirements)."
        )
    elif loading_option(argument, function):  # round 9: an option of loading a model, given elsewhere
        cause, fix = loading_option_reading(argument, what)
    elif lightning:
        cause = (
            "PyTorch Lightning 2.0 removed Trainer(gpus=...); the code was written for"
            " Lightning 1.x."
        )
        fix = (
            "Write Trainer(accelerator='gpu', devices=N) (devices='auto' for all), or install the"
            " Lightning the project pins (pip install 'pytorch-lightning<2.0')."
        )
    else:
        cause = (
            f"The installed version{of} does not take '{argument}' there: the code, or a config"
            " file passed in as keyword arguments, was written for another version, in which the"
            " argument existed (renamed or removed since) or was added later than the installed"
            " release."
        )
        fix = (
            f"Install the version the code or config was written for (the project's requirements;"
            f" pip show {library or '<package>'} shows the installed one), or change the call or"
            f" config to the installed version's arguments."
        )
    return answer(
        title=f"{what}() does not accept the keyword '{argument}'",
        meaning=f"{what} was called with {argument}=..., which its installed definition does not declare.",
        cause=cause,
        fix=fix,
    )


def _forward_missing(match: re.Match[str], text: str) -> Explanation:
    names = (match.group(2) or "").replace("'", "")
    return answer(
        title=f"nn.DataParallel gave a replica no input ({names} missing)",
        meaning=(
            "nn.DataParallel splits each input tensor along dimension 0 across the GPUs and calls"
            f" the module on every part; one replica was called without {names}."
        ),
        cause=(
            "The batch holds fewer samples than there are GPUs (a last batch of 1), or the inputs"
            " hold no tensors DataParallel can split (a list of strings, None, an empty batch from"
            " the loader), so some GPU gets nothing."
        ),
        fix=(
            "Print type and shape of what reaches the model; make the loader yield tensors, use"
            " DataLoader(..., drop_last=True) or a batch of at least one sample per GPU; or run on"
            " one GPU (CUDA_VISIBLE_DEVICES=0) or use DistributedDataParallel."
        ),
    )


def _under_data_parallel(match: re.Match[str], text: str) -> bool:
    # the message alone names no cause: answer only where the traceback shows DataParallel
    return re.search(r"data_parallel\.py|parallel_apply", text[: match.start()]) is not None


def _placeholder(match: re.Match[str], text: str) -> Explanation:
    frame = last_frame(text, match.start())
    assert frame is not None
    function = frame.function
    return answer(
        title=f"{function}() is a placeholder that was never implemented ({frame.place})",
        meaning=f"{function} raises NotImplementedError: a base class declares it for subclasses to fill in.",
        cause=(
            f"The class in use inherits {function} without overriding it: a subclass that leaves it"
            " out, or a setting that makes the base class call it (evaluation during training, a"
            " mode or backend) for a class that does not provide it."
        ),
        fix=(
            f"Implement {function} in your subclass (the library's example scripts show one), or"
            " turn off the feature that calls it."
        ),
    )


def _is_placeholder(match: re.Match[str], text: str) -> bool:
    frame = last_frame(text, match.start())
    return (
        frame is not None
        and frame.source.startswith("raise NotImplementedError")
        and frame.function not in OWN_PLACEHOLDERS
        and not frame.function.startswith("__")
    )


def _not_wrapped(match: re.Match[str], text: str) -> Explanation:
    kind = match.group(1)
    frame = user_frame(text, match.start())
    place = f" ({frame.place})" if frame else ""
    return answer(
        title=f"model.module on a {kind} that is not wrapped{place}",
        meaning=(
            "Only a model wrapped in nn.DataParallel or DistributedDataParallel has .module (the"
            f" wrapper keeps the real model there); this {kind} is the model itself."
        ),
        cause=(
            "The code was written for a wrapped model, and this run skipped the wrapping: one GPU"
            " or the CPU, no distributed launch, or an option that turns it off."
        ),
        fix=(
            "Unwrap only when wrapped: net = model.module if hasattr(model, 'module') else model,"
            " and use net for state_dict() and attributes; or run the script the way it expects"
            " (distributed, several GPUs)."
        ),
    )


# Methods of the objects a training script holds (a model, an optimizer, a scheduler, a loss, a
# tensor, a loader): a module that lacks one of these was meant to be such an object. Any other
# missing name may just be a function the project's module does not define (yet).
OBJECT_METHODS = {
    "load_state_dict", "state_dict", "step", "zero_grad", "parameters", "named_parameters",
    "to", "cuda", "cpu", "eval", "train", "forward", "backward", "item", "size", "param_groups",
}


def _module_of_the_project(match: re.Match[str], text: str) -> bool:
    """The name is also a file of the user's project in the traceback (``optimizer`` is
    optimizer.py) and what is looked up on it is an object's method: the value used is that
    module, not the object of the same name."""
    name = match.group(1)
    return match.group(2) in OBJECT_METHODS and any(
        re.split(r"[\\/]", frame.file)[-1] == f"{name}.py" and not frame.in_library
        for _, frame in frames(text)
    )


def _module_for_object(match: re.Match[str], text: str) -> Explanation:
    name, attribute = match.group(1), match.group(2)
    frame = user_frame(text, match.start())
    place = f" ({frame.place})" if frame else ""
    return answer(
        title=f"'{name}' is the project's module {name}.py, not an object with .{attribute}{place}",
        meaning=(
            f"Python looked {attribute} up on the module {name} (the file {name}.py, which the"
            f" traceback runs through) and the module defines no such name: the code meant an"
            f" object that has .{attribute}."
        ),
        cause=(
            f"One name is used for two things: import {name} (the file {name}.py) and a"
            f" variable {name} holding the object; where the variable is not the one in scope"
            f" (a call passes the module, a variable named otherwise, a typo), {name} is the"
            " module."
        ),
        fix=(
            f"Pass the object itself where {name} is used (the traceback's lines in your code), and give the module"
            f" and the object different names (import {name} as {name}_lib, or call the"
            f" variable {name}_obj)."
        ),
    )


def _multiple_values(match: re.Match[str], text: str) -> Explanation:
    function, argument = match.group(1), match.group(2)
    hub = "hub" in text or "hubconf" in text
    return answer(
        title=f"{function}() got {argument} twice",
        meaning=(
            f"Python received a value for {argument} both by position (or from the function that"
            " forwards the call) and by keyword, and will not choose."
        ),
        cause=(
            f"The hub entry (hubconf) already passes {argument} to {function} itself, so"
             f" torch.hub.load(..., {argument}=...) gives it a second time."
             if hub else
             f"The call passes {argument} by keyword while a positional argument (or a wrapper"
             f" such as functools.partial, or the caller's own **kwargs) already fills it."
        ),
        fix=f"Give {argument} once: drop the keyword (or the positional value) from the call.",
    )


KNOWN: list[KnownError] = [
    known(
        "method-arguments",
        r"TypeError: (?:(\w+)\.)?(\w+)\(\) takes (\d+) positional arguments? but (\d+) (?:were|was) given",
        _method_arguments,
        generic=True,
    ),
    known(
        "unexpected-keyword",
        r"TypeError: (?:([\w.]+)\.)?(\w+)\(\) got an unexpected keyword argument '(\w+)'",
        _unexpected_keyword,
        generic=True,
    ),
    known(
        "forward-missing-input",
        r"(?:(\w+)\.)?forward\(\) missing \d+ required positional arguments?: ([^\n]+)",
        _forward_missing,
        generic=True,
        when=_under_data_parallel,
    ),
    known(
        "not-implemented-placeholder",
        r"^\s*NotImplementedError\s*$",
        _placeholder,
        re.MULTILINE,
        generic=True,
        when=_is_placeholder,
    ),
    known("not-wrapped-module", r"'(\w+)' object has no attribute 'module'(?!\w)", _not_wrapped),
    known(
        "module-for-object",
        r"AttributeError: module '(\w+)' has no attribute '(\w+)'",
        _module_for_object,
        when=_module_of_the_project,
    ),
    known(
        "multiple-values",
        r"TypeError: (?:[\w.]+\.)?(\w+)\(\) got multiple values for (?:keyword )?argument '(\w+)'",
        _multiple_values,
        generic=True,
    ),
]
