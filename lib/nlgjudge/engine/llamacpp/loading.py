"""Loading: one llama.cpp model per GGUF file and thread count, its tokenizer, its stop tokens.

What it guarantees: judges that use the same file with the same threads share one
:class:`~nlgjudge.engine.llamacpp.context.LlamaCppModel` (and so its prompt cache); the tokenizer
is the torch path's Hugging Face tokenizer, token for token, so both runtimes see the same ids;
stop tokens are the GGUF's and the tokenizer's end-of-sequence ids, as torch reads them.
"""

from __future__ import annotations

import functools
import os
import threading
import weakref
from pathlib import Path
from typing import Any

from nlgjudge.engine.llamacpp.backend import BackendUnavailableError, thread_count
from nlgjudge.engine.llamacpp.context import LlamaCppModel


_MODELS: weakref.WeakValueDictionary[tuple[str, int], LlamaCppModel] = weakref.WeakValueDictionary()
_MODELS_LOCK = threading.Lock()


def require_working_runtime() -> None:
    """Raise :class:`BackendUnavailableError` naming the rebuild command when the installed llama.cpp
    runtime fails its smoke check on this CPU, so that its crash is never what a user sees first.
    The check runs in a child process once per CPU and library (its answer kept), once per process here."""
    global _RUNTIME_CHECKED
    if _RUNTIME_CHECKED:
        return
    from nlgjudge.engine.llamacpp import health

    result = health.check_runtime()
    if result.checked and not result.ok:
        raise BackendUnavailableError(health.failure_message(result))
    _RUNTIME_CHECKED = True


_RUNTIME_CHECKED = False


def load_model(path: str | os.PathLike[str], threads: int | None = None) -> LlamaCppModel:
    """A :class:`LlamaCppModel` for ``path``, shared by the judges that use it with the same threads
    (after the runtime's smoke check: :func:`require_working_runtime`)."""
    require_working_runtime()
    n_threads = thread_count(threads)
    key = (str(Path(path).resolve()), n_threads)
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is None:
            model = LlamaCppModel(path, threads=n_threads)
            _MODELS[key] = model
        return model


@functools.lru_cache(maxsize=8)
def load_tokenizer(name: str, gguf: str) -> Any:
    """The Hugging Face tokenizer of a packaged GGUF model: the torch path's, token for token.

    Taken from the torch path's converted folder when it exists, else read from the GGUF file
    once and saved under ``config.cache_dir()/tokenizers/<name>`` (atomic rename).
    """
    import shutil
    import tempfile

    from transformers import AutoTokenizer

    from nlgjudge import config
    from nlgjudge.models.handle import _CONVERTED_MARK, converted_dir
    from nlgjudge.models.packaged import PACKAGED_MODELS

    spec = PACKAGED_MODELS[name]
    for folder in (converted_dir(spec), config.cache_dir() / "tokenizers" / spec.name):
        mark = folder / _CONVERTED_MARK
        if mark.is_file() and mark.read_text().strip() == spec.sha256:
            return AutoTokenizer.from_pretrained(str(folder))
    path = Path(gguf)
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    target = config.cache_dir() / "tokenizers" / spec.name
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{spec.name}-") as work:
        out = Path(work) / "tokenizer"
        tokenizer.save_pretrained(str(out))
        (out / _CONVERTED_MARK).write_text(spec.sha256 + "\n")
        if target.exists():
            shutil.rmtree(target, ignore_errors=True)
        try:
            os.replace(out, target)
        except OSError:  # another process won the race: its copy is the same
            pass
    return tokenizer


def stop_ids(model: LlamaCppModel, tokenizer: Any) -> set[int]:
    """End-of-sequence ids: the GGUF's and the tokenizer's (the torch path reads the same two)."""
    ids = set(model.eos_ids)
    value = getattr(tokenizer, "eos_token_id", None)
    if isinstance(value, int):
        ids.add(value)
    return ids
