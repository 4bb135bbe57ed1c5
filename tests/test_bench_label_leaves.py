"""The label-leaves benchmark runs end to end on SmolLM2 and ends with its one line (slow)."""

from __future__ import annotations

import re

import pytest

from nlgjudge.bench import label_leaves as bench_label_leaves

pytestmark = pytest.mark.slow


def test_bench_label_leaves_quick_ends_with_the_speedup_and_the_same_bits(capsys, smollm2_on_llamacpp):
    assert bench_label_leaves.main(["--quick", "--threads", "1", "--prompts", "4"]) == 0
    out = capsys.readouterr().out
    last = out.strip().splitlines()[-1]
    match = re.fullmatch(r"label_leaves_speedup=(\S+) same_bits=(True|False) calls_a=(\d+) calls_b=(\d+)", last)
    assert match, last
    assert float(match.group(1)) > 0
    assert match.group(2) == "True"  # computing the leaves side by side never changes a result
    assert int(match.group(3)) < int(match.group(4)), out


def test_bench_label_leaves_rejects_a_count_below_one():
    with pytest.raises(SystemExit) as exit_info:
        bench_label_leaves.main(["--prompts", "0"])
    assert exit_info.value.code == 2
