"""Known errors of NumPy releases that break code or compiled packages written for older ones.

Two breaks say so in their own words:

- NumPy 2.0 changed its C ABI: a compiled package (torch before 2.3, torchvision, opencv, pandas,
  scipy, ...) built against NumPy 1.x cannot load its NumPy part under 2.x. NumPy prints "A module
  that was compiled using NumPy 1.x cannot be run in NumPy 2.x.y", and the package then fails with
  "numpy.core.multiarray failed to import", "_ARRAY_API not found" or torch's "Numpy is not available".
- NumPy 1.24 removed the aliases deprecated in 1.20 (``np.float``, ``np.int``, ``np.bool``,
  ``np.object``, ``np.str``, ``np.long``, ``np.complex``, ``np.unicode``): code written earlier
  raises ``module 'numpy' has no attribute 'float'``.
"""

from __future__ import annotations

import re

from torchwise.explain.explanation import Explanation, KnownError, answer, known

ALIASES = {
    "float": "float (or np.float64)",
    "int": "int (or np.int64)",
    "bool": "bool (or np.bool_)",
    "object": "object",
    "str": "str",
    "long": "int (or np.int64)",
    "complex": "complex (or np.complex128)",
    "unicode": "str",
    "typeDict": "np.sctypeDict",
}


def _numpy2_abi(match: re.Match[str], text: str) -> Explanation:
    version = re.search(r"cannot be run in\s+NumPy (\d+\.\d+(?:\.\d+)?)", text)
    installed = f"NumPy {version.group(1)}" if version else "NumPy 2"
    return answer(
        title=f"A compiled package built for NumPy 1.x was loaded under {installed}",
        meaning=(
            "A package with compiled code that uses NumPy's C API (torch before 2.3, torchvision,"
            " opencv, pandas, scipy, numba...) was built against NumPy 1.x; NumPy 2 changed that"
            " ABI, so the package's NumPy part cannot load."
        ),
        cause=(
            f"The environment has {installed} (pulled in by an upgrade or another package), while"
            " one of the compiled packages (NumPy's warning above the error names it in its traceback)"
            " predates NumPy 2; torch reports it as 'Numpy is not available'."
        ),
        fix=(
            "Pin NumPy below 2 in that environment: pip install 'numpy<2' (and keep it in the"
            " requirements), or upgrade the package that was built for 1.x to a release built for"
            " NumPy 2 (torch 2.3+, opencv 4.10+, a recent pandas/scipy)."
        ),
    )


def _removed_alias(match: re.Match[str], text: str) -> Explanation:
    name = match.group(1)
    instead = ALIASES[name]
    return answer(
        title=f"np.{name} was removed in NumPy 1.24",
        meaning=(
            f"np.{name} was an alias of a Python built-in type, deprecated in NumPy 1.20 and removed"
            " in 1.24; this NumPy has no such name."
        ),
        cause=(
            f"The code (or a package it uses: the frame above the error says which) was written for"
            f" NumPy before 1.24 and uses np.{name}; a newer NumPy is installed."
        ),
        fix=(
            f"Write {instead} where the code says np.{name}; where it is a package's code, upgrade"
            " that package, or pin NumPy below 1.24 (pip install 'numpy<1.24') for code that cannot change."
        ),
    )


KNOWN: list[KnownError] = [
    known(
        "numpy2-abi",
        r"compiled using NumPy 1\.x cannot be run in\s+NumPy \d"
        # torch before 2.3 under NumPy 2 cannot read NumPy's scalars either
        r"|numpy\.core\.multiarray failed to import|_ARRAY_API not found|\bNumpy is not available"
        r"|Could not infer dtype of numpy\.\w+",
        _numpy2_abi,
    ),
    known(
        "numpy-alias-removed",
        r"module 'numpy' has no attribute '(float|int|bool|object|str|long|complex|unicode|typeDict)'",
        _removed_alias,
    ),
]
