"""Known errors of an audio backend that could not open or decode one file.

torchaudio (and speechbrain, which reads through it) hands each file to a backend library: SoX
("Error loading audio file: failed to open file x", "Error reading audio file: unknown length",
libsox's own "formats: can't open input file `x': ..."), FFmpeg ("Failed to open the input \\"x\\"")
or libsndfile ("Error opening 'x': Format not recognised"). Unlike ``audio-no-backend``, a backend
is there; it refused this file. Two causes, told apart by the paste: the path does not exist (the
OS's "No such file or directory"), or the backend cannot decode the format (a codec its build
lacks, such as Opus in many libsox builds, or an MP3 without a length header for old SoX).
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known

# libsndfile says "System error." for a path it cannot open at all
MISSING = re.compile(
    r"No such file or directory|does not exist|cannot find the (?:file|path)|System error", re.IGNORECASE
)


def _audio_open(match: re.Match[str], text: str) -> Explanation:
    path = next((group for group in match.groups() if group), "the file").strip("`'\" ")
    line_end = text.find("\n", match.end())
    rest = text[match.start() : line_end if line_end >= 0 else len(text)]
    extension = path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    if MISSING.search(rest):
        return answer(
            title=f"The audio file {path} does not exist at that path",
            meaning="The audio backend was asked to open a file, and the operating system found none there.",
            cause=(
                "The dataset's list (a CSV/JSON manifest, a folder scan done elsewhere) names a path"
                " that is not on this machine: relative to another working directory, a data folder"
                " moved or renamed, or a path with spaces or other characters mangled on the way."
            ),
            fix=(
                "Check the paths the dataset reads (os.path.exists on each entry of the manifest);"
                " write them absolute or relative to a data root the script joins, and rerun."
            ),
        )
    codec = f" (.{extension})" if extension else ""
    return answer(
        title=f"The audio backend could not open or decode {path}",
        meaning=(
            "torchaudio passed the file to its backend library (SoX, FFmpeg or libsndfile), which"
            f" refused it: the backend cannot read this format{codec}, or the file is not valid audio."
        ),
        cause=(
            "The backend in use has no decoder for this file: SoX builds often lack Opus and MP3"
            " (and old SoX refuses an MP3 whose length it cannot read), libsndfile before 1.1 has"
            " no MP3, FFmpeg only what its build includes; or the file is damaged or empty."
        ),
        fix=(
            "Load it with another backend: torchaudio.load(path, backend='ffmpeg') or"
            " backend='soundfile' (torchaudio.list_audio_backends() lists them), or decode it with"
            " soundfile/librosa; or convert the files to wav/flac once (ffmpeg -i in.opus out.wav)."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "audio-file-unreadable",
        r"Error (?:loading|reading) audio file: (?:failed to open file (\S+)|unknown length)"
        r"|Failed to open the input \"([^\"\n]+)\""
        r"|formats: can't open input file `([^'\n]+)'"
        r"|Error opening '([^'\n]+\.(?:wav|flac|mp3|ogg|opus|m4a|aac|wma|aiff?))'",
        _audio_open,
        re.IGNORECASE,
    ),
]
