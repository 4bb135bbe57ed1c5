"""Subset curves, self-consistency and ranking methods on synthetic comparison frames (no model)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

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


def test_prose_values_report_ranges_and_the_largest_method_changes() -> None:
    import pandas as pd

    from nlgjudge.analysis.subsets import STRATEGY_COMPARISON_LABELS, prose_values

    gap = STRATEGY_COMPARISON_LABELS["no_repeat_minus_symmetric_equal_r"]
    strategies = pd.DataFrame({"model": "m", "dataset": ["summeval", "summeval", "webnlg"], gap: [-2.5, -9.5, 1.0]})
    methods = pd.DataFrame({
        "model": "m", "dataset": "summeval", "aspect": ["COH", "COH", "COH", "FLU", "FLU", "FLU"],
        "method": ["win ratio", "max likelihood", "Bradley-Terry"] * 2,
        "spearman_x100": [30.0, 27.0, 41.5, 50.0, 56.8, 31.5],
    })
    values = prose_values(strategies, methods, "m")
    assert values["symmetric_gap_ranges"] == "summeval -9.5 to -2.5 and webnlg +1.0 to +1.0"
    assert values["bt_max"] == "+11.5 (summeval COH)" and values["bt_min"] == "-18.5 (summeval FLU)"
    assert values["ml_max"] == "+6.8 (summeval FLU)" and values["ml_mean"] == "+1.9"
