"""Model registry: packaged offline weights, local folders and hub ids behind one lazy handle."""

from nlgjudge.models.errors import ChecksumMismatchError, MissingPackageError, ModelError, UnknownModelError
from nlgjudge.models.handle import ModelHandle, list_packaged_models, resolve_model
from nlgjudge.models.packaged import PACKAGED_MODELS, PackagedModel, gguf_path, judge_names, model_title

__all__ = [
    "PACKAGED_MODELS",
    "ChecksumMismatchError",
    "MissingPackageError",
    "ModelError",
    "ModelHandle",
    "PackagedModel",
    "UnknownModelError",
    "gguf_path",
    "judge_names",
    "model_title",
    "list_packaged_models",
    "resolve_model",
]
