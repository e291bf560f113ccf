"""Known errors of image files that a dataset could not read.

The image libraries say which of three things happened: OpenCV's ``cv2.imread`` returns None for a
path it cannot read (no exception), and the next cv2 call asserts on the empty image
(``(-215:Assertion failed) !_src.empty() in function 'cvtColor'``, ``!ssize.empty()`` in resize);
Pillow's ``cannot identify image file`` is a file that is not an image it can decode (an HTML
error page or Git LFS pointer saved as .jpg, a format it lacks, a zero-byte file); ``image file is
truncated`` is an image cut short (an interrupted download or copy).
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known
from torchwise.explain.paste import at_user_line


def _cv2_empty(match: re.Match[str], text: str) -> Explanation:
    function = match.group(1)
    at = at_user_line(text, match.start())
    return answer(
        title=f"OpenCV's {function} got an empty image: cv2.imread read nothing{at}",
        meaning=(
            f"cv2.{function} asserts that its input image is not empty; the image it got is empty,"
            " which is what cv2.imread returns (None) for a file it could not read: it raises no error."
        ),
        cause=(
            "The path passed to cv2.imread does not exist or cannot be read: a wrong data root or"
            " relative path, a file name from a list that is not on disk, non-ASCII characters in"
            " the path (on Windows), or a file that is not an image OpenCV can decode."
        ),
        fix=(
            "Check the read where it happens: img = cv2.imread(path); if img is None: raise"
            " FileNotFoundError(path); print the failing path and fix the data root or the list"
            " (on Windows with non-ASCII paths: cv2.imdecode(np.fromfile(path, np.uint8), cv2.IMREAD_COLOR))."
        ),
    )


def _not_an_image(match: re.Match[str], text: str) -> Explanation:
    path = match.group(1) or "the file"
    return answer(
        title=f"Pillow cannot identify {path} as an image",
        meaning="PIL.Image.open read the file's first bytes and found no image format it can decode.",
        cause=(
            "The file is not an image: an HTML error page or a Git LFS pointer saved with an image"
            " name (a failed download, git clone without git lfs pull), a zero-byte or corrupt file,"
            " a non-image file in the image folder, or a format this Pillow lacks (HEIC, AVIF)."
        ),
        fix=(
            "Look at the file (file path; head -c 200 path); download the data again (git lfs pull"
            " for LFS files), remove files that are not images from the folder, or filter them when"
            " the dataset lists its files (try Image.open(p).verify() once over the list)."
        ),
    )


def _truncated(match: re.Match[str], text: str) -> Explanation:
    return answer(
        title="An image file is cut short (truncated)",
        meaning="Pillow decoded an image whose data ends before the image does.",
        cause="One or more image files were not downloaded or copied completely (or were damaged on disk).",
        fix=(
            "Find and replace the broken files (decode each once: Image.open(p).load()); or let"
            " Pillow read what there is: from PIL import ImageFile; ImageFile.LOAD_TRUNCATED_IMAGES = True"
            " at the top of the dataset module."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "opencv-empty-image",
        r"\(-215:?\s*(?:Assertion failed)?\) !_?s(?:rc|size)\.empty\(\) in function '(?:cv::)?(\w+)'",
        _cv2_empty,
    ),
    known("pil-not-an-image", r"cannot identify image file (?:'([^'\n]+)'|<[^>\n]+>)?", _not_an_image),
    known("pil-truncated-image", r"image file is truncated", _truncated),
]
