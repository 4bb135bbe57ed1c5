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
    assert (spread["sd"] > 0).all()


def test_kappa_is_one_for_identical_judges_minus_one_for_opposite_and_skips_ties() -> None:
    ys = [0.0, 1.0, 0.0, 1.0, 1.0, 0.0]
    one = _outcomes([("A", "B", y) for y in ys], judge="one")
    same = one.assign(judge="same")
    opposite = one.assign(judge="opposite", y=1.0 - one["y"])
    tied = one.assign(judge="tied", y=[0.5] + ys[1:])
    noisy = one.assign(judge="noisy", y=[1.0 - ys[0]] + ys[1:])
    table = kappa_table({"one": one, "same": same, "opposite": opposite, "tied": tied, "noisy": noisy},
                        n_boot=50).set_index(["judge_1", "judge_2"])
    assert table.loc[("one", "same"), "kappa"] == pytest.approx(1.0)
    assert table.loc[("one", "opposite"), "kappa"] == pytest.approx(-1.0)
    assert table.loc[("one", "tied"), "n_left_out"] == 1 and table.loc[("one", "tied"), "n_encounters"] == 5
    # n is the articles the decided encounters span (the interval's own n), not the run's articles
    assert table.loc[("one", "same"), "n_articles"] == one["context_id"].nunique()
    # the Monte Carlo error of the interval's ends: half-width / sqrt(2 (B - 1)) over the finite resamples
    assert 0 < table.loc[("one", "noisy"), "ci_mc_se"] < 0.2 and table.loc[("one", "same"), "ci_mc_se"] == 0.0  # no spread, no error


def test_an_end_within_its_monte_carlo_error_of_an_edge_is_redrawn_with_more_resamples() -> None:
    rng = np.random.default_rng(3)
    ys = rng.integers(0, 2, 60).astype(float)
    one = _outcomes([("A", "B", y) for y in ys], judge="one")
    noisy = one.assign(judge="noisy", y=np.where(rng.random(60) < 0.3, 1.0 - ys, ys))
    plain = kappa_table({"one": one, "noisy": noisy}, n_boot=200).iloc[0]
    assert plain["draws"] == 200
    # an edge at the interval's own end: redrawn, four times at each round, until clear of it or at the most
    edged = kappa_table({"one": one, "noisy": noisy}, n_boot=200, edges=(plain["ci_low"],)).iloc[0]
    assert edged["draws"] in (800, 3200, 12800, 51200) and edged["ci_mc_se"] < plain["ci_mc_se"]
    far = kappa_table({"one": one, "noisy": noisy}, n_boot=200, edges=(5.0,)).iloc[0]
    assert far["draws"] == 200 and far["ci_low"] == plain["ci_low"]  # nothing near an edge: the same draws

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


def test_fig5_pairs_with_the_reference_use_its_rouge_against_itself() -> None:
    rng = np.random.default_rng(1)
    rows, scores = [], []
    for k in range(200):
        r_a = rng.random()
        scores += [(f"x{k}", "A", r_a), (f"x{k}", "reference", np.nan)]  # as rouge_scores leaves it
        rows.append((k, f"x{k}", "A", "reference", 0.0 if rng.random() < r_a else 1.0))  # A wins more with high ROUGE
    out = pd.DataFrame(rows, columns=["encounter", "context_id", "first", "second", "y"]).assign(judge="j")
    frame = pd.DataFrame(scores, columns=["context_id", "system", "R"])
    without = rouge_difference_regression(out, frame, "R", n_bins=10).iloc[0]
    assert without["n_encounters"] == 0 and not without["fitted"]  # the old chapter's n = 0
    pair = rouge_difference_regression(out, frame, "R", n_bins=10, reference="reference").iloc[0]
    # R = R_reference - R_A = 1 - R_A: A is chosen less as R grows
    assert pair["n_encounters"] == 200 and pair["fitted"] and pair["slope"] < 0


def test_ranking_agreement_with_the_people_ranking_is_a_description_below_five_systems() -> None:
    people = pd.Series({"A": 0.5, "B": 0.4, "C": 0.3})
    strengths = {"good": pd.Series({"A": 9.0, "B": 5.0, "C": 1.0}), "reversed": pd.Series({"A": 1.0, "B": 2.0, "C": 3.0})}
    table = ranking_agreement(strengths, people).set_index("judge")
    assert table.loc["good", "spearman"] == pytest.approx(1.0) and table.loc["reversed", "kendall"] == pytest.approx(-1.0)
    # a perfect agreement over 3 systems is still no verdict
    assert (table["verdict"] == "not tested").all() and table["reading"].str.contains("description only").all()


SYSTEMS = ["GPT-4", "ChatGPT", "BRIO", "BART", "reference"]


def _bt_outcomes(strengths: dict[str, float], n_articles: int, judge: str, seed: int = 0,
                 equal: tuple[str, str] | None = None, systems: list[str] | None = None) -> pd.DataFrame:
    """Every pair on every article, the second winning with the Bradley-Terry probability of the
    given log-strengths (a contestant without strength is not judged: NaN)."""
    rng = np.random.default_rng(seed)
    enc = encounters([f"a{k}" for k in range(n_articles)], systems or SYSTEMS, seed=seed)
    y = []
    for f, s in zip(enc["first"], enc["second"], strict=True):
        if f not in strengths or s not in strengths:
            y.append(np.nan)
        else:
            y.append(float(rng.random() < 1 / (1 + np.exp(strengths[f] - strengths[s]))))
    return enc.assign(judge=judge, y=y)


def _kappas(llm: str, kappa: float, low: float, high: float) -> pd.DataFrame:
    return pd.DataFrame([{"judge_1": "ROUGE-1", "judge_2": llm, "kappa": kappa, "ci_low": low, "ci_high": high,
                          "n_encounters": 300, "n_left_out": 0}])


def test_the_kappa_claims_n_is_the_articles_its_encounters_span() -> None:
    from nlgjudge.analysis.elo import _kappa_row

    kappas = _kappas("llm", -0.03, -0.08, 0.02).assign(n_articles=97)
    row = _kappa_row(kappas, "llm", "ROUGE-1", 99, None)
    assert row["n"] == 97 and "of 97 articles" in row["evidence"]


def test_a_supported_kappa_row_leads_with_the_first_rules_verdict() -> None:
    """The kappa's band was chosen after its first verdict was read: where the rule declared first (kappa
    against 0) reads contradicted, the page's verdict says that first and the band's verdict as the lead."""
    from nlgjudge.analysis.elo import NEAR_ZERO_KAPPA, _kappa_row, headline_verdict
    from nlgjudge.register import LEAD_WORDS

    near = _kappa_row(_kappas("llm", -0.12, -NEAR_ZERO_KAPPA + 0.0049, -0.04), "llm", "ROUGE-1", 99, None)
    assert near["verdict"] == "supported"
    assert near["reason"].endswith("by the plan's first rule, kappa against 0, this row reads contradicted")
    assert "dropped" not in near["reason"]
    said = headline_verdict("kappa", near["verdict"], near["ci_low"], near["ci_high"])
    assert said.startswith("contradicted by the rule declared first, kappa against 0: worse than chance; supported")
    assert said.endswith(LEAD_WORDS)
    far = _kappa_row(_kappas("llm", -0.05, -0.12, 0.02), "llm", "ROUGE-1", 99, None)
    assert far["verdict"] == "supported" and "first rule" not in far["reason"] and "within" not in far["reason"].split(";", 1)[-1]
    # an interval that holds 0 reads the same by both rules: the band's verdict alone, with its lead words
    assert headline_verdict("kappa", far["verdict"], far["ci_low"], far["ci_high"]) == "supported" + LEAD_WORDS


def test_claims_give_the_four_verdicts_by_the_claim_rule() -> None:
    from nlgjudge.analysis.elo import claims

    # The judge puts the LLMs far above the fine-tuned systems and the reference last; ROUGE the other way.
    llm = _bt_outcomes({"GPT-4": 2.0, "ChatGPT": 1.8, "BRIO": 0.0, "BART": -0.2, "reference": -2.0}, 60, "llm")
    rouge = _bt_outcomes({"GPT-4": -1.0, "ChatGPT": -0.9, "BRIO": 1.0, "BART": 0.8}, 60, "ROUGE-1", seed=1)
    outcomes = {"ROUGE-1": rouge, "llm": llm}
    chance = _kappas("llm", -0.03, -0.08, 0.02)
    out = claims(outcomes, chance, "llm", SYSTEMS, llm_contestants=("GPT-4", "ChatGPT"), fine_tuned=("BRIO", "BART"),
                 n_boot=200).set_index("key")
    assert out.loc["kappa", "verdict"] == "supported"  # contains 0, within +-0.2
    # a ranking correlation is tested over systems (the book's one unit): 4 systems cannot reach p < 0.05
    assert "tau_different" not in out.index  # "tau below 1" is a description: no test over systems asks about tau = 1
    assert out.loc["tau_reversed", "verdict"] == "not tested" and out.loc["tau_reversed", "reason"] == "n = 4 < 5"
    assert out.loc["tau_reversed", "ci_high"] < 0 and out.loc["tau_reversed", "n"] == 4
    assert out.loc["reference", "verdict"] == "supported" and out.loc["reference", "estimate"] > 0
    assert out.loc["llms", "verdict"] == "supported" and "4 of 4" in out.loc["llms", "evidence"]

    # Equivalence by two one-sided tests: a slight disagreement inside the margin is what the claim allows.
    slight = claims(outcomes, _kappas("llm", -0.12, -0.19, -0.04), "llm", SYSTEMS, n_boot=50).set_index("key")
    assert slight.loc["kappa", "verdict"] == "supported"
    assert "excludes 0 (a slight disagreement" in slight.loc["kappa", "reason"]
    # A disagreement beyond the margin is not chance agreement: contradicted, and the reason says it is different.
    disagree = claims(outcomes, _kappas("llm", -0.35, -0.45, -0.25), "llm", SYSTEMS, n_boot=50).set_index("key")
    assert disagree.loc["kappa", "verdict"] == "contradicted"
    assert "systematic disagreement" in disagree.loc["kappa", "reason"] and "different finding" in disagree.loc["kappa", "reason"]
    agree = claims(outcomes, _kappas("llm", 0.35, 0.25, 0.45), "llm", SYSTEMS, n_boot=50).set_index("key")
    assert agree.loc["kappa", "verdict"] == "contradicted" and "agreement beyond slight" in agree.loc["kappa", "reason"]
    wide = claims(outcomes, _kappas("llm", 0.05, -0.1, 0.3), "llm", SYSTEMS, n_boot=50).set_index("key")
    assert wide.loc["kappa", "verdict"] == "not resolved" and wide.loc["kappa", "articles_needed"] > 60


def test_an_ordering_claim_with_one_overlapping_pair_is_not_resolved_and_says_how_many_articles() -> None:
    from nlgjudge.analysis.elo import articles_needed, claims

    # ChatGPT barely above BRIO: points say "above", the paired interval does not.
    llm = _bt_outcomes({"GPT-4": 2.0, "ChatGPT": 0.05, "BRIO": 0.0, "BART": -0.5, "reference": 0.3}, 40, "llm", seed=2)
    rouge = _bt_outcomes({"GPT-4": -1.0, "ChatGPT": -0.9, "BRIO": 1.0, "BART": 0.8}, 40, "ROUGE-1", seed=3)
    out = claims({"ROUGE-1": rouge, "llm": llm}, _kappas("llm", 0.0, -0.1, 0.1), "llm", SYSTEMS,
                 llm_contestants=("GPT-4", "ChatGPT"), fine_tuned=("BRIO", "BART"), n_boot=200).set_index("key")
    assert out.loc["llms", "verdict"] == "not resolved" and "ChatGPT vs BRIO" in out.loc["llms", "reason"]
    assert out.loc["llms", "ci_low"] < 0 < out.loc["llms", "ci_high"]
    needed = articles_needed(out.reset_index())
    assert "every LLM summarizer" in " ".join(needed["claim"])
    row = needed[needed["claim"].str.contains("every LLM")].iloc[0]
    assert np.isnan(row["articles_needed"]) or row["articles_needed"] > 40
    # the reference is above BART and BRIO but below GPT-4: "not always preferred" holds
    assert out.loc["reference", "verdict"] == "supported" and "GPT-4" in out.loc["reference", "evidence"]


def test_claims_are_not_tested_on_a_degenerate_run() -> None:
    from nlgjudge.analysis.elo import claims

    llm = _bt_outcomes({"GPT-4": 1.0, "ChatGPT": 0.5, "BRIO": 0.0, "BART": -0.5, "reference": -1.0}, 3, "llm")
    rouge = _bt_outcomes({"GPT-4": -1.0, "ChatGPT": -0.9, "BRIO": 1.0, "BART": 0.8}, 3, "ROUGE-1")
    kappas = _kappas("llm", 0.0, -0.1, 0.1)
    few = claims({"ROUGE-1": rouge, "llm": llm}, kappas, "llm", SYSTEMS, n_boot=50)
    assert (few["verdict"] == "not tested").all()
    assert few.set_index("key").loc[["kappa", "reference"], "reason"].str.contains("3 < 5").all()
    assert list(few["short"]) == ["kappa near 0", "tau below 0", "reference not always first", "LLMs above fine-tuned"]
    many = _bt_outcomes({"GPT-4": 1.0, "ChatGPT": 0.5, "BRIO": 0.0, "BART": -0.5, "reference": -1.0}, 30, "llm")
    gate = "fails the judge screen: its two orders agree on 48% of 630 pairs after debiasing"
    by_position = claims({"ROUGE-1": rouge, "llm": many}, kappas, "llm", SYSTEMS, judge_gate=gate, n_boot=50)
    assert (by_position["verdict"] == "not tested").all() and (by_position["reason"] == gate).all()
    tied = many.assign(y=0.5)
    assert (claims({"ROUGE-1": rouge, "llm": tied}, kappas, "llm", SYSTEMS, n_boot=50)["verdict"] == "not tested").all()


def test_kendall_between_judges_has_a_bootstrap_interval_over_articles() -> None:
    from nlgjudge.analysis.elo import kendall_between_judges

    strengths = {"GPT-4": 1.5, "ChatGPT": 1.0, "BRIO": 0.0, "BART": -1.0, "reference": -1.5}
    one = _bt_outcomes(strengths, 50, "one", seed=4)
    same = _bt_outcomes(strengths, 50, "two", seed=5)
    tau = kendall_between_judges(one, same, SYSTEMS, n_boot=200)
    assert tau["tau"] == pytest.approx(1.0) and tau["n_contestants"] == 5 and tau["n_articles"] == 50
    assert tau["ci_low"] <= tau["tau"] <= tau["ci_high"] <= 1.0  # clipped to tau's range


def test_convergence_is_an_ordering_over_visiting_orders() -> None:
    from nlgjudge.analysis.elo import convergence

    apart = _bt_outcomes({"GPT-4": 2.0, "ChatGPT": 0.0, "BRIO": -2.0}, 40, "apart")
    close = _bt_outcomes({"GPT-4": 2.0, "ChatGPT": 0.0, "BRIO": 0.0}, 40, "close", seed=1)
    table = convergence({"apart": apart, "close": close}, SYSTEMS, n_orders=40,
                        paper={"apart": "Fig. 2"}).set_index("judge")
    assert table.loc["apart", "verdict"] == "converged" and table.loc["apart", "paper"] == "Fig. 2"
    assert table.loc["close", "verdict"] == "order-dependent" and "ChatGPT" in table.loc["close", "reason"]
    # A description of the spread over visiting orders, so no verdict words in its reasons either.
    assert not any("resolved" in reason for reason in table["reason"])
    assert table.loc["close", "reason"].startswith("the visiting order decides")
    assert table.loc["close", "smallest_gap"] < table.loc["apart", "smallest_gap"]


def test_bradley_terry_table_intervals_come_from_the_same_resamples_as_the_pairs() -> None:
    from nlgjudge.analysis.elo import strength_draws

    out = _bt_outcomes({"GPT-4": 1.0, "ChatGPT": 0.5, "BRIO": 0.0, "BART": -0.5, "reference": -1.0}, 30, "j")
    table = bradley_terry_table(out, SYSTEMS, n_boot=100).set_index("contestant")
    draws = strength_draws(out, SYSTEMS, n_boot=100)
    assert np.allclose(table.loc[draws.contestants, "strength"], draws.strength)
    pair = draws.pair("GPT-4", "reference")
    # paired: the gap's interval is narrower than the two strengths' intervals put together
    assert pair.high - pair.low < (table.loc["GPT-4", "ci_high"] - table.loc["GPT-4", "ci_low"]
                                   + table.loc["reference", "ci_high"] - table.loc["reference", "ci_low"])


def test_position_a_share_counts_decided_encounters_won_by_the_first_shown() -> None:
    from nlgjudge.analysis.elo import position_a_share

    frame = pd.DataFrame({"y": [0.0, 0.0, 0.0, 1.0, 0.5, np.nan]})
    assert position_a_share(frame) == pytest.approx(0.75)
    assert np.isnan(position_a_share(frame.iloc[4:]))


def test_kappa_from_a_2x2_table_is_scikit_learns_kappa() -> None:
    from nlgjudge.stats.agreement import kappa_from_tables as _kappa_from_table
    from nlgjudge.stats import cohen_kappa

    rng = np.random.default_rng(0)
    for _ in range(20):
        a, b = rng.integers(0, 2, 40), rng.integers(0, 2, 40)
        table = np.zeros((2, 2))
        np.add.at(table, (a, b), 1.0)
        assert _kappa_from_table(table) == pytest.approx(cohen_kappa(a, b))
    assert np.isnan(_kappa_from_table(np.array([[5.0, 0.0], [0.0, 0.0]])))  # one same label: undefined


def test_the_articles_needed_sentence_says_when_the_contest_is_too_small() -> None:
    from nlgjudge.analysis.elo import needed_sentence

    table = pd.DataFrame({"verdict": ["not resolved", "not resolved", "supported", "not resolved"],
                          "claim": ["LLMs above", "tau below 0", "ref", "zero effect"],
                          "articles_needed": [698.0, 80.0, np.nan, np.nan], "n": [99, 40, 99, 99]})
    text = needed_sentence(table, available=99)
    assert "about 698 articles (7 times the 99 here; the contest has only 99, so no run on it can)" in text
    assert "about 80 articles (2 times the 40 here, within the contest's 99)" in text
    assert '"zero effect" is out of reach' in text and "ref" not in text
    assert needed_sentence(table[table["verdict"] == "supported"], 99).startswith("Every claim is resolved")


def test_judge_gates_apply_the_one_test_to_each_judges_both_orders() -> None:
    from nlgjudge.analysis.elo import judge_gates

    rows = []
    quality = {"GPT-4": 3.0, "BRIO": 1.0, "BART": 0.0}
    for article in [f"a{k}" for k in range(8)]:  # the screen needs contexts enough to show a judge reads
        for first in quality:
            for second in quality:
                if first != second:
                    reads = 1 / (1 + np.exp(-(quality[first] - quality[second]) - 1.5))
                    rows.append({"context_id": article, "first": first, "second": second, "reads": reads, "position": 0.95})
    frame = pd.DataFrame(rows)
    gates = judge_gates({"reads": frame.rename(columns={"reads": "p_a"}), "position": frame.rename(columns={"position": "p_a"})})
    assert gates["reads"] is None and gates["position"].startswith("fails the judge screen")


def test_tau_between_judges_is_tested_over_the_systems_by_its_exact_permutation_p() -> None:
    from nlgjudge.analysis.elo import claims, kendall_between_judges

    six = ["GPT-4", "ChatGPT", "GPT-3", "BRIO", "PEGASUS", "BART"]
    order = {name: float(k) for k, name in enumerate(six)}
    llm = _bt_outcomes({n: -v for n, v in order.items()}, 80, "llm", systems=six)
    rouge = _bt_outcomes(order, 80, "ROUGE-1", seed=1, systems=six)
    tau = kendall_between_judges(llm, rouge, six, n_boot=50)
    assert tau["tau"] == pytest.approx(-1.0) and tau["p_systems"] == pytest.approx(2 / 720)  # exact, n = 6
    out = claims({"ROUGE-1": rouge, "llm": llm}, _kappas("llm", 0.0, -0.1, 0.1), "llm", six, n_boot=50).set_index("key")
    assert out.loc["tau_reversed", "verdict"] == "supported" and out.loc["tau_reversed", "n"] == 6
    assert out.loc["tau_reversed", "reason"].startswith("p = 0.003 < 0.05")


def test_the_claims_view_puts_the_verdict_first_and_names_each_estimate_s_unit() -> None:
    from nlgjudge.analysis import elo as analysis

    frame = pd.DataFrame({
        "judge": ["j", "j", "j"], "short": ["kappa", "tau", "reference"], "key": ["kappa", "tau_reversed", "reference"],
        "estimate": [-0.12, -0.47, 452.0], "ci_low": [-0.2, float("nan"), 378.0], "ci_high": [-0.04, float("nan"), 526.0],
        "n": [99, 6, 99], "verdict": ["contradicted", "not resolved", "supported"], "reason": ["a", "b", "c"],
    })
    view = analysis.claims_view(frame)
    assert list(view.columns) == ["verdict", "estimate [95% interval]", "unit", "n", "n counts", "reason"]
    assert view.loc[("j", "tau"), "unit"] == "Kendall's tau" and view.loc[("j", "tau"), "n counts"] == "systems"
    assert view.loc[("j", "reference"), "unit"] == "Elo points" and view.loc[("j", "kappa"), "n counts"] == "articles"
    assert view.loc[("j", "kappa"), "estimate [95% interval]"] == "-0.12 [-0.20, -0.04]"


def test_the_reference_claim_counts_contestants_above_it_after_holm() -> None:
    from nlgjudge.analysis import elo as analysis
    from nlgjudge.stats.claims import PairEvidence

    class Draws:  # three contestants against the reference, with given paired intervals over 99 articles
        contestants = ["a", "b", "c", "reference"]

        def __init__(self, intervals):
            self.intervals = intervals

        def pair(self, higher, lower):
            low, high = self.intervals[higher]
            return PairEvidence(higher, lower, (low + high) / 2, low, high, 99)

    strong = analysis._reference_row(Draws({"a": (100, 300), "b": (1, 41), "c": (-50, 50)}), "reference", None)
    assert strong["verdict"] == "supported"
    assert strong["reason"].startswith("1 (2 before Holm's correction) of 3 contestants above the reference")
    # Only barely resolved pairs: each excludes 0 alone (p just under 0.05) but not after Holm over 3.
    weak = analysis._reference_row(Draws({"a": (1, 41), "b": (1, 41), "c": (-50, 50)}), "reference", None)
    assert weak["verdict"] == "not resolved" and "a flag" in weak["reason"]


def test_a_claim_over_the_systems_says_how_many_systems_would_settle_it() -> None:
    from nlgjudge.analysis.elo import needed_sentence
    from nlgjudge.stats.claims import kendall_units_needed

    table = pd.DataFrame({"verdict": ["not resolved"], "claim": ["tau below 0"], "key": ["tau_reversed"],
                          "articles_needed": [np.nan], "n": [6]})
    text = needed_sentence(table, available=99)
    assert f"about {kendall_units_needed(-0.5)} systems would give an 80% chance" in text and "tau = -0.5" in text
    assert "more articles cannot settle it" in text
