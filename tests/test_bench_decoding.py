"""The llama.cpp decoding benchmark runs end to end on SmolLM2 and ends with its one line (slow)."""

from __future__ import annotations

import re

import pytest

from nlgjudge.bench import decoding as bench_decoding

pytestmark = pytest.mark.slow


def test_bench_decoding_quick_ends_with_the_speedup_and_the_same_bits(capsys, smollm2_on_llamacpp):
    # --quick: 12 SummEval prompts, two decoding groups, so (a) has a prefix to keep that (b) does not
    assert bench_decoding.main(["--quick", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    tokens = {line[:3]: int(line.split()[-3]) for line in out.splitlines() if line[:3] in ("(a)", "(b)", "(c)")}
    assert tokens["(a)"] < tokens["(b)"], out  # later groups found the article cached
    last = out.strip().splitlines()[-1]
    match = re.fullmatch(r"keep_trunk_speedup=(\S+) same_bits=(True|False) max_abs_diff=(\S+)", last)
    assert match, last
    assert float(match.group(1)) > 0
    # SmolLM2's kernels do not depend on the batch: any chunking gives the same bits.
    assert match.group(2) == "True" and float(match.group(3)) == 0


def test_bench_decoding_rejects_a_count_below_one():
    with pytest.raises(SystemExit) as exit_info:
        bench_decoding.main(["--prompts", "0"])
    assert exit_info.value.code == 2
