"""Errors raised while resolving or loading a model."""

from __future__ import annotations


class ModelError(RuntimeError):
    """Base class of the model registry's errors."""


class UnknownModelError(ModelError, ValueError):
    """A name that is neither a packaged short name, a local folder nor a hub id."""


class ChecksumMismatchError(ModelError):
    """Assembled weights whose sha256 differs from the published one."""


class MissingPackageError(ModelError, ImportError):
    """A packaged model whose carrier packages are not installed."""
