"""OutputCache: round trips, idempotence, studies, validation, locking and fork safety (one process)."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nlgjudge.cache import CacheBusyError, CacheEntry, CacheError, NotJSONableError, OutputCache


def make_entry(i: int, study: str | None = "demo", model_id: str = "tiny-llama") -> CacheEntry:
    request = {"prompt": f"Passage {i}\nSummary A: ...\nSummary B: ...\nAnswer:", "labels": ["A", "B"], "seed": 0}
    value = {"probs": [i / 7, 1 - i / 7], "logprobs": [-0.1 * i, -2.5 - i / 3]}
    return CacheEntry.create(model_id, "fp-1", "label_probs", request, value, study=study, meta={"context_id": f"c{i}"})


@pytest.fixture()
def cache(tmp_path: Path) -> OutputCache:
    store = OutputCache(tmp_path / "outputs.sqlite")
    yield store
    store.close()


def test_nothing_happens_until_first_use(tmp_path: Path) -> None:
    store = OutputCache(tmp_path / "sub" / "outputs.sqlite")
    assert not (tmp_path / "sub").exists()
    assert store.get_many([]) == {}
    assert len(store) == 0 and (tmp_path / "sub" / "outputs.sqlite").exists()


def test_default_path_follows_the_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NLGJUDGE_OUTPUT_CACHE", raising=False)
    monkeypatch.setenv("NLGJUDGE_CACHE_DIR", str(tmp_path / "user-cache"))
    assert OutputCache().path == tmp_path / "user-cache" / "outputs.sqlite"


def test_output_cache_setting_overrides_the_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NLGJUDGE_CACHE_DIR", str(tmp_path / "user-cache"))
    monkeypatch.setenv("NLGJUDGE_OUTPUT_CACHE", str(tmp_path / "elsewhere" / "o.sqlite"))
    assert OutputCache().path == tmp_path / "elsewhere" / "o.sqlite"


def test_round_trip(cache: OutputCache) -> None:
    entries = [make_entry(i) for i in range(20)]
    assert cache.put_many(entries) == 20
    found = cache.get_many([e.key for e in entries] + ["f" * 64])
    assert found == {e.key: e.value for e in entries}  # missing key simply absent
    assert found[entries[3].key]["probs"][0] == 3 / 7  # exact float


def test_database_settings(cache: OutputCache) -> None:
    cache.put_many([make_entry(0)])
    raw = sqlite3.connect(cache.path)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    row = raw.execute("SELECT model_id, fingerprint, operation, request, meta, value, created_at FROM outputs").fetchone()
    raw.close()
    assert row[:3] == ("tiny-llama", "fp-1", "label_probs")
    assert '"prompt":"Passage 0' in row[3] and row[4] == '{"context_id":"c0"}' and row[6].endswith("+00:00")


def test_idempotent_writes_keep_one_row_and_the_first_value(cache: OutputCache) -> None:
    entry = make_entry(1)
    assert cache.put_many([entry, entry]) == 1  # duplicate inside one batch
    assert cache.put_many([entry]) == 0  # and again later
    changed = CacheEntry(entry.key, entry.model_id, entry.fingerprint, entry.operation, entry.request, {"probs": [0.0, 1.0]}, "demo", {})
    assert cache.put_many([changed]) == 0
    assert cache.get_many([entry.key]) == {entry.key: entry.value}
    assert len(cache) == 1


def test_one_output_can_belong_to_several_studies(cache: OutputCache) -> None:
    shared = make_entry(1, study="chapter_a")
    cache.put_many([shared, make_entry(2, study="chapter_a"), make_entry(3, study=None)])
    cache.put_many([make_entry(1, study="chapter_b")])  # same key, another study
    assert cache.studies() == {"chapter_a": 2, "chapter_b": 1}
    assert len(cache) == 3
    assert ("", "tiny-llama", "label_probs", 1) in cache.summary()  # the output in no study


def test_get_many_with_study_links_reused_outputs(cache: OutputCache) -> None:
    cache.put_many([make_entry(i, study="first") for i in range(3)])
    keys = [make_entry(i).key for i in range(5)]
    found, missing = cache.lookup(keys, study="second")
    assert set(found) == set(keys[:3]) and missing == keys[3:]
    assert cache.studies() == {"first": 3, "second": 3}
    assert cache.link_study("second", keys[:3]) == 0
    with pytest.raises(KeyError, match="not in the cache"):
        cache.link_study("second", keys[3:])


def test_get_many_chunks_beyond_sqlite_variable_limits(cache: OutputCache) -> None:
    entries = [make_entry(i) for i in range(5)]
    cache.put_many(entries)
    many = [f"{i:064x}" for i in range(40_000)] + [e.key for e in entries]  # > 32766 host parameters
    assert cache.get_many(many) == {e.key: e.value for e in entries}


def test_bad_entries_store_nothing_of_the_batch(cache: OutputCache) -> None:
    good = make_entry(1)
    wrong_key = CacheEntry("0" * 64, good.model_id, good.fingerprint, good.operation, good.request, good.value)
    with pytest.raises(ValueError, match="key does not match request_key"):
        cache.put_many([good, wrong_key])
    nan_value = CacheEntry.create("m", "fp", "op", {"p": 1}, {"score": float("nan")})
    with pytest.raises(NotJSONableError, match=r"value\['score'\] is nan"):
        cache.put_many([good, nan_value])
    bad_study = CacheEntry.create("m", "fp", "op", {"p": 1}, 1.0, study="../escape")
    with pytest.raises(ValueError, match="not usable as a folder name"):
        cache.put_many([bad_study])
    with pytest.raises(TypeError, match="CacheEntry"):
        cache.put_many([{"key": good.key}])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="not a single str"):
        cache.get_many(good.key)
    assert len(cache) == 0


def test_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "outputs.sqlite"
    path.write_bytes(b"this is a text file, not SQLite" * 100)
    with pytest.raises(CacheError, match="cannot use .* as the output cache"):
        OutputCache(path).get_many(["a" * 64])


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "outputs.sqlite"
    raw = sqlite3.connect(path)
    raw.execute("PRAGMA user_version = 99")
    raw.close()
    with pytest.raises(CacheError, match="schema version 99"):
        len(OutputCache(path))


HOLD_LOCK = """
import sqlite3, sys, time
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
connection.execute("COMMIT")
"""


def test_a_writer_waits_for_another_process_lock(cache: OutputCache) -> None:
    cache.put_many([make_entry(0)])
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(cache.path), "0.6"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        started = time.monotonic()
        assert cache.put_many([make_entry(1)]) == 1  # waited for the other process, then wrote
        assert time.monotonic() - started >= 0.3
    finally:
        assert holder.wait(30) == 0
    assert len(cache) == 2


def test_a_lock_held_too_long_is_a_clear_error(tmp_path: Path) -> None:
    impatient = OutputCache(tmp_path / "outputs.sqlite", busy_timeout_s=0.3)
    impatient.put_many([make_entry(0)])
    blocker = sqlite3.connect(impatient.path, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(CacheBusyError, match="stayed locked"):
            impatient.put_many([make_entry(1)])
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert impatient.put_many([make_entry(1)]) == 1


def test_pickled_cache_reopens_in_the_receiver(cache: OutputCache) -> None:
    cache.put_many([make_entry(0)])
    clone = pickle.loads(pickle.dumps(cache))
    assert clone.path == cache.path and clone._connection is None
    assert clone.get_many([make_entry(0).key]) == {make_entry(0).key: make_entry(0).value}


def _child_writes(store: OutputCache, start: int) -> None:
    store.put_many([make_entry(i) for i in range(start, start + 10)])
    os._exit(0 if len(store) >= start + 10 else 1)


def test_fork_safe(cache: OutputCache) -> None:
    cache.put_many([make_entry(i) for i in range(10)])  # the parent has an open connection
    context = multiprocessing.get_context("fork")
    child = context.Process(target=_child_writes, args=(cache, 10))
    child.start()
    child.join(30)
    assert child.exitcode == 0
    assert len(cache) == 20  # the parent's connection still works and sees the child's rows
    cache.put_many([make_entry(20)])
    assert len(cache) == 21


@pytest.mark.parametrize("damage", ['{"probs": [0.5', "NaN", b"\x00\x01"])
def test_a_damaged_value_names_the_cache_the_key_and_the_way_out(cache: OutputCache, damage: object) -> None:
    from nlgjudge.cache import CacheDamagedError

    entry = make_entry(1)
    cache.put_many([entry])
    cache.close()
    raw = sqlite3.connect(cache.path)
    raw.execute("UPDATE outputs SET value = ? WHERE key = ?", (damage, entry.key))
    raw.commit()
    raw.close()
    with pytest.raises(CacheDamagedError) as caught:
        cache.get_many([entry.key])
    message = str(caught.value)
    assert str(cache.path) in message and entry.key[:16] in message and "not readable JSON" in message
    assert "\n" not in message
