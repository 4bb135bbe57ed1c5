"""The judge-engine benchmark (``nlgjudge.bench.engine``): its median timing, and ``--compare-backends`` end to end.

The end-to-end run uses SmolLM2-135M on a few comparisons (marked slow); it checks the report's
shape, never a speed.
"""

from __future__ import annotations

import re

import pytest

from nlgjudge.bench import engine as bench


def test_timed_returns_the_median_of_the_runs_and_calls_before_each_untimed(monkeypatch):
    clock = iter([0.0, 3.0, 10.0, 11.0, 20.0, 25.0])  # runs of 3, 1 and 5 seconds
    monkeypatch.setattr(bench.time, "perf_counter", lambda: next(clock))
    calls = []
    median, seconds, result = bench._timed(lambda: calls.append("run") or len(calls), 3, before=lambda: calls.append("before"))
    assert seconds == [3.0, 1.0, 5.0]
    assert median == 3.0
    assert calls == ["before", "run"] * 3
    assert result == 6  # the last run's result


def test_timed_once_is_the_single_time():
    median, seconds, result = bench._timed(lambda: "x", 1)
    assert median == seconds[0] and len(seconds) == 1 and result == "x"


def test_repeats_below_one_is_a_clear_error(capsys):
    with pytest.raises(SystemExit) as err:
        bench.compare_backends(["--quick", "--repeats", "0"])
    assert err.value.code == 2
    assert "--repeats must be at least 1, got 0" in capsys.readouterr().err


@pytest.mark.slow
def test_compare_backends_reports_medians_of_the_repeats_and_ends_with_the_ratios(capsys, smollm2_on_llamacpp):
    argv = ["--quick", "--candidates", "3", "--max-pairs", "2", "--generate", "1", "--max-new-tokens", "4", "--repeats", "2", "--threads", "1"]
    assert bench.compare_backends(argv) == 0
    out = capsys.readouterr().out
    assert "median time s" in out and "(2 runs of every side, in a row; median times, rates per median time; an even " in out
    # Every timed row shows the range of its two runs.
    assert len(re.findall(r"\d+\.\d-\d+\.\d", out)) >= 5
    last = out.strip().splitlines()[-1]
    match = re.fullmatch(
        r"llamacpp_vs_torch=(\S+) llamacpp_vs_prefix_cache_loop=(\S+) rank_agreement=(\S+) max_abs_diff=(\S+) generation_vs_torch=(\S+)",
        last,
    )
    assert match, last
    assert float(match.group(1)) > 0 and float(match.group(2)) > 0
    # Decoding speed is a difference of two timings of 3 tokens: on a busy machine it can be lost in
    # the noise, and then the report must say so rather than print a number.
    generation = float(match.group(5))
    assert generation > 0 or (match.group(5) == "nan" and "decoding speed not measurable" in out)
    assert 0 <= float(match.group(4)) < 0.2
