"""The run configuration: typed pydantic models, read from YAML, with ``a.b=value`` overrides.

>>> cfg = load_config(None, ["optim.lr=3e-4", "train.epochs=2"])
>>> cfg.optim.lr, cfg.train.epochs
(0.0003, 2)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from torchwise.config_errors import config_error_from
from torchwise.errors import ConfigError


class _Section(BaseModel):
    # A typo in a key must be an error, not a silently ignored setting.
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class SourceConfig(_Section):
    source: str = "digits"
    """Where the samples come from: `digits`, `synthetic-regression`, `csv`, `npz`, `pt`, `hf` (local
    csv/json/parquet files or a save_to_disk folder read through Hugging Face `datasets`), or `target`."""
    path: Path | None = None
    """File to read for `csv`, `npz`, `pt` and `hf` sources (relative to the config file's folder)."""
    target: str | None = None
    """For `source: target`: a `package.module:factory` returning a torch Dataset."""
    kwargs: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments for the built-in source or the target factory."""
    target_column: str | None = None
    """CSV: the column holding the label or regression target (default: the last column)."""
    feature_columns: list[str] | None = None
    """CSV: the feature columns (default: every column but the target)."""
    x_key: str = "x"
    """npz / pt: the name of the feature array."""
    y_key: str = "y"
    """npz / pt: the name of the target array."""
    tokenizer: Path | None = None
    """`hf`: a local tokenizer folder (save_pretrained output, or one holding tokenizer.json)."""
    text_column: str = "text"
    """`hf`: the column of texts to tokenise."""
    label_column: str = "label"
    """`hf`: the column of labels (text labels become class indices in sorted order)."""
    max_length: int | None = Field(None, ge=1)
    """`hf`: truncate tokenised texts to this many tokens (default: the whole text)."""


class DataConfig(SourceConfig):
    val_fraction: float = Field(0.2, ge=0.0, lt=1.0)
    """Share of the training source held out for validation (seeded split); ignored when `val` is set."""
    val: SourceConfig | None = None
    """An explicit validation source instead of a split."""
    standardize: bool = False
    """Standardise features with mean/std computed on the training split only (stored with the run)."""
    shuffle: bool = True
    """Shuffle the training set every epoch (seeded)."""
    num_workers: int = Field(0, ge=0)
    """DataLoader worker processes (0 loads in the main process)."""
    pin_memory: bool | Literal["auto"] = "auto"
    """Pin host memory for faster copies; `auto` pins when training on CUDA."""
    persistent_workers: bool = True
    """Keep workers alive between epochs (only when num_workers > 0)."""


class LoraConfig(_Section):
    r: int = Field(8, ge=1)
    """The adapters' rank."""
    alpha: int = Field(16, ge=1)
    """LoRA's scaling numerator (the update is scaled by alpha / r)."""
    target_modules: list[str]
    """Names (or name suffixes) of the Linear layers to adapt, e.g. [query, value] for BERT."""
    dropout: float = Field(0.0, ge=0.0, lt=1.0)
    """Dropout on the adapters' input."""


class ModelConfig(_Section):
    name: Literal["linear", "mlp", "small-cnn"] | None = "mlp"
    """A built-in model; ignored when `target` is set."""
    target: str | None = None
    """A `package.module:name` returning an nn.Module (a class or a factory)."""
    kwargs: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments for the model (built-ins infer input and output sizes from the data)."""
    init_from: Path | None = None
    """Initial weights: a `.safetensors` or `.pt/.pth` file (read with weights_only=True)."""
    strict: bool = True
    """With `init_from`: missing, unexpected or mis-shaped keys are an error."""
    gradient_checkpointing: bool = False
    """Recompute activations in backward to save memory: the model's own
    `gradient_checkpointing_enable()` (transformers models); an error for a model without one."""
    lora: LoraConfig | None = None
    """Train LoRA adapters only (through `peft`): `{r: 8, alpha: 16, target_modules: [query, value]}`."""


class ObjectSpec(_Section):
    """A Python object named by its import path, built with keyword arguments."""

    target: str
    """`package.module:name` of a class (instantiated with `kwargs`) or a function (given `kwargs`)."""
    kwargs: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments for the class or function."""
    note: str | None = None
    """Written by fit() when this record cannot rebuild the object (a lambda, an instance's arguments)."""

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        # `loss: my_losses:focal` is the short form of `loss: {target: my_losses:focal}`.
        return {"target": value} if isinstance(value, str) else value


class TaskConfig(_Section):
    type: Literal["classification", "multilabel", "regression"] = "classification"
    """`classification`: cross-entropy and accuracy (logits [B, C], [B, C, d1, ...] or [B, T, C]);
    `multilabel`: BCE-with-logits on float 0/1 targets [B, K], exact-match accuracy and micro-F1;
    `regression`: MSE and MAE, any number of outputs."""
    loss: ObjectSpec | None = None
    """Your loss: `{target: package.module:name, kwargs: {...}}` (an nn.Module class or a function
    of (output, target)); it replaces the task's loss and the model's own `loss`."""
    metrics: dict[str, ObjectSpec] = Field(default_factory=dict)
    """More validation metrics by name (logged as `val_<name>`): a torchmetrics class or a function
    fn(output, target) -> value averaged over samples."""
    num_classes: int | None = Field(None, ge=2)
    """Classification: number of classes (default: inferred from the training labels)."""
    ignore_index: int = -100
    """Classification: the target value that the loss and accuracy skip (padding tokens, void pixels)."""
    class_weights: list[float] | None = None
    """Classification: a weight per class for the cross-entropy loss (rare classes weigh more)."""


class OptimConfig(_Section):
    name: Literal["sgd", "adam", "adamw"] = "adamw"
    """The optimizer (ignored when `target` is set)."""
    target: str | None = None
    """Another optimizer: `package.module:name` called as name(param_groups, lr=optim.lr, **kwargs),
    e.g. `torch.optim:RMSprop`."""
    kwargs: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments for `target`."""
    note: str | None = None
    """Written by fit() when the optimizer factory cannot be rebuilt from this record."""
    lr: float = Field(1e-3, gt=0)
    """Peak learning rate (the schedule scales it)."""
    weight_decay: float = Field(0.01, ge=0)
    """Weight decay, never applied to biases and normalisation weights."""
    momentum: float = Field(0.9, ge=0, lt=1)
    """SGD momentum."""
    nesterov: bool = False
    """SGD: Nesterov momentum."""
    betas: tuple[float, float] = (0.9, 0.999)
    """Adam/AdamW betas."""

    @model_validator(mode="after")
    def _nesterov_needs_momentum(self) -> OptimConfig:
        if self.nesterov and (self.name != "sgd" or self.momentum == 0):
            raise ValueError("optim.nesterov needs optim.name=sgd with optim.momentum > 0")
        return self
    lr_multipliers: dict[str, float] = Field(default_factory=dict)
    """Module-name glob -> LR multiplier, e.g. `{"layers.0*": 0.1}` for a smaller LR in early layers."""


class ScheduleConfig(_Section):
    name: Literal["constant", "step", "cosine", "warmup-cosine", "linear", "one-cycle"] = "warmup-cosine"
    """The LR schedule, stepped once per optimizer step (ignored when `target` is set)."""
    target: str | None = None
    """A torch LR scheduler: `package.module:name` called as name(optimizer, **kwargs) and stepped
    per optimizer step; `torch.optim.lr_scheduler:ReduceLROnPlateau` is stepped on train.monitor at
    each evaluation."""
    kwargs: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments for `target`."""
    note: str | None = None
    """Written by fit() when the scheduler factory cannot be rebuilt from this record."""
    warmup_fraction: float = Field(0.05, ge=0, lt=1)
    """warmup-cosine: share of all steps spent warming up linearly from 0."""
    warmup_steps: int | None = Field(None, ge=0)
    """warmup-cosine: warmup length in steps (overrides warmup_fraction)."""
    min_lr_ratio: float = Field(0.0, ge=0, le=1)
    """cosine / warmup-cosine / linear: the final LR as a share of the peak."""
    step_size: int = Field(1000, ge=1)
    """step: multiply the LR by gamma every step_size optimizer steps."""
    gamma: float = Field(0.1, gt=0)
    """step: the decay factor."""
    pct_start: float = Field(0.3, gt=0, lt=1)
    """one-cycle: share of steps spent rising to the peak."""


class TrainConfig(_Section):
    epochs: int | None = Field(10, ge=1)
    """Passes over the training data (the run stops at whichever of epochs/max_steps comes first)."""
    max_steps: int | None = Field(None, ge=1)
    """Optimizer steps to run."""
    batch_size: int = Field(64, ge=1)
    """Samples per micro-batch (per forward/backward)."""
    accumulate: int = Field(1, ge=1)
    """Micro-batches per optimizer step; the effective batch is batch_size * accumulate."""
    precision: Literal["auto", "fp32", "bf16", "fp16"] = "auto"
    """Autocast precision; `auto` picks bf16 on CUDA that supports it, fp16 on other CUDA, fp32 on CPU."""
    clip_grad_norm: float | None = Field(1.0, gt=0)
    """Clip the global gradient norm to this value (after unscaling); null disables clipping."""
    compile: bool = False
    """Wrap the model in torch.compile."""
    device: Literal["auto", "cpu", "cuda", "mps"] = "auto"
    """Where to train; `auto` takes CUDA, then MPS, then CPU."""
    seed: int = 0
    """Seeds python, numpy, torch, the data split, shuffling and the workers."""
    deterministic: bool = False
    """Also use deterministic algorithms (slower; exact repeats on GPU)."""
    eval_every: int | None = Field(None, ge=1)
    """Validate every N optimizer steps as well as at the end of every epoch."""
    monitor: str = "val_loss"
    """The metric that picks the best checkpoint and drives early stopping."""
    monitor_mode: Literal["auto", "min", "max"] = "auto"
    """Whether smaller or larger is better; `auto` reads it from the metric's name."""
    on_nonfinite: Literal["fail", "skip"] = "fail"
    """A NaN/inf loss or gradient norm: stop the run, or skip that step."""
    max_nonfinite_skips: int = Field(10, ge=1)
    """With on_nonfinite=skip: fail after this many skipped steps."""
    distributed: Literal["auto", "ddp", "fsdp", "none"] = "auto"
    """Under torchrun: `auto` is DDP with more than one process; `fsdp` shards with FSDP2; `none` ignores torchrun."""
    fsdp_blocks: list[str] = Field(default_factory=list)
    """distributed=fsdp: module class names (fnmatch) sharded one by one; empty: the top-level children."""
    collective_timeout_s: float = Field(600.0, gt=0)
    """Under torchrun: a collective waiting longer than this fails the run, naming the rank."""

    @model_validator(mode="after")
    def _needs_a_length(self) -> TrainConfig:
        if self.epochs is None and self.max_steps is None:
            raise ValueError("set train.epochs or train.max_steps, or the run never ends")
        return self


class CheckpointConfig(_Section):
    enabled: bool = True
    """Write checkpoints/last every epoch and checkpoints/best when the monitored metric improves."""
    every_n_steps: int | None = Field(None, ge=1)
    """Also write checkpoints/last every N optimizer steps."""
    keep_last_n: int = Field(0, ge=0)
    """Also keep the N most recent numbered checkpoints (checkpoints/step-000123)."""


class EarlyStopConfig(_Section):
    enabled: bool = False
    """Stop when the monitored metric (train.monitor) stops improving."""
    patience: int = Field(5, ge=1)
    """Evaluations without improvement before stopping."""
    min_delta: float = Field(0.0, ge=0)
    """The smallest change that counts as an improvement."""


class LogConfig(_Section):
    every_n_steps: int = Field(10, ge=1)
    """Read the loss (one host sync) and append a metrics line every N optimizer steps."""
    progress: Literal["auto", "bar", "plain", "off"] = "auto"
    """`auto`: a rich bar on a terminal, plain lines otherwise."""

    @field_validator("progress", mode="before")
    @classmethod
    def _yaml_off(cls, value: Any) -> Any:
        # YAML 1.1 reads a bare `off` as False; the user meant the word.
        return {False: "off", True: "auto"}.get(value, value) if isinstance(value, bool) else value
    tensorboard: bool = False
    """Also write TensorBoard scalars to the run folder (needs the `tensorboard` extra)."""
    mlflow: bool = False
    """Also log params, metrics and the run folder to MLflow (needs the `mlflow` extra)."""
    mlflow_uri: str | None = None
    """MLflow tracking URI; default: a local file store `mlruns/` beside the run folders."""
    mlflow_experiment: str = "torchwise"
    """The MLflow experiment the runs go to."""
    grad_stats_every: int | None = Field(50, ge=1)
    """Every N optimizer steps, log per-layer gradient norms, update/weight ratios and dead units
    (one extra device read on that step); null turns it off."""


class RunConfig(_Section):
    name: str | None = None
    """The run's name (folder under runs/); default: the config file's name."""
    data: DataConfig = Field(default_factory=DataConfig)
    model: ModelConfig = Field(default_factory=ModelConfig)
    task: TaskConfig = Field(default_factory=TaskConfig)
    optim: OptimConfig = Field(default_factory=OptimConfig)
    schedule: ScheduleConfig = Field(default_factory=ScheduleConfig)
    train: TrainConfig = Field(default_factory=TrainConfig)
    checkpoint: CheckpointConfig = Field(default_factory=CheckpointConfig)
    early_stop: EarlyStopConfig = Field(default_factory=EarlyStopConfig)
    log: LogConfig = Field(default_factory=LogConfig)
    base_dir: Path | None = None
    """The config file's folder: relative paths and targets are resolved against it (set on load)."""

    def resolve_path(self, path: Path) -> Path:
        """A path from the config, relative to the config file's folder."""
        return path if path.is_absolute() or self.base_dir is None else self.base_dir / path

    def to_yaml_dict(self) -> dict[str, Any]:
        return json.loads(self.model_dump_json())

    def trajectory(self) -> dict[str, Any]:
        """The settings that decide the sequence of weights; a resumed run must keep them.

        Left out: the run's length (resume may extend it), early stopping, logging, checkpoint
        cadence, the name and the folder, none of which change a step's result.
        """
        config = self.to_yaml_dict()
        for key in ("name", "base_dir", "log", "checkpoint", "early_stop"):
            config.pop(key, None)
        for key in ("epochs", "max_steps", "collective_timeout_s"):
            config["train"].pop(key, None)
        return config

    def config_hash(self) -> str:
        """sha256 of `trajectory`, as stored in checkpoints."""
        text = json.dumps(self.trajectory(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()


def load_config(
    path: Path | str | None,
    overrides: Sequence[str] = (),
    *,
    base: dict[str, Any] | None = None,
) -> RunConfig:
    """Read a YAML config (or start from ``base``/defaults) and apply ``key=value`` overrides.

    Values are parsed as YAML scalars, so ``train.epochs=20`` is an int and ``model.kwargs={hidden: [64]}``
    a mapping. Unknown keys name the closest valid key; bad values name the field and what it allows.
    """

    raw: dict[str, Any] = dict(base or {})
    base_dir: Path | None = None
    if path is not None:
        path = Path(path)
        if path.is_dir():
            found = sorted(p.name for p in path.glob("*.y*ml"))[:3]
            raise ConfigError(f"{str(path)!r} is a folder, not a config file",
                              hint=f"pass a YAML file in it ({', '.join(found)})" if found else
                              "pass the path of a YAML file, e.g. examples/digits.yaml")
        if not path.is_file():
            raise ConfigError(f"config file {str(path)!r} does not exist",
                              hint="pass the path of a YAML file, e.g. examples/digits.yaml")
        loaded = read_yaml(path)
        if loaded is None:  # empty, or only comments: training the defaults here would be a surprise
            raise ConfigError(f"{path} is empty",
                              hint="write the sections you want (data:, model:, train:); "
                                   "see examples/digits.yaml, or write {} to train every default")
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path} must hold a mapping of sections (data:, model:, ...)",
                              hint="see examples/digits.yaml for the shape")
        raw = loaded
        base_dir = path.resolve().parent
    for override in overrides:
        apply_override(raw, override)
    try:
        cfg = RunConfig.model_validate(raw)
    except ValidationError as err:
        raise config_error_from(err, RunConfig) from None
    if base_dir is not None and cfg.base_dir is None:
        cfg.base_dir = base_dir
        if cfg.name is None:
            cfg.name = path.stem if isinstance(path, Path) else None
    return cfg


def read_yaml(path: Path) -> Any:
    """The YAML document in ``path``; a syntax error names the file, line and column."""
    import yaml

    try:
        return yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
        problem = getattr(err, "problem", None) or str(err)
        context = getattr(err, "context", None)
        raise ConfigError(f"{where}: not valid YAML: {problem}" + (f" ({context})" if context else ""),
                          hint="check that line and the one above: indentation, colons, "
                               "closing brackets and quotes") from None


def apply_override(raw: dict[str, Any], override: str) -> None:
    """Set ``a.b.c=value`` in a nested dict, the value parsed as a YAML scalar."""
    import yaml

    key, sep, text = override.partition("=")
    if not sep or not key:
        raise ConfigError(f"override {override!r} is not of the form key=value",
                          hint="e.g. optim.lr=3e-4 train.epochs=20")
    try:
        value = yaml.safe_load(text) if text else None
    except yaml.YAMLError:
        value = text
    node = raw
    parts = key.split(".")
    for part in parts[:-1]:
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        elif not isinstance(child, dict):
            raise ConfigError(f"override {key!r}: {part!r} is a value, not a section",
                              hint=f"set {part} itself, e.g. {part}=...")
        node = child
    node[parts[-1]] = value
