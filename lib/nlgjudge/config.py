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


def expand_user(text: str) -> str:
    """:func:`expand_path` for a text that stays a text ("" stays "", where ``Path("")`` is the current folder)."""
    return str(expand_path(text)) if text.startswith("~") else text


def expand_path(value: str | os.PathLike[str]) -> Path:
    """``value`` with a leading ``~`` or ``~user`` expanded (``os.path.expanduser``, which never raises, where
    ``Path.expanduser`` raises a bare RuntimeError for an unknown user); a ``~user`` this machine does not
    know is a :class:`ValueError` that says so, instead of a folder literally named ``~user`` made in
    the working folder."""
    text = os.fspath(value)
    expanded = os.path.expanduser(text)
    if expanded.startswith("~") and text.startswith("~"):
        user = text[1:].split(os.sep, 1)[0]
        raise ValueError(f"{text[:200]}: there is no user {user[:60]!r} on this machine, so '~{user[:60]}' names no home "
                         "folder; write the path in full (or start it with ~/ for your own home)")
    return Path(expanded)


def data_dir(override: str | os.PathLike[str] | None = None) -> Path | None:
    """The directory holding the public datasets (one sub-folder per dataset), or None if unset."""
    value = override if override is not None else os.environ.get(DATA_DIR_ENV)
    if value is None or str(value) == "":
        return None
    return expand_path(value)


def cache_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The per-user cache (converted model weights, the output cache database). Created on demand."""
    if override is not None:
        path = Path(override)
    elif os.environ.get(CACHE_DIR_ENV):
        path = Path(os.environ[CACHE_DIR_ENV])
    else:
        base = os.environ.get("XDG_CACHE_HOME") or (Path.home() / ".cache")
        path = Path(base) / "nlgjudge"
    path = expand_path(path)
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
        if value.rstrip().endswith(("/", os.sep)):  # a folder's name: the database would take the folder's name
            raise ValueError(f"{OUTPUT_CACHE_ENV}={value[:80]!r} names a folder (it ends with a slash), but the output "
                             "cache is a database file; set it to a file, e.g. "
                             f"{OUTPUT_CACHE_ENV}={value.rstrip().rstrip('/' + os.sep)}/outputs.sqlite")
        path = expand_path(value)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path
    return cache_dir() / default_name


#: Where a chapter run writes the CSV files its page offers (set by :mod:`nlgjudge.book` for the
#: kernel, read by :func:`nlgjudge.display.download_link`); kept here so that the book's command
#: line does not import pandas to learn its name.
DOWNLOADS_ENV = "NLGJUDGE_DOWNLOADS_DIR"
