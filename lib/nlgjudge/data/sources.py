"""Locating dataset files: the data directory first, then the public online source.

Resolution order for every dataset (see each dataset's PROVENANCE in the data mirror):

1. ``<data_dir>/<folder>/<file>`` where ``data_dir`` is the explicit argument, else
   :func:`nlgjudge.config.data_dir` (environment variable ``NLGJUDGE_DATA_DIR``);
2. the public online copy through ``datasets.load_dataset(hub_id, config)[split]``, when one
   exists (it needs internet; offline it fails fast and is reported, never hangs);
3. otherwise :class:`~nlgjudge.data.base.DataNotFoundError`, whose message names the dataset,
   every place that was tried, and how to fix it.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from nlgjudge import config
from nlgjudge.data.base import DataNotFoundError, DataValidationError
from nlgjudge.config import expand_path

#: Seconds to wait for the hub's TCP port before declaring it unreachable. Without this probe
#: ``datasets`` retries for ~25 s when there is no network.
HUB_PROBE_TIMEOUT_S = 3.0

_OFFLINE_ENV_VARS = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")


@dataclass(frozen=True)
class LocalFiles:
    """Where a dataset lives inside a data directory: ``<data_dir>/<folder>/<file>``."""

    folder: str
    files: tuple[str, ...]

    def paths(self, root: Path) -> dict[str, Path]:
        """Paths of the files under ``root``, keyed by their names relative to the folder."""
        return {name: root / self.folder / name for name in self.files}


@dataclass(frozen=True)
class OnlineSource:
    """A public copy reachable with ``datasets.load_dataset(hub_id, config)[split]``."""

    hub_id: str
    config: str | None
    split: str

    def describe(self) -> str:
        """The exact call, for messages."""
        args = f'"{self.hub_id}"' + (f', "{self.config}"' if self.config else "")
        return f'datasets.load_dataset({args})["{self.split}"]'


@dataclass(frozen=True)
class Located:
    """Where a dataset was found: local file paths, or rows from the online source."""

    paths: dict[str, Path] | None = None
    rows: list[dict[str, Any]] | None = None
    online: OnlineSource | None = None

    def describe(self) -> str:
        """The files or the online call the data came from, for messages."""
        if self.paths is not None:
            paths = [str(path) for path in self.paths.values()]
            if len(paths) > 2:
                return f"{os.path.commonpath(paths)} ({len(paths)} files)"
            return ", ".join(paths)
        return self.online.describe() if self.online is not None else "(unknown)"


def resolve_data_dir(data_dir: str | os.PathLike[str] | None) -> tuple[Path | None, str]:
    """The data directory to read and a phrase saying where the setting came from."""
    if data_dir is not None:
        return expand_path(data_dir), "the data_dir argument"
    from_env = config.data_dir()
    if from_env is not None:
        return from_env, f"${config.DATA_DIR_ENV}"
    return None, ""


def offline_mode() -> bool:
    """True when the user asked the Hugging Face libraries to stay offline."""
    return any(os.environ.get(var, "").strip().lower() in {"1", "true", "yes", "on"} for var in _OFFLINE_ENV_VARS)


def hub_reachable(timeout_s: float = HUB_PROBE_TIMEOUT_S) -> tuple[bool, str]:
    """Whether a TCP connection to the hub endpoint opens within ``timeout_s``."""
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    parsed = urlparse(endpoint)
    host = parsed.hostname or "huggingface.co"
    port = parsed.port or (443 if parsed.scheme != "http" else 80)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True, ""
    except OSError as error:
        return False, f"cannot connect to {host}:{port} ({error})"


def load_hub_rows(source: OnlineSource) -> list[dict[str, Any]]:
    """Download one split with ``datasets`` and return its rows as plain dicts.

    With ``HF_HUB_OFFLINE``/``HF_DATASETS_OFFLINE`` set, only the local Hugging Face cache is
    consulted (fast failure when empty); otherwise the hub is probed first so that a machine
    without network fails in seconds instead of retrying for half a minute.
    """
    if not offline_mode():
        reachable, why = hub_reachable()
        if not reachable:
            raise ConnectionError(f"the hub is unreachable: {why}")
    import datasets  # heavy import, only on this fallback path

    loaded = datasets.load_dataset(source.hub_id, source.config)
    if source.split not in loaded:
        raise KeyError(f"split {source.split!r} not in {list(loaded)}")
    return [dict(row) for row in loaded[source.split]]


@dataclass(frozen=True)
class DatasetLocation:
    """Everything needed to find one dataset and to explain a failure to find it."""

    name: str
    title: str
    local: LocalFiles
    online: OnlineSource | None
    #: Where the files can be obtained by hand when there is no online source (or besides it).
    manual_source: str


def locate(location: DatasetLocation, data_dir: str | os.PathLike[str] | None) -> Located:
    """Find a dataset: the data directory, then the online source, else DataNotFoundError."""
    attempts: list[str] = []
    root, origin = resolve_data_dir(data_dir)
    if root is None:
        attempts.append(
            f"local: no data directory set (neither the data_dir argument nor ${config.DATA_DIR_ENV})"
        )
    else:
        paths = location.local.paths(root)
        missing = [path for path in paths.values() if not path.is_file()]
        if not missing:
            return Located(paths=paths)
        attempts.append(_describe_missing(root, origin, location.local, missing))

    if location.online is None:
        attempts.append("online: this dataset has no public online copy that can be loaded automatically")
    else:
        try:
            rows = load_hub_rows(location.online)
        except Exception as error:  # any failure (offline, missing, schema) is reported below
            attempts.append(
                f"online: {location.online.describe()} failed: {type(error).__name__}: {_first_line(error)}"
            )
        else:
            return Located(rows=rows, online=location.online)

    raise DataNotFoundError(_not_found_message(location, attempts))


def _describe_missing(root: Path, origin: str, local: LocalFiles, missing: Sequence[Path]) -> str:
    """One 'looked here' line, with a hint when the directory is off by one level."""
    if not root.is_dir():
        where = f"{root} (from {origin}) does not exist"
    else:
        names = ", ".join(str(path) for path in missing[:3])
        if len(missing) > 3:
            names += f" and {len(missing) - 3} more"
        where = f"missing {names} (data directory {root} from {origin})"
    hint = ""
    if all((root / name).is_file() for name in local.files):
        hint = f"; {root} looks like the {local.folder}/ folder itself: point at its parent instead"
    return f"local: {where}{hint}"


def _not_found_message(location: DatasetLocation, attempts: Sequence[str]) -> str:
    files = location.local.files
    wanted = ", ".join(f"{location.local.folder}/{name}" for name in files[:3])
    if len(files) > 3:
        wanted += f" and {len(files) - 3} more files in {location.local.folder}/"
    fixes = [
        f"set {config.DATA_DIR_ENV}=/path/to/data (or pass data_dir='/path/to/data') where "
        f"/path/to/data is a folder containing {wanted}"
    ]
    if location.online is not None:
        fixes.append(
            f"or connect to the internet (and unset {' / '.join(_OFFLINE_ENV_VARS)}) so that "
            f"{location.online.describe()} can download it"
        )
    fixes.append(f"the files come from: {location.manual_source}")
    tried = "\n  - ".join(attempts)
    how = "\n  - ".join(fixes)
    return (
        f"dataset {location.name!r} ({location.title}) was not found.\n"
        f"Looked in:\n  - {tried}\nHow to fix:\n  - {how}"
    )


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:300] if text else "(no message)"


def file_signature(paths: Mapping[str, Path]) -> tuple[tuple[str, str], ...]:
    """(path, sha256 of the content) of each file: a cache key that changes when a file does.

    Content rather than modification time, because two writes within the file system's clock
    resolution share a timestamp. Hashing the largest mirror file takes milliseconds.
    """
    signature = []
    for path in paths.values():
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        signature.append((str(path.resolve()), digest))
    return tuple(sorted(signature))


# --------------------------------------------------------------------------------------------
# Readers that turn syntax errors into DataValidationError naming the file and line


def read_json(path: Path) -> Any:
    """Parse a JSON file."""
    try:
        with path.open(encoding="utf-8") as handle:
            return json.load(handle)
    except json.JSONDecodeError as error:
        raise DataValidationError(f"{path}: not valid JSON at line {error.lineno}: {error.msg}") from None
    except UnicodeDecodeError as error:
        raise DataValidationError(f"{path}: not UTF-8 text ({error.reason})") from None


def read_jsonl(path: Path) -> list[tuple[int, Any]]:
    """Parse a JSON-lines file into (1-based line number, object) pairs; blank lines are errors."""
    records: list[tuple[int, Any]] = []
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            raise DataValidationError(f"{path}, line {number}: blank line")
        try:
            records.append((number, json.loads(line)))
        except json.JSONDecodeError as error:
            raise DataValidationError(f"{path}, line {number}: not valid JSON ({error.msg})") from None
    return records


def read_lines(path: Path) -> list[str]:
    """The lines of a text file split on '\\n' only (articles may contain other separators).

    A single trailing newline ends the last line; it does not start an extra empty one.
    """
    try:
        content = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise DataValidationError(f"{path}: not UTF-8 text ({error.reason})") from None
    if content.endswith("\n"):
        content = content[:-1]
    return content.split("\n") if content else []
