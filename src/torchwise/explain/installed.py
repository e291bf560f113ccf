"""What the installed packages hold, read from their files without importing them.

A version mismatch names a package and a name (``module 'X' has no attribute 'Y'``, ``No module
named 'X.sub'``); whether the installed X has that name answers it. Importing X to look would
be slow and could fail or run its code, so this reads the package's files: the folder that
``importlib.util.find_spec`` finds for the top-level package (which imports nothing), its
version from ``importlib.metadata``, and a text search of the module's own file for a top-level
``def Y``, ``class Y``, ``Y =`` or an import of Y. Every answer is cached; where the module adds
names a text search cannot see (``from x import *``, a module ``__getattr__``) the search says so.

>>> pip_name("cv2"), pip_name("PIL"), pip_name("sklearn")
('opencv-python', 'pillow', 'scikit-learn')
"""

from __future__ import annotations

import difflib
import importlib.metadata
import importlib.util
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

# Import names whose pip distribution has another name: the ones users meet in training code.
WELL_KNOWN = {
    "cv2": "opencv-python",
    "PIL": "pillow",
    "sklearn": "scikit-learn",
    "skimage": "scikit-image",
    "yaml": "PyYAML",
    "google.protobuf": "protobuf",
    "tensorboardX": "tensorboardX",
    "bs4": "beautifulsoup4",
    "Crypto": "pycryptodome",
    "dateutil": "python-dateutil",
    "dotenv": "python-dotenv",
    "attr": "attrs",
    "fitz": "PyMuPDF",
    "sentencepiece": "sentencepiece",
    "pytorch_lightning": "pytorch-lightning",
    "lightning": "lightning",
    "mmcv": "mmcv",
    "detectron2": "detectron2 (built from source: see its install guide)",
    "apex": "apex (NVIDIA's, built from source: github.com/NVIDIA/apex; pip's 'apex' is another package)",
    "wandb": "wandb",
    "einops": "einops",
    "timm": "timm",
    "accelerate": "accelerate",
    "transformers": "transformers",
    "datasets": "datasets",
    "peft": "peft",
    "diffusers": "diffusers",
    "bitsandbytes": "bitsandbytes",
    "xformers": "xformers",
    "flash_attn": "flash-attn",
    "onnxruntime": "onnxruntime (or onnxruntime-gpu)",
    "onnx": "onnx",
    "tensorboard": "tensorboard",
    "matplotlib": "matplotlib",
    "pandas": "pandas",
    "pyarrow": "pyarrow",
    "scipy": "scipy",
    "tqdm": "tqdm",
    "torchvision": "torchvision",
    "torchaudio": "torchaudio",
    "torchtext": "torchtext",
    "torch_geometric": "torch-geometric",
    "deepspeed": "deepspeed",
    "safetensors": "safetensors",
    "huggingface_hub": "huggingface-hub",
    "tokenizers": "tokenizers",
    "soundfile": "soundfile",
    "librosa": "librosa",
    "nltk": "nltk",
    "spacy": "spacy",
    "omegaconf": "omegaconf",
    "hydra": "hydra-core",
}


def pip_name(module: str) -> str | None:
    """The pip distribution that provides import name ``module`` (its top-level package), from
    the well-known table, else from the installed distributions' own records."""
    top = module.split(".")[0]
    if module in WELL_KNOWN:
        return WELL_KNOWN[module]
    if top in WELL_KNOWN:
        return WELL_KNOWN[top]
    found = _installed_distributions().get(top)
    return found[0] if found else None


@cache
def _installed_distributions() -> dict[str, list[str]]:
    try:
        return dict(importlib.metadata.packages_distributions())
    except Exception:  # a broken distribution's metadata must not break explain
        return {}


@dataclass(frozen=True)
class Package:
    """An installed top-level package: its import name, folder and version."""

    name: str
    folder: Path
    version: str | None


@cache
def package(name: str) -> Package | None:
    """The installed top-level package ``name`` (a folder), without importing it."""
    top = name.split(".")[0]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations)))
    distribution = (_installed_distributions().get(top) or [top])[0]
    try:
        version: str | None = importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        version = None
    return Package(top, folder, version)


def has_submodule(found: Package, dotted: str) -> bool:
    """Whether ``found`` holds module ``dotted`` (``transformers.models.llama``) as a file or folder."""
    parts = dotted.split(".")[1:]
    path = found.folder.joinpath(*parts) if parts else found.folder
    return path.is_dir() or path.with_suffix(".py").is_file() or any(path.parent.glob(path.name + ".*.so"))


@dataclass(frozen=True)
class Lookup:
    """Whether an installed module defines a name at its top level, and its closest names."""

    module: str  # the module file read, relative to the package folder
    defines: bool
    closest: tuple[str, ...]
    complete: bool  # False where the module adds names a text search cannot see (star imports, __getattr__)


def module_file(found: Package, dotted: str) -> Path | None:
    parts = dotted.split(".")[1:]
    path = found.folder.joinpath(*parts)
    for candidate in (path / "__init__.py", path.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


@cache
def look_up(dotted: str, attribute: str) -> Lookup | None:
    """Whether the installed module ``dotted`` (``numpy``, ``torch.optim.lr_scheduler``) defines
    ``attribute`` at its top level: a ``def``, a ``class``, an assignment, an import of that name,
    or the name quoted in ``__all__`` or a lazy-import table. None where the module is not
    installed here or its file is too large to read quickly."""
    found = package(dotted)
    path = module_file(found, dotted) if found else None
    if found is None or path is None or path.stat().st_size > 2_000_000:
        return None
    source = path.read_text(errors="replace")
    name = re.escape(attribute)
    imported = [
        word
        for block in re.findall(r"^\s*from\s+\S+\s+import\s+(\([^)]*\)|[^\n]+)", source, re.MULTILINE)
        for word in re.findall(r"(?<![\w.])(\w+)(?:\s+as\s+(\w+))?", re.sub(r"#[^\n]*", "", block))
        for word in word if word and word != "as"
    ]
    defined = [name for pair in re.findall(r"^(?:def|class)\s+(\w+)|^(\w+)\s*[:=]", source, re.MULTILINE)
               for name in pair if name]
    names = sorted(set(imported) | set(defined))
    defines = attribute in names or bool(re.search(rf"^import\s+[^\n]*\bas\s+{name}\b", source, re.MULTILINE))
    hidden = bool(re.search(r"^\s*from\s+\S+\s+import\s+\*|^\s*def __getattr__|_LazyModule|lazy_loader",
                            source, re.MULTILINE))
    closest = tuple(difflib.get_close_matches(attribute, names, n=3, cutoff=0.75))
    return Lookup(str(path.relative_to(found.folder)), defines, closest, not hidden)
