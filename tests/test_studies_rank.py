"""Judging a user's systems for `nlgjudge rank` on a tiny random model: all pairs, ties, an active budget, resume."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from engine_utils import tiny_handle

from nlgjudge.cache import OutputCache
from nlgjudge.data.user_outputs import check_user_outputs
from nlgjudge.engine import Judge
from nlgjudge.prompts.ranking import RankPrompt
from nlgjudge.studies.elo import elo_requests
from nlgjudge.studies.rank import NotCachedError, comparison_request, context_plans, judge_comparisons, planned_counts

SYSTEMS = ["s0", "s1", "s2", "s3"]


def outputs(n_contexts: int = 3, twins: bool = False) -> pd.DataFrame:
    rows = []
    for c in range(n_contexts):
        for k, system in enumerate(SYSTEMS):
            text = f"summary {k} of article {c} ." if not (twins and k == 3) else f"summary 2 of article {c} ."
            rows.append({"context_id": f"c{c}", "source": f"Article {c} about the council .", "system": system, "output": text})
    return check_user_outputs(pd.DataFrame(rows))


class CountingJudge(Judge):
    """The real engine, counting what it is asked."""

    requested = 0

    def label_probs(self, requests):  # type: ignore[no-untyped-def]
        self.requested += len(requests)
        return super().label_probs(requests)


def judge(tmp_path, name: str = "c.sqlite") -> CountingJudge:
    return CountingJudge(tiny_handle("qwen2"), cache=OutputCache(tmp_path / name), study="rank", progress=False)


def test_full_budget_judges_every_ordered_pair_and_reruns_from_the_cache(tmp_path) -> None:
    first = judge(tmp_path)
    frame = judge_comparisons(first, outputs(), SYSTEMS, RankPrompt())
    assert len(frame) == 3 * 12 and first.requested == 36 and not frame["from_cache"].any()
    assert set(zip(frame["first"], frame["second"])) == {(a, b) for a in SYSTEMS for b in SYSTEMS if a != b}
    again = judge(tmp_path)
    replay = judge_comparisons(again, outputs(), SYSTEMS, RankPrompt(), allow_compute=False)
    assert replay["from_cache"].all()
    np.testing.assert_array_equal(replay["p_a"].to_numpy(), frame["p_a"].to_numpy())


def test_identical_outputs_are_ties_not_sent_to_the_model(tmp_path) -> None:
    counting = judge(tmp_path)
    frame = judge_comparisons(counting, outputs(twins=True), SYSTEMS, RankPrompt())
    ties = frame[frame["identical"]]
    assert len(ties) == 3 * 2 and (ties["p_a"] == 0.5).all()
    assert counting.requested == 3 * 10


def test_an_active_budget_spends_its_fraction_and_replays_identically(tmp_path) -> None:
    data = outputs(n_contexts=4)
    counts = planned_counts(context_plans(data, SYSTEMS), 0.5)
    assert counts == {f"c{c}": 6 for c in range(4)}
    first = judge(tmp_path)
    frame = judge_comparisons(first, data, SYSTEMS, RankPrompt(), budget=0.5, seed=3, progress=False)
    assert len(frame) == 24 and frame.groupby("context_id").size().eq(6).all()
    assert not frame.duplicated(["context_id", "first", "second"]).any()
    assert frame["round"].max() == 6  # one comparison per context and round
    # Each round's picks spread over different pairs (the batch is planned before its outcomes).
    first_round = frame[frame["round"] == 1]
    assert first_round[["first", "second"]].apply(frozenset, axis=1).nunique() > 1
    again = judge(tmp_path)
    replay = judge_comparisons(again, data, SYSTEMS, RankPrompt(), budget=0.5, seed=3, allow_compute=False, progress=False)
    pd.testing.assert_frame_equal(replay.drop(columns="from_cache"), frame.drop(columns="from_cache"))


def test_nothing_cached_and_no_computing_allowed_is_an_error(tmp_path) -> None:
    with pytest.raises(NotCachedError, match="36 of 36 comparisons are not in the cache"):
        judge_comparisons(judge(tmp_path), outputs(), SYSTEMS, RankPrompt(), allow_compute=False)


def test_budget_outside_the_unit_interval_is_refused() -> None:
    plans = context_plans(outputs(), SYSTEMS)
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError, match=r"budget must lie in \(0, 1\]"):
            planned_counts(plans, bad)


def test_the_default_request_is_the_elo_studys_request(tiny_dataset) -> None:
    """So the released Elo judgments answer the rank tool's comparisons (the book's chapter relies on it)."""
    ds = tiny_dataset(n_contexts=1, n_candidates=3)
    requests, frame = elo_requests(ds, style="chat")
    rows = ds.frame.rename(columns={"text": "output"})[["context_id", "source", "system", "output"]]
    checked = check_user_outputs(rows)
    systems = list(dict.fromkeys(checked["system"]))
    plan = context_plans(checked, systems)[0]
    mine = comparison_request(plan, 0, 1, RankPrompt(), "chat", systems)
    theirs = requests[0]
    assert (frame.iloc[0]["first"], frame.iloc[0]["second"]) == ("S0", "S1")
    assert (mine.prompt, mine.labels, mine.response_prefix, mine.label_end) == (
        theirs.prompt, theirs.labels, theirs.response_prefix, theirs.label_end)
