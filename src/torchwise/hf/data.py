"""Hugging Face datasets as torchwise trains them: the rows' ``label`` column is the target, rows
of different lengths are padded by the tokenizer's own collator, and a YAML source reads local
files (csv, json, parquet) or a ``save_to_disk`` folder and tokenises them.

Nothing here downloads: a tokenizer is a local folder (``save_pretrained`` output, or a
``tokenizer.json``), and the files are local.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from torch.utils.data import Dataset

from torchwise.errors import ConfigError, DataError

#: File types the `hf` source reads through `datasets` (the loader `datasets.load_dataset` names).
FILE_KINDS = {".csv": "csv", ".json": "json", ".jsonl": "json", ".parquet": "parquet"}


def is_hf_data(data: Any) -> bool:
    """A `datasets` Dataset, DatasetDict or IterableDataset (checked without importing datasets)."""
    return type(data).__module__.split(".")[0] == "datasets"


class HFRows(Dataset):
    """An HF map-style Dataset read row by row (``__getitems__`` as one slice), with the collator
    that pads its rows; `torchwise.data.loaders.collate_for` finds it."""

    def __init__(self, rows: Any, *, collate_fn: Callable[[list[Any]], Any] | None) -> None:
        self.rows = rows
        self.collate_fn = collate_fn

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> Any:
        return self.rows[int(index)]

    def __getitems__(self, indices: list[int]) -> list[Any]:
        columns = self.rows[list(indices)]  # one read: {column: [values per row]}
        return [dict(zip(columns, values, strict=True)) for values in zip(*columns.values(), strict=True)]


def hf_datasets(train: Any, val: Any, *, tokenizer: Any = None, model: Any = None) -> tuple[Any, Any]:
    """torch-readable (train, val) for HF data: a DatasetDict gives its ``train`` split and (when
    ``val`` is None) its ``validation`` or ``test`` split; ``label`` becomes ``labels``; columns
    that ``model.forward`` does not take (texts, ids) are dropped, as HF's Trainer drops them."""
    if type(train).__name__ == "DatasetDict":
        if "train" not in train:
            raise DataError(f"this DatasetDict has the splits {sorted(train)} and no 'train'",
                            hint="pass the split to train on: fit(model, dataset_dict['<split>'])")
        if val is None:
            val = next((train[name] for name in ("validation", "test") if name in train), None)
        train = train["train"]
    return (adapt(train, tokenizer=tokenizer, model=model),
            adapt(val, tokenizer=tokenizer, model=model) if val is not None and is_hf_data(val) else val)


def adapt(rows: Any, *, tokenizer: Any = None, model: Any = None, keep: list[str] | None = None) -> Any:
    """One HF dataset as a torch Dataset (map-style) or IterableDataset (a stream), its columns
    those the model takes, formatted to torch."""
    names = list(rows.column_names or [])
    if "label" in names and "labels" not in names:
        rows = rows.rename_column("label", "labels")
        names = [("labels" if n == "label" else n) for n in names]
    wanted = keep if keep is not None else _forward_columns(model, names)
    dropped = [n for n in names if n not in wanted]
    if dropped:
        rows = rows.remove_columns(dropped)
    collate_fn = padding_collator(tokenizer, rows) if tokenizer is not None else None
    if collate_fn is None:
        rows = rows.with_format("torch")
    if type(rows).__name__ == "IterableDataset":
        return rows  # a stream: torchwise's stream loader reads it (it is a torch IterableDataset)
    return HFRows(rows, collate_fn=collate_fn)


def _forward_columns(model: Any, names: list[str]) -> list[str]:
    if model is None:
        return names
    try:
        parameters = inspect.signature(model.forward).parameters.values()
    except (TypeError, ValueError):
        return names
    # The named parameters, as HF's Trainer reads them (transformers' forwards also take **kwargs).
    takes = {p.name for p in parameters if p.kind not in (inspect.Parameter.VAR_KEYWORD,
                                                          inspect.Parameter.VAR_POSITIONAL)}
    return [n for n in names if n in takes or n == "labels"] if takes else names


def padding_collator(tokenizer: Any, rows: Any) -> Callable[[list[Any]], Any]:
    """transformers' collator for these rows: per-token ``labels`` (token classification, causal
    LM) padded with -100 by `DataCollatorForTokenClassification`, else `DataCollatorWithPadding`."""
    from transformers import DataCollatorForTokenClassification, DataCollatorWithPadding

    features = getattr(rows, "features", None) or {}
    label = features.get("labels")
    per_token = label is not None and type(label).__name__ in ("Sequence", "List", "LargeList")
    if per_token:
        return DataCollatorForTokenClassification(tokenizer, label_pad_token_id=-100, return_tensors="pt")
    return DataCollatorWithPadding(tokenizer, return_tensors="pt")


def load_tokenizer(path: Path) -> Any:
    """A tokenizer from a local folder (``save_pretrained`` output, or one holding tokenizer.json)."""
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    if not path.exists():
        raise DataError(f"tokenizer folder {str(path)!r} does not exist",
                        hint="set data.tokenizer to a folder written by tokenizer.save_pretrained() "
                             "(relative paths start at the config file's folder)")
    if (path / "tokenizer_config.json").is_file():
        return AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    file = path / "tokenizer.json" if path.is_dir() else path
    if not file.is_file():
        raise DataError(f"{str(path)!r} holds no tokenizer_config.json or tokenizer.json",
                        hint="save the tokenizer with tokenizer.save_pretrained(folder)")
    return PreTrainedTokenizerFast(tokenizer_file=str(file), pad_token="[PAD]", unk_token="[UNK]")


def load_hf_source(path: Path, *, tokenizer_path: Path | None, text_column: str, label_column: str,
                   max_length: int | None) -> Any:
    """The `hf` data source: local files or a ``save_to_disk`` folder, tokenised when a tokenizer is
    given, as a torch Dataset whose rows are the tokenizer's outputs and ``labels``."""
    import datasets

    if path.is_dir():
        rows = datasets.load_from_disk(str(path))
    elif path.suffix in FILE_KINDS:
        rows = datasets.load_dataset(FILE_KINDS[path.suffix], data_files=str(path), split="train")
    else:
        raise ConfigError(f"data source 'hf' reads {', '.join(FILE_KINDS)} files or a save_to_disk folder; "
                          f"{str(path)!r} is neither",
                          hint="point data.path at such a file or folder")
    if type(rows).__name__ == "DatasetDict":
        rows = rows["train"] if "train" in rows else next(iter(rows.values()))
    names = list(rows.column_names)
    if label_column not in names:
        raise DataError(f"the data has no label column {label_column!r}; its columns are {names}",
                        hint="set data.label_column")
    if tokenizer_path is None:
        return adapt(rows.rename_column(label_column, "labels") if label_column != "labels" else rows)
    if text_column not in names:
        raise DataError(f"the data has no text column {text_column!r}; its columns are {names}",
                        hint="set data.text_column")
    tokenizer = load_tokenizer(tokenizer_path)
    labels = rows[label_column]
    classes = sorted(set(labels)) if labels and isinstance(labels[0], str) else None

    def tokenize(batch: dict[str, list]) -> dict[str, Any]:
        encoded = tokenizer(batch[text_column], truncation=max_length is not None, max_length=max_length)
        encoded["labels"] = [classes.index(v) for v in batch[label_column]] if classes else batch[label_column]
        return encoded

    tokenized = rows.map(tokenize, batched=True, remove_columns=names)
    dataset = adapt(tokenized, tokenizer=tokenizer, keep=list(tokenized.column_names))
    if classes is not None:
        dataset.classes = classes
    return dataset
