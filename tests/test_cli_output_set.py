"""`nlgjudge rank`'s four output files are one set: a process killed (SIGKILL) at any step of writing
them leaves the old complete set, the new complete set, or an incomplete set without
`leaderboard.csv`, never files of two runs; the next run removes the leftovers (issue 39)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from itertools import permutations
from pathlib import Path

import pandas as pd
import pytest

from nlgjudge.ranking import MANIFEST_NAME, OUTPUT_FILES, RankResult, write_outputs

TESTS = Path(__file__).resolve().parent
SYSTEMS = ["alpha", "beta", "gamma"]
#: Filesystem steps of swapping a set into a folder that holds one: 4 removals, the manifest, then 4 moves.
SWAP_STEPS = 9

CHILD = """
import os, pathlib, signal, sys
sys.path.insert(0, {tests!r})
from test_cli_output_set import make_result
from nlgjudge.ranking import write_outputs

out, kill_at = pathlib.Path(sys.argv[1]), int(sys.argv[2])
steps = 0
real_replace, real_unlink = os.replace, pathlib.Path.unlink

def step():
    global steps
    steps += 1
    if steps == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)

def replace(src, dst, *args, **kwargs):
    if pathlib.Path(dst).parent == out:
        step()
    return real_replace(src, dst, *args, **kwargs)

def unlink(self, *args, **kwargs):
    if self.parent == out:
        step()
    return real_unlink(self, *args, **kwargs)

os.replace, pathlib.Path.unlink = replace, unlink
write_outputs(make_result(3), out)
os.kill(os.getpid(), signal.SIGKILL)  # killed after its last step
"""


def make_result(n_contexts: int) -> RankResult:
    """A complete ranking run on ``n_contexts`` contexts of three systems, without a model."""
    from nlgjudge.analysis.rank import analyse, pair_records, report_markdown
    from nlgjudge.studies.rank import JUDGMENT_COLUMNS

    rows = [(f"c{c}", a, b, 0.2 + 0.6 * ((c + 2 * i + j) % 5) / 4, False, 1, False, 1.0)
            for c in range(n_contexts) for i, j in permutations(range(3), 2) for a, b in [(SYSTEMS[i], SYSTEMS[j])]]
    analysis = analyse(pd.DataFrame(rows, columns=JUDGMENT_COLUMNS), SYSTEMS, n_boot=20)
    report = report_markdown(analysis, judge="toy", runtime="none", prompt="p", budget=1.0, planned=len(rows), possible=len(rows))
    return RankResult(leaderboard=analysis.leaderboard, pairs=pair_records(analysis, SYSTEMS), analysis=analysis,
                      report=report, judge="toy", runtime="none")


def contents(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in OUTPUT_FILES if (folder / name).exists()}


@pytest.fixture(scope="module")
def sets(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """The bytes of the old set (4 contexts) and of the new one (3 contexts), each written whole."""
    old, new = tmp_path_factory.mktemp("old"), tmp_path_factory.mktemp("new")
    write_outputs(make_result(4), old)
    write_outputs(make_result(3), new)
    assert b"Contexts: 4" in contents(old)["report.md"] and b"Contexts: 3" in contents(new)["report.md"]
    return contents(old), contents(new)


@pytest.mark.parametrize("kill_at", range(1, SWAP_STEPS + 2))
def test_a_kill_at_any_step_leaves_no_mixed_set(tmp_path: Path, sets: tuple[dict[str, bytes], dict[str, bytes]],
                                                kill_at: int) -> None:
    old, new = sets
    out = tmp_path / "out"
    write_outputs(make_result(4), out)
    assert contents(out) == old  # the plotting is deterministic, so bytes tell the two sets apart
    child = subprocess.run([sys.executable, "-c", CHILD.format(tests=str(TESTS)), str(out), str(kill_at)],
                           capture_output=True, text=True, timeout=120)
    assert child.returncode == -signal.SIGKILL, child.stderr
    left = contents(out)
    kinds = {"old" if data == old[name] else "new" if data == new[name] else "corrupt" for name, data in left.items()}
    assert len(kinds) <= 1 and "corrupt" not in kinds, f"killed at step {kill_at}: {sorted(left)} are {kinds}"
    if "leaderboard.csv" in left:
        assert sorted(left) == sorted(OUTPUT_FILES), f"killed at step {kill_at}: a leaderboard beside an incomplete set"
    # The next run cleans up whatever the killed one left (its staging folder) and writes a whole set.
    write_outputs(make_result(3), out)  # a killed run's files are all in its manifest: no --force needed
    assert sorted(p.name for p in out.iterdir()) == sorted([*OUTPUT_FILES, MANIFEST_NAME])
    assert contents(out) == new
    assert all((out / name).stat().st_mode & 0o777 == 0o666 & ~_umask() for name in OUTPUT_FILES)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
