"""The judge screen on tidy frames (analysis.judges): the table and sentence every chapter shows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from nlgjudge.analysis.judges import agreement_table, order_agreements, outcomes_sentence


def _frame(p_of, n_contexts: int = 8, n: int = 6) -> pd.DataFrame:
    rows = [{"context_id": f"c{c}", "template": 1, "aspect": "COH", "i": i, "j": j, "p_a": p_of(i, j)}
            for c in range(n_contexts) for i in range(n) for j in range(n) if i != j]
    return pd.DataFrame(rows)


QUALITY = np.linspace(0, 3, 6)
CONSISTENT = _frame(lambda i, j: float(1 / (1 + np.exp(-(QUALITY[i] - QUALITY[j] + 1)))))
ALWAYS_A = _frame(lambda i, j: 0.95)


def test_every_run_passing_is_one_range_and_a_degenerate_run_is_named_with_its_reason() -> None:
    both = order_agreements({"torch, a": CONSISTENT, "llama.cpp, a": CONSISTENT})
    sentence = outcomes_sentence(both, "(runtime, dataset) runs")
    assert sentence == ("passes the judge screen in all 2 (runtime, dataset) runs: its two orders agree on 100% [63%, 100%], "
                        "100% [63%, 100%] of pairs per context after debiasing, every interval above its chance level (52%; the lowest end 63%)")
    mixed = outcomes_sentence(order_agreements({"x": CONSISTENT, "y": ALWAYS_A}))
    assert mixed.startswith("fails the judge screen in 1 of its 2 runs (y: its two orders agree on 50% [18%, 82%]")
    assert mixed.endswith("; it passes in the other 1")
    one = outcomes_sentence(order_agreements({"x": CONSISTENT}))
    assert one.startswith("passes the judge screen: its two orders agree on 100% [63%, 100%] of pairs per context")
    assert outcomes_sentence({}) == "has no run to test"


def test_the_table_has_one_row_per_judge_with_the_gates_outcome() -> None:
    table = agreement_table({("d", "good"): CONSISTENT, ("d", "bad"): ALWAYS_A}, ["dataset", "model"])
    assert table["outcome"].tolist() == ["passes", "fails: not shown to read the texts"]
    named = agreement_table({"good": CONSISTENT}, ["judge"])  # a key named "judge" keeps its name
    assert named["judge"].tolist() == ["good"]
    assert table["pairs in both orders"].tolist() == [120, 120] and table["contexts"].tolist() == [8, 8]


def test_a_whole_run_judge_is_screened_with_its_contexts_as_comparison_sets() -> None:
    from nlgjudge.analysis.judges import whole_run_gates, whole_run_table, whole_run_words

    def whole(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.rename(columns={"i": "first", "j": "second"})[["context_id", "first", "second", "p_a"]]

    judged = {"good": whole(CONSISTENT), "bad": whole(ALWAYS_A)}
    gates = whole_run_gates(judged)
    assert gates["good"] is None and gates["bad"].startswith("fails the judge screen: its two orders agree on 50%")
    assert whole_run_words(judged)["good"].startswith("passes the judge screen: its two orders agree on 100% [63%, 100%]")
    table = whole_run_table(judged)
    assert table.index.tolist() == ["good", "bad"]
    assert table["outcome"].tolist() == ["passes", "fails: not shown to read the texts"]
    assert table["orders agree (%, 95% interval)"].iloc[0] == "100% [63%, 100%]"
