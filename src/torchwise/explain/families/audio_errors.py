"""Known errors of torchaudio's I/O: no backend that can read or write the file.

torchaudio does not decode audio itself; it dispatches to a backend library (FFmpeg, SoundFile
or SoX) that must be installed next to it. The message names the file and the format, and the
file's extension says which backend could read it.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _no_backend(match: re.Match[str], text: str) -> Explanation:
    uri = (match.group(1) or "").strip()
    # some torchaudio releases raise the message unformatted: "handle uri {uri} and format {format}"
    uri = "the file" if not uri or uri.startswith("{") else uri
    extension = uri.rsplit(".", 1)[-1].lower() if "." in uri.rsplit("/", 1)[-1] else ""
    needs = (
        "FFmpeg's shared libraries (mp3, m4a, aac and most compressed formats are read through"
        " FFmpeg or, for mp3 with libsndfile >= 1.1, SoundFile)"
        if extension in ("mp3", "m4a", "aac", "mp4", "ogg", "opus", "webm")
        else "SoundFile (wav, flac, ogg) or FFmpeg"
    )
    return answer(
        title=f"torchaudio has no audio backend that can open {uri}",
        meaning=(
            "torchaudio.load/save dispatch to a backend library (FFmpeg, SoundFile or SoX); none"
            f" of the installed ones accepts this file{f' (.{extension})' if extension else ''}."
        ),
        cause=(
            f"No backend library is installed for it: this file needs {needs}. pip install"
            " torchaudio brings none of them (and SoX is not available on Windows)."
        ),
        fix=(
            "Install one and check that torchaudio sees it: pip install soundfile (wav/flac, and"
            " mp3 with a recent libsndfile) or FFmpeg's shared libraries (conda install -c"
            " conda-forge 'ffmpeg<7'); then torchaudio.list_audio_backends() must not be empty."
            " Or convert the file to wav first."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "audio-no-backend",
        # the uri is often elided in a paste ("handle uri... Error")
        r"Couldn't find appropriate backend to handle uri(?: (\S+?)(?: and format \w+)?\.?(?=\s|$)|\.\.\.)",
        _no_backend,
    ),
]
