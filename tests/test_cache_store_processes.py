"""OutputCache across processes: two concurrent writers, and a run killed with SIGKILL again and again.

The worker below behaves like a real judging run: for each small batch it looks the keys up, computes
what is missing (here: a deterministic function plus a short pause standing in for the model) and
stores the batch with one ``put_many``.
"""

from __future__ import annotations

import importlib.util
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from nlgjudge.cache import OutputCache

WORKER = '''
import math, sys, time
from nlgjudge.cache import CacheEntry, OutputCache, request_key

MODEL, FINGERPRINT, OPERATION = "tiny-llama", "sha256:0123", "label_probs"


def request(i):
    return {"prompt": f"Passage {i % 97}\\nSummary A: {i}\\nSummary B: {i + 1}\\nAnswer:", "labels": ["A", "B"], "seed": 0}


def value(i):
    p = 1 / (1 + math.exp(-math.sin(i) * 3))
    return {"probs": [p, 1 - p], "logprobs": [math.log(p), math.log1p(-p)], "pad": "x" * 200}


def key(i):
    return request_key(MODEL, FINGERPRINT, OPERATION, request(i))


def run(db, items, batch, pause, study, look_up_first=True, announce_insert=False):
    cache = OutputCache(db)
    if announce_insert:  # say when SQLite starts inserting rows, so a kill can land inside the transaction
        said = []

        def trace(statement):
            if statement.startswith("INSERT OR IGNORE INTO outputs") and not said:
                said.append(print("inserting", flush=True))

        connection = cache._connect()
        connection.set_trace_callback(trace)
        # A slow disk, simulated: the transaction lasts long enough on any machine for a kill to land in it.
        connection.set_progress_handler(lambda: time.sleep(0.001), 250)
    computed = cached = 0
    print("ready", flush=True)
    for start in range(0, len(items), batch):
        chunk = items[start : start + batch]
        keys = {key(i): i for i in chunk}
        found = cache.get_many(list(keys), study=study) if look_up_first else {}
        cached += len(found)
        missing = [i for k, i in keys.items() if k not in found]
        if not missing:
            continue
        time.sleep(pause)  # the model would be computing here
        entries = [CacheEntry.create(MODEL, FINGERPRINT, OPERATION, request(i), value(i), study=study,
                                     meta={"item": i}) for i in missing]
        computed += len(missing)
        print(f"writing {len(entries)}", flush=True)
        cache.put_many(entries)
        print("written", flush=True)
    print(f"done computed={computed} cached={cached}", flush=True)


if __name__ == "__main__":
    db, first, last, step, batch, pause, study, mode = sys.argv[1:9]
    items = list(range(int(first), int(last), int(step)))
    if len(sys.argv) > 9:  # wait for the starting gun, so that two writers really overlap
        while not __import__("os").path.exists(sys.argv[9]):
            time.sleep(0.001)
    run(db, items, int(batch), float(pause), study, look_up_first=(mode != "blind"), announce_insert=(mode == "trace"))
'''


@pytest.fixture()
def worker(tmp_path: Path) -> tuple[Path, ModuleType]:
    path = tmp_path / "cache_worker.py"
    path.write_text(WORKER)
    spec = importlib.util.spec_from_file_location("cache_worker", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return path, module


def start(script: Path, *args: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(script), *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def check_consistent(db: Path, module: ModuleType, items: list[int], studies: dict[str, set[int]]) -> None:
    """Every expected output exactly once, with its exact value, in the right studies; nothing else."""
    raw = sqlite3.connect(db)
    assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    rows = raw.execute("SELECT key, value FROM outputs").fetchall()
    links = raw.execute("SELECT study, key FROM study_outputs").fetchall()
    raw.close()
    expected = {module.key(i): i for i in items}
    assert len(rows) == len({key for key, _ in rows}) == len(expected)
    assert {key for key, _ in rows} == set(expected)
    cache = OutputCache(db)
    values = cache.get_many(list(expected))
    assert all(values[key] == module.value(i) for key, i in expected.items())  # exact floats
    assert sorted(links) == sorted((study, module.key(i)) for study, members in studies.items() for i in members)
    cache.close()


def test_two_concurrent_writers_with_overlapping_keys(worker: tuple[Path, ModuleType], tmp_path: Path) -> None:
    script, module = worker
    db, gun = tmp_path / "shared.sqlite", tmp_path / "go"
    # A looks up before computing; B writes blindly, so the overlap is really written twice, and both
    # create the (not yet existing) database at the same moment. B walks backwards to meet A midway.
    a = start(script, db, 0, 1200, 1, 20, 0.0, "a", "lookup", gun)
    b = start(script, db, 1999, 399, -1, 20, 0.0, "b", "blind", gun)
    time.sleep(0.3)  # both interpreters up and waiting
    gun.touch()
    outputs = [process.communicate(timeout=120) for process in (a, b)]
    assert [process.returncode for process in (a, b)] == [0, 0], outputs
    check_consistent(db, module, list(range(2000)), {"a": set(range(1200)), "b": set(range(400, 2000))})


def test_killed_again_and_again_then_resumed_loses_and_duplicates_nothing(
    worker: tuple[Path, ModuleType], tmp_path: Path
) -> None:
    script, module = worker
    # The 8 ms pause per batch of 10 caps a run at 1250 outputs/s: ten kills after at most 0.15 s each
    # cannot finish 3000 outputs, however fast the machine.
    db, total, batch = tmp_path / "run.sqlite", 3000, 10
    rng = random.Random(20240607)
    counts, mid_write = [], 0
    for _ in range(10):
        run = start(script, db, 0, total, 1, batch, 0.008, "study", "lookup")
        assert run.stdout is not None and run.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.02, 0.15))
        run.send_signal(signal.SIGKILL)
        out, err = run.communicate(timeout=60)
        assert run.returncode == -signal.SIGKILL, f"the run ended before it was killed; make it longer\n{err}"
        mid_write += out.rstrip().endswith(tuple(f"writing {n}" for n in range(1, batch + 1)))
        counts.append(OutputCache(db).count() if db.exists() else 0)
        # A batch is one transaction: whatever the moment of the kill, only whole batches are stored.
        assert counts[-1] % batch == 0, counts
    assert counts == sorted(counts) and 0 < counts[-1] < total, counts

    done_before = counts[-1]
    final = start(script, db, 0, total, 1, batch, 0.0, "study", "lookup")
    out, err = final.communicate(timeout=120)
    assert final.returncode == 0, err
    # The resumed run recomputes exactly what had not been stored, and nothing that had.
    assert out.splitlines()[-1] == f"done computed={total - done_before} cached={done_before}"
    check_consistent(db, module, list(range(total)), {"study": set(range(total))})
    print(f"rows after each kill: {counts}; kills during a write: {mid_write}")


def test_a_kill_inside_one_large_transaction_stores_none_of_it(worker: tuple[Path, ModuleType], tmp_path: Path) -> None:
    script, module = worker
    db = tmp_path / "big.sqlite"
    rng = random.Random(3)
    for attempt in range(3):
        run = start(script, db, 0, 3000, 1, 3000, 0.0, "study", "trace")  # one batch = one long transaction
        assert run.stdout is not None
        assert [run.stdout.readline().strip() for _ in range(3)] == ["ready", "writing 3000", "inserting"]
        time.sleep(rng.uniform(0.02, 0.3))  # with the simulated slow disk, inserting takes over a second
        run.send_signal(signal.SIGKILL)
        out, _ = run.communicate(timeout=60)
        assert run.returncode == -signal.SIGKILL and "written" not in out, "the write finished before the kill"
        assert OutputCache(db).count() == 0, f"attempt {attempt}: a partial transaction survived"
    check_consistent(db, module, [], {})


OPENER = '''
import sys, time
from pathlib import Path
from nlgjudge.cache import OutputCache

gun = Path(sys.argv[2])
while not gun.exists():
    time.sleep(0.001)
cache = OutputCache(sys.argv[1])
cache._connect()
cache.close()
'''


def test_processes_creating_one_new_cache_together_never_see_it_empty(tmp_path: Path) -> None:
    # A new cache is linked into place whole: no opener may meet the empty file that a plain
    # sqlite3.connect leaves for an instant (and that is refused as someone else's file).
    script = tmp_path / "opener.py"
    script.write_text(OPENER)
    for round_ in range(6):
        db, gun = tmp_path / f"new{round_}.sqlite", tmp_path / f"go{round_}"
        openers = [start(script, db, gun) for _ in range(6)]
        time.sleep(0.5)
        gun.touch()
        outputs = [process.communicate(timeout=120) for process in openers]
        assert [process.returncode for process in openers] == [0] * 6, outputs
        with OutputCache(db) as cache:
            assert cache.count() == 0
        assert sorted(path.name for path in tmp_path.glob(f"*new{round_}*")) == [f"new{round_}.sqlite"]
