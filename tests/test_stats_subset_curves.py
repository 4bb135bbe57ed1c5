"""Subset curves (seed 000 Fig. 4-5): vectorised machinery against a slow direct computation, and the
synthetic demonstration of the paper's §5.6 findings."""

import numpy as np
import pytest
from nlgjudge.stats.bias import debiased_decisions
from nlgjudge.stats.correlation import summary_level_correlation
from nlgjudge.stats.decisions import hard_decisions, win_ratio
from nlgjudge.stats.selection import restrict_to, selection_orders
from nlgjudge.stats.subset_curves import compare_strategies, subset_curves, synthetic_judge, synthetic_subset_demo

NAN = np.nan


def slow_curve_point(probs: np.ndarray, gold: np.ndarray, pairs_per_context: np.ndarray, debias: bool) -> float:
    """One draw at one budget, straight from the definitions: restrict, decide, win ratio, Spearman."""
    predictions = []
    for context, pairs in enumerate(pairs_per_context):
        subset = restrict_to(probs[context], pairs)
        decisions = debiased_decisions(subset) if debias else hard_decisions(subset)
        predictions.append(win_ratio(decisions, unseen=0.5))
    return summary_level_correlation(np.array(predictions), gold, undefined="zero").value_x100


@pytest.mark.parametrize("strategy", ["random", "no-repeat", "symmetric"])
def test_vectorised_curves_match_the_direct_computation(strategy: str) -> None:
    judge = synthetic_judge(n_contexts=4, n_candidates=6, seed=1)
    n_draws, budgets = 3, [2, 4, 6, 9, 10, 14, 15, 20]
    curves = subset_curves(judge.probs, judge.gold, [strategy], budgets, n_draws, seed=11)
    # subset_curves draws the orders of all draws x contexts from its generator in one call.
    orders = selection_orders(6, strategy, n_draws * 4, np.random.default_rng(11)).reshape(n_draws, 4, -1, 2)
    for debias in (False, True):
        curve = curves.curve(strategy, debias)
        for column, budget in enumerate(curve.budgets):
            for draw in range(n_draws):
                expected = slow_curve_point(judge.probs, judge.gold, orders[draw, :, :budget], debias)
                assert curve.per_draw_x100[draw, column] == pytest.approx(expected, abs=1e-9)


def test_full_budget_equals_full_matrix_ranking() -> None:
    judge = synthetic_judge(n_contexts=5, n_candidates=5, seed=2)
    curves = subset_curves(judge.probs, judge.gold, ["random", "full"], None, n_draws=2, seed=0)
    plain = summary_level_correlation(
        np.array([win_ratio(hard_decisions(p)) for p in judge.probs]), judge.gold, undefined="zero"
    ).value_x100
    debiased = summary_level_correlation(
        np.array([win_ratio(debiased_decisions(p)) for p in judge.probs]), judge.gold, undefined="zero"
    ).value_x100
    for strategy in ("random", "full"):
        assert curves.curve(strategy).mean_x100[-1] == pytest.approx(plain)
        assert curves.curve(strategy, True).mean_x100[-1] == pytest.approx(debiased)
        assert curves.curve(strategy, True).p_a[-1] == pytest.approx(0.5)
    assert curves.curve("random").distinct_pairs[-1] == 10


def test_band_and_bookkeeping() -> None:
    judge = synthetic_judge(n_contexts=6, n_candidates=6, seed=3)
    gold = judge.gold.copy()
    gold[0] = 1.0  # constant gold: no correlation at any budget
    curves = subset_curves(judge.probs, gold, ["no-repeat"], [3, 15], n_draws=5, debias=[False])
    curve = curves.curve("no-repeat")
    assert curves.n_contexts_constant_gold == 1 and curves.n_contexts == 6
    assert curve.per_draw_x100.shape == (5, 2)
    assert np.all(curve.ci_low_x100 <= curve.mean_x100) and np.all(curve.mean_x100 <= curve.ci_high_x100)
    np.testing.assert_array_equal(curve.distinct_pairs, [3, 15])
    with pytest.raises(ValueError, match="no curve"):
        curves.curve("no-repeat", True)


def test_active_strategy_beats_random_on_a_clean_judge() -> None:
    judge = synthetic_judge(
        n_contexts=20, n_candidates=8, position_pull=0.0, perception_noise=0.0, comparison_noise=0.3, seed=4
    )
    curves = subset_curves(
        judge.probs, judge.gold, ["random", "active"], [8, 12, 16], n_draws=3, debias=[False], seed=0
    )
    assert np.all(curves.curve("active").mean_x100 > curves.curve("random").mean_x100)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"strategies": ["sorted"]}, "valid choices"),
        ({"n_draws": 1}, "n_draws"),
        ({"budgets": [7], "strategies": ["symmetric"]}, "none of the budgets"),
        ({"budgets": {"random": [100]}, "strategies": ["random"]}, "budget must be"),
        ({"debias": []}, "debias"),
    ],
)
def test_bad_arguments_raise(kwargs: dict, message: str) -> None:
    judge = synthetic_judge(n_contexts=2, n_candidates=4, seed=0)
    with pytest.raises(ValueError, match=message):
        subset_curves(judge.probs, judge.gold, **kwargs)


def test_missing_comparisons_and_shape_mismatch_raise() -> None:
    judge = synthetic_judge(n_contexts=2, n_candidates=4, seed=0)
    probs = judge.probs.copy()
    probs[1, 0, 2] = NAN
    with pytest.raises(ValueError, match="missing"):
        subset_curves(probs, judge.gold)
    with pytest.raises(ValueError, match="gold must have shape"):
        subset_curves(judge.probs, judge.gold[:, :3])


def test_synthetic_demo_behaves_as_the_paper_reports() -> None:
    """Full size as in seed 000 Fig. 4: 100 contexts x 16 candidates, 50 draws, every budget."""
    demo = synthetic_subset_demo()
    print(
        f"\nsubset-curve demo: {demo.details['seconds']:.1f} s for 50 draws x all budgets x 100 contexts"
        f" x 16 candidates; P(A)={demo.details['p_a']:.3f};"
        f" no-repeat - symmetric at equal R = {demo.comparison.no_repeat_minus_symmetric_equal_r:.2f};"
        f" symmetric(2m) - no-repeat(m) = {demo.comparison.symmetric_minus_no_repeat_equal_pairs:.2f};"
        f" debias gain: R<N {demo.comparison.debias_gain_tiny_budgets:.2f},"
        f" N<=R<=N(N-1)/4 {demo.comparison.debias_gain_small_budgets:.2f}, full {demo.comparison.debias_gain_full:.2f}"
    )
    assert demo.judge.p_a < 0.35  # a clearly biased judge
    # §5.6: at the same number of comparisons, symmetric (half the distinct pairs) trails no-repeat by
    # only about one point of Spearman.
    assert 0.0 < demo.comparison.no_repeat_minus_symmetric_equal_r < 2.5
    # With the same distinct pairs, symmetric's extra reverse comparisons can only help.
    assert demo.comparison.symmetric_minus_no_repeat_equal_pairs > 0.0
    # Debiasing helps, and helps most when few comparisons are made.
    assert demo.comparison.debias_gain_small_budgets > 1.0
    assert demo.comparison.debias_gain_small_budgets > demo.comparison.debias_gain_full + 0.5
    total = 16 * 15
    assert demo.curves.curve("random").at(total) == pytest.approx(demo.curves.curve("symmetric").at(total))


def test_debiasing_helps_a_biased_judge_but_not_an_unbiased_one() -> None:
    # Forcing P(A) = 0.5 on a small subset of an unbiased judge only flips its least confident
    # comparisons (the subset's P(A) differs from 0.5 by chance), which costs a little.
    budgets = [16, 32, 48, 60]
    biased = synthetic_judge(n_contexts=60, position_pull=-1.5, seed=5)
    unbiased = synthetic_judge(n_contexts=60, position_pull=0.0, seed=5)
    gains = []
    for judge in (biased, unbiased):
        curves = subset_curves(judge.probs, judge.gold, ["random"], budgets, n_draws=10, seed=1)
        gains.append(float(np.mean(curves.curve("random", True).mean_x100 - curves.curve("random").mean_x100)))
    assert gains[0] > 1.0 and gains[1] < 0.5 and gains[0] > gains[1] + 1.5


def test_compare_strategies_on_hand_made_curves() -> None:
    # N = 4: R runs to 12, half is 6, a quarter is 3. Flat curves make every mean a known number.
    budgets = np.arange(1, 13)
    curves = {
        ("random", False): (budgets, np.full(12, 10.0)),
        ("random", True): (budgets, np.where(budgets < 4, 9.0, 13.0)),  # -1 below N, +3 from N on
        ("no-repeat", False): (np.arange(1, 7), np.arange(1, 7) * 2.0),  # 2R, to N(N-1)/2 only
        ("symmetric", False): (np.arange(2, 13, 2), np.full(6, 5.0)),
    }
    result = compare_strategies(curves, n_candidates=4)
    assert result.no_repeat_minus_random == pytest.approx(np.mean(np.arange(1, 7) * 2.0) - 10.0)  # 7 - 10
    assert result.no_repeat_minus_symmetric_equal_r == pytest.approx(np.mean([4.0, 8.0, 12.0]) - 5.0)
    assert result.symmetric_minus_no_repeat_equal_pairs == pytest.approx(5.0 - 7.0)  # m = 1..6
    assert result.debias_gain_tiny_budgets == pytest.approx(-1.0)  # R = 1..3 < N
    assert np.isnan(result.debias_gain_small_budgets)  # N = 4 > N(N-1)/4 = 3: the range is empty
    assert result.debias_gain_full == pytest.approx(3.0)
    # A strategy that was not run gives NaN for the comparisons that need it, nothing else.
    without_symmetric = compare_strategies({k: v for k, v in curves.items() if k[0] != "symmetric"}, 4)
    assert np.isnan(without_symmetric.no_repeat_minus_symmetric_equal_r)
    assert without_symmetric.no_repeat_minus_random == pytest.approx(-3.0)


def test_compare_strategies_rejects_mismatched_curves() -> None:
    with pytest.raises(ValueError, match="one length"):
        compare_strategies({("random", False): (np.arange(1, 5), np.zeros(3))}, n_candidates=4)
    with pytest.raises(ValueError, match="n_candidates"):
        compare_strategies({}, n_candidates=1)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"strategies": "random"}, TypeError, "strategies must be a list of selection strategies.*single string"),
        ({"debias": "True"}, TypeError, "debias must be a list of booleans.*single string"),
        ({"debias": ["False"]}, TypeError, "debias must list booleans"),
        ({"n_draws": 2.5}, TypeError, "n_draws must be an integer"),
    ],
)
def test_strings_and_fractions_are_not_taken_for_lists_and_counts(kwargs: dict, error: type, message: str) -> None:
    # "random" used to be read as the strategies "r", "a", ...; ["False"] as debias=True.
    judge = synthetic_judge(n_contexts=2, n_candidates=4, seed=0)
    with pytest.raises(error, match=message):
        subset_curves(judge.probs, judge.gold, **kwargs)


def test_synthetic_judge_rejects_bad_settings() -> None:
    with pytest.raises(TypeError, match="n_candidates must be an integer"):
        synthetic_judge(n_contexts=2, n_candidates=4.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="perception_noise is a standard deviation"):
        synthetic_judge(n_contexts=2, perception_noise=-1.0)
    with pytest.raises(ValueError, match="position_pull must be finite"):
        synthetic_judge(n_contexts=2, position_pull=float("nan"))


def test_per_context_comparisons_average_to_the_curve_comparisons() -> None:
    from nlgjudge.stats.subset_curves import per_context_comparisons

    judge = synthetic_judge(n_contexts=6, n_candidates=5, seed=1)
    curves = subset_curves(judge.probs, judge.gold, ("random", "no-repeat", "symmetric"), None, 8, (False, True), seed=2)
    means = compare_strategies({k: (c.budgets, c.mean_x100) for k, c in curves.curves.items()}, 5)
    sides = per_context_comparisons({k: (c.budgets, c.per_context_x100) for k, c in curves.curves.items()}, 5)
    for name, (first, second) in sides.items():
        assert first.shape == (6,) and second.shape == (6,)
        assert float(np.mean(first - second)) == pytest.approx(getattr(means, name), abs=1e-9)
    assert means.debias_gain_small_minus_full == pytest.approx(means.debias_gain_small_budgets - means.debias_gain_full)
    curve = curves.curve("random")
    assert curve.per_context_x100.mean(axis=0) == pytest.approx(curve.mean_x100)
    with pytest.raises(ValueError, match="n_contexts"):
        per_context_comparisons({k: (c.budgets, c.mean_x100) for k, c in curves.curves.items()}, 5)
