"""Runs sharing a cache do not compute the same request at the same time (issue 48): a judge claims
the keys of the step it computes (:mod:`nlgjudge.cache.claims`); another run leaves them to it and
reads them from the cache. A dead run's claims bind no one; a finished run leaves nothing behind."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from nlgjudge.cache import OutputCache, request_key
from nlgjudge.cache.claims import claim, claims_folder

TESTS = Path(__file__).resolve().parent

KEYS = [request_key("m", "fp", "label_probs", {"prompt": f"p{i}"}) for i in range(3)]

HOLD = """
import sys, time
from nlgjudge.cache import OutputCache
from nlgjudge.cache.claims import claim
with claim(OutputCache(sys.argv[1]), sys.argv[2:]) as mine:
    print(len(mine), flush=True)
    time.sleep(60)
"""


def test_a_key_claimed_by_a_live_run_is_left_to_it_and_free_once_it_dies(tmp_path: Path) -> None:
    cache = OutputCache(tmp_path / "c.sqlite")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(cache.path), KEYS[0]], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "1"
        with claim(cache, KEYS) as mine:
            assert mine == set(KEYS[1:])
    finally:
        holder.kill()  # like kill -9: the kernel drops its lock, its claim file stays
        holder.wait()
    with claim(cache, KEYS) as mine:
        assert mine == set(KEYS)
    assert not claims_folder(cache).exists()  # released claims leave no folder behind


RACE = """
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from engine_utils import tiny_handle
from nlgjudge.cache import OutputCache
from nlgjudge.engine import ClassifyRequest, Judge

judge = Judge(tiny_handle("qwen2"), cache=OutputCache(sys.argv[1]), progress=False, chunk_size=2)
real = judge._compute_label_probs

def slow(chunk, *args):  # a step that takes long enough for the other run to meet it
    time.sleep(0.4)
    return real(chunk, *args)

judge._compute_label_probs = slow
requests = [ClassifyRequest(f"Question {i}: good, A or B? Answer:", (" A", " B")) for i in range(8)]
while not Path(sys.argv[2]).exists():  # both runs start judging together
    time.sleep(0.01)
results = judge.label_probs(requests)
print(json.dumps({"computed": judge.last_run.computed, "probs": [list(map(float, r.probs)) for r in results]}))
"""


def test_two_runs_sharing_a_cache_compute_each_request_once(tmp_path: Path) -> None:
    go = tmp_path / "go"
    runs = [subprocess.Popen([sys.executable, "-c", RACE, str(tmp_path / "c.sqlite"), str(go), str(TESTS)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    time.sleep(0.5)
    go.touch()
    outs = []
    for run in runs:
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
        outs.append(json.loads(out.strip().splitlines()[-1]))
    assert sum(o["computed"] for o in outs) == 8, [o["computed"] for o in outs]  # not 16: no request computed twice
    assert outs[0]["probs"] == outs[1]["probs"]
    assert OutputCache(tmp_path / "c.sqlite").count() == 8
    assert not (tmp_path / "c.sqlite.claims").exists()


def test_a_request_claimed_by_a_run_that_dies_is_computed_by_the_waiting_one(tmp_path: Path) -> None:
    import threading

    from engine_utils import tiny_handle

    from nlgjudge.engine import ClassifyRequest, Judge

    cache = OutputCache(tmp_path / "c.sqlite")
    judge = Judge(tiny_handle("qwen2"), cache=cache, progress=False)
    requests = [ClassifyRequest(f"Question {i}: good, A or B? Answer:", (" A", " B")) for i in range(4)]
    taken = judge.request_keys("label_probs", requests[:1])
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(cache.path), *taken], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "1"
    killer = threading.Timer(1.0, holder.kill)  # it dies without storing its output
    killer.start()
    try:
        results = judge.label_probs(requests)
    finally:
        killer.cancel()
        holder.kill()
        holder.wait()
    assert len(results) == 4 and judge.last_run.computed == 4 and cache.count() == 4
