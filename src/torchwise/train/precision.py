"""Device choice, autocast and the fp16 GradScaler."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import torch

from torchwise.env.precision import pick_precision
from torchwise.errors import ConfigError

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def pick_device(requested: str) -> torch.device:
    """``auto`` takes CUDA, then MPS, then CPU; an explicit device must exist."""
    if requested == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    if requested == "cuda" and not torch.cuda.is_available():
        raise ConfigError("train.device=cuda but torch sees no CUDA device",
                          hint="run `torchwise doctor` to see why, or set train.device=auto")
    if requested == "mps" and not torch.backends.mps.is_available():
        raise ConfigError("train.device=mps but MPS is not available",
                          hint="MPS needs macOS 12.3+ on Apple silicon; set train.device=auto")
    return torch.device(requested)


@dataclass(frozen=True)
class Precision:
    """The resolved precision of a run: its name, autocast dtype, and whether a GradScaler is used."""

    name: str
    device_type: str

    @classmethod
    def resolve(cls, requested: str, device: torch.device) -> Precision:
        if requested == "auto":
            bf16 = device.type == "cuda" and torch.cuda.is_bf16_supported()
            return cls(pick_precision(device.type, bf16), device.type)
        if requested == "fp16" and device.type == "cpu":
            raise ConfigError("fp16 autocast is for GPUs; on CPU it is slow and needs no scaler",
                              hint="use train.precision=bf16 or fp32 on CPU")
        return cls(requested, device.type)

    @property
    def uses_scaler(self) -> bool:
        # fp16 has a narrow range: small gradients underflow without loss scaling. bf16 does not.
        return self.name == "fp16"

    def autocast(self) -> contextlib.AbstractContextManager:
        if self.name == "fp32":
            return contextlib.nullcontext()
        return torch.autocast(self.device_type, dtype=DTYPES[self.name])

    def make_scaler(self) -> torch.amp.GradScaler:
        return torch.amp.GradScaler(self.device_type, enabled=self.uses_scaler)
