"""llama-cpp-python itself: the release this runtime is pinned to, importing it, threads, logs.

What it guarantees: a clear :class:`BackendUnavailableError` (an ``ImportError`` saying how to
install the package or use torch) instead of a bare import failure; a thread count that is a whole
number >= 1; llama.cpp's load chatter kept off stderr (errors still shown); and the fingerprint
suffix that keeps llama.cpp's cache keys apart from torch's (:data:`FINGERPRINT_SUFFIX`, appended by
``Judge.fingerprint``; no key depends on this package's file names or source).

**Threads.** ``n_threads`` (generation) and ``n_threads_batch`` (prompts) are the cores this
process may really use, ``len(os.sched_getaffinity(0))``, unless overridden by the ``threads``
argument (``Judge(..., threads=n)``) or the ``NLGJUDGE_THREADS`` environment variable. llama.cpp's
worker threads spin-wait between operations: with other busy processes on the same cores its
prompt throughput falls steeply (measured 165 -> 42 tokens/s on 2 shared cores), so on a shared
machine use fewer threads than cores, or run one model process at a time. The thread count does
not change the results.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from typing import Any

#: The llama-cpp-python release this backend is written and tested against (environment.yml).
PINNED_VERSION = "0.3.36"
THREADS_ENV = "NLGJUDGE_THREADS"
#: Fingerprint suffix of llama.cpp cache keys (torch keys have none, so they stay as they were).
FINGERPRINT_SUFFIX = "|runtime=llama.cpp"


class BackendUnavailableError(ImportError):
    """The llama.cpp backend was chosen but llama-cpp-python is not importable."""


def install_hint() -> str:
    return (
        "Install it with `make install-backend` (or `python .ci/install.py --with-backend`, or "
        f"`pip install llama-cpp-python=={PINNED_VERSION}`; it compiles llama.cpp from source, about 7 minutes "
        "on 2 cores), or create the judge with backend=\"torch\" (transformers, weights de-quantised to fp32)."
    )


def is_available() -> bool:
    """True when llama-cpp-python is installed (checked without importing it)."""
    try:
        return importlib.util.find_spec("llama_cpp") is not None
    except (ValueError, ImportError):  # blocked in sys.modules (a test), or a broken install
        return False


def import_llama_cpp() -> Any:
    """The ``llama_cpp`` module, or :class:`BackendUnavailableError` saying how to get it."""
    try:
        import llama_cpp
    except ImportError as err:
        raise BackendUnavailableError(
            f"The llama.cpp backend needs the package llama-cpp-python, which cannot be imported here ({err}). "
            + install_hint()
        ) from err
    return llama_cpp


def version() -> str | None:
    """The installed llama-cpp-python version (None when it is not installed)."""
    from importlib import metadata

    try:
        return metadata.version("llama-cpp-python")
    except metadata.PackageNotFoundError:
        return None


def thread_count(threads: int | None = None) -> int:
    """Threads for llama.cpp: ``threads``, else ``$NLGJUDGE_THREADS``, else the usable cores."""
    source = "threads"
    if threads is None:
        env = os.environ.get(THREADS_ENV, "").strip()
        if env:
            source = THREADS_ENV
            try:
                threads = int(env)
            except ValueError:
                raise ValueError(f"{THREADS_ENV}={env!r} is not a whole number of threads; set e.g. {THREADS_ENV}=2") from None
        else:
            threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
        raise ValueError(f"{source} must be a whole number >= 1, got {threads!r}")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if threads > MAX_THREADS_PER_CORE * cores:  # llama.cpp crashes with tens of thousands, and spins with too many
        raise ValueError(f"{source}={threads} is far more threads than this machine's {cores} usable core"
                         f"{'s' if cores != 1 else ''}; set it to at most {MAX_THREADS_PER_CORE * cores} (the cores' "
                         f"number, {cores}, is usually fastest)")
    return threads


#: More llama.cpp threads than this many per usable core is refused (more than the cores only slows it down).
MAX_THREADS_PER_CORE = 8


_LOG_CALLBACK: Any = None


def _quiet_llama_cpp() -> None:
    """llama.cpp logs every load step to stderr: print its errors only (everything when the
    ``llama-cpp-python`` logger is set to INFO or DEBUG). llama-cpp-python's own callback maps
    ggml's log levels with an older numbering (its errors would count as debug messages), so
    ours reads them as ggml 0.25 defines them: 1 debug, 2 info, 3 warning, 4 error, 5 continued."""
    global _LOG_CALLBACK
    if _LOG_CALLBACK is not None:
        return
    import ctypes
    import sys

    import llama_cpp

    logger = logging.getLogger("llama-cpp-python")
    last = [0]

    @llama_cpp.llama_log_callback
    def callback(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        level = last[0] if level == 5 else level
        last[0] = level
        verbose = logger.level != logging.NOTSET and logger.level <= logging.INFO
        if level >= 4 or verbose:
            print(text.decode("utf-8", errors="replace"), end="", file=sys.stderr, flush=True)

    _LOG_CALLBACK = callback  # keep a reference: llama.cpp calls it for the life of the process
    llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))
