"""One package for the benchmarks (issue 38): ``python -m nlgjudge.bench NAME ...``, checked without a model.

The entry point dispatches to one module per benchmark; with an option first (or nothing) it is
the judge-engine benchmark, as ``python -m nlgjudge.bench --quick`` was before; every ``make
bench*`` target goes through it; no benchmark module is left on the package's top floor.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import nlgjudge
from nlgjudge import bench

LIBRARY = Path(nlgjudge.__file__).resolve().parent
MAKEFILE = LIBRARY.parents[1] / "Makefile"
#: make target -> the benchmark it runs
TARGETS = {"bench": "engine", "bench-sharing": "sharing", "bench-decoding": "decoding",
           "bench-floating-trunk": "floating-trunk", "bench-label-leaves": "label-leaves", "bench-server": "server"}


def test_no_benchmark_module_on_the_top_floor():
    assert sorted(p.name for p in LIBRARY.glob("bench*.py")) == []
    assert {p.stem for p in (LIBRARY / "bench").glob("*.py")} >= {"engine", "sharing", "decoding", "floating_trunk", "label_leaves"}


@pytest.mark.parametrize(("name", "module"), sorted(bench.BENCHMARKS.items()))
def test_each_name_runs_its_own_module_with_the_rest_of_the_arguments(name, module, monkeypatch):
    seen = []
    monkeypatch.setattr(importlib.import_module(module), "main", lambda argv: seen.append(argv) or 0)
    assert bench.main([name, "--quick", "--threads", "1"]) == 0
    assert seen == [["--quick", "--threads", "1"]]


@pytest.mark.parametrize(("spelling", "name"), [("--gpu-check", "gpu-check"), ("--server", "server")])
def test_the_issues_option_spellings_name_their_benchmark(spelling, name, monkeypatch):
    seen = []
    monkeypatch.setattr(importlib.import_module(bench.BENCHMARKS[name]), "main", lambda rest: seen.append(rest) or 0)
    assert bench.main([spelling, "--quick"]) == 0
    assert seen == [["--quick"]]


@pytest.mark.parametrize("argv", [["--quick"], ["--compare-backends", "--quick", "--repeats", "3"], []])
def test_options_first_or_nothing_mean_the_engine_benchmark_as_before(argv, monkeypatch):
    seen = []
    monkeypatch.setattr(importlib.import_module("nlgjudge.bench.engine"), "main", lambda rest: seen.append(rest) or 0)
    assert bench.main(argv) == 0
    assert seen == [argv]


def test_an_unknown_name_is_a_clear_error(capsys):
    assert bench.main(["sharring", "--quick"]) == 2
    err = capsys.readouterr().err
    assert "unknown benchmark 'sharring'" in err and "floating-trunk" in err


def test_the_engine_options_still_reach_the_engine_benchmark(capsys):
    # the real engine module: its own argument check answers (no model is loaded)
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["--compare-backends", "--quick", "--repeats", "0"])
    assert exit_info.value.code == 2
    assert "--repeats must be at least 1, got 0" in capsys.readouterr().err


def test_every_make_bench_target_calls_the_entry_point_with_its_name():
    text = MAKEFILE.read_text()
    for target, name in TARGETS.items():
        recipe = re.search(rf"^{re.escape(target)}:.*\n\t(.+)$", text, flags=re.MULTILINE)
        assert recipe, f"no make target {target}"
        expected = "-m nlgjudge.bench $(BENCH_ARGS)" if name == "engine" else f"-m nlgjudge.bench {name} $(BENCH_ARGS)"
        assert recipe.group(1).endswith(expected), recipe.group(1)


def test_python_dash_m_reaches_the_named_benchmark():
    out = subprocess.run([sys.executable, "-m", "nlgjudge.bench", "label-leaves", "--help"],
                         capture_output=True, text=True, check=True).stdout
    assert out.startswith("usage: python -m nlgjudge.bench label-leaves")
