"""Subset curves, self-consistency and ranking methods on synthetic comparison frames (no model)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from nlgjudge.analysis.subsets import (
    _hard_likelihood_scores,
    curve_summary,
    debiasing_gain,
    ranking_methods_frame,
    self_consistency_frame,
    strategy_comparison_frame,
    subset_curve_frame,
)
from nlgjudge.plotting.subsets import plot_curve_grid, plot_subset_curves


def test_curves_have_every_budget_of_every_strategy_and_end_at_the_full_matrix(tiny_dataset, synthetic_comparisons) -> None:
    ds = tiny_dataset(n_contexts=3, n_candidates=5)
    frame = synthetic_comparisons(ds, pull=0.0)
    curves = subset_curve_frame(frame, {"tiny": ds}, ["random", "no-repeat", "symmetric", "active"], n_draws=4)
    one = curves[curves["aspect"] == "COH"]
    sizes = one.groupby(["strategy", "debiased"]).size()
    assert sizes[("random", False)] == 20 and sizes[("no-repeat", True)] == 10 and sizes[("symmetric", False)] == 10
    assert sizes[("active", True)] == 20
    full = one[(one["budget"] == 20)]
    assert full["spearman_x100"].to_numpy() == pytest.approx(100.0)  # a perfect judge with all comparisons
    assert (one["ci_low_x100"] <= one["spearman_x100"] + 1e-9).all()
    assert set(one["n_contexts"]) == {3} and (one["fraction"] <= 1).all()


def test_debiasing_helps_a_strongly_pulled_judge_at_small_budgets(tiny_dataset, synthetic_comparisons) -> None:
    ds = tiny_dataset(n_contexts=4, n_candidates=6)
    curves = subset_curve_frame(synthetic_comparisons(ds, pull=5.0), {"tiny": ds}, ["random"], n_draws=10)
    gain = debiasing_gain(curves)
    full = gain[gain["budget"] == 30]
    assert full["gain_x100"].to_numpy() == pytest.approx(100.0)  # 0 (all tied) -> 100
    mid = gain[(gain["budget"] >= 10) & (gain["budget"] <= 20)]
    assert (mid["gain_x100"] > 20).all()


def test_strategy_comparisons_per_set_of_a_strongly_pulled_judge(tiny_dataset, synthetic_comparisons) -> None:
    ds = tiny_dataset(n_contexts=4, n_candidates=6)
    curves = subset_curve_frame(synthetic_comparisons(ds, pull=5.0), {"tiny": ds}, ["random", "symmetric"], n_draws=6)
    table = strategy_comparison_frame(curves)
    assert len(table) == curves.groupby(["dataset", "template", "aspect"]).ngroups
    gain = table["debias gain (per-context threshold), all comparisons"].to_numpy()
    assert gain == pytest.approx(100.0)  # always A: all win ratios tie (0); debiased: the perfect order (100)
    assert (table["debias gain (per-context threshold), random, N <= R <= N(N-1)/4"] > 20).all()
    assert table["no-repeat - random (R <= N(N-1)/2)"].isna().all()  # no-repeat was not run
    with pytest.raises(ValueError, match="lacks columns"):
        strategy_comparison_frame(curves.drop(columns="budget"))


def test_curve_summary_picks_budgets_at_or_below_each_fraction(tiny_dataset, synthetic_comparisons) -> None:
    ds = tiny_dataset(n_contexts=2, n_candidates=5)
    curves = subset_curve_frame(synthetic_comparisons(ds, pull=0.0), {"tiny": ds}, ["random", "symmetric"], n_draws=3)
    summary = curve_summary(curves, fractions=(0.25, 1.0))
    random_coh = summary[(summary["strategy"] == "random") & (summary["aspect"] == "COH") & ~summary["debiased"]]
    assert random_coh["budget"].tolist() == [5, 20]
    symmetric = summary[(summary["strategy"] == "symmetric") & (summary["aspect"] == "COH") & ~summary["debiased"]]
    assert symmetric["budget"].tolist() == [4, 20]


def test_incomplete_matrices_and_unknown_strategies_are_errors(tiny_dataset, synthetic_comparisons) -> None:
    ds = tiny_dataset(n_contexts=1, n_candidates=4)
    frame = synthetic_comparisons(ds, pull=0.0)
    with pytest.raises(ValueError, match="full matrix"):
        subset_curve_frame(frame.iloc[1:], {"tiny": ds}, ["random"], n_draws=3)
    with pytest.raises(ValueError, match="unknown strategies"):
        subset_curve_frame(frame, {"tiny": ds}, ["greedy"], n_draws=3)


def test_self_consistency_of_a_perfect_judge_is_complete_and_adds_n(tiny_dataset, synthetic_comparisons) -> None:
    ds = tiny_dataset(n_contexts=2, n_candidates=6)
    table = self_consistency_frame(synthetic_comparisons(ds, pull=0.0), {"tiny": ds}, [3, 4, 12], n_draws=5)
    coh = table[table["aspect"] == "COH"]
    assert sorted(set(coh["size"])) == [3, 4, 6]  # 12 > N skipped, N added
    assert coh["percent"].to_numpy() == pytest.approx(100.0)
    assert set(coh["reference"]) == {"Final", "Gold"}


def test_self_consistency_of_an_order_blind_coin_is_near_chance_against_gold(tiny_dataset, synthetic_comparisons) -> None:
    ds = tiny_dataset(n_contexts=1, n_candidates=6)
    frame = synthetic_comparisons(ds, pull=0.0)
    rng = np.random.default_rng(3)
    frame["p_a"] = rng.random(len(frame))
    table = self_consistency_frame(frame, {"tiny": ds}, [6], n_draws=2)
    final = table[(table["reference"] == "Final") & (table["aspect"] == "COH")]["percent"].iloc[0]
    assert final == pytest.approx(100.0)  # size N is the final ranking itself
    gold = table[(table["reference"] == "Gold") & (table["aspect"] == "COH")]["percent"].iloc[0]
    assert gold < 100.0


def test_ranking_methods_agree_on_a_perfect_judge_and_differ_on_a_noisy_one(tiny_dataset, synthetic_comparisons) -> None:
    ds = tiny_dataset(n_contexts=2, n_candidates=6)
    perfect = ranking_methods_frame(synthetic_comparisons(ds, pull=0.0), {"tiny": ds})
    assert set(perfect["method"]) == {"win ratio", "max likelihood", "max likelihood (hard)", "Bradley-Terry"}
    assert perfect["spearman_x100"].to_numpy() == pytest.approx(100.0)
    # pull 5 makes every hard decision "A": the win ratio ties everything (0) while the soft methods
    # still see the order in the probabilities
    pulled = ranking_methods_frame(synthetic_comparisons(ds, pull=5.0), {"tiny": ds}).set_index(["aspect", "method"])
    assert pulled.loc[("COH", "win ratio"), "spearman_x100"] == 0.0
    assert pulled.loc[("COH", "max likelihood"), "spearman_x100"] == pytest.approx(100.0)
    assert pulled.loc[("COH", "Bradley-Terry"), "spearman_x100"] == pytest.approx(100.0)


def test_plots_draw_one_line_per_curve(tiny_dataset, synthetic_comparisons) -> None:
    ds = tiny_dataset(n_contexts=2, n_candidates=4)
    curves = subset_curve_frame(synthetic_comparisons(ds, pull=1.0), {"tiny": ds}, ["random", "symmetric"], n_draws=3)
    one = curves[curves["aspect"] == "COH"]
    fig = plot_subset_curves(one)
    assert len(fig.axes) == 2 and all(len(ax.lines) == 2 for ax in fig.axes)
    fig = plot_subset_curves(one, panel="debiased", x="fraction")
    assert len(fig.axes) == 2
    with pytest.raises(ValueError, match="one comparison set"):
        plot_subset_curves(curves)
    grid = plot_curve_grid(curves)
    assert sum(ax.get_visible() for ax in grid.axes) == 2


def test_hard_likelihood_of_an_always_a_judge_is_a_full_tie_not_the_index_order(tiny_dataset, synthetic_comparisons) -> None:
    ds = tiny_dataset(n_contexts=1, n_candidates=5)
    frame = synthetic_comparisons(ds, pull=8.0)  # every hard decision is "A"
    table = ranking_methods_frame(frame, {"tiny": ds}).set_index(["aspect", "method"])
    # the candidates' index order matches COH exactly, so an index tie-break would score 100
    assert table.loc[("COH", "max likelihood (hard)"), "spearman_x100"] == 0.0


def test_prose_values_report_the_largest_method_changes() -> None:
    import pandas as pd

    from nlgjudge.analysis.subsets import prose_values

    methods = pd.DataFrame({
        "model": "m", "dataset": "summeval", "aspect": ["COH", "COH", "COH", "FLU", "FLU", "FLU"],
        "method": ["win ratio", "max likelihood", "Bradley-Terry"] * 2,
        "spearman_x100": [30.0, 27.0, 41.5, 50.0, 56.8, 31.5],
    })
    values = prose_values(methods, "m")
    assert values["bt_max"] == "+11.5 (summeval COH)" and values["bt_min"] == "-18.5 (summeval FLU)"
    assert values["ml_max"] == "+6.8 (summeval FLU)" and values["ml_mean"] == "+1.9"


def _with_placeholder_team(tiny_dataset, synthetic_comparisons):
    """A tiny dataset whose team S1 printed "null" once, and its comparisons with candidate ids."""
    from nlgjudge.data import JudgeDataset

    ds = tiny_dataset(n_contexts=4, n_candidates=5)
    frame = ds.frame.copy()
    frame.loc[(frame["context_id"] == "ctx0") & (frame["system"] == "S1"), "text"] = "null"
    ds = JudgeDataset(frame, ds.info)
    comparisons = synthetic_comparisons(ds, pull=0.0)
    ids = {c: ds.candidates(c)["candidate_id"].tolist() for c in ds.context_ids()}
    comparisons["candidate_a"] = [ids[c][i] for c, i in zip(comparisons["context_id"], comparisons["i"])]
    comparisons["candidate_b"] = [ids[c][j] for c, j in zip(comparisons["context_id"], comparisons["j"])]
    return ds, comparisons


def test_the_chapters_webnlg_frame_leaves_out_the_placeholder_teams(tiny_dataset, synthetic_comparisons) -> None:
    from nlgjudge.analysis.comparative import placeholder_team_candidates
    from nlgjudge.analysis.subsets import headline_reading, subset_curve_frames

    ds, comparisons = _with_placeholder_team(tiny_dataset, synthetic_comparisons)
    team = placeholder_team_candidates(ds)
    assert len(team) == 4  # S1 in every context, not only the one with the placeholder
    reading = headline_reading(comparisons, {"tiny": ds}, dataset="tiny")
    assert reading.teams_left_out == ["S1"] and reading.candidates_left_out == 4 and reading.teams_kept == 4
    frame = reading.comparisons
    assert not (frame["candidate_a"].isin(team) | frame["candidate_b"].isin(team)).any()
    assert not reading.datasets["tiny"].frame["candidate_id"].isin(team).any()
    curves, per_context = subset_curve_frames(frame, reading.datasets, ["random"], n_draws=3)
    assert set(curves["n_candidates"]) == {4} and curves["budget"].max() == 12
    assert set(per_context["context_id"]) == set(ds.context_ids())
    untouched = headline_reading(comparisons, {"tiny": ds}, dataset="webnlg")  # not in the run
    assert untouched.comparisons is comparisons and untouched.teams_left_out == []


def test_the_subsets_chapter_ranks_the_headline_webnlg_candidates() -> None:
    import json

    from nlgjudge.config import REPO_ROOT

    cells = json.loads((REPO_ROOT / "notebooks" / "subsets.ipynb").read_text())["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert "analysis.headline_reading(all_comparisons, loaded)" in code
    assert "comparisons, ranked = headline.comparisons, headline.datasets" in code
    # every table and curve is computed on the headline reading, never on the unrestricted frame
    for call in ("subset_curve_frames(", "self_consistency_frame(", "ranking_methods_frame("):
        for line in (line for line in code.splitlines() if call in line):
            assert "all_comparisons" not in line and "loaded" not in line, line


def _per_context_frame(differences_by_template):
    import pandas as pd

    rows = []
    for template, differences in differences_by_template.items():
        for k, d in enumerate(differences):
            rows.append({"model": "m", "dataset": "d", "template": template, "aspect": "COH", "n_candidates": 5,
                         "context_id": f"c{k}", "comparison": "no_repeat_minus_random",
                         "first_x100": 50.0 + d, "second_x100": 50.0})
    return pd.DataFrame(rows)


def test_strategy_claims_take_contexts_as_the_unit_and_read_the_claim_rule() -> None:
    from nlgjudge.analysis.subsets import strategy_claims
    from nlgjudge.stats.intervals import mean_interval

    # two templates on the same 6 contexts: n is 6 (not 12), and each context's two values are averaged first
    one, two = [1.0, 2.0, 3.0, 2.0, 1.5, 2.5], [3.0, 2.0, 1.0, 2.0, 2.5, 1.5]
    claims = strategy_claims(_per_context_frame({1: one, 2: two}))
    row = claims.iloc[0]
    expected = mean_interval((np.array(one) + np.array(two)) / 2)
    assert row["n"] == 6 and row["sets"] == 2
    assert (row["estimate"], row["low"], row["high"]) == pytest.approx((expected.mean, expected.low, expected.high))
    assert row["verdict"] == "supported" and np.isnan(row["contexts_needed"])
    noisy = [3.0, -2.5, 1.0, -0.5, 2.0, -1.5]
    open_row = strategy_claims(_per_context_frame({1: noisy})).iloc[0]
    assert open_row["verdict"] == "not resolved" and open_row["reason"] == "interval contains 0"
    from nlgjudge.register import contexts_needed_for  # at the registered minimal effect, not the observed one
    assert open_row["contexts_needed"] == contexts_needed_for("subsets.no_repeat_minus_random", float(np.std(noisy, ddof=1)))
    against = strategy_claims(_per_context_frame({1: [-1.0, -2.0, -1.5, -2.5]})).iloc[0]
    assert against["verdict"] == "contradicted"
    few = strategy_claims(_per_context_frame({1: [1.0, 2.0]})).iloc[0]
    assert few["verdict"] == "not tested"


def test_the_about_one_point_claim_is_a_band_around_one() -> None:
    import pandas as pd

    from nlgjudge.analysis.subsets import strategy_claims

    frame = _per_context_frame({1: [1.0] * 6}).assign(comparison="no_repeat_minus_symmetric_equal_r")
    frame["first_x100"] = frame["second_x100"] + np.array([0.9, 1.1, 1.0, 0.8, 1.2, 1.0])
    assert strategy_claims(frame).iloc[0]["verdict"] == "supported"
    frame["first_x100"] = frame["second_x100"] - 4.0 + np.array([0.9, 1.1, 1.0, 0.8, 1.2, 1.0])
    row = strategy_claims(frame).iloc[0]
    assert row["verdict"] == "contradicted" and row["reason"] == "interval below 1 +- 1"
    # a band claim: an interval that overlaps the band is not a contradiction
    frame["first_x100"] = frame["second_x100"] + np.array([1.5, 2.5, 2.0, 3.5, 1.0, 3.0])
    row = strategy_claims(frame).iloc[0]
    assert row["verdict"] == "not resolved" and row["low"] < 2.0 < row["high"]
    assert isinstance(frame, pd.DataFrame)


def test_every_cell_verdict_needs_every_cell() -> None:
    from nlgjudge.analysis.subsets import every_cell_verdict

    assert every_cell_verdict(["supported", "supported"], [0.01, 0.01]) == "supported"
    assert every_cell_verdict(["supported", "not resolved"], [0.01, 0.4]) == "not resolved"
    assert every_cell_verdict(["supported", "contradicted", "not resolved"], [0.01, 0.001, 0.4]) == "contradicted"
    assert every_cell_verdict(["not tested"], [float("nan")]) == "not tested"
    assert every_cell_verdict(["supported", "not tested"], [0.01, float("nan")]) == "not resolved"
    # One cell against the family at p = 0.01 among 11 where every p is above 0.05/11 is a flag; at
    # p = 0.0001 it is the smallest and survives Holm's first step (0.05/11).
    verdicts = ["supported"] * 10 + ["contradicted"]
    assert every_cell_verdict(verdicts, [0.03] * 10 + [0.01]) == "not resolved"
    assert every_cell_verdict(verdicts, [0.03] * 10 + [0.0001]) == "contradicted"
    with pytest.raises(ValueError, match="one p-value per cell"):
        every_cell_verdict(["supported"], [])


def test_family_counts_give_holm_counts_with_the_uncorrected_beside() -> None:
    from nlgjudge.analysis.subsets import family_counts

    cells = pd.DataFrame({"verdict": ["supported", "supported", "contradicted", "not resolved"],
                          "p_value": [0.001, 0.03, 0.04, 0.5]})
    counts = family_counts(cells)
    # Holm over 4: 0.001 < 0.0125 kept; 0.03 > 0.05/3 stops the procedure.
    assert counts == {"supported": "1 (2 before Holm's correction)", "contradicted": "0 (1 before Holm's correction)",
                      "not resolved": "3 (1 before Holm's correction)", "not tested": "0"}


def test_fraction_reached_names_the_cells_that_fall_short(tiny_dataset, synthetic_comparisons) -> None:
    from nlgjudge.analysis.subsets import claims_prose, fraction_reached, strategy_claims, subset_curve_frames

    ds = tiny_dataset(n_contexts=3, n_candidates=5)
    curves, per_context = subset_curve_frames(synthetic_comparisons(ds, pull=0.0), {"tiny": ds}, ["random", "no-repeat"],
                                              n_draws=4)
    reached = fraction_reached(curves, fraction=0.25, share=0.5)
    assert len(reached) == 4 and reached["full"].to_numpy() == pytest.approx(100.0)
    assert (reached["ratio"] == reached["at_fraction"] / reached["full"]).all()
    strict = fraction_reached(curves, fraction=0.25, share=1.01)  # nothing reaches more than all of it
    assert not strict["reached"].any()
    claims = strategy_claims(per_context)
    cells = strategy_claims(per_context, by=["dataset", "aspect"])
    values = claims_prose(claims, cells, strict)
    assert values["reached_count"] == "0 of 4" and "tiny COH plain" in values["reached_misses"]
    assert "(n = 3)" in values["c_no_repeat_minus_random"]


def test_the_contexts_needed_sentence_names_only_what_the_benchmark_can_give() -> None:
    from nlgjudge.analysis.subsets import needed_words

    rows = pd.DataFrame({"dataset": ["summeval", "summeval", "topicalchat"], "claim": ["a", "b", "c"],
                         "contexts_needed": [31.0, 203.0, np.nan], "n": [16, 16, 30]})
    text = needed_words(rows)
    assert text == ("within the benchmarks' sizes: SummEval 'a' (31 contexts, now 16); 2 more would need more contexts "
                    "than the benchmark has (the table lists them)")
    assert needed_words(rows.iloc[0:0]) == "none (every claim is resolved)"


def test_the_cells_table_marks_a_cell_that_does_not_survive_holm_as_a_flag() -> None:
    from nlgjudge.analysis.subsets import claims_display

    cells = pd.DataFrame({"dataset": ["d"] * 3, "aspect": ["a", "b", "c"], "comparison": ["x"] * 3, "finding": ["1"] * 3,
                          "claim": ["c"] * 3, "estimate": [1.0, -1.0, 0.1], "low": [0.5, -1.9, -1.0], "high": [1.5, -0.1, 1.2],
                          "n": [30, 30, 30], "verdict": ["supported", "contradicted", "not resolved"],
                          "reason": ["r"] * 3, "p_value": [0.0001, 0.04, 0.8]})
    shown = claims_display(cells, by=["dataset", "aspect"], family=True)
    assert shown["verdict"].tolist() == ["supported", "not resolved (a flag: contradicted on its own interval, not after "
                                         "Holm's correction over the cells)", "not resolved"]
    assert list(shown.columns)[0] == "verdict"


def test_the_per_dataset_sentences_count_after_holm_within_each_finding() -> None:
    from nlgjudge.analysis.subsets import claims_prose

    rows = pd.DataFrame({"dataset": ["d1", "d2", "d3"], "comparison": ["no_repeat_minus_random"] * 3, "finding": ["1"] * 3,
                         "claim": ["c"] * 3, "estimate": [1.0, -1.0, 0.1], "low": [0.5, -1.9, -1.0], "high": [1.5, -0.1, 1.2],
                         "n": [30, 30, 30], "verdict": ["supported", "contradicted", "not resolved"], "reason": ["r"] * 3,
                         "p_value": [0.0001, 0.04, 0.8], "contexts_needed": [np.nan, np.nan, 400.0]})
    reached = pd.DataFrame({"dataset": [], "aspect": [], "debiased": [], "reached": [], "at_fraction": [], "full": []})
    said = claims_prose(rows, rows.iloc[0:0], reached)
    assert "d2 -1.0 [-1.9, -0.1], not resolved (a flag: contradicted on its own interval, not after Holm's correction) (n = 30)" in said["c_no_repeat_minus_random"]
    from nlgjudge.register import lead_words

    assert said["c_no_repeat_minus_random"].endswith("; Holm over the 3 datasets" + lead_words("subsets.no_repeat_minus_random"))
    assert said["n_not_resolved"] == "2 (1 before Holm's correction)" and "1 more is a flag" in said["needed"]


def test_the_answer_table_reads_each_finding_per_dataset_after_holm() -> None:
    from nlgjudge.analysis.subsets import ANSWER_FINDINGS, answer_table

    rows = pd.DataFrame({"dataset": ["d1", "d2", "d3"], "comparison": ["no_repeat_minus_random"] * 3, "finding": ["1"] * 3,
                         "claim": ["c"] * 3, "estimate": [1.0, -1.0, 0.1], "low": [0.5, -1.9, -1.0], "high": [1.5, -0.1, 1.2],
                         "n": [30, 30, 16], "verdict": ["supported", "contradicted", "not resolved"], "reason": ["r"] * 3,
                         "p_value": [0.0001, 0.04, 0.8]})
    from nlgjudge.register import LEAD_WORDS, lead_words

    table = answer_table(rows)
    # every finding carries its lead mark in its row's label: rule changed after its data, or claim written after them
    marked = [label + lead_words(f"subsets.{name}") for name, label in ANSWER_FINDINGS.items()]
    assert list(table.index) == marked and list(table.columns) == ["d1", "d2", "d3"]
    assert 0 < sum(LEAD_WORDS in label for label in table.index) < len(marked)
    table.index = list(ANSWER_FINDINGS.values())
    first = table.loc[ANSWER_FINDINGS["no_repeat_minus_random"]]
    assert first["d1"] == "1.0 [0.5, 1.5], supported (n = 30)"
    # the same words as the sentences: a flag after Holm's correction over the datasets is named as one
    assert first["d2"].startswith("-1.0 [-1.9, -0.1], not resolved (a flag: contradicted")
    assert first["d3"] == "0.1 [-1.0, 1.2], not resolved (n = 16)"
    assert (table.loc[ANSWER_FINDINGS["debias_gain_small_budgets"]] == "not computed").all()  # no rows: said so


def _draw_frames(stacks: dict[str, tuple[list[int], list[float]]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """per-context and per-draw frames of one group: stack (a template) -> (its contexts, per-draw differences)."""
    context_rows, draw_rows = [], []
    for template, (contexts, differences) in stacks.items():
        key = {"model": "m", "dataset": "d", "template": template, "aspect": "A", "n_candidates": 4}
        context_rows += [{**key, "context_id": c, "comparison": "x", "first_x100": 0.0, "second_x100": 0.0} for c in contexts]
        draw_rows += [{**key, "draw": k, "comparison": "x", "first_x100": v, "second_x100": 0.0}
                      for k, v in enumerate(differences)]
    return pd.DataFrame(context_rows), pd.DataFrame(draw_rows)


def test_monte_carlo_error_is_the_spread_of_the_draws_weighted_by_each_stacks_share() -> None:
    from nlgjudge.analysis.subsets import monte_carlo_error

    one_a, one_b = [1.0, 3.0, 2.0, 6.0], [0.0, 4.0, 2.0]
    per_context, per_draw = _draw_frames({"t1": ([0, 1], one_a)})
    assert monte_carlo_error(per_context, per_draw) == pytest.approx(np.std(one_a, ddof=1) / np.sqrt(4))
    # disjoint contexts: shares 2/6 and 4/6 of the estimate; independent draws, so variances add
    per_context, per_draw = _draw_frames({"t1": ([0, 1], one_a), "t2": ([2, 3, 4, 5], one_b)})
    expected = np.sqrt((1 / 3) ** 2 * np.var(one_a, ddof=1) / 4 + (2 / 3) ** 2 * np.var(one_b, ddof=1) / 3)
    assert monte_carlo_error(per_context, per_draw) == pytest.approx(expected)
    # two templates on the same contexts: each context's value is their mean, half from each
    per_context, per_draw = _draw_frames({"t1": ([0, 1], one_a), "t2": ([0, 1], one_b)})
    expected = np.sqrt(0.25 * np.var(one_a, ddof=1) / 4 + 0.25 * np.var(one_b, ddof=1) / 3)
    assert monte_carlo_error(per_context, per_draw) == pytest.approx(expected)


def test_the_findings_carry_their_monte_carlo_error_from_their_own_draws(tiny_dataset, synthetic_comparisons) -> None:
    from nlgjudge.analysis.subsets import strategy_claim_frames, strategy_claims

    ds = tiny_dataset(n_contexts=6)
    frame = synthetic_comparisons(ds, pull=1.0)
    per_context, per_draw = strategy_claim_frames(frame, {"tiny": ds}, n_draws=8, seed=3)
    assert set(per_draw["draw"]) == set(range(8)) and set(per_draw["comparison"]) == set(per_context["comparison"])
    claims = strategy_claims(per_context, per_draw=per_draw)
    full = claims["comparison"] == "debias_gain_full"  # all N(N-1) comparisons: nothing is drawn
    assert (claims.loc[~full, "monte_carlo_se"] > 0).all() and (claims.loc[full, "monte_carlo_se"] == 0).all()
    again = strategy_claim_frames(frame, {"tiny": ds}, n_draws=8, seed=3)
    pd.testing.assert_frame_equal(again[1], per_draw)  # one seed, one set of draws
    plain = strategy_claims(per_context)
    assert plain["monte_carlo_se"].isna().all() and (plain["estimate"] == claims["estimate"]).all()


def test_the_monte_carlo_range_leaves_out_the_row_where_nothing_is_drawn() -> None:
    from nlgjudge.analysis.subsets import monte_carlo_prose

    claims = pd.DataFrame({"monte_carlo_se": [0.12, 3e-16, 0.05], "reason": ["x", "y", "z"]})
    assert monte_carlo_prose(claims, claims)["mc_range"] == "0.05 to 0.12 per dataset"


def test_more_draws_for_one_comparison_draw_only_its_strategies_and_budgets() -> None:
    from nlgjudge.stats.subset_curves import curves_for

    strategies, flags, budgets = curves_for(["no_repeat_minus_random"], 4)  # N(N-1) = 12
    assert strategies == ["no-repeat", "random"] and flags == (False,)
    assert budgets == {"no-repeat": list(range(1, 7)), "random": list(range(1, 7))}
    # symmetric(2m) against no-repeat(m): the first side at twice the budget
    assert curves_for(["symmetric_minus_no_repeat_equal_pairs"], 4)[2]["symmetric"] == list(range(2, 13, 2))
    strategies, flags, budgets = curves_for(["debias_gain_small_minus_full"], 6)  # made of two comparisons
    assert strategies == ["random"] and flags == (False, True) and budgets["random"] == [6, 7, 30]  # N..N(N-1)/4, all
    with pytest.raises(ValueError, match="unknown comparisons"):
        curves_for(["no_such"], 4)


def test_pooled_draws_weigh_each_context_by_its_draws_and_number_the_new_draws_after_the_old() -> None:
    from nlgjudge.analysis.subsets_draws import _pooled

    keys = {"model": "m", "dataset": "d", "template": 1, "aspect": "COH", "n_candidates": 4}
    context = pd.DataFrame([{**keys, "context_id": c, "comparison": k, "first_x100": 10.0, "second_x100": 0.0}
                            for c in ("c0", "c1") for k in ("a", "b")])
    more = context[context["comparison"] == "a"].assign(first_x100=30.0, second_x100=6.0)
    draws = pd.DataFrame([{**keys, "draw": j, "comparison": "a", "first_x100": 1.0, "second_x100": 0.0} for j in range(2)])
    pooled, pooled_draws = _pooled(context, draws, more, draws.assign(first_x100=2.0), before=2, added=6)
    a = pooled[pooled["comparison"] == "a"]
    assert (a["first_x100"] == (10 * 2 + 30 * 6) / 8).all() and (a["second_x100"] == 6 * 6 / 8).all()
    assert (pooled.loc[pooled["comparison"] == "b", "first_x100"] == 10.0).all()  # the other comparison untouched
    assert len(pooled) == len(context) and list(pooled.columns) == list(context.columns)
    assert pooled_draws["draw"].tolist() == [0, 1, 2, 3] and pooled_draws["first_x100"].tolist() == [1.0, 1.0, 2.0, 2.0]
    with pytest.raises(ValueError, match="same contexts"):
        _pooled(context, draws, more.assign(context_id="c9"), draws, before=2, added=6)
    with pytest.raises(ValueError, match="same contexts"):  # an old row of the redrawn comparison left out
        _pooled(context, draws, more[more["context_id"] == "c0"], draws, before=2, added=6)


def test_findings_near_the_band_get_more_draws_and_the_rest_keep_theirs(tiny_dataset, synthetic_comparisons) -> None:
    from nlgjudge.analysis import subsets_draws
    from nlgjudge.analysis.subsets import strategy_claim_frames, strategy_claims
    from nlgjudge.analysis.subsets_draws import settled_strategy_claims, settled_words

    ds = tiny_dataset(n_contexts=6, n_candidates=4)
    frame = synthetic_comparisons(ds, pull=1.0)
    per_context, per_draw = strategy_claim_frames(frame, {"tiny": ds}, n_draws=8, seed=3)
    claims, cells, pooled, used = settled_strategy_claims(frame, {"tiny": ds}, n_draws=8, seed=3, rounds=0)
    pd.testing.assert_frame_equal(claims, strategy_claims(per_context, by=["dataset"], per_draw=per_draw))
    assert used == {} and settled_words(used, 8).startswith("no finding needed more")
    # every drawn row near the band: its comparison is drawn again, four times over
    original = subsets_draws._near_the_band
    try:
        subsets_draws._near_the_band = lambda row, bands: float(row.monte_carlo_se) > 0
        claims, cells, pooled, used = settled_strategy_claims(frame, {"tiny": ds}, n_draws=8, seed=3, rounds=1)
    finally:
        subsets_draws._near_the_band = original
    drawn = {name for name in claims["comparison"] if name != "debias_gain_full"}  # the full matrix draws nothing
    assert used == {("tiny", name): 32 for name in drawn}
    assert "took 32 draws per budget" in settled_words(used, 8)
    moved = pooled.set_index(["context_id", "comparison"])["first_x100"] != per_context.set_index(["context_id", "comparison"])["first_x100"]
    assert moved.any() and not moved.xs("debias_gain_full", level="comparison").any()


def test_a_row_is_near_the_band_within_the_bands_asked() -> None:
    from types import SimpleNamespace

    from nlgjudge.analysis.subsets_draws import _near_the_band

    def row(low: float, mc_se: float, verdict: str = "supported") -> SimpleNamespace:
        return SimpleNamespace(comparison="no_repeat_minus_random", estimate=low + 1.0, low=low, high=low + 2.0, n=30,
                               monte_carlo_se=mc_se, verdict=verdict)
    assert _near_the_band(row(0.5, 0.1), 2.0)  # the band is 3 x 0.1 = 0.3: 0.5 lies within twice it
    assert not _near_the_band(row(0.5, 0.1), 1.0)  # but not within the band itself
    assert _near_the_band(row(0.25, 0.1), 1.0)
    assert not _near_the_band(row(0.7, 0.1), 2.0)  # clear of twice the band
    assert not _near_the_band(row(0.1, 0.0), 2.0) and not _near_the_band(row(0.1, float("nan")), 2.0)  # nothing drawn
    assert not _near_the_band(row(0.1, 0.1, "not tested"), 2.0)


def test_later_rounds_draw_only_rows_still_borderline_each_four_times_its_draws_so_far(
        tiny_dataset, synthetic_comparisons) -> None:
    from nlgjudge.analysis import subsets_draws
    from nlgjudge.analysis.subsets_draws import settled_strategy_claims

    ds = tiny_dataset(n_contexts=6, n_candidates=4)
    frame = synthetic_comparisons(ds, pull=1.0)
    asked: list[float] = []
    original = subsets_draws._near_the_band

    def near(row, bands: float) -> bool:  # the first round: every drawn row; after it: finding 1 alone
        asked.append(bands)
        return float(row.monte_carlo_se) > 0 and (bands == subsets_draws.FIRST_ROUND_BANDS
                                                  or row.comparison == "no_repeat_minus_random")
    holm = subsets_draws.holm_open
    try:
        subsets_draws._near_the_band = near
        subsets_draws.holm_open = lambda part, bands: np.zeros(len(part), dtype=bool)  # the band alone here
        _, _, _, used = settled_strategy_claims(frame, {"tiny": ds}, n_draws=8, seed=3, rounds=3)
    finally:
        subsets_draws._near_the_band = original
        subsets_draws.holm_open = holm
    assert used[("tiny", "no_repeat_minus_random")] == 8 * 4 ** 3
    assert {n for (_, name), n in used.items() if name != "no_repeat_minus_random"} == {32}
    assert set(asked) == {subsets_draws.FIRST_ROUND_BANDS, subsets_draws.LATER_ROUND_BANDS}


def _family(estimates, mean_se: float, n: int = 30, half: float = 1.0) -> pd.DataFrame:
    return pd.DataFrame({"dataset": [f"d{k}" for k in range(len(estimates))], "comparison": "no_repeat_minus_random",
                         "estimate": estimates, "low": [e - half for e in estimates], "high": [e + half for e in estimates],
                         "n": n, "test_threshold": 0.0, "monte_carlo_mean_se": mean_se, "verdict": "supported"})


def test_holm_reads_each_row_at_the_largest_p_its_draws_could_give() -> None:
    from nlgjudge.analysis import subsets
    from nlgjudge.analysis.subsets import family_p, holm_open
    from nlgjudge.stats.multiplicity import holm_rejections, p_from_interval

    # three rows whose own p are about 1e-6, 0.012 and 0.03: Holm keeps all three at exact draws
    rows = _family([2.6, 1.3, 1.1], mean_se=0.0)
    own = [p_from_interval(r.estimate, r.low, r.high, r.n) for r in rows.itertuples()]
    assert holm_rejections(own).all() and not holm_open(rows).any()
    # with draws' error the second's decision at Holm's step depends on the draws: open, and read at its largest p
    noisy = _family([2.6, 1.3, 1.1], mean_se=0.05)
    opened = holm_open(noisy)
    assert opened[1] and not opened[0]
    largest = noisy.assign(p_family=[subsets._p_within_draws(r.estimate, r.low, r.high, r.n, 0.0, r.monte_carlo_mean_se,
                                                             3.0)[0] for r in noisy.itertuples()])
    assert (family_p(largest) >= np.asarray(own)).all() and not holm_rejections(family_p(largest))[1]
    assert not holm_open(noisy.assign(verdict="not resolved")).any()  # only a row resolved on its own is Holm's to keep


def test_an_ends_monte_carlo_error_carries_the_spreads_by_the_delta_method() -> None:
    from nlgjudge.stats.intervals import draws_errors, end_error

    estimate_error, se_error = draws_errors(0.1, 17)
    assert (estimate_error, se_error) == (0.1, pytest.approx(0.1 / 4))
    assert end_error(estimate_error, se_error, 17) == pytest.approx(0.1 * np.sqrt(1 + stats.t.ppf(0.975, 16) ** 2 / 16))
    # a simulation: units' values are means of noisy draws; the end's spread over reruns matches
    rng = np.random.default_rng(0)
    truth = rng.normal(0.0, 1.0, 17)
    ends = []
    for _ in range(4000):
        values = truth + rng.normal(0.0, 0.4, 17)
        ends.append(values.mean() - stats.t.ppf(0.975, 16) * values.std(ddof=1) / np.sqrt(17))
    error = end_error(*draws_errors(0.4 / np.sqrt(17), 17), 17)
    assert np.std(ends, ddof=1) == pytest.approx(error, rel=0.08)
    assert np.std(ends, ddof=1) > 1.05 * 0.4 / np.sqrt(17)  # the estimate's error alone understates it


def test_one_datasets_extra_draws_keep_each_stacks_seed_among_all_stacks(tiny_dataset, synthetic_comparisons) -> None:
    from nlgjudge.analysis.subsets import CLAIM_STRATEGIES, _subset_frames

    ds = tiny_dataset(n_contexts=6, n_candidates=4)
    frame = synthetic_comparisons(ds, pull=1.0)
    other = frame.assign(dataset="other")
    both = pd.concat([frame, other], ignore_index=True)
    args = (CLAIM_STRATEGIES, 8, (False, True), None, 0.95, 3)
    _, alone, _ = _subset_frames(both, {"tiny": ds, "other": ds}, *args, stream=2, only=["no_repeat_minus_random"],
                                 only_dataset="other")
    _, everything, _ = _subset_frames(both, {"tiny": ds, "other": ds}, *args, stream=2, only=["no_repeat_minus_random"])
    assert set(alone["dataset"]) == {"other"}
    pd.testing.assert_frame_equal(alone.reset_index(drop=True),
                                  everything[everything["dataset"] == "other"].reset_index(drop=True))
    first = everything[everything["dataset"] == "tiny"]["first_x100"].to_numpy()
    assert not np.allclose(first, alone["first_x100"].to_numpy())  # same data, another stream


def test_settled_words_name_each_datasets_draws() -> None:
    from nlgjudge.analysis.subsets_draws import settled_words

    used = {("WebNLG", "a"): 800, ("WebNLG", "b"): 12800, ("WebNLG", "c"): 800, ("SummEval", "a"): 800}
    assert settled_words(used, 200) == (
        "on SummEval, 1 of the 7 comparisons took 800 draws per budget; "
        "on WebNLG, 3 of the 7 comparisons took more draws per budget (2 took 800 and 1 took 12,800)")


def test_a_supported_finding_within_its_smallest_effect_that_matters_says_so_in_the_answer_box() -> None:
    from types import SimpleNamespace

    from nlgjudge.analysis.subsets import _dataset_cell

    small = SimpleNamespace(comparison="no_repeat_minus_random", estimate=0.7, low=0.4, high=0.9, verdict="supported", reason="", n=40)
    assert "supported, negligible: smaller than the smallest effect that matters" in _dataset_cell(small, "supported")
    large = SimpleNamespace(**{**vars(small), "estimate": 2.0, "high": 3.5})
    assert "smaller than" not in _dataset_cell(large, "supported")
    assert "smaller than" not in _dataset_cell(small, "not resolved")
    against = SimpleNamespace(**{**vars(small), "estimate": -0.4, "low": -0.6, "high": -0.2, "verdict": "contradicted"})
    assert "contradicted, negligible: smaller than the smallest effect that matters" in _dataset_cell(against, "contradicted")
