"""Known errors of torchaudio's I/O: no backend that can read or write the file.

torchaudio does not decode audio itself; it dispatches to a backend library (FFmpeg, SoundFile
or SoX) that must be installed next to it. The message names the file and the format, and the
file's extension says which backend could read it.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known


def _no_backend(match: re.Match[str], text: str) -> Explanation:
    if match.group(2):  # set_audio_backend("soundfile") where the list lacks it
        return _backend_not_available(match.group(2), match.group(3))
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


# The library each backend name of torchaudio.set_audio_backend stands for, and how to get it.
BACKEND_LIBRARY = {
    "soundfile": ("the soundfile package", "pip install soundfile (conda install -c conda-forge pysoundfile)"),
    "sox": ("SoX (libsox)", "install SoX's library (not available on Windows: use soundfile there)"),
    "sox_io": ("SoX (libsox)", "install SoX's library (not available on Windows: use soundfile there)"),
    "ffmpeg": ("FFmpeg's shared libraries", "conda install -c conda-forge 'ffmpeg<7'"),
}


def _backend_not_available(backend: str, available: str) -> Explanation:
    """``Backend "soundfile" is not one of available backends: [...]``: torchaudio offers a backend
    only when its library imports; the list says which ones did."""
    available = available.strip()
    library, install = BACKEND_LIBRARY.get(backend.lower(), (f"the {backend} library", f"install {backend}"))
    offered = f"only {available}" if available else "none at all"
    return answer(
        title=f'torchaudio\'s "{backend}" backend is not available: {library} is not installed',
        meaning=(
            f"torchaudio.set_audio_backend({backend!r}) names a backend torchaudio did not find; it offers"
            f" a backend only when its library can be imported, and here it offers {offered}."
        ),
        cause=f"{library[:1].upper()}{library[1:]} is not installed: torchaudio does not bring it as a dependency.",
        fix=(
            f"Install it: {install}; then torchaudio.list_audio_backends() must list"
            f" {backend!r}. Or set a backend the list names."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "audio-no-backend",
        # the uri is often elided in a paste ("handle uri... Error")
        r"Couldn't find appropriate backend to handle uri(?: (\S+?)(?: and format \w+)?\.?(?=\s|$)|\.\.\.)"
        # torchaudio < 2's set_audio_backend naming a backend whose library is missing
        r"|Backend \"(\w+)\" is not one of available backends: \[([^\]]*)\]"
        # round 9: torchaudio 0.x-2.0's backend/no_backend.py, raised by load when no backend was found
        r"|No audio I/O backend is available",
        _no_backend,
    ),
]
