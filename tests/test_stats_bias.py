"""Positional bias (eq. 8) and the exact debiasing threshold / weight (eq. 9-10)."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from nlgjudge.stats.bias import (
    alpha_from_threshold,
    debias_threshold,
    debias_thresholds_batch,
    debiased_decisions,
    grid_debias_threshold,
    positional_bias,
    reweight_probabilities,
    threshold_from_alpha,
)
from nlgjudge.stats.decisions import hard_decisions, ranks_from_scores, win_ratio
from scipy.special import expit, logit

NAN = np.nan


def test_positional_bias_known_answer_and_literal_eq8_p_b() -> None:
    probs = np.array([[NAN, 0.9, 0.8], [0.7, NAN, 0.6], [0.1, 0.45, NAN]])
    decisions = hard_decisions(probs)  # A wins (0,1), (0,2), (1,0), (1,2): 4 of 6
    bias = positional_bias(decisions)
    assert bias.p_a == pytest.approx(4 / 6)
    assert bias.symmetric and bias.n_comparisons == 6
    # Eq. 8 literally: P(B) = sum over C of y~_ij = 1 - y^_ji, divided by |C|.
    literal = np.mean([1 - decisions[j, i] for i in range(3) for j in range(3) if i != j])
    assert bias.p_b == pytest.approx(literal) == pytest.approx(2 / 6)


def test_positional_bias_flags_asymmetric_sets() -> None:
    probs = np.array([[NAN, 0.9, NAN], [NAN, NAN, 0.2], [0.7, NAN, NAN]])
    bias = positional_bias(hard_decisions(probs))
    assert not bias.symmetric and bias.p_a == pytest.approx(2 / 3)


def test_threshold_even_distinct_middles_known_answer() -> None:
    result = debias_threshold(np.array([0.1, 0.2, 0.3, 0.4]))
    # log-odds midpoint of 0.2 and 0.3 = geometric mean of the odds 1/4 and 3/7.
    odds = np.sqrt(0.25 * (3 / 7))
    assert result.tau == pytest.approx(odds / (1 + odds))
    assert result.alpha == pytest.approx(1 / odds)
    assert result.interval == (0.2, 0.3)
    assert result.n_above == 2 and result.n_tied == 0 and np.isnan(result.tie_weight)
    assert result.p_a_before == 0.0 and result.p_a_after == 0.5


def test_threshold_odd_count_splits_the_median() -> None:
    result = debias_threshold(np.array([0.9, 0.2, 0.4]))
    assert result.tau == 0.4 and result.tie_weight == 0.5
    assert result.p_a_after == 0.5


def test_threshold_ties_at_the_median_get_a_fractional_split() -> None:
    # Two above 0.5, three at 0.5: they share the one missing A-win, 1/3 each.
    result = debias_threshold(np.array([0.1, 0.5, 0.5, 0.5, 0.6, 0.9]))
    assert result.tau == 0.5 and result.n_above == 2 and result.n_tied == 3
    assert result.tie_weight == pytest.approx(1 / 3)
    assert result.p_a_after == pytest.approx(0.5, abs=1e-15)


def test_threshold_on_matrix_uses_made_comparisons_only() -> None:
    probs = np.array([[NAN, 0.9, NAN], [0.8, NAN, NAN], [0.3, 0.2, NAN]])
    assert debias_threshold(probs).n_comparisons == 4
    decisions = debiased_decisions(probs)
    assert np.isnan(decisions[0, 2]) and np.nansum(decisions) == 2


def test_grid_threshold_of_paper_code_and_its_error() -> None:
    # Middle values in the same 0.001 cell: the grid rule lands above both and leaves P(A) = 1/4.
    values = np.array([0.1, 0.3001, 0.3004, 0.9])
    grid = grid_debias_threshold(values)
    assert grid == pytest.approx(0.301)
    assert np.mean(values > grid) == 0.25
    exact = debias_threshold(values)
    assert exact.p_a_after == 0.5 and exact.interval == (0.3001, 0.3004)


def test_grid_threshold_agrees_with_exact_when_a_grid_point_separates_the_middles() -> None:
    values = np.array([0.1, 0.3, 0.6, 0.9])
    grid = grid_debias_threshold(values)
    low, high = debias_threshold(values).interval
    assert low <= grid < high
    assert np.mean(values > grid) == 0.5


def test_alpha_and_threshold_are_equivalent() -> None:
    assert alpha_from_threshold(0.2) == pytest.approx(4.0)
    assert threshold_from_alpha(4.0) == pytest.approx(0.2)
    assert alpha_from_threshold(0.0) == np.inf and alpha_from_threshold(1.0) == 0.0


def test_reweight_eq9_known_answers() -> None:
    probs = np.array([[NAN, 0.2], [0.5, NAN]])
    reweighted = reweight_probabilities(probs, 4.0)
    assert reweighted[0, 1] == pytest.approx(0.5)  # 0.8 / (0.8 + 0.8)
    assert reweighted[1, 0] == pytest.approx(0.8)  # 2 / (2 + 0.5)


@pytest.mark.parametrize("alpha", [0.0, np.inf, -1.0, np.nan])
def test_reweight_rejects_non_positive_or_infinite_alpha(alpha: float) -> None:
    with pytest.raises(ValueError, match="alpha"):
        reweight_probabilities(np.array([[NAN, 0.2], [0.5, NAN]]), alpha)


def test_threshold_rejects_nan_and_empty_inputs() -> None:
    with pytest.raises(ValueError, match="NaN"):
        debias_threshold(np.array([0.2, NAN]))
    with pytest.raises(ValueError, match="no comparisons"):
        debias_threshold(np.full((3, 3), NAN))



def test_debiased_decisions_takes_a_fitted_threshold_not_a_bare_tau() -> None:
    probs = np.array([[NAN, 0.7], [0.6, NAN]])
    with pytest.raises(TypeError, match="threshold must be a DebiasThreshold.*hard_decisions"):
        debiased_decisions(probs, 0.65)  # type: ignore[arg-type]
    fitted = debias_threshold(np.array([0.1, 0.9]))  # tau = 0.5
    np.testing.assert_array_equal(debiased_decisions(probs, fitted), [[NAN, 1.0], [1.0, NAN]])


probability_lists = st.lists(
    st.one_of(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), st.floats(0.0, 1.0)), min_size=1, max_size=60
)


@settings(max_examples=60, deadline=None)
@given(values=probability_lists)
def test_tau_gives_p_a_one_half_exactly(values: list[float]) -> None:
    array = np.array(values)
    result = debias_threshold(array)
    assert abs(result.p_a_after - 0.5) <= 1e-12
    # Counting form: the comparisons above tau plus the tied share make exactly R/2.
    share = result.n_tied * (0.0 if np.isnan(result.tie_weight) else result.tie_weight)
    assert result.n_above + share == pytest.approx(array.size / 2, abs=1e-9)
    assert 0.0 <= (0.0 if np.isnan(result.tie_weight) else result.tie_weight) <= 1.0
    if array.size % 2 == 0 and result.n_tied == 0:
        assert result.n_above == array.size // 2  # exact without any tie split


@settings(max_examples=40, deadline=None)
@given(values=st.lists(st.floats(0.001, 0.999), min_size=2, max_size=40))
def test_eq9_weight_and_eq10_threshold_decide_alike(values: list[float]) -> None:
    array = np.array(values)
    result = debias_threshold(array)
    assume(np.isfinite(result.alpha) and result.alpha > 0)
    away = np.abs(array - result.tau) > 1e-9
    matrix = np.full((array.size + 1, array.size + 1), NAN)
    matrix[0, 1:] = array  # any layout: one row holds the values
    reweighted = reweight_probabilities(matrix, result.alpha)[0, 1:]
    np.testing.assert_array_equal((reweighted > 0.5)[away], (array > result.tau)[away])


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 12),
    pull=st.floats(-3.0, 3.0),
    symmetric_subset=st.booleans(),
)
def test_perfect_judge_with_constant_pull_is_recovered_exactly(
    seed: int, n: int, pull: float, symmetric_subset: bool
) -> None:
    rng = np.random.default_rng(seed)
    scores = np.sort(rng.uniform(-3, 3, n)) + 0.05 * np.arange(n)  # distinct
    scores = rng.permutation(scores)
    true_logits = scores[:, None] - scores[None, :]
    probs = expit(true_logits + pull)
    np.fill_diagonal(probs, NAN)
    if symmetric_subset:
        keep = np.triu(rng.random((n, n)) < 0.6, k=1)
        keep[0, 1] = True
        keep = keep | keep.T
        probs = np.where(keep, probs, NAN)
    result = debias_threshold(probs)
    # The threshold sits at the pull (in log-odds), so the weight is exp(-pull) ...
    assert logit(result.tau) == pytest.approx(pull, abs=1e-6)
    assert result.alpha == pytest.approx(np.exp(-pull), rel=1e-6)
    # ... reweighting restores the unbiased probabilities, and the decisions are those of the perfect judge.
    made = ~np.isnan(probs)
    np.testing.assert_allclose(reweight_probabilities(probs, result.alpha)[made], expit(true_logits)[made], atol=1e-6)
    decisions = debiased_decisions(probs)
    np.testing.assert_array_equal(decisions[made], (true_logits > 0)[made].astype(float))
    assert positional_bias(decisions).p_a == 0.5
    if not symmetric_subset:
        np.testing.assert_array_equal(ranks_from_scores(win_ratio(decisions)), ranks_from_scores(scores))


def test_batch_thresholds_match_single_ones() -> None:
    rng = np.random.default_rng(3)
    values = rng.random((50, 7))
    values[:5, :3] = 0.5  # ties at the median in a few rows
    tau, weight = debias_thresholds_batch(values)
    for row in range(values.shape[0]):
        single = debias_threshold(values[row])
        assert tau[row] == single.tau
        assert (np.isnan(weight[row]) and np.isnan(single.tie_weight)) or weight[row] == single.tie_weight
