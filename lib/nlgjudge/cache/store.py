"""The persistent output cache: one SQLite file in WAL mode, shared safely by several processes.

Why these choices:

- **Content-addressed, write-once rows.** ``outputs.key`` is the PRIMARY KEY and every write is
  ``INSERT OR IGNORE``: an output can exist at most once, and writing it again (a resumed run, a second
  process that computed the same thing, a re-import) changes nothing. The first value stored wins.
- **One transaction per ``put_many``.** A batch is either fully stored or not at all, so a process
  killed with SIGKILL at any moment leaves only whole batches; the resumed run recomputes exactly the
  batches that did not commit.
- **WAL journal.** Readers never block the writer and vice versa; writers queue on the lock
  (``busy_timeout`` plus our own retry with back-off for the cases SQLite reports at once).
- **synchronous=NORMAL.** In WAL mode a committed transaction survives the death of the process (the
  WAL is in the OS page cache); only a power cut or kernel crash can lose the last commits, and never
  corrupts the file. Losing those commits only means recomputing them, so the fsync on every commit
  that FULL would add is not worth its cost for a cache.
- **Studies are a separate (study, key) table**, so one output can belong to several studies (chapters)
  and each study can be exported on its own.
- **Connections are per process and opened lazily.** Nothing happens at import or construction; a
  connection inherited through ``fork`` is never used (nor closed) in the child, which opens its own.
"""

from __future__ import annotations

import os
import random
import sqlite3
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from nlgjudge.cache.canonical import canonical_json, loads_strict
from nlgjudge.cache.keys import is_valid_key, request_key

__all__ = [
    "CacheEntry",
    "OutputCache",
    "CacheError",
    "CacheBusyError",
    "ImportConflictWarning",
    "validate_study_name",
    "DEFAULT_DB_NAME",
    "SCHEMA_VERSION",
]

DEFAULT_DB_NAME = "outputs.sqlite"
SCHEMA_VERSION = 1

# SQLite limits the number of ``?`` in one statement (999 before 3.32, 32766 after); stay well below.
_KEYS_PER_QUERY = 500

# The outputs table is an ordinary rowid table (not WITHOUT ROWID, which suits only small rows) and
# keeps the long request text in the last column, so reading a value never touches its overflow pages.
_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS outputs (
        key         TEXT PRIMARY KEY NOT NULL,
        model_id    TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        operation   TEXT NOT NULL,
        value       TEXT NOT NULL,   -- canonical JSON
        meta        TEXT NOT NULL,   -- canonical JSON object
        created_at  TEXT NOT NULL,   -- UTC, ISO 8601
        request     TEXT             -- canonical JSON, NULL for outputs imported from released files
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS study_outputs (
        study TEXT NOT NULL,
        key   TEXT NOT NULL REFERENCES outputs(key),
        PRIMARY KEY (study, key)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX IF NOT EXISTS study_outputs_by_key ON study_outputs(key)",
    # Released files already imported (by content), so that re-importing an unchanged file is instant.
    """
    CREATE TABLE IF NOT EXISTS imported_files (
        sha256      TEXT NOT NULL,
        study       TEXT NOT NULL,
        records     INTEGER NOT NULL,
        imported_at TEXT NOT NULL,
        PRIMARY KEY (sha256, study)
    ) WITHOUT ROWID
    """,
)

# Connections inherited through fork are parked here so that the child never closes them (closing
# could touch locks and the WAL that belong to the parent's connection).
_INHERITED_CONNECTIONS: list[sqlite3.Connection] = []

T = TypeVar("T")


class CacheError(RuntimeError):
    """The cache database cannot be used (not a database, newer schema, WAL unsupported...)."""


class CacheBusyError(CacheError):
    """Another process held the database lock for longer than the busy timeout."""


class ImportConflictWarning(UserWarning):
    """Imported records whose key is already cached with a different value (the cached value is kept)."""


def validate_study_name(study: object) -> str:
    """A study name is used as a folder name: letters, digits, '.', '_' and '-', not starting with '.'."""
    if not isinstance(study, str) or not study:
        raise ValueError(f"study must be a non-empty str, got {study!r}")
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
    if study.startswith(".") or not set(study) <= allowed:
        raise ValueError(
            f"study name {study!r} is not usable as a folder name; use letters, digits, '.', '_' and '-' "
            "(not starting with '.'), e.g. 'comparative-summeval'"
        )
    return study


@dataclass(frozen=True)
class CacheEntry:
    """One model output to store.

    ``key`` must equal ``request_key(model_id, fingerprint, operation, request)`` (checked on write);
    :meth:`create` computes it. ``request`` holds everything that determined the output (exact prompt
    text, label words, decoding settings, seed) and stays in the local cache only; ``meta`` holds small
    human-readable labels (context id, candidate ids, aspect, template) that also go into exports.
    """

    key: str
    model_id: str
    fingerprint: str
    operation: str
    request: Mapping[str, Any]
    value: Any
    study: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def create(
        cls,
        model_id: str,
        fingerprint: str,
        operation: str,
        request: Mapping[str, Any],
        value: Any,
        *,
        study: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> CacheEntry:
        """An entry whose key is computed from its content."""
        key = request_key(model_id, fingerprint, operation, request)
        return cls(key, model_id, fingerprint, operation, request, value, study, dict(meta or {}))


@dataclass(frozen=True)
class _Row:
    """A validated output row, ready for the database (JSON fields already canonical text)."""

    key: str
    model_id: str
    fingerprint: str
    operation: str
    request: str | None
    meta: str
    value: str


def _is_lock_error(error: sqlite3.OperationalError) -> bool:
    text = str(error).lower()
    return "locked" in text or "busy" in text


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _entry_to_row(entry: CacheEntry, position: int) -> _Row:
    if not isinstance(entry, CacheEntry):
        raise TypeError(f"put_many expects CacheEntry objects; item {position} is {type(entry).__name__}")
    where = f"entry {position} (key {str(entry.key)[:16]}...)"
    if not is_valid_key(entry.key):
        raise ValueError(f"{where}: key must be a 64-character lowercase sha256 hex digest from request_key()")
    if entry.study is not None:
        validate_study_name(entry.study)
    if not isinstance(entry.meta, Mapping):
        raise TypeError(f"{where}: meta must be a dict, got {type(entry.meta).__name__}")
    expected = request_key(entry.model_id, entry.fingerprint, entry.operation, entry.request)
    if expected != entry.key:
        raise ValueError(
            f"{where}: key does not match request_key(model_id, fingerprint, operation, request) = "
            f"{expected}; build entries with CacheEntry.create(...) or request_key(...)"
        )
    return _Row(
        key=entry.key,
        model_id=entry.model_id,
        fingerprint=entry.fingerprint,
        operation=entry.operation,
        request=canonical_json(dict(entry.request), where=f"{where}: request"),
        meta=canonical_json(dict(entry.meta), where=f"{where}: meta"),
        value=canonical_json(entry.value, where=f"{where}: value"),
    )


class OutputCache:
    """Persistent, content-addressed store of model outputs (see the module docstring for the design).

    ``path`` defaults to ``config.cache_dir() / "outputs.sqlite"``. The database is opened on first use,
    separately in every process that uses the object, so a cache can be passed to worker processes
    (forked or pickled).
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, busy_timeout_s: float = 60.0) -> None:
        if path is None:
            from nlgjudge.config import output_cache_path

            path = output_cache_path(DEFAULT_DB_NAME)
        self.path = Path(path).expanduser()
        if busy_timeout_s <= 0:
            raise ValueError(f"busy_timeout_s must be positive, got {busy_timeout_s}")
        self.busy_timeout_s = float(busy_timeout_s)
        self._lock = threading.RLock()
        self._connection: sqlite3.Connection | None = None
        self._connection_pid: int | None = None

    # -- connection management -------------------------------------------------------------------

    def __repr__(self) -> str:
        return f"OutputCache({str(self.path)!r})"

    def __getstate__(self) -> dict[str, Any]:
        # Only the location travels to another process; it opens its own connection.
        return {"path": self.path, "busy_timeout_s": self.busy_timeout_s}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"], busy_timeout_s=state["busy_timeout_s"])  # type: ignore[misc]

    def __enter__(self) -> OutputCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close this process's connection (a later call reopens it)."""
        with self._lock:
            if self._connection is not None and self._connection_pid == os.getpid():
                self._connection.close()
            self._connection = None
            self._connection_pid = None

    def _connect(self) -> sqlite3.Connection:
        pid = os.getpid()
        if self._connection is not None and self._connection_pid == pid:
            return self._connection
        if self._connection is not None:  # inherited through fork
            _INHERITED_CONNECTIONS.append(self._connection)
            self._connection = None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(
            self.path,
            timeout=self.busy_timeout_s,
            isolation_level=None,  # we issue BEGIN/COMMIT ourselves
            check_same_thread=False,  # guarded by self._lock
        )
        try:
            self._with_retry(lambda: self._initialise(connection))
        except sqlite3.DatabaseError as error:
            connection.close()
            if isinstance(error, sqlite3.OperationalError) and _is_lock_error(error):
                raise
            raise CacheError(
                f"cannot use {self.path} as the output cache: {error}. If it is not an nlgjudge cache, "
                "point NLGJUDGE_CACHE_DIR (or OutputCache(path=...)) somewhere else."
            ) from error
        except BaseException:
            connection.close()
            raise
        self._connection = connection
        self._connection_pid = pid
        return connection

    def _initialise(self, connection: sqlite3.Connection) -> None:
        connection.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
        mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise CacheError(
                f"{self.path}: SQLite could not switch to WAL mode (got {mode!r}); the file system may not "
                "support it (network drives). Put the cache on a local disk via NLGJUDGE_CACHE_DIR."
            )
        connection.execute("PRAGMA synchronous = NORMAL")
        connection.execute("PRAGMA foreign_keys = ON")
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise CacheError(
                f"{self.path} has cache schema version {version}, newer than this nlgjudge "
                f"(version {SCHEMA_VERSION}); upgrade nlgjudge or use another cache file."
            )
        connection.execute("BEGIN IMMEDIATE")
        try:
            for statement in _SCHEMA:
                connection.execute(statement)
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise

    def _with_retry(self, operation: Callable[[], T]) -> T:
        """Run ``operation``, retrying with jittered back-off while another process holds the lock."""
        deadline = time.monotonic() + self.busy_timeout_s
        delay = 0.005
        while True:
            try:
                return operation()
            except sqlite3.OperationalError as error:
                if not _is_lock_error(error):
                    raise
                if time.monotonic() >= deadline:
                    raise CacheBusyError(
                        f"{self.path} stayed locked by another process for more than {self.busy_timeout_s:.0f} s "
                        f"({error}); is a long write running? Retry later or raise busy_timeout_s."
                    ) from error
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 0.25)

    def _read(self, query: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            connection = self._connect()

            def attempt() -> T:
                connection.execute("BEGIN")  # one consistent snapshot across chunked queries
                try:
                    return query(connection)
                finally:
                    connection.execute("COMMIT")

            return self._with_retry(attempt)

    def _write(self, change: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            connection = self._connect()

            def attempt() -> T:
                # IMMEDIATE takes the write lock up front, so two writers queue instead of deadlocking.
                connection.execute("BEGIN IMMEDIATE")
                try:
                    result = change(connection)
                    connection.execute("COMMIT")
                    return result
                except BaseException:
                    if connection.in_transaction:
                        connection.execute("ROLLBACK")
                    raise

            return self._with_retry(attempt)

    # -- reading ---------------------------------------------------------------------------------

    def get_many(self, keys: Sequence[str], *, study: str | None = None) -> dict[str, Any]:
        """Cached values (JSON-decoded) for ``keys``; keys not in the cache are absent from the result.

        With ``study``, every key found is also recorded as belonging to that study, so that
        ``export_study(study)`` contains the outputs it reused from other studies.
        """
        if study is not None:
            validate_study_name(study)
        raw = self._get_raw(keys)
        if study is not None and raw:
            self._link(study, list(raw))
        return {key: loads_strict(text) for key, text in raw.items()}

    def lookup(self, keys: Sequence[str], *, study: str | None = None) -> tuple[dict[str, Any], list[str]]:
        """``(found, missing)``: cached values, and the missing keys in request order (no repeats)."""
        found = self.get_many(keys, study=study)
        missing = [key for key in dict.fromkeys(keys) if key not in found]
        return found, missing

    def _get_raw(self, keys: Sequence[str]) -> dict[str, str]:
        if isinstance(keys, str):
            raise TypeError("get_many expects a sequence of keys, not a single str; wrap it in a list")
        unique = list(dict.fromkeys(keys))
        for key in unique:
            if not isinstance(key, str):
                raise TypeError(f"keys must be str, got {type(key).__name__}: {key!r}")
        if not unique:
            return {}

        def query(connection: sqlite3.Connection) -> dict[str, str]:
            found: dict[str, str] = {}
            for start in range(0, len(unique), _KEYS_PER_QUERY):
                chunk = unique[start : start + _KEYS_PER_QUERY]
                marks = ",".join("?" * len(chunk))
                found.update(
                    connection.execute(f"SELECT key, value FROM outputs WHERE key IN ({marks})", chunk)
                )
            return found

        return self._read(query)

    def count(self, study: str | None = None) -> int:
        """Number of outputs in the cache, or in one study."""
        if study is None:
            return self._read(lambda c: c.execute("SELECT COUNT(*) FROM outputs").fetchone()[0])
        return self._read(
            lambda c: c.execute("SELECT COUNT(*) FROM study_outputs WHERE study = ?", (study,)).fetchone()[0]
        )

    def __len__(self) -> int:
        return self.count()

    def studies(self) -> dict[str, int]:
        """Study name -> number of outputs, sorted by name."""
        rows = self._read(
            lambda c: c.execute("SELECT study, COUNT(*) FROM study_outputs GROUP BY study ORDER BY study").fetchall()
        )
        return {study: count for study, count in rows}

    def summary(self) -> list[tuple[str, str, str, int]]:
        """``(study or '', model_id, operation, count)`` rows; '' collects outputs in no study."""
        return self._read(
            lambda c: c.execute(
                """
                SELECT COALESCE(s.study, ''), o.model_id, o.operation, COUNT(*)
                FROM outputs o LEFT JOIN study_outputs s ON s.key = o.key
                GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
                """
            ).fetchall()
        )

    def _study_records(self, study: str) -> list[tuple[str, str, str, str, str, str]]:
        """``(key, model_id, fingerprint, operation, meta, value)`` of a study, sorted by key."""
        return self._read(
            lambda c: c.execute(
                """
                SELECT o.key, o.model_id, o.fingerprint, o.operation, o.meta, o.value
                FROM study_outputs s JOIN outputs o ON o.key = s.key
                WHERE s.study = ? ORDER BY o.key
                """,
                (study,),
            ).fetchall()
        )

    # -- writing ---------------------------------------------------------------------------------

    def put_many(self, entries: Iterable[CacheEntry]) -> int:
        """Store entries in one transaction; returns how many outputs were new.

        Idempotent: a key already cached keeps its first value (and gains the entry's study, if any).
        Every entry is validated (key matches its content, JSON-able request/meta/value) before anything
        is written, so a bad entry stores nothing of the batch.
        """
        entries = list(entries)
        rows = [_entry_to_row(entry, position) for position, entry in enumerate(entries)]
        links = [(entry.study, entry.key) for entry in entries if entry.study is not None]
        if not rows:
            return 0
        return self._insert(rows, links)

    def link_study(self, study: str, keys: Iterable[str]) -> int:
        """Record cached outputs as belonging to ``study``; returns how many links were new.

        Keys that are not in the cache are an error (a study cannot contain outputs that do not exist).
        """
        validate_study_name(study)
        unique = list(dict.fromkeys(keys))
        if not unique:
            return 0
        present = self._get_raw(unique)
        absent = [key for key in unique if key not in present]
        if absent:
            raise KeyError(f"{len(absent)} key(s) are not in the cache, e.g. {absent[0]!r}; store them first")
        return self._link(study, unique)

    def _link(self, study: str, unique: Sequence[str]) -> int:
        def change(connection: sqlite3.Connection) -> int:
            before = connection.total_changes
            connection.executemany(
                "INSERT OR IGNORE INTO study_outputs (study, key) VALUES (?, ?)", [(study, k) for k in unique]
            )
            return connection.total_changes - before

        return self._write(change)

    def _insert(
        self,
        rows: Sequence[_Row],
        links: Sequence[tuple[str, str]],
        imported_files: Sequence[tuple[str, str, int]] = (),
    ) -> int:
        created_at = _utc_now()

        def change(connection: sqlite3.Connection) -> int:
            before = connection.total_changes
            connection.executemany(
                "INSERT OR IGNORE INTO outputs "
                "(key, model_id, fingerprint, operation, value, meta, created_at, request) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (r.key, r.model_id, r.fingerprint, r.operation, r.value, r.meta, created_at, r.request)
                    for r in rows
                ],
            )
            inserted = connection.total_changes - before
            if links:
                connection.executemany("INSERT OR IGNORE INTO study_outputs (study, key) VALUES (?, ?)", links)
            if imported_files:
                connection.executemany(
                    "INSERT OR IGNORE INTO imported_files (sha256, study, records, imported_at) VALUES (?, ?, ?, ?)",
                    [(digest, study, records, created_at) for digest, study, records in imported_files],
                )
            return inserted

        return self._write(change)

    def _imported_files(self) -> set[tuple[str, str]]:
        """``(sha256, study)`` of the released files imported so far."""
        return set(self._read(lambda c: c.execute("SELECT sha256, study FROM imported_files").fetchall()))

    def _insert_released(
        self, rows: Sequence[_Row], links: Sequence[tuple[str, str]], files: Sequence[tuple[str, str, int]]
    ) -> int:
        """Insert imported rows (and remember their files), warning about keys cached with another value."""
        stored = self._get_raw([row.key for row in rows])
        conflicts = [row.key for row in rows if row.key in stored and stored[row.key] != row.value]
        if conflicts:
            warnings.warn(
                f"{len(conflicts)} imported output(s) differ from the value already cached for the same key "
                f"(e.g. {conflicts[0]}); the cached value is kept. Different values for one key mean the "
                "computation was not deterministic (e.g. other batching); delete the cache file to take the "
                "released values instead.",
                ImportConflictWarning,
                stacklevel=4,
            )
        return self._insert(rows, links, files)

    # -- released outputs ------------------------------------------------------------------------

    def export_study(self, study: str, out_dir: str | os.PathLike[str] | None = None) -> list[Path]:
        """Write a study's outputs as deterministic JSONL files; see :mod:`nlgjudge.cache.release`."""
        from nlgjudge.cache.release import export_study

        return export_study(self, study, out_dir)

    def import_outputs(self, path: str | os.PathLike[str], *, study: str | None = None) -> int:
        """Import released outputs (a study folder, a folder of studies, or one file); returns new outputs."""
        from nlgjudge.cache.release import import_outputs

        return import_outputs(self, path, study=study)
