"""Locations the library reads from and writes to, each overridable by environment variable.

The library knows nothing of any particular machine: the data directory comes from
``NLGJUDGE_DATA_DIR`` (or an explicit argument), and the user cache from ``NLGJUDGE_CACHE_DIR``
(default: ``$XDG_CACHE_HOME/nlgjudge`` or ``~/.cache/nlgjudge``).
"""

from __future__ import annotations

import os
from pathlib import Path

DATA_DIR_ENV = "NLGJUDGE_DATA_DIR"
CACHE_DIR_ENV = "NLGJUDGE_CACHE_DIR"
OUTPUTS_DIR_ENV = "NLGJUDGE_OUTPUTS_DIR"
OUTPUT_CACHE_ENV = "NLGJUDGE_OUTPUT_CACHE"

#: Root of the repository checkout when the package is installed in editable mode.
REPO_ROOT = Path(__file__).resolve().parents[2]


def data_dir(override: str | os.PathLike[str] | None = None) -> Path | None:
    """The directory holding the public datasets (one sub-folder per dataset), or None if unset."""
    value = override if override is not None else os.environ.get(DATA_DIR_ENV)
    if value is None or str(value) == "":
        return None
    return Path(value).expanduser()


def cache_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The per-user cache (converted model weights, the output cache database). Created on demand."""
    if override is not None:
        path = Path(override)
    elif os.environ.get(CACHE_DIR_ENV):
        path = Path(os.environ[CACHE_DIR_ENV])
    else:
        base = os.environ.get("XDG_CACHE_HOME") or (Path.home() / ".cache")
        path = Path(base) / "nlgjudge"
    path = path.expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path


def outputs_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """Where released (committed) model outputs live: ``data/outputs`` in the checkout."""
    if override is not None:
        return Path(override)
    if os.environ.get(OUTPUTS_DIR_ENV):
        return Path(os.environ[OUTPUTS_DIR_ENV])
    return REPO_ROOT / "data" / "outputs"


def output_cache_path(default_name: str = "outputs.sqlite") -> Path:
    """The output cache database: ``NLGJUDGE_OUTPUT_CACHE`` if set, else ``cache_dir()/<default_name>``.

    Tests and CI point it at a temporary file so that they never touch a user's cache, while the
    converted model weights (large, slow to make) stay in the shared ``cache_dir()``.
    """
    value = os.environ.get(OUTPUT_CACHE_ENV)
    if value:
        if value.strip() == ":memory:" or value.lower().startswith("file:"):  # SQLite's own names, no file on disk
            raise ValueError(f"{OUTPUT_CACHE_ENV}={value[:80]!r} is an SQLite name, not a file: the output cache keeps "
                             "the judgments between runs, so it must be a file on disk; set it to a path such as "
                             "~/.cache/nlgjudge/outputs.sqlite")
        path = Path(value).expanduser()
        path.parent.mkdir(parents=True, exist_ok=True)
        return path
    return cache_dir() / default_name


#: Where a chapter run writes the CSV files its page offers (set by :mod:`nlgjudge.book` for the
#: kernel, read by :func:`nlgjudge.display.download_link`); kept here so that the book's command
#: line does not import pandas to learn its name.
DOWNLOADS_ENV = "NLGJUDGE_DOWNLOADS_DIR"
