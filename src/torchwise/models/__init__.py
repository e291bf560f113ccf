"""A few built-in models for examples and tests, and `build_model` for config-named ones."""

from torchwise.models.builtin import build_model, with_options

__all__ = ["build_model", "with_options"]
