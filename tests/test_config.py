from __future__ import annotations

import pytest

from torchwise.config import load_config
from torchwise.errors import ConfigError


def test_overrides_are_typed_as_yaml_scalars(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("train:\n  epochs: 3\n")
    cfg = load_config(path, ["optim.lr=3e-4", "train.epochs=20", "train.clip_grad_norm=null",
                             "model.kwargs={hidden: [32, 16]}", "data.standardize=true"])
    assert cfg.optim.lr == 3e-4 and cfg.train.epochs == 20 and cfg.train.clip_grad_norm is None
    assert cfg.model.kwargs == {"hidden": [32, 16]} and cfg.data.standardize is True
    assert cfg.name == "c" and cfg.base_dir == tmp_path


@pytest.mark.parametrize(("override", "message", "hint"), [
    ("optim.lrr=1", "unknown config key 'optim.lrr'", "did you mean 'optim.lr'?"),
    ("train.batchsize=8", "unknown config key 'train.batchsize'", "did you mean 'train.batch_size'?"),
    ("lr=0.1", "unknown config key 'lr'", "did you mean 'optim.lr'?"),
])
def test_unknown_key_names_the_closest_valid_key(override, message, hint):
    with pytest.raises(ConfigError) as err:
        load_config(None, [override])
    assert err.value.message == message and err.value.hint == hint


def test_wrong_value_names_the_field_and_allowed_values():
    with pytest.raises(ConfigError) as err:
        load_config(None, ["train.precision=fp8"])
    assert "'train.precision'" in err.value.message
    assert "'auto', 'fp32', 'bf16' or 'fp16'" in err.value.message
    with pytest.raises(ConfigError) as err:
        load_config(None, ["train.batch_size=0"])
    assert "greater than or equal to 1" in err.value.message
    assert err.value.hint.startswith("train.batch_size: Samples per micro-batch")


def test_a_run_needs_epochs_or_steps():
    with pytest.raises(ConfigError, match="set train.epochs or train.max_steps"):
        load_config(None, ["train.epochs=null"])


def test_every_field_has_a_docstring():
    from pydantic import BaseModel

    from torchwise.config import RunConfig

    def walk(model: type[BaseModel], prefix: str):
        for name, field in model.model_fields.items():
            yield f"{prefix}{name}", field
            for arg in getattr(field.annotation, "__args__", (field.annotation,)):
                if isinstance(arg, type) and issubclass(arg, BaseModel):
                    yield from walk(arg, f"{prefix}{name}.")

    undocumented = [key for key, field in walk(RunConfig, "")
                    if not field.description and "." in key]
    assert undocumented == []
