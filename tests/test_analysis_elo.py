"""The Elo chapter's tables on hand-made encounters (known answers, no model)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nlgjudge.analysis.elo import (
    bradley_terry_table,
    elo_order_spread,
    elo_trajectory,
    encounters,
    final_elo,
    kappa_table,
    llm_outcomes,
    ranking_agreement,
    rouge_difference_regression,
    score_outcomes,
    win_counts,
)

PLAYERS = ["A", "B", "C"]


def _outcomes(rows: list[tuple[str, str, float]], judge: str = "j", article: str = "x") -> pd.DataFrame:
    return pd.DataFrame(
        [(k, f"{article}{k}", f, s, judge, y) for k, (f, s, y) in enumerate(rows)],
        columns=["encounter", "context_id", "first", "second", "judge", "y"],
    )


def test_encounters_are_every_unordered_pair_of_every_article_in_a_seeded_order() -> None:
    enc = encounters(["a1", "a2"], PLAYERS, seed=3)
    assert len(enc) == 2 * 3 and list(enc["encounter"]) == list(range(6))
    pairs = {(c, frozenset((f, s))) for c, f, s in zip(enc["context_id"], enc["first"], enc["second"], strict=True)}
    assert len(pairs) == 6  # each pair once per article, whatever its display order
    pd.testing.assert_frame_equal(enc, encounters(["a1", "a2"], PLAYERS, seed=3))
    assert not enc.equals(encounters(["a1", "a2"], PLAYERS, seed=4))
    with pytest.raises(ValueError, match="distinct"):
        encounters(["a1"], ["A", "A"])


def test_a_score_judge_prefers_the_higher_score_ties_half_and_cannot_judge_nan() -> None:
    enc = pd.DataFrame({"encounter": [0, 1, 2], "context_id": ["a", "a", "a"], "first": ["A", "A", "B"], "second": ["B", "C", "C"]})
    scores = pd.DataFrame({"context_id": ["a"] * 3, "system": PLAYERS, "rouge1": [0.5, 0.4, np.nan]})
    out = score_outcomes(enc, scores, "rouge1", "ROUGE-1")
    assert out["y"].tolist()[:1] == [0.0] and np.isnan(out["y"].tolist()[1:]).all()
    scores.loc[2, "rouge1"] = 0.4
    assert score_outcomes(enc, scores, "rouge1", "ROUGE-1")["y"].tolist() == [0.0, 0.0, 0.5]
    with pytest.raises(KeyError, match="no score"):
        score_outcomes(enc, scores[scores["system"] != "C"], "rouge1", "ROUGE-1")


def test_llm_outcomes_in_the_display_order_and_debiased_over_both_orders() -> None:
    enc = pd.DataFrame({"encounter": [0], "context_id": ["a"], "first": ["A"], "second": ["B"]})
    judged = pd.DataFrame({"context_id": ["a", "a"], "first": ["A", "B"], "second": ["B", "A"], "p_a": [0.9, 0.8]})
    assert llm_outcomes(enc, judged, "llm")["y"].tolist() == [0.0]  # A shown first, P(A) 0.9: A wins
    # always-A judge: A wins when shown first, B wins when B is shown first -> a tie over both orders
    from nlgjudge.stats import debias_threshold

    plain = debias_threshold(np.array([0.2, 0.8]))  # tau between them: 0.8 counts as A
    assert llm_outcomes(enc, judged, "llm", both_orders=True, threshold=plain)["y"].tolist() == [0.5]
    consistent = judged.assign(p_a=[0.9, 0.1])  # prefers A in both orders
    assert llm_outcomes(enc, consistent, "llm", both_orders=True)["y"].tolist() == [0.0]
    with pytest.raises(KeyError, match="reversed order"):
        llm_outcomes(enc, judged.iloc[:1], "llm", both_orders=True)


def test_elo_follows_the_annex_update_step_by_step() -> None:
    out = _outcomes([("A", "B", 1.0), ("B", "C", 0.0)])
    trajectory = elo_trajectory(out, PLAYERS, step_start=50.0, step_end=50.0)
    after = trajectory.pivot(index="update", columns="contestant", values="elo")
    # update 1: P(B wins) = 0.5, delta = 50 * (1 - 0.5) = 25
    assert after.loc[1, "A"] == pytest.approx(975.0) and after.loc[1, "B"] == pytest.approx(1025.0)
    # update 2: P(C beats B) = 1 / (1 + 10^(25/400)) = 0.464083..., delta = 50 * (0 - 0.464083)
    p = 1.0 / (1.0 + 10.0 ** (25.0 / 400.0))
    assert after.loc[2, "C"] == pytest.approx(1000.0 - 50.0 * p) and after.loc[2, "B"] == pytest.approx(1025.0 + 50.0 * p)
    assert final_elo(out, PLAYERS, step_start=50.0, step_end=50.0).sum() == pytest.approx(3000.0)


def test_bradley_terry_orders_by_wins_with_intervals_and_leaves_out_unjudged() -> None:
    rows = [("A", "B", 0.0)] * 8 + [("A", "B", 1.0)] * 2 + [("B", "C", 0.0)] * 7 + [("B", "C", 1.0)] * 3
    out = _outcomes(rows)
    wins = win_counts(out, PLAYERS)
    assert wins[0, 1] == 8 and wins[1, 0] == 2 and wins[1, 2] == 7
    table = bradley_terry_table(out, [*PLAYERS, "D"], n_boot=200).set_index("contestant")
    assert list(table.index) == PLAYERS  # D never played
    assert table.loc["A", "strength"] > table.loc["B", "strength"] > table.loc["C", "strength"]
    assert (table["ci_low"] <= table["strength"]).all() and (table["strength"] <= table["ci_high"]).all()
    spread = elo_order_spread(out, PLAYERS, n_orders=20).set_index("contestant")
    assert (spread["low"] <= spread["median"]).all() and (spread["median"] <= spread["high"]).all()


def test_kappa_is_one_for_identical_judges_minus_one_for_opposite_and_skips_ties() -> None:
    ys = [0.0, 1.0, 0.0, 1.0, 1.0, 0.0]
    one = _outcomes([("A", "B", y) for y in ys], judge="one")
    same = one.assign(judge="same")
    opposite = one.assign(judge="opposite", y=1.0 - one["y"])
    tied = one.assign(judge="tied", y=[0.5] + ys[1:])
    table = kappa_table({"one": one, "same": same, "opposite": opposite, "tied": tied}, n_boot=50).set_index(["judge_1", "judge_2"])
    assert table.loc[("one", "same"), "kappa"] == pytest.approx(1.0)
    assert table.loc[("one", "opposite"), "kappa"] == pytest.approx(-1.0)
    assert table.loc[("one", "tied"), "n_left_out"] == 1 and table.loc[("one", "tied"), "n_encounters"] == 5


def test_fig5_regression_has_a_negative_slope_when_the_judge_follows_rouge_and_applies_the_10_percent_rule() -> None:
    rng = np.random.default_rng(0)
    rows, scores = [], []
    for k in range(200):
        r_a, r_b, r_c = rng.random(3)
        scores += [(f"x{k}", "A", r_a), (f"x{k}", "B", r_b), (f"x{k}", "C", r_c)]
        rows.append((k, f"x{k}", "A", "B", 1.0 if r_b > r_a else 0.0))  # follows ROUGE
        rows.append((1000 + k, f"x{k}", "A", "C", 0.0))  # A always wins against C
    out = pd.DataFrame(rows, columns=["encounter", "context_id", "first", "second", "y"]).assign(judge="j")
    table = rouge_difference_regression(out, pd.DataFrame(scores, columns=["context_id", "system", "rougeL"]), "rougeL", n_bins=10)
    ab = table.set_index(["model_1", "model_2"]).loc[("A", "B")]
    assert ab["fitted"] and ab["slope"] < 0 and ab["r_squared"] > 0.5
    ac = table.set_index(["model_1", "model_2"]).loc[("A", "C")]
    assert not ac["fitted"] and ac["model_1_ratio"] == 1.0 and np.isnan(ac["slope"])


def test_ranking_agreement_with_the_human_ranking() -> None:
    strengths = {"people": pd.Series({"A": 3.0, "B": 2.0, "C": 1.0}), "good": pd.Series({"A": 9.0, "B": 5.0, "C": 1.0}),
                 "reversed": pd.Series({"A": 1.0, "B": 2.0, "C": 3.0})}
    table = ranking_agreement(strengths, "people").set_index("judge")
    assert table.loc["good", "spearman"] == pytest.approx(1.0) and table.loc["reversed", "kendall"] == pytest.approx(-1.0)


def _ratings_frame(judge: str, strengths: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame([{"judge": judge, "contestant": c, "strength": s} for c, s in strengths.items()])


def test_claims_read_the_papers_three_claims_from_the_tables() -> None:
    from nlgjudge.analysis.elo import claims

    table = pd.concat([
        _ratings_frame("llm", {"GPT-4": 1100, "ChatGPT": 1080, "BRIO": 1050, "BART": 1000, "reference": 900}),
        _ratings_frame("ROUGE-1", {"GPT-4": 950, "ChatGPT": 960, "BRIO": 1100, "BART": 1000}),
    ])
    kappas = pd.DataFrame([{"judge_1": "ROUGE-1", "judge_2": "llm", "kappa": 0.1, "ci_low": 0.02, "ci_high": 0.18,
                            "n_encounters": 300, "n_left_out": 0}])
    out = claims(kappas, table, "llm", llm_contestants=("GPT-4", "ChatGPT"), fine_tuned=("BRIO", "BART"), n_articles=50)
    assert out["holds"].tolist() == ["yes", "yes", "yes", "yes"]
    assert out.loc[0, "evidence"] == "kappa = 0.10 [0.02, 0.18] on 300 encounters"
    assert out.loc[1, "value"] == pytest.approx(-2 / 3)  # 4 contestants: 1 concordant, 5 discordant pairs
    assert out.loc[2, "evidence"] == "the reference ranks 5 of 5"
    assert out.loc[3, "evidence"] == "2 of 2 LLM summarizers rank above every fine-tuned system"

    # A strong agreement, the same order, the reference first, an LLM below a fine-tuned system: all "no".
    same = pd.concat([
        _ratings_frame("llm", {"reference": 1200, "GPT-4": 1100, "BRIO": 1050, "ChatGPT": 1000, "BART": 990}),
        _ratings_frame("ROUGE-1", {"GPT-4": 1100, "BRIO": 1050, "ChatGPT": 1000, "BART": 990}),
    ])
    strong = kappas.assign(kappa=0.7, ci_low=0.6, ci_high=0.8)
    out = claims(strong, same, "llm", llm_contestants=("GPT-4", "ChatGPT"), fine_tuned=("BRIO", "BART"), n_articles=50)
    assert out["holds"].tolist() == ["no", "no", "no", "no"]
    # An interval across 0.4 decides nothing.
    assert claims(kappas.assign(kappa=0.35, ci_low=0.2, ci_high=0.5), table, "llm", n_articles=50)["holds"].iloc[0] == "undecided"


def test_claims_refuse_a_verdict_on_a_degenerate_run() -> None:
    from nlgjudge.analysis.elo import claims

    table = pd.concat([
        _ratings_frame("llm", {"GPT-4": 1100, "BART": 1000, "reference": 900}),
        _ratings_frame("ROUGE-1", {"GPT-4": 950, "BART": 1000}),
    ])
    kappas = pd.DataFrame([{"judge_1": "llm", "judge_2": "ROUGE-1", "kappa": 0.1, "ci_low": 0.0, "ci_high": 0.2,
                            "n_encounters": 6, "n_left_out": 0}])
    few = claims(kappas, table, "llm", n_articles=2)
    assert (few["holds"] == "undecided").all() and few["evidence"].str.contains("no verdict: only 2 article").all()
    flat = table.assign(strength=1000.0)
    tied = claims(kappas, flat, "llm", n_articles=50)
    assert (tied["holds"] == "undecided").all() and tied["evidence"].str.contains("same strength").all()

    by_position = claims(kappas, table, "llm", n_articles=50, position_share=0.97)
    assert (by_position["holds"] == "undecided").all()
    assert by_position["evidence"].str.contains("picks position A in 97%").all()
    assert (claims(kappas, table, "llm", n_articles=50, position_share=0.6)["holds"] != "undecided").any()


def test_position_a_share_counts_decided_encounters_won_by_the_first_shown() -> None:
    from nlgjudge.analysis.elo import position_a_share

    frame = pd.DataFrame({"y": [0.0, 0.0, 0.0, 1.0, 0.5, np.nan]})
    assert position_a_share(frame) == pytest.approx(0.75)
    assert np.isnan(position_a_share(frame.iloc[4:]))
