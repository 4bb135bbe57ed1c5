"""A real `nlgjudge rank` (packaged SmolLM2-135M on llama.cpp) killed with SIGKILL after its first
context keeps what it judged, and the rerun judges only the rest (issue 39; marked slow)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from nlgjudge.cache import OutputCache
from nlgjudge.engine import Judge
from nlgjudge.ranking import rank_outputs

pytestmark = pytest.mark.slow

SYSTEMS = ("lead", "short", "odd")
N_CONTEXTS = 12
PER_CONTEXT = len(SYSTEMS) * (len(SYSTEMS) - 1)  # ordered pairs of different texts


def summaries() -> pd.DataFrame:
    rows = []
    for c in range(N_CONTEXTS):
        source = " ".join(f"Sentence {k} of article {c}: the council of town {c} met on day {k} and voted on the budget ."
                          for k in range(12))
        texts = {"lead": f"The council of town {c} met and voted on the budget .", "short": f"Town {c} voted .",
                 "odd": f"A storm closed the schools of town {c} for {c + 2} days ."}
        rows += [{"context_id": f"article-{c}", "source": source, "system": s, "output": texts[s]} for s in SYSTEMS]
    return pd.DataFrame(rows)


def stored(db: Path) -> int:
    """Outputs committed to the cache, read the way another process sees them (0 before the table exists)."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as connection:
            return int(connection.execute("SELECT COUNT(*) FROM outputs").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def start_rank(tmp_path: Path, model: str) -> tuple[Path, Path, Path, subprocess.Popen[str]]:
    """`nlgjudge rank` on the summaries in a child process: (input, cache database, --out, the process)."""
    path = tmp_path / "outputs.csv"
    summaries().to_csv(path, index=False)
    db, out = tmp_path / "outputs.sqlite", tmp_path / "ranking"
    env = {**os.environ, "NLGJUDGE_OUTPUT_CACHE": str(db)}
    run = subprocess.Popen([sys.executable, "-m", "nlgjudge", "rank", str(path), "--model", model,
                            "--out", str(out), "--bootstrap", "20", "--backend", "llamacpp"],
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           preexec_fn=_default_signals)
    return path, db, out, run


def _default_signals() -> None:
    """The child gets Ctrl-C and SIGTERM as a user's command does: a test runner started in the
    background (nohup, a CI service) ignores SIGINT, and its children would inherit that."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)


def wait_for_first_context(run: subprocess.Popen[str], db: Path, seconds: float = 50) -> None:
    """Until the run has stored its first context's judgments, ended, or ``seconds`` have passed."""
    deadline = time.monotonic() + seconds
    while stored(db) < PER_CONTEXT and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)


def test_a_killed_rank_keeps_its_finished_contexts_and_the_rerun_judges_only_the_rest(
    tmp_path: Path, smollm2_on_llamacpp: str
) -> None:
    path, db, out, run = start_rank(tmp_path, smollm2_on_llamacpp)
    try:
        wait_for_first_context(run, db)
        assert run.poll() is None, (f"the run ended ({run.returncode}) with {stored(db)} of {N_CONTEXTS * PER_CONTEXT} "
                                    f"judgments stored and none stored before: {run.stderr.read() if run.stderr else ''}")
        assert stored(db) >= PER_CONTEXT, "no context reached the cache within 50 s"
        os.kill(run.pid, signal.SIGKILL)
    finally:
        if run.poll() is None:
            run.kill()
        run.wait(timeout=30)
    assert run.returncode == -signal.SIGKILL
    kept = stored(db)
    assert PER_CONTEXT <= kept < N_CONTEXTS * PER_CONTEXT
    assert OutputCache(db).check() == []  # the kill damaged nothing
    assert not (out / "leaderboard.csv").exists()  # and no set was written before judging ended

    judge = Judge(smollm2_on_llamacpp, cache=OutputCache(db), study="rank", backend="llamacpp", progress=False)
    result = rank_outputs(path, judge=judge, out=out, n_boot=20, progress=False)
    assert judge.cache_stats.from_cache == kept  # what the killed run judged is not judged again
    assert judge.cache_stats.computed == N_CONTEXTS * PER_CONTEXT - kept
    assert stored(db) == N_CONTEXTS * PER_CONTEXT and OutputCache(db).check() == []
    assert sorted(result.leaderboard["system"]) == sorted(SYSTEMS) and (out / "leaderboard.csv").exists()


@pytest.mark.parametrize(("signum", "status", "word"), [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_ctrl_c_or_sigterm_ends_in_one_line_with_the_shells_status_and_leaves_nothing_behind(
    tmp_path: Path, smollm2_on_llamacpp: str, signum: int, status: int, word: str
) -> None:
    path, db, out, run = start_rank(tmp_path, smollm2_on_llamacpp)
    try:
        wait_for_first_context(run, db)
        assert run.poll() is None and stored(db) >= PER_CONTEXT
        os.kill(run.pid, signum)
        _, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith(("judging", "This run", "\r"))]
    assert run.returncode == status, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"{word}: ") and "kept in the output cache; run the same command to resume" in last, lines
    kept = stored(db)
    assert f"{kept} model outputs of this run kept" in last
    # no lock or staging folder is left, and the --out folder this run made (empty) goes with it (probe 12)
    assert not out.exists()
