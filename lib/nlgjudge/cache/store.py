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
- **Requests are a separate (study, key, meta) table.** Two requests with the same inputs (two
  contestants with identical summaries, two studies asking the same prompt) share one output, stored
  once; each request's meta (the labels that say which request it is) is kept beside it, so a study's
  export has one line per request. A link without recorded requests exports the output's own meta
  (the first requester's, as caches of schema version 1 did).
- **Connections are per process and opened lazily.** Nothing happens at import or construction; a
  connection inherited through ``fork`` is never used (nor closed) in the child, which opens its own.
- **Someone else's file is never converted.** Before anything is written, an existing file is read
  through a read-only connection and must be an nlgjudge cache (our ``user_version`` and exactly our
  tables and columns) or empty; anything else is refused and left byte-identical.
- **SQLite errors become one-line** :class:`CacheError` messages that name the file and the fix (a damaged
  file is moved aside and rebuilt from the released outputs); :meth:`OutputCache.check` runs SQLite's
  integrity check.
"""

from __future__ import annotations

import functools
import os
import random
import shutil
import sqlite3
import stat
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from nlgjudge.cache import release as _release
from nlgjudge.cache.canonical import canonical_json, loads_strict
from nlgjudge.interrupt import STORED
from nlgjudge.cache.errors import CacheBusyError, CacheDamagedError, CacheError, ImportConflictWarning
from nlgjudge.cache.keys import is_valid_key, request_key
from nlgjudge.cache.records import Row, StudyRecord, validate_study_name
from nlgjudge.cache.side_files import foreign_side_file
from nlgjudge.config import expand_path

__all__ = [
    "CacheEntry",
    "OutputCache",
    "CacheError",
    "CacheBusyError",
    "CacheDamagedError",
    "ImportConflictWarning",
    "validate_study_name",
    "damaged_advice",
    "DEFAULT_DB_NAME",
    "SCHEMA_VERSION",
]

DEFAULT_DB_NAME = "outputs.sqlite"
#: ``PRAGMA user_version`` of a cache. Version 2 added the ``study_requests`` table; a version-1 cache
#: (exactly the version-1 tables) is upgraded in place on first use, its links keeping their meta.
#: No other older nlgjudge schema exists (0 is SQLite's default).
SCHEMA_VERSION = 2
_UPGRADABLE_VERSIONS = (1,)
#: The table version 2 added (a version-1 cache has every other table of :data:`_SCHEMA`).
_REQUESTS_TABLE = "study_requests"
_SQLITE_MAGIC = b"SQLite format 3\x00"

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
    # Every request of a study that an output answers: one row per distinct meta (schema version 2).
    """
    CREATE TABLE IF NOT EXISTS study_requests (
        study TEXT NOT NULL,
        key   TEXT NOT NULL REFERENCES outputs(key),
        meta  TEXT NOT NULL,   -- canonical JSON object: the labels of one request
        PRIMARY KEY (study, key, meta)
    ) WITHOUT ROWID
    """,
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


def _is_lock_error(error: sqlite3.OperationalError) -> bool:
    text = str(error).lower()
    return "locked" in text or "busy" in text


def _rollback_quietly(connection: sqlite3.Connection) -> None:
    """Roll back an open transaction; a damaged file can make ROLLBACK fail too, which must not hide the cause."""
    if connection.in_transaction:
        try:
            connection.execute("ROLLBACK")
        except sqlite3.Error:
            pass


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


# A table's shape: (column name, declared type, NOT NULL, position in the primary key) per column.
_Shape = dict[str, tuple[tuple[str, str, int, int], ...]]


def _schema_shape(connection: sqlite3.Connection) -> _Shape:
    """The tables and views of a database with their columns; SQLite's own ``sqlite_*`` tables are left out."""
    names = [
        name
        for (name,) in connection.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite^_%' ESCAPE '^'"
        )
    ]
    return {
        name: tuple(
            (column, str(kind).upper(), int(not_null), int(pk))
            for column, kind, not_null, pk in connection.execute(
                'SELECT name, type, "notnull", pk FROM pragma_table_info(?) ORDER BY cid', (name,)
            )
        )
        for name in sorted(names)
    }


@functools.cache
def _expected_shape() -> _Shape:
    """The shape :data:`_SCHEMA` creates (built in memory, so the schema is written down only once)."""
    connection = sqlite3.connect(":memory:")
    try:
        for statement in _SCHEMA:
            connection.execute(statement)
        return _schema_shape(connection)
    finally:
        connection.close()


def _version1_shape() -> _Shape:
    """The tables of a schema-version-1 cache: today's without ``study_requests``."""
    return {name: columns for name, columns in _expected_shape().items() if name != _REQUESTS_TABLE}


# Version 1 exported each link with its output's meta: keep exactly that as the link's one request.
_FILL_REQUESTS = (
    "INSERT OR IGNORE INTO study_requests (study, key, meta) "
    "SELECT s.study, s.key, o.meta FROM study_outputs s JOIN outputs o ON o.key = s.key"
)


def _columns(shape: _Shape, table: str) -> str:
    return ", ".join(column for column, *_ in shape[table])


def damaged_advice(path: Path) -> str:
    """How to get a working cache back when ``path`` is damaged (one sentence, commands included)."""
    try:
        from nlgjudge.config import outputs_dir

        released = str(outputs_dir())
    except Exception:  # noqa: BLE001 - the advice must not fail; fall back to the checkout's folder
        released = "data/outputs"
    return (
        f"move it aside (mv {path} {path}.damaged) and re-import the released outputs with "
        f"`python -m nlgjudge.cache import {released} --db {path}`; outputs that were never released are "
        "recomputed on the next run"
    )


def _entry_to_row(entry: CacheEntry, position: int) -> Row:
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
    return Row(
        key=entry.key,
        model_id=entry.model_id,
        fingerprint=entry.fingerprint,
        operation=entry.operation,
        request=canonical_json(dict(entry.request), where=f"{where}: request"),
        meta=canonical_json(dict(entry.meta), where=f"{where}: meta"),
        value=canonical_json(entry.value, where=f"{where}: value"),
    )


#: Less free space than this beside the cache when SQLite fails, and the failure is named as a full disk.
FULL_DISK_BYTES = 1 << 20


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
        self.path = expand_path(path)
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
        # Decide from a read-only look whether the file may be touched at all; only then open it for writing.
        existing = self._with_retry(self._inspect)
        if existing is None and self._create_whole():
            existing = self._with_retry(self._inspect)
        try:
            connection = sqlite3.connect(
                self.path,
                timeout=self.busy_timeout_s,
                isolation_level=None,  # we issue BEGIN/COMMIT ourselves
                check_same_thread=False,  # guarded by self._lock
            )
        except sqlite3.Error as error:
            raise self._cache_error(error) from error
        try:
            self._with_retry(lambda: self._initialise(connection, fresh=existing is None))
        except BaseException:
            connection.close()
            raise
        self._connection = connection
        self._connection_pid = pid
        return connection

    def _create_whole(self) -> bool:
        """Create a new cache so that no process ever sees it empty; False where hard links are refused.

        The database is built in a private file beside the target and linked into place only once it holds
        its schema: a concurrent process, or a rerun after a SIGKILL during creation, finds either no file
        or a whole cache, never the empty file that the refusal of someone else's empty file would stop at.
        A link never replaces: if another process got there first, its cache is used and ours discarded.
        """
        private = self.path.with_name(f".{self.path.name}.creating-{os.getpid()}-{random.getrandbits(32):08x}")
        try:
            connection = sqlite3.connect(private, timeout=self.busy_timeout_s, isolation_level=None)
            try:
                self._initialise(connection, fresh=True)
            finally:
                connection.close()  # the last connection checkpoints the WAL into the file and removes it
            try:
                os.link(private, self.path)
            except FileExistsError:
                pass  # another process created it first; its cache is inspected next
            except OSError:
                return False  # a file system without hard links: created in place instead
            return True
        except sqlite3.Error as error:
            raise self._cache_error(error) from error
        finally:
            for leftover in (private, Path(f"{private}-wal"), Path(f"{private}-shm")):
                leftover.unlink(missing_ok=True)

    def _inspect(self) -> tuple[int, _Shape] | None:
        """``(user_version, shape)`` of an existing database, read without changing a byte of it.

        Returns None for a file that does not exist yet (nothing to protect). Raises
        :class:`CacheError` for anything that is not an nlgjudge cache this version can use, before
        any connection that could write (switch to WAL, create tables, checkpoint) is opened.
        """
        try:
            foreign = foreign_side_file(self.path)  # SQLite's side files: never another file's name for one
            try:
                status = self.path.stat()
            except FileNotFoundError:
                status = None
        except OSError as error:  # a name too long, a loop of links, ...: said with the way out
            raise CacheError(f"cannot use {self.path} as the output cache ({error.strerror or type(error).__name__}); "
                             "choose another cache file (NLGJUDGE_OUTPUT_CACHE)") from None
        if foreign:
            raise CacheError(f"cannot use {self.path} as the output cache: {foreign}; nothing was written and it was left "
                             "untouched: move it away, or choose another cache file (NLGJUDGE_OUTPUT_CACHE)")
        if status is None:
            return None
        if not stat.S_ISREG(status.st_mode):
            raise CacheError(
                f"cannot use {self.path} as the output cache: it is not a file; choose another cache file "
                "(--db, NLGJUDGE_OUTPUT_CACHE or OutputCache(path=...))"
            )
        if status.st_size == 0:
            # An empty file is someone's (SQLite writes its header at once): never turned into a database.
            raise CacheError(
                f"cannot use {self.path} as the output cache: the file exists and is empty, so it is no cache and it "
                "was left untouched; choose another cache file (--db, NLGJUDGE_OUTPUT_CACHE or OutputCache(path=...)), "
                "or remove it if it is an empty file you do not need"
            )
        with open(self.path, "rb") as stream:
            header = stream.read(len(_SQLITE_MAGIC))
        if header != _SQLITE_MAGIC:
            raise CacheError(
                f"cannot use {self.path} as the output cache: it is not an SQLite database, and it was left "
                f"untouched. If it is someone else's file, choose another cache file (--db, NLGJUDGE_OUTPUT_CACHE "
                f"or OutputCache(path=...)); if it was your cache, it is damaged: {damaged_advice(self.path)}."
            )
        # Without a -wal file the main file holds every commit: read it as immutable, which creates no
        # -wal/-shm files and takes no locks. With one, a plain read-only connection sees the WAL too.
        # If the immutable read fails (a process started writing meanwhile), the locked read decides.
        uri = self.path.absolute().as_uri()
        modes = ["mode=ro"] if Path(f"{self.path}-wal").exists() else ["mode=ro&immutable=1", "mode=ro"]
        for attempt, mode in enumerate(modes, start=1):
            try:
                connection = sqlite3.connect(f"{uri}?{mode}", uri=True, timeout=self.busy_timeout_s)
                try:
                    version = int(connection.execute("PRAGMA user_version").fetchone()[0])
                    shape = _schema_shape(connection)
                finally:
                    connection.close()
            except sqlite3.OperationalError as error:
                if _is_lock_error(error) or attempt == len(modes):
                    raise
                continue
            except sqlite3.DatabaseError:
                if attempt == len(modes):
                    raise
                continue
            self._check_schema(version, shape)
            return version, shape
        raise AssertionError("unreachable")  # pragma: no cover

    def _check_schema(self, version: int, shape: _Shape) -> None:
        """Refuse (with :class:`CacheError`) a database that is not an nlgjudge cache this version can use."""
        expected = _expected_shape()
        other_use = (
            "it was left untouched. Choose another cache file (--db, NLGJUDGE_OUTPUT_CACHE or OutputCache(path=...))"
        )
        if version > SCHEMA_VERSION:
            raise CacheError(
                f"{self.path} has cache schema version {version}, newer than this nlgjudge "
                f"(version {SCHEMA_VERSION}), or is not an nlgjudge cache; {other_use}, or upgrade nlgjudge."
            )
        if version not in (0, *_UPGRADABLE_VERSIONS, SCHEMA_VERSION):
            raise CacheError(
                f"{self.path} has schema version {version}, which no nlgjudge release wrote; {other_use}."
            )
        if shape == expected or (version == 0 and not shape):
            return  # ours (possibly from before user_version was set), or an empty database
        if version != SCHEMA_VERSION and shape == _version1_shape():
            return  # a version-1 cache: upgraded by _initialise
        if set(shape) == set(expected):
            differing = next(table for table in sorted(expected) if shape[table] != expected[table])
            raise CacheError(
                f"{self.path} is not an nlgjudge output cache of this version: table {differing!r} has the columns "
                f"({_columns(shape, differing)}) instead of ({_columns(expected, differing)}); {other_use}."
            )
        raise CacheError(
            f"{self.path} is not an nlgjudge output cache: it holds the tables {', '.join(shape) or 'none'} "
            f"(a cache holds exactly {', '.join(expected)}) and user_version {version}; {other_use}."
        )

    def _initialise(self, connection: sqlite3.Connection, *, fresh: bool) -> None:
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
        if version == SCHEMA_VERSION and not fresh:
            return  # checked by _inspect before this connection was opened
        connection.execute("BEGIN IMMEDIATE")
        try:
            # Checked again under the write lock: another process may have created the file meanwhile.
            version = connection.execute("PRAGMA user_version").fetchone()[0]
            self._check_schema(version, _schema_shape(connection))
            if version != SCHEMA_VERSION:
                for statement in _SCHEMA:
                    connection.execute(statement)
                connection.execute(_FILL_REQUESTS)  # a version-1 cache's links keep their meta
                connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            connection.execute("COMMIT")
        except BaseException:
            _rollback_quietly(connection)
            raise

    def _cache_error(self, error: sqlite3.Error) -> CacheError:
        """One clear line for an SQLite error: what is wrong with which file, and what to do."""
        text = str(error)
        try:  # SQLite names a write cut short by a full disk "malformed": the free space says which it was
            free: int | None = shutil.disk_usage(self.path.parent).free
        except OSError:
            free = None
        if free is not None and free < FULL_DISK_BYTES:
            return CacheError(f"the disk holding {self.path} is full ({free // 1024} KiB free), so the output cache cannot be "
                              f"written ({text}); free some space, or set NLGJUDGE_OUTPUT_CACHE (--db) to a file on another disk")
        if any(mark in text.lower() for mark in ("malformed", "not a database", "corrupt")):
            return CacheDamagedError(f"{self.path} is damaged ({text}); {damaged_advice(self.path)}.")
        return CacheError(
            f"cannot use {self.path} as the output cache ({text}); check that its folder exists and is writable "
            "and the disk is not full, or choose another cache file (NLGJUDGE_OUTPUT_CACHE; --db for the cache tool)."
        )

    def _with_retry(self, operation: Callable[[], T]) -> T:
        """Run ``operation``, retrying with jittered back-off while another process holds the lock.

        Any other SQLite error becomes a :class:`CacheError` (programming errors excepted).
        """
        deadline = time.monotonic() + self.busy_timeout_s
        delay = 0.005
        while True:
            try:
                return operation()
            except sqlite3.OperationalError as error:
                if not _is_lock_error(error):
                    raise self._cache_error(error) from error
                if time.monotonic() >= deadline:
                    raise CacheBusyError(
                        f"{self.path} stayed locked by another process for more than {self.busy_timeout_s:.0f} s "
                        f"({error}); is a long write running? Retry later or raise busy_timeout_s."
                    ) from error
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 0.25)
            except sqlite3.ProgrammingError:
                raise  # a bug in the calling code, not a problem of the file
            except sqlite3.DatabaseError as error:
                raise self._cache_error(error) from error

    def _read(self, query: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            connection = self._connect()

            def attempt() -> T:
                connection.execute("BEGIN")  # one consistent snapshot across chunked queries
                try:
                    result = query(connection)
                    connection.execute("COMMIT")
                    return result
                except BaseException:
                    _rollback_quietly(connection)
                    raise

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
                    _rollback_quietly(connection)
                    raise

            return self._with_retry(attempt)

    # -- checking --------------------------------------------------------------------------------

    def check(self, *, quick: bool = False) -> list[str]:
        """Problems SQLite finds in the file (``PRAGMA integrity_check``, or ``quick_check`` with ``quick``)
        plus study links to missing outputs; an empty list when the cache is sound.

        Raises :class:`FileNotFoundError` when there is no file (nothing is created), and
        :class:`CacheError` when the file cannot even be opened as a cache.
        """
        if not self.path.is_file():
            raise FileNotFoundError(f"{self.path} does not exist; there is no cache to check")
        pragma = "quick_check" if quick else "integrity_check"

        def query(connection: sqlite3.Connection) -> list[str]:
            problems = [str(row[0]) for row in connection.execute(f"PRAGMA {pragma}")]
            if problems == ["ok"]:
                problems = []
            for table, what in (("study_outputs", "study link(s)"), ("study_requests", "study request(s)")):
                dangling = connection.execute(f"SELECT COUNT(*) FROM pragma_foreign_key_check('{table}')").fetchone()[0]
                if dangling:
                    problems.append(f"{dangling} {what} point to outputs that are not in the cache")
            return problems

        return self._read(query)

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
        return {key: self._decode(key, text) for key, text in raw.items()}

    def _decode(self, key: str, text: Any) -> Any:
        """A stored value, or a :class:`CacheDamagedError` naming this cache, the key and the way out."""
        try:
            if not isinstance(text, str):
                raise TypeError(f"a {type(text).__name__} where the cache stores JSON text")
            return loads_strict(text)
        except (TypeError, ValueError) as error:
            raise CacheDamagedError(
                f"{self.path} is damaged: the output stored under key {key[:16]}... is not readable JSON "
                f"({' '.join(str(error).split())[:120]}); {damaged_advice(self.path)}.") from None

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

    def _study_records(self, study: str) -> list[StudyRecord]:
        """``(key, model_id, fingerprint, operation, meta, value)`` of every request of a study, sorted by
        key and meta: one per recorded request (an output shared by several requests comes once with
        each one's meta), or the output's own meta for a link without recorded requests."""
        return self._read(
            lambda c: c.execute(
                """
                SELECT o.key, o.model_id, o.fingerprint, o.operation, COALESCE(r.meta, o.meta) AS meta, o.value
                FROM study_outputs s JOIN outputs o ON o.key = s.key
                LEFT JOIN study_requests r ON r.study = s.study AND r.key = s.key
                WHERE s.study = ? ORDER BY o.key, meta
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
        requests = [(entry.study, row.key, row.meta) for entry, row in zip(entries, rows) if entry.study is not None]
        if not rows:
            return 0
        stored = self._insert(rows, requests)
        STORED[0] += stored  # what an interrupted command says it kept
        return stored

    def record_requests(self, study: str, requests: Iterable[tuple[str, Mapping[str, Any]]]) -> int:
        """Record ``(key, meta)`` requests of ``study`` answered by cached outputs; returns how many were new.

        A request whose inputs equal another's (same key) gets its own meta, so the study's export has
        a line for it; recording a request again changes nothing. Keys that are not in the cache are
        an error, as in :meth:`link_study`.
        """
        validate_study_name(study)
        rows = list(dict.fromkeys((key, canonical_json(dict(meta), where=f"meta of {key}")) for key, meta in requests))
        if not rows:
            return 0
        present = self._get_raw([key for key, _ in rows])
        absent = [key for key, _ in rows if key not in present]
        if absent:
            raise KeyError(f"{len(absent)} key(s) are not in the cache, e.g. {absent[0]!r}; store them first")

        def change(connection: sqlite3.Connection) -> int:
            connection.executemany(
                "INSERT OR IGNORE INTO study_outputs (study, key) VALUES (?, ?)", [(study, k) for k, _ in rows]
            )
            before = connection.total_changes
            connection.executemany(
                "INSERT OR IGNORE INTO study_requests (study, key, meta) VALUES (?, ?, ?)",
                [(study, key, meta) for key, meta in rows],
            )
            return connection.total_changes - before

        return self._write(change)

    def drop_requests(self, study: str, requests: Iterable[tuple[str, Mapping[str, Any] | str]]) -> int:
        """Take ``(key, meta)`` requests out of ``study`` (meta as a dict or canonical JSON); an output left
        with no request in the study leaves it too. The outputs stay in the cache and in other studies.
        Returns how many requests were removed. For released lines that no planned request of the study
        resolves to (:func:`nlgjudge.studies.released.align_release`)."""
        validate_study_name(study)
        rows = list(dict.fromkeys(
            (key, meta if isinstance(meta, str) else canonical_json(dict(meta), where=f"meta of {key}"))
            for key, meta in requests
        ))

        def change(connection: sqlite3.Connection) -> int:
            before = connection.total_changes
            connection.executemany(
                "DELETE FROM study_requests WHERE study = ? AND key = ? AND meta = ?", [(study, k, m) for k, m in rows]
            )
            removed = connection.total_changes - before
            # A link left without requests would export the output's own meta again: it goes too.
            connection.executemany(
                "DELETE FROM study_outputs WHERE study = ? AND key = ? "
                "AND NOT EXISTS (SELECT 1 FROM study_requests r WHERE r.study = ? AND r.key = ?)",
                [(study, k, study, k) for k in dict.fromkeys(k for k, _ in rows)],
            )
            return removed

        return self._write(change) if rows else 0

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
        rows: Sequence[Row],
        requests: Sequence[tuple[str, str, str]],
        imported_files: Sequence[tuple[str, str, int]] = (),
    ) -> int:
        """Insert ``rows`` (first value wins), and ``(study, key, meta)`` requests with their study links."""
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
            if requests:
                connection.executemany(
                    "INSERT OR IGNORE INTO study_outputs (study, key) VALUES (?, ?)",
                    list(dict.fromkeys((study, key) for study, key, _ in requests)),
                )
                connection.executemany(
                    "INSERT OR IGNORE INTO study_requests (study, key, meta) VALUES (?, ?, ?)", requests
                )
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
        self, rows: Sequence[Row], requests: Sequence[tuple[str, str, str]], files: Sequence[tuple[str, str, int]]
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
        return self._insert(rows, requests, files)

    # -- released outputs ------------------------------------------------------------------------

    def export_study(
        self, study: str, out_dir: str | os.PathLike[str] | None = None, *, drop_released: bool = False
    ) -> list[Path]:
        """Write a study's outputs as one folder, swapped in atomically; see :func:`.release.export_study`."""
        return _release.export_study(self, study, out_dir, drop_released=drop_released)

    def import_outputs(
        self, path: str | os.PathLike[str], *, study: str | None = None, allow_unverified: bool = False
    ) -> int:
        """Import released outputs (a study folder, a folder of studies, or one file); returns new outputs.

        Files without a ``MANIFEST.json`` are refused unless ``allow_unverified=True``; see
        :func:`nlgjudge.cache.release.import_outputs`.
        """
        return _release.import_outputs(self, path, study=study, allow_unverified=allow_unverified)
