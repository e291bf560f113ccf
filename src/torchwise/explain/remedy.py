"""Messages that carry their own remedy, read for errors no family was written for.

Many library errors say what to do: "To use CUDA with multiprocessing, you must use the 'spawn'
start method", "Please specify `target_modules` in `peft_config`", "set the option
`trust_remote_code=True` to remove this error", "you should call them in the opposite order:
`optimizer.step()` before `lr_scheduler.step()`". Such a message is its own answer: the sentence
that states what is wrong is the cause, the remedy sentence (quoted) is the fix, and the frame or
the exception's module names who raised it. Only a remedy that names a concrete action counts
(an argument, a value, a package, a call): "please report a bug", "check your installation",
"for debugging consider passing CUDA_LAUNCH_BLOCKING=1" and the like are no fix. A remedy that
another line of the paste contradicts (the keyword it asks for is already in the call that
raised) is not read. ``lookup`` tries this only where no family knows the message. Pure text work.

>>> e = REMEDY.explain("ValueError: Please specify `target_modules` in `peft_config`")
>>> e.fix
'The message says what to do: "Please specify `target_modules` in `peft_config`".'
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, answer, known, sentence
from torchwise.explain.paste import EXCEPTION, PREFIX, Paste, frames, user_frame

ACTION = (
    r"(?:call|use|set|pass|activate|install|specify|add|move|upgrade|update|downgrade|reinstall|remove|"
    r"provide|import|load|enable|disable|switch|convert|wrap|put|change|rename|replace|register|"
    r"define|return|select|choose|initiali[sz]e|cast|create|build|construct|increase|decrease|reduce|"
    r"lower|run\s+`)"
)
# The same actions as a message's "Try increasing ...", "Consider using ..." writes them.
GERUND = (
    r"(?:calling|using|setting|passing|installing|specifying|adding|moving|upgrading|updating|downgrading|"
    r"reinstalling|removing|providing|importing|loading|enabling|disabling|switching|converting|wrapping|"
    r"changing|replacing|registering|casting|increasing|decreasing|reducing|lowering)"
)
# A remedy clause: "you must use ...", "Please install ...", "To use X, set ...", "set `k=v` to
# remove this error", "Use `x` instead", "Did you mean `y`?"; up to the end of its sentence.
REMEDY_PATTERN = (
    rf"(?:\b(?:[Yy]ou (?:should|must|need to|have to|will need to|are required to)|[Pp]lease|[Tt]ry (?:to )?)\s+"
    rf"(?:(?:first|also|either|instead|explicitly|always|probably)\s+)?{ACTION}\b"
    rf"|\b[Tt]o (?:use|enable|run|load|avoid|fix|remove|resolve)\b[^,.\n]{{3,80}}, (?:please )?"
    rf"(?:you (?:must|should|need to) )?{ACTION}\b"
    r"|\b[Ss]et (?:the (?:option|argument|parameter|flag) )?`[^`\n]+`[^.\n]{0,40}\bto "
    r"(?:remove|fix|avoid|resolve|silence) this"
    r"|\b(?:[Uu]se|[Cc]all|[Pp]ass) `?[\w.]+(?:\([^()\n]*\))*(?:\.\w+(?:\([^()\n]*\))*)*`? instead\b"
    # a replacement offered, not ordered: "You can use the `on_train_epoch_end` hook instead"
    rf"|\b[Yy]ou (?:can|could|may) (?:also )?{ACTION}\b[^.\n]{{0,60}}\binstead\b"
    r"|\b(?:deprecated|removed|renamed)\b[^.\n]{0,40}\bin favou?r of `?[\w.]+`?"
    r"|\b[Mm]ake sure (?:that )?you have `?[\w.-]+`? installed"
    rf"|\b[Mm]ake sure to\s+{ACTION}\b"
    r"|\bDid you mean:? [`'\"][\w.]+[`'\"]\?"
    r"|\brequires [\w .-]{2,40}: `?pip install [\w\[\]=<>.-]+`?"
    r"|\b[Rr]un:? `?(?:python -m )?pip install [\w\[\]=<>.'-]+(?: -U| --upgrade)?`?"
    r"|\brequires the [\w-]+ library but it was not found in your environment"
    # round 8: "Try increasing `x`", "Consider using `y`",
    # "the easiest solution will be to downgrade to 'numpy<2'", dynamo's "Hint: Enable ... with `k = v`"
    rf"|\b(?:[Tt]ry|[Cc]onsider)\s+{GERUND}\b"
    rf"|\b[Tt]he (?:easiest |simplest |quickest )?(?:solution|fix|workaround) (?:is|will be|would be) to\s+{ACTION}\b"
    rf"|^\s*(?:Hint|HINT|Tip|TIP):\s+(?i:{ACTION})\b)"
    r"[^\n]*?(?:[.!?](?=\s)|(?=[\"”])|$)"  # to the sentence's end, or the quote a paste closes
)
# Not a fix: debugging aids, pointers to docs, bug reports, "check ..." without an action.
VAGUE = re.compile(
    r"report|\bissue\b|\bbug\b|debug|CUDA_LAUNCH_BLOCKING|_DSA\b|AMD_SERIALIZE|anomaly|"
    r"TORCH_LOGS|VERBOSE|stack ?trace|more (?:information|details|info)|documentation|\bdocs\b|"
    r"refer to|contact|suppress|ignore th|try again|to see\b|to find\b|th(?:is|ese) warnings?|file an? ",
    re.IGNORECASE,
)
# Remedies that fix the symptom and lose the data: torch's "use Module.to_empty()" for meta tensors
# leaves the weights uninitialised, while the threads that hit it had weights never loaded (a model
# dispatched with device_map or offloaded, or built on the meta device); quoting it would mislead.
MISLEADING = re.compile(r"to_empty\(\)")
# A concrete object of the action: code in backticks or quotes, an identifier with _ . = (,
# a package to install, a dtype or version.
CONCRETE = re.compile(
    r"`[^`]+`|'[^'\s][^']*'|\"[^\"]+\"|\b[A-Za-z]\w*[_.=(]\w|\.\w+\(|\b(?:re)?install\s+[A-Za-z][\w-]+|\bpip install\b"
    r"|\bthe [\w-]+ (?:parameter|argument|option|flag|keyword|library)\b|\b(?:b?float|int)\d+\b|[<>=]=\s*\d"
)
# Exceptions only Python itself raises with a suggestion ("name 'x' is not defined. Did you mean ...").
PYTHON_OWN = ("NameError", "UnboundLocalError", "SyntaxError", "IndentationError")
KEYWORD = re.compile(r"`?(\w+)\s*=\s*([\w.'\"]+)`?")
PACKAGE_IN_PATH = re.compile(r"(?:site|dist)-packages[\\/]+([A-Za-z_]\w*)|^([a-z_]\w*)[\\/]\w")


def _remedy(match: re.Match[str]) -> str:
    return match.group(0).strip().rstrip(".“”\"' ")


def _distribution(library: str) -> str:
    """The pip name of a library as a message names it (``SentencePiece``, ``PyTorch``)."""
    return {"pytorch": "torch", "tensorflow": "tensorflow", "scikit-learn": "scikit-learn"}.get(
        library.lower(), library.lower())


def _message_start(match: re.Match[str], text: str) -> int | None:
    """Where the message holding the remedy starts: its exception line, found going up from the
    remedy without crossing a blank line or a frame; or the quoted line itself where the paste
    quotes a message without one (a warning copied into a question). None: not a message."""
    paste = Paste(text)
    number = paste.line_number(match.start())
    for back in range(number, max(-1, number - 8), -1):
        kind, line = paste.kinds[back], paste.line_at(paste.starts[back])
        if kind == "error":
            return paste.starts[back]
        if kind == "frame" or not line.strip():
            break
    line = paste.line_at(match.start())
    if re.search(r"\w(?:Error|Exception|Warning):\s", line[: match.start() - paste.starts[number]]):
        return paste.starts[number]  # a log's prefixed line: "... | ERROR | stderr | ValueError: ..."
    if not any(kind == "error" for kind in paste.kinds) and re.search(r"[“”「」]", line):
        return paste.starts[number]
    return None


def _keyword_lines(keyword: str, value: str, text: str, message: str) -> tuple[list[str], list[str]]:
    """Code lines of the paste outside the message that pass ``keyword`` with ``value``, and call
    lines of the same kind that do not."""
    has, lacks = [], []
    for raw in text.split("\n"):
        line = PREFIX.sub("", raw).strip()
        if not line or line in message or EXCEPTION.search(line) or "(" not in line:
            continue
        if re.search(rf"\b{keyword}\s*=\s*{re.escape(value)}", line):
            has.append(line)
        elif re.search(r"\w+\s*=\s*[\w.]+\(.*\)\s*(?:\.\w+\(.*\))?$", line):
            lacks.append(line)
    return has, lacks


INSTALL = re.compile(r"\binstall\s+(?:-\S+\s+)*'?([A-Za-z][\w-]*)|\brequires the ([\w-]+) library")


def _installed_in_paste(name: str, text: str, message: str) -> bool:
    """The paste shows ``name`` installed: a pip list row, ``name==1.2``, pip show's "Name: name"."""
    rest = text.replace(message, "")
    return bool(re.search(rf"(?im)^\s*(?:Name:\s*)?{re.escape(name)}(?:\s+\d|\s*==\s*\d|\s*$)", rest)
                or re.search(rf"(?i)\b{re.escape(name)}==\d", rest))


def _contradicted(match: re.Match[str], text: str) -> bool:
    """The remedy asks to install a package the paste shows installed, or asks for ``k=v`` and
    the call that raised already passes it (or every call the paste shows does)."""
    install = INSTALL.search(match.group(0))
    start = _message_start(match, text) or 0
    upgrade = re.search(r"--upgrade|\s-U\b|>=", match.group(0))  # installed but too old: no contradiction
    if install and not upgrade and _installed_in_paste(_distribution(install.group(1) or install.group(2)), text,
                                       text[start : match.end()]):
        return True
    keyword = KEYWORD.search(match.group(0))
    frame = user_frame(text, match.start())
    if keyword is None or frame is None:
        return False
    return bool(re.search(rf"\b{keyword.group(1)}\s*=\s*{re.escape(keyword.group(2))}", frame.source))


# Python's own spelling guess after a missing name or attribute (3.10+): a fix only for a typo.
GUESS = re.compile(r"(module '[\w.]+' )?has no attribute '(\w+)'|name '(\w+)' is not defined")


def _spelling_guess_misleads(match: re.Match[str], text: str) -> bool:
    """"Did you mean: 'np'?" is Python's nearest name, not a remedy, where the name asked for is too
    short to be a misspelling ('nn' is one letter from 'np': an import is missing), differs from the
    guess only in case, or is a module's attribute (another release of the module has the name: the
    guess is a different function)."""
    if not match.group(0).startswith("Did you mean"):
        return False
    line = text[text.rfind("\n", 0, match.start()) + 1 : match.start()]
    asked = list(GUESS.finditer(line))
    if not asked:
        return False
    module, attribute, name = asked[-1].groups()
    guess = re.search(r"[`'\"]([\w.]+)[`'\"]", match.group(0))
    # 'trainer' -> 'Trainer': the class where an instance was meant (never created), not a typo
    same_letters = bool(guess) and guess.group(1).lower() == (attribute or name).lower()
    return bool(module) or len(attribute or name) < 4 or same_letters


# "If you tried to load a PyTorch model from a TF 2.0 checkpoint, please set from_tf=True": advice for
# a case the message guesses at (what the user meant to do), not one it found.
GUESSED_CASE = re.compile(
    r"\bIf you (?:tried|were trying|are trying|want(?:ed)?|meant|intend(?:ed)?)\b(?:[^.!?]|\.(?!\s))*$"
)


def _if_you_tried(match: re.Match[str], text: str) -> bool:
    return bool(GUESSED_CASE.search(text[max(0, match.start() - 200) : match.start()]))


def _applies(match: re.Match[str], text: str) -> bool:
    clause = match.group(0)
    if VAGUE.search(clause) or MISLEADING.search(clause) or not CONCRETE.search(clause):
        return False
    if _spelling_guess_misleads(match, text) or _if_you_tried(match, text):
        return False
    return _message_start(match, text) is not None and not _contradicted(match, text)


def _raiser(match: re.Match[str], text: str, message: str) -> str:
    """The library that raised: the installed package of the frame above, the exception's own
    module (``pytorch_lightning.utilities.exceptions.X``), or a path the message names."""
    inside = [frame for start, frame in frames(text) if start < match.start() and frame.in_library]
    found = PACKAGE_IN_PATH.search(inside[-1].file) if inside else None
    if found:
        return found.group(1) or found.group(2)
    qualified = re.match(r"\s*[*`]*([a-z_]\w*)\.(?:[\w]+\.)*\w*(?:Error|Exception)\b", message)
    if qualified:
        return qualified.group(1)
    installed = re.findall(r"(?:site|dist)-packages[\\/]+([A-Za-z_]\w*)", text[: match.start()])
    if installed:  # a frame a traceback printed in a form not read as one (IPython 7's "path in f(...)")
        return installed[-1]
    path = re.search(r"(?<![\w/\\.~-])([a-z_]\w*)/[\w/]+\.py\b", text)
    return path.group(1) if path else "the library"


def _build(last: re.Match[str], text: str) -> Explanation:
    start = _message_start(last, text) or 0
    # the message's first remedy is its main one; a later one ("Alternatively, ...") is a fallback
    found = [m for m in REMEDY.regex.finditer(text, start, last.end()) if _applies(m, text)
             and _message_start(m, text) == start]
    match = found[0] if found else last
    message = text[start : match.end()]
    first = message.split("\n", 1)[0]
    head = EXCEPTION.search(first) or re.search(r"(?:[\w.]+\.)?\w*(?:Error|Exception|Warning):\s", first)
    exception = head.group(0).split(":", 1)[0].strip(" *`").rsplit(".", 1)[-1] if head else ""
    body = re.sub(r"\s+", " ", message[head.end() if head else 0 : match.start() - start]).strip(" “”")
    body = re.sub(r"\s*\b(?:HINT|Hint|NOTE|Note|TIP|Tip):?\s*$", "", body)  # the label of the remedy that follows
    remedy = _remedy(match)
    raiser = "Python" if exception in PYTHON_OWN else _raiser(match, text, message)
    warning = exception.endswith("Warning")
    sentences = [part for part in re.split(r"(?<=[.!?])\s+", body) if part.strip()]
    if sentences and not re.search(r"[.!?:]$", sentences[-1]):  # the remedy ends this sentence
        sentences[-1] = f"{sentences[-1]} {remedy}"
    stated = [part for part in sentences if not VAGUE.search(part) and not re.match(r"(?i)please check", part)][:2]
    if stated:
        cause = f"The message from {raiser} says: \"{' '.join(stated).rstrip(':')}\""
    else:
        cause = f"The call into {raiser} lacks what its message asks for ({exception or 'the message'})."
    guess = re.match(r"\s*(Perhaps [^\n]+?[.!?])(?=\s|$)", text[match.end():])
    if guess:  # the message's own guess at the cause, right after its remedy
        cause = f"{sentence(cause)} {guess.group(1)}"
    if warning:
        cause += " It is a warning: the run goes on, but the message says the code does it wrong."
    fix = f'The message says what to do: "{remedy}".'
    if match is not last and _remedy(last) != remedy:
        fix += f' Or, as it also says: "{_remedy(last)}".'
    library = re.search(r"requires the ([\w-]+) library but it was not found", remedy)
    if library:
        fix = f"Install it in the environment that runs the code: pip install {_distribution(library.group(1))}."
    package = INSTALL.search(remedy)
    if package and not library and not re.search(r"--upgrade|\s-U\b|>=", remedy):
        name = _distribution(package.group(1) or package.group(2))
        module = name.replace("-", "_")
        # round 8: threads with "requires accelerate: pip install accelerate" mostly had it installed
        fix += (
            f" If {name} is installed already, the check also fails when importing it fails or when it is"
            f' older than the caller needs: python -c "import {module}; print({module}.__version__)"'
            f" in the same environment shows which; then pip install -U {name}."
        )
    example = re.match(r"\s*((?:For example|For instance|E\.g\.|e\.g\.)[,:]?\s[^\n]+)", text[match.end():])
    if example:
        fix += f' Its example: "{example.group(1).strip()}".'
    keyword = KEYWORD.search(remedy)
    if keyword:
        has, lacks = _keyword_lines(keyword.group(1), keyword.group(2), text, message)
        if has and lacks:
            fix += (
                f" The paste passes it in `{has[0]}` but not in `{lacks[-1]}`: each call takes its own"
                f" {keyword.group(1)}, so pass it there too."
            )
    kind = "A warning" if warning else "An error"
    return answer(
        title=f"{kind} from {raiser} that states its own remedy",
        meaning=f"{raiser} stopped at a condition it checks and names the fix in its message.",
        cause=sentence(cause),
        fix=fix,
    )


REMEDY = known("stated-remedy", REMEDY_PATTERN, _build, re.MULTILINE, generic=True, when=_applies)
KNOWN = [REMEDY]
