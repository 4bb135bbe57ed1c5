"""The statistics of `nlgjudge rank` on synthetic judges with known answers (no model)."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from nlgjudge.analysis.rank import (
    LEADERBOARD_COLUMNS,
    analyse,
    debiased,
    family_warnings,
    pair_records,
    report_markdown,
)

SYSTEMS = ["low", "mid", "high", "top"]
QUALITY = {"low": -1.5, "mid": 0.0, "twin": 0.0, "high": 1.0, "top": 2.0}


def judgments(n_contexts: int = 12, pull: float = 0.0, noise: float = 0.3, seed: int = 0, systems=SYSTEMS) -> pd.DataFrame:
    """A judge with P(A) = sigmoid(q_first - q_second + pull + noise) on every ordered pair of every context."""
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(n_contexts):
        for a, b in permutations(systems, 2):
            p = float(expit(QUALITY[a] - QUALITY[b] + pull + noise * rng.normal()))
            rows.append((f"c{c}", a, b, p, False, 1, False))
    return pd.DataFrame(rows, columns=["context_id", "first", "second", "p_a", "identical", "round", "from_cache"])


def test_the_ranking_recovers_the_true_order_with_intervals_around_the_score() -> None:
    result = analyse(judgments(), SYSTEMS, n_boot=200)
    board = result.leaderboard
    assert list(board.columns) == LEADERBOARD_COLUMNS
    assert board["system"].tolist() == ["top", "high", "mid", "low"] and board["rank"].tolist() == [1, 2, 3, 4]
    assert (board["ci_low"] <= board["score"]).all() and (board["score"] <= board["ci_high"]).all()
    assert board["score"].sum() == pytest.approx(0.0, abs=1e-9)
    assert (board["comparisons"] == 12 * 6).all() and (board["contexts"] == 12).all()
    assert board["wins"].sum() == pytest.approx(len(result.judgments))  # every comparison gives one win
    assert result.n_contexts == 12 and result.n_model_comparisons == 12 * 12


def test_debiasing_removes_a_constant_pull_to_position_a() -> None:
    plain = analyse(judgments(pull=0.0, noise=0.0), SYSTEMS, n_boot=50)
    pulled = analyse(judgments(pull=1.2, noise=0.0), SYSTEMS, n_boot=50)
    assert pulled.p_a_before > 0.6 and pulled.p_a_after == pytest.approx(0.5)
    assert any("strong positional bias" in w for w in pulled.warnings)
    assert not any("positional" in w for w in plain.warnings)
    assert pulled.leaderboard["system"].tolist() == plain.leaderboard["system"].tolist()


def test_scores_are_the_bradley_terry_maximum_likelihood() -> None:
    """Known answer: at the unregularised maximum, each system's expected wins equal its observed wins."""
    frame = judgments(n_contexts=8, noise=1.5, seed=3)
    result = analyse(frame, SYSTEMS, n_boot=20, alpha=0.0)
    decisions, *_ = debiased(frame)
    scores = result.leaderboard.set_index("system")["score"]
    expected = {s: 0.0 for s in SYSTEMS}
    observed = {s: 0.0 for s in SYSTEMS}
    for first, second, y in zip(frame["first"], frame["second"], decisions, strict=True):
        p = expit(scores[first] - scores[second])
        expected[first] += p
        expected[second] += 1 - p
        observed[first] += y
        observed[second] += 1 - y
    for s in SYSTEMS:
        assert expected[s] == pytest.approx(observed[s], abs=1e-3)
    # Without regularisation some resamples separate the systems: counted and reported, never filled in.
    assert 0 < result.n_boot_failed < 20
    assert any(f"{result.n_boot_failed} of 20 bootstrap resamples had no Bradley-Terry estimate" in w for w in result.warnings)


def test_two_close_systems_are_reported_unresolved() -> None:
    frame = judgments(n_contexts=4, noise=1.0, seed=1, systems=["mid", "twin"])
    result = analyse(frame, ["mid", "twin"], n_boot=200)
    assert len(result.adjacent) == 1 and not result.adjacent["resolved"].iloc[0]
    assert any("order not resolved" in w for w in result.warnings)
    assert any("only 4 context(s)" in w for w in result.warnings)
    strong = analyse(judgments(n_contexts=20, noise=0.1, systems=["low", "mid", "top"]), ["low", "mid", "top"], n_boot=200)
    assert strong.adjacent["resolved"].all()
    # two systems a context: debiasing makes each pair's two orders agree, so the screen cannot run at all
    two = analyse(judgments(n_contexts=20, noise=0.1, systems=["low", "top"]), ["low", "top"], n_boot=200)
    assert "in a context of three or more candidates" in two.judge_test and not two.adjacent["resolved"].any()


def test_a_judge_that_ties_everything_is_called_degenerate() -> None:
    frame = judgments(n_contexts=6).assign(p_a=0.5)
    result = analyse(frame, SYSTEMS, n_boot=20)
    assert any(w.startswith("fails the judge screen") for w in result.warnings)
    assert any(w.startswith("many ties") for w in result.warnings)


def test_identical_outputs_are_ties_and_absent_systems_have_no_score() -> None:
    frame = judgments(n_contexts=5, systems=["low", "mid"])
    tie = pd.DataFrame([("c0", "low", "high", 0.5, True, 0, True), ("c0", "high", "low", 0.5, True, 0, True)],
                       columns=frame.columns)
    result = analyse(pd.concat([frame, tie], ignore_index=True), ["low", "mid", "high", "top"], n_boot=50)
    board = result.leaderboard.set_index("system")
    assert result.n_identical == 2 and board.loc["high", "wins"] == pytest.approx(1.0)
    assert np.isnan(board.loc["top", "score"]) and board.loc["top", "comparisons"] == 0
    assert any("never compared" in w and "top" in w for w in result.warnings)
    pairs = pair_records(result, ["low", "mid", "high", "top"])
    row = pairs[(pairs["system_1"] == "low") & (pairs["system_2"] == "high")].iloc[0]
    assert row["identical"] and pd.isna(row["p_a_1_first"]) and row["preference_1"] == 0.5


def test_pair_records_hold_both_orders() -> None:
    frame = judgments(n_contexts=2, systems=["low", "top"])
    result = analyse(frame, ["low", "top"], n_boot=20)
    pairs = pair_records(result, ["low", "top"])
    assert len(pairs) == 2 and (pairs["system_1"] == "low").all()
    first = frame[(frame["context_id"] == "c0") & (frame["first"] == "low")]["p_a"].iloc[0]
    assert pairs.iloc[0]["p_a_1_first"] == pytest.approx(first)
    assert pairs["preference_1"].between(0, 1).all()


def test_family_warnings() -> None:
    systems = ["Qwen2.5-7B-Instruct", "qwen2.5-coder-1.5b-instruct-summaries", "gpt-4", "bart"]
    notes = family_warnings("qwen2.5-coder-1.5b-instruct", "qwen", systems)
    assert len(notes) == 2 and "itself" in notes[1] and "qwen family" in notes[0]
    assert family_warnings("smollm2-135m-instruct", "smollm", ["gpt-4", "bart"]) == []


def test_the_report_states_method_budget_and_warnings() -> None:
    result = analyse(judgments(n_contexts=8, pull=1.5), SYSTEMS, n_boot=20)
    text = report_markdown(result, judge="toy", runtime="none", prompt="p", budget=1.0, planned=96, possible=96,
                           extra_warnings=["family note"])
    assert "P(A) before debiasing" in text and "Bradley-Terry" in text and "100.0% used" in text
    assert "- family note" in text and "strong positional bias" in text and "| system | rank |" in text
    # the book's judge screen is reported for every judge, passed or not
    assert "- The judge passes the judge screen: its two orders agree on" in text
    # three contexts cannot show that a judge reads the texts (the unit is the context): said, not hidden
    few = report_markdown(analyse(judgments(n_contexts=3, pull=1.5), SYSTEMS, n_boot=20), judge="toy", runtime="none",
                          prompt="p", budget=1.0, planned=36, possible=36)
    assert "the run does not show that it reads the texts" in few and "every order is 'not tested'" in few


def test_resolved_neighbours_read_the_claim_rule_and_people_use_the_shared_ranking() -> None:
    from nlgjudge.analysis.rank import compare_with_people, rank_agreement

    result = analyse(judgments(), SYSTEMS, n_boot=200)
    assert set(result.adjacent["row_verdict"]) <= {"supported", "not resolved", "contradicted", "not tested"}
    assert (result.adjacent["resolved"] == (result.adjacent["row_verdict"] == "supported")).all()
    # contexts needed only for a pair left open, at the register's minimal effect (0.2), never the observed gap
    from nlgjudge.stats.claims import units_needed_from_interval

    assert result.adjacent["contexts_needed"].isna().all()  # every pair resolved here
    # 12 contexts: fewer would not pass the judge screen (a share near 1 reads at most one unit per context)
    noisy = analyse(judgments(n_contexts=12, noise=3.0), SYSTEMS, n_boot=200)
    assert noisy.judge_gate is None
    open_pairs = noisy.adjacent[noisy.adjacent["verdict"].str.startswith("not resolved")]
    assert len(open_pairs)
    for row in open_pairs.itertuples():
        assert row.contexts_needed == units_needed_from_interval(0.2, row.ci_low, row.ci_high, 12) > 12
    # the family's verdict: a pair resolved alone but not after Holm's correction reads as a flag
    flags = result.adjacent["resolved"] & ~result.adjacent["resolved_after_holm"]
    assert result.adjacent.loc[flags, "verdict"].str.startswith("not resolved (a flag").all()
    assert (result.adjacent.loc[~flags, "verdict"] == result.adjacent.loc[~flags, "row_verdict"]).all()
    people = pd.DataFrame([{"context_id": f"c{c}", "system": s, "ACU": QUALITY[s] + 0.1 * c} for c in range(3) for s in SYSTEMS])
    people.loc[(people["system"] == "low") & (people["context_id"] == "c2"), "ACU"] = np.nan
    table = compare_with_people(result.leaderboard, people)
    # averaged over the two articles every system shares (c0, c1), as in the Elo chapter
    assert table.set_index("system").loc["top", "people_mean"] == pytest.approx(2.05)
    assert (table["people_contexts"] == 2).all()
    agreement = rank_agreement(table)
    assert agreement["spearman"] == pytest.approx(1.0) and agreement["verdict"] == "not tested" and agreement["n"] == 4


def test_a_neighbour_whose_interval_end_lies_within_the_resamples_error_of_zero_is_borderline() -> None:
    from scipy import stats

    from nlgjudge.analysis.rank import _adjacent

    n_units, rng = 12, np.random.default_rng(0)
    noise = rng.normal(size=500)
    noise = (noise - noise.mean()) / noise.std(ddof=1)  # SD exactly 1
    t = stats.t.ppf(0.975, n_units - 1)
    for gap, expected in ((t * 1.05, "not resolved"), (t * 0.99, "not resolved")):  # within the band, or below 0
        replicates = np.column_stack([gap + noise, np.zeros(500)])
        row = _adjacent(["a", "b"], {"a": 0, "b": 1}, np.array([gap, 0.0]), replicates, n_units, 0.95).iloc[0]
        assert row["verdict"].startswith(expected) and row["row_verdict"] == "not resolved"
    # a low end clear of the band (0.3 t above 0, the band is 3 x t / sqrt(998) = 0.095 t) is supported
    replicates = np.column_stack([t * 1.3 + noise, np.zeros(500)])
    assert _adjacent(["a", "b"], {"a": 0, "b": 1}, np.array([t * 1.3, 0.0]), replicates, n_units, 0.95).iloc[0]["verdict"] == "supported"


def _two_pairs(p_first: float, p_second: float, n_boot: int, n_units: int = 30):
    """Three systems a > b > c whose two neighbouring gaps (1.0 each) have bootstrap SEs giving
    the two-sided p-values asked for, on ``n_boot`` resamples."""
    from scipy import stats

    from nlgjudge.analysis.rank import _adjacent

    def resampled(p: float, seed: int) -> np.ndarray:
        z = np.random.default_rng(seed).normal(size=n_boot)
        return (z - z.mean()) / z.std(ddof=1) / stats.t.isf(p / 2, n_units - 1)

    c = np.zeros(n_boot)
    b = c + 1 + resampled(p_second, 2)
    a = b + 1 + resampled(p_first, 1)
    return _adjacent(["a", "b", "c"], {"a": 0, "b": 1, "c": 2}, np.array([2.0, 1.0, 0.0]), np.stack([a, b, c], axis=1),
                     n_units, 0.95)


def test_a_pair_at_holms_boundary_within_the_resamples_error_is_borderline_never_decided() -> None:
    from nlgjudge.analysis.rank import HOLM_BORDERLINE

    clear = _two_pairs(0.002, 0.004, n_boot=400)
    assert clear["resolved_after_holm"].all() and (clear["verdict"] == "supported").all()
    # p = 0.024 against Holm's first step 0.025: the resamples' Monte Carlo error of the SE could put it on
    # either side, so the pair is borderline (and the second, read after it, too), not resolved either way
    edge = _two_pairs(0.024, 0.030, n_boot=400)
    assert (edge["row_verdict"] == "supported").all() and not edge["resolved_after_holm"].any()
    assert edge["verdict"].tolist() == [f"not resolved ({HOLM_BORDERLINE})"] * 2
    # far past the step on every draw: an ordinary flag
    flag = _two_pairs(0.040, 0.042, n_boot=4000)
    assert flag["verdict"].str.contains("a flag").all()
