"""OutputCache never converts a file that is not its own, and reports damaged files in one clear line."""

from __future__ import annotations

import hashlib
import random
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from nlgjudge.cache import CacheDamagedError, CacheEntry, CacheError, OutputCache
from nlgjudge.cache.store import _SCHEMA, SCHEMA_VERSION


def make_entries(n: int, study: str | None = "demo") -> list[CacheEntry]:
    return [
        CacheEntry.create("m", "fp", "label_probs", {"prompt": f"p{i}"}, {"p": i / 7, "pad": "x" * 300}, study=study)
        for i in range(n)
    ]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def companions(path: Path) -> list[str]:
    """SQLite's side files (-wal, -shm, -journal) next to ``path``."""
    return sorted(p.name for p in path.parent.iterdir() if p.name != path.name and p.name.startswith(path.name))


def build(path: Path, *statements: str, wal: bool = False) -> None:
    raw = sqlite3.connect(path)
    if wal:
        raw.execute("PRAGMA journal_mode = WAL")
    for statement in statements:
        raw.execute(statement)
    raw.commit()
    raw.close()


FOREIGN_OUTPUTS = ("CREATE TABLE outputs (id INTEGER PRIMARY KEY, text TEXT)", "INSERT INTO outputs VALUES (1, 'mine')")
# Our three table names, but outputs has another column: an nlgjudge-like file we cannot vouch for.
OUR_NAMES_OTHER_COLUMNS = tuple(s.replace("request     TEXT", "prompt      TEXT") for s in _SCHEMA) + (
    f"PRAGMA user_version = {SCHEMA_VERSION}",
)


def every_use(cache: OutputCache, tmp_path: Path) -> list[Callable[[], object]]:
    return [
        lambda: len(cache),
        lambda: cache.get_many(["a" * 64]),
        lambda: cache.put_many(make_entries(1)),
        lambda: cache.studies(),
        lambda: cache.export_study("demo", tmp_path / "out"),
    ]


@pytest.mark.parametrize(
    ("statements", "wal", "message"),
    [
        (FOREIGN_OUTPUTS, False, r"not an nlgjudge output cache: it holds the tables outputs \(a cache holds exactly"),
        (FOREIGN_OUTPUTS + ("CREATE TABLE notes (x)",), True, "not an nlgjudge output cache"),
        (OUR_NAMES_OTHER_COLUMNS, False, r"table 'outputs' has the columns \(key, .*, prompt\) instead of \(key, "),
        (("CREATE TABLE outputs (x)", f"PRAGMA user_version = {SCHEMA_VERSION}"), False, "not an nlgjudge output"),
    ],
    ids=["foreign-outputs-table", "foreign-wal-file", "our-tables-other-columns", "our-version-other-tables"],
)
def test_someone_elses_database_is_refused_and_left_byte_identical(
    tmp_path: Path, statements: tuple[str, ...], wal: bool, message: str
) -> None:
    path = tmp_path / "theirs.sqlite"
    build(path, *statements, wal=wal)
    before, side_files = sha256(path), companions(path)
    cache = OutputCache(path)
    for use in every_use(cache, tmp_path):
        with pytest.raises(CacheError, match=message) as raised:
            use()
        assert "left untouched" in str(raised.value) and "\n" not in str(raised.value)
    cache.close()
    assert sha256(path) == before
    assert companions(path) == side_files == []  # no -wal/-shm left behind
    assert not (tmp_path / "out").exists()


def test_a_foreign_file_open_in_its_own_program_is_not_checkpointed(tmp_path: Path) -> None:
    # The owner keeps a WAL connection open with commits not yet copied into the main file.
    path = tmp_path / "theirs.sqlite"
    owner = sqlite3.connect(path, isolation_level=None)
    owner.execute("PRAGMA journal_mode = WAL")
    owner.execute("PRAGMA wal_autocheckpoint = 0")
    owner.execute("CREATE TABLE outputs (x)")
    owner.execute("INSERT INTO outputs VALUES (1)")
    try:
        before = sha256(path)
        with pytest.raises(CacheError, match="not an nlgjudge output cache"):
            len(OutputCache(path))
        assert sha256(path) == before
        assert owner.execute("SELECT COUNT(*) FROM outputs").fetchone()[0] == 1
    finally:
        owner.close()


def test_not_a_database_is_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_bytes(b"these are my notes, not SQLite\n" * 200)
    before = sha256(path)
    with pytest.raises(CacheError, match="not an SQLite database, and it was left untouched"):
        OutputCache(path).put_many(make_entries(1))
    assert sha256(path) == before and companions(path) == []


def test_an_empty_file_is_someone_elses_and_is_left_untouched(tmp_path: Path) -> None:
    """A zero-byte file at the cache's path is a user's (SQLite writes its header at once): refused."""
    path = tmp_path / "notes.txt"
    path.touch()
    with pytest.raises(CacheError, match="exists and is empty, so it is no cache and it was left untouched"):
        OutputCache(path).put_many(make_entries(1))
    assert path.stat().st_size == 0 and companions(path) == []


def test_an_empty_sqlite_database_becomes_a_cache(tmp_path: Path) -> None:
    path = tmp_path / "outputs.sqlite"
    build(path, "CREATE TABLE t (x)", "DROP TABLE t")
    assert path.stat().st_size > 0
    cache = OutputCache(path)
    assert cache.put_many(make_entries(3)) == 3 and len(cache) == 3
    cache.close()
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    raw.close()


def test_a_cache_without_user_version_but_exactly_our_tables_is_ours(tmp_path: Path) -> None:
    path = tmp_path / "outputs.sqlite"
    build(path, *_SCHEMA)
    cache = OutputCache(path)
    assert cache.put_many(make_entries(2)) == 2
    cache.close()
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    raw.close()


def test_an_own_cache_reopens_without_any_change(tmp_path: Path) -> None:
    path = tmp_path / "outputs.sqlite"
    with OutputCache(path) as cache:
        cache.put_many(make_entries(5))
    before = sha256(path)
    cache = OutputCache(path)
    assert len(cache) == 5 and cache.check() == []
    cache.close()
    assert sha256(path) == before


def test_an_unknown_older_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "outputs.sqlite"
    build(path, *_SCHEMA, "PRAGMA user_version = -1")  # below ours and not 0: no nlgjudge wrote it
    before = sha256(path)
    with pytest.raises(CacheError, match="schema version -1, which no nlgjudge release wrote; it was left untouched"):
        len(OutputCache(path))
    assert sha256(path) == before


# -- damaged files ---------------------------------------------------------------------------------


def damage(path: Path, *, first_page: int = 2, seed: int = 0) -> None:
    """Overwrite every page from ``first_page`` on with random bytes (a cache closed cleanly has no WAL)."""
    data = bytearray(path.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    rng = random.Random(seed)
    start = (first_page - 1) * page_size + (100 if first_page == 1 else 0)
    data[start:] = bytes(rng.getrandbits(8) for _ in range(len(data) - start))
    path.write_bytes(bytes(data))


@pytest.fixture()
def damaged(tmp_path: Path) -> Path:
    path = tmp_path / "outputs.sqlite"
    cache = OutputCache(path)
    cache.put_many(make_entries(200))
    cache.close()
    assert companions(path) == []
    damage(path)
    return path


def test_a_damaged_page_is_one_clear_error_with_the_fix(damaged: Path, tmp_path: Path) -> None:
    cache = OutputCache(damaged)
    for use in every_use(cache, tmp_path):
        with pytest.raises(CacheDamagedError) as raised:
            use()
        message = str(raised.value)
        assert "\n" not in message and str(damaged) in message and "malformed" in message
        assert f"mv {damaged} {damaged}.damaged" in message
        assert f"python -m nlgjudge.cache import" in message and f"--db {damaged}" in message
        assert isinstance(raised.value.__cause__, sqlite3.DatabaseError)  # the cause stays attached
    cache.close()


def test_a_damaged_schema_page_is_reported_before_anything_is_written(tmp_path: Path) -> None:
    path = tmp_path / "outputs.sqlite"
    with OutputCache(path) as cache:
        cache.put_many(make_entries(5))
    damage(path, first_page=1)
    before = sha256(path)
    with pytest.raises(CacheDamagedError, match="is damaged .*move it aside"):
        len(OutputCache(path))
    assert sha256(path) == before


def test_check_finds_damage_and_dangling_links(damaged: Path, tmp_path: Path) -> None:
    try:
        problems = OutputCache(damaged).check()
    except CacheDamagedError:
        problems = ["raised"]
    assert problems  # either way, not reported as sound
    path = tmp_path / "links.sqlite"
    cache = OutputCache(path)
    cache.put_many(make_entries(3))
    assert cache.check() == [] and cache.check(quick=True) == []
    cache.close()
    raw = sqlite3.connect(path)  # foreign keys are off in a plain connection
    raw.execute("INSERT INTO study_outputs (study, key) VALUES ('demo', ?)", ("f" * 64,))
    raw.commit()
    raw.close()
    assert OutputCache(path).check() == ["1 study link(s) point to outputs that are not in the cache"]


def test_check_creates_no_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no cache to check"):
        OutputCache(tmp_path / "missing.sqlite").check()
    assert not (tmp_path / "missing.sqlite").exists()


def test_a_folder_is_not_a_cache_file(tmp_path: Path) -> None:
    with pytest.raises(CacheError, match="it is not a file"):
        len(OutputCache(tmp_path))
