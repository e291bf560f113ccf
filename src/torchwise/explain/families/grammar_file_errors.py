"""A file the script looks for and does not find: ``[Errno 2] No such file or directory: 'data/train/1.png'``.

The operating system's message quotes the path as the program built it, and the path's own shape
says where to look: a relative path (``data/train.txt``) is resolved against the directory the
script was started from, not the script's folder; a path that still holds a placeholder
(``/path/to/dataset``, ``<your_dir>``) is a README's example never filled in; an absolute path is
data never downloaded or prepared there, or a setting that points elsewhere; and a line that writes
(``open(p, 'w')``, a save) names a folder that was never created. The frames say who
opened it (the user's line that built the path is quoted). A bare program name (``'ffmpeg'``, run
through subprocess) is a program that is not installed, not a file, and is left alone; checkpoint
files are ``checkpoint-path``'s.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, told_apart
from torchwise.explain.paste import frames, user_frame

NOT_FOUND = r"(?:FileNotFoundError|OSError|IOError): \[Errno 2\] No such file or directory: u?'([^'\n]+)'"
PLACEHOLDER = re.compile(r"path/to|/your[_ /-]|<[^>]+>|\byour_\w+|xxx|\{[a-z_]*\}", re.IGNORECASE)
# A line that writes: open(..., 'w'), a save or dump call.
WRITES = re.compile(
    r"""\bopen\(.*,\s*(?:mode\s*=\s*)?['"][wax]b?\+?['"]|\.save\(|savefig\(|imwrite\(|\.to_csv\(|\.dump\(|np\.save"""
)
ABSOLUTE = re.compile(r"^(?:/|~|[A-Za-z]:[\\/]|\\\\)")


def _file_missing(match: re.Match[str], text: str) -> Explanation | None:
    path = match.group(1)
    program = any("subprocess" in frame.file for _, frame in frames(text[: match.start()]))
    if program or not re.search(r"[\\/]|\.\w{1,5}$", path):
        return None  # a program name run through subprocess is a program that is not installed
    frame = user_frame(text, match.start())
    where = f" ({frame.place}: {frame.source})" if frame else ""
    folder = re.split(r"[\\/](?=[^\\/]*$)", path)[0] if re.search(r"[\\/]", path) else "."
    writing = any(WRITES.search(f.source) for _, f in frames(text[: match.start()])[-2:])
    if writing:
        cause = (
            f"The program writes {path}, and its folder {folder} does not exist: writing a file creates no"
            " folders (an output or log directory the script expects to exist, or a setting naming another one)."
        )
        fix = f"Create the folder first: os.makedirs({folder!r}, exist_ok=True) before the write (mkdir -p {folder})."
    elif PLACEHOLDER.search(path):
        cause = (
            f"The path still holds a placeholder ({path}): an example path from the README or a config file"
            " that was copied without putting the real location in."
        )
        fix = "Replace the placeholder with the real path (in the config file or on the command line)."
    elif not ABSOLUTE.search(path):
        cause = (
            f"{path} is a relative path, so it is looked up from the directory the script was started from, not"
            " from the script's own folder: the command ran from another directory than the one the project"
            " expects (a notebook, an IDE, a launcher script), or the data was not put under that folder."
        )
        fix = (
            "Run the command from the project's root folder (where the README runs it), or pass an absolute"
            f" path; check with ls {folder} that the data is there."
        )
    else:
        cause = (
            f"Nothing is at {path}: the data was never downloaded or prepared into {folder} (the README's data"
            " step), it was put elsewhere or under another name, or the setting the path is built from points to"
            " another machine's folder."
        )
        fix = f"Check with ls {folder}; download or prepare the data there, or point the data setting at where it is."
    return answer(
        title=f"No file at {path}{where}",
        meaning=f"The program opened {path}{where}, and the operating system found no such file or directory.",
        cause=cause,
        fix=fix,
    )


KNOWN: list[KnownError] = [
    told_apart("file-not-found", NOT_FOUND, _file_missing, generic=True),
]
