"""Bradley-Terry scores through choix, and their bootstrap intervals."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nlgjudge.stats.bradley_terry import bradley_terry_bootstrap, bradley_terry_scores, win_matrix
from nlgjudge.stats.decisions import hard_decisions
from nlgjudge.stats.max_likelihood import max_likelihood_ranking
from scipy.special import expit

NAN = np.nan


def bt_matrix(scores: np.ndarray) -> np.ndarray:
    probs = expit(scores[:, None] - scores[None, :])
    np.fill_diagonal(probs, NAN)
    return probs


def test_win_matrix_known_answer() -> None:
    probs = np.array([[NAN, 0.9, NAN], [0.3, NAN, 0.6], [NAN, NAN, NAN]])
    # W[0,1] = 0.9 + (1 - 0.3); W[1,0] = 0.1 + 0.3; W[1,2] = 0.6; W[2,1] = 0.4.
    np.testing.assert_allclose(win_matrix(probs), [[0, 1.6, 0], [0.4, 0, 0.6], [0, 0.4, 0]])


def test_recovers_true_log_strengths_from_clean_soft_comparisons() -> None:
    scores = np.array([1.0, 0.3, -0.2, -1.1])
    np.testing.assert_allclose(bradley_terry_scores(bt_matrix(scores), alpha=0.0), scores - scores.mean(), atol=1e-6)


def test_estimate_satisfies_the_likelihood_equations() -> None:
    rng = np.random.default_rng(0)
    probs = rng.uniform(0.1, 0.9, (6, 6))
    np.fill_diagonal(probs, NAN)
    theta = bradley_terry_scores(probs, alpha=0.0)
    wins = win_matrix(probs)
    expected = (wins + wins.T) * expit(theta[:, None] - theta[None, :])
    np.fill_diagonal(expected, 0.0)
    # d logL / d theta_i = sum_j W_ij - sum_j (W_ij + W_ji) sigmoid(theta_i - theta_j) = 0
    np.testing.assert_allclose(wins.sum(1), expected.sum(1), atol=1e-5)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 10))
def test_choix_bradley_terry_and_max_likelihood_agree_on_clean_data(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    scores = rng.permutation(np.linspace(-2, 2, n) + rng.uniform(0, 0.1, n))
    probs = bt_matrix(scores)
    bt_order = np.argsort(-bradley_terry_scores(probs, alpha=0.0))
    ml_order = max_likelihood_ranking(probs).order
    true_order = np.argsort(-scores)
    np.testing.assert_array_equal(bt_order, true_order)
    np.testing.assert_array_equal(ml_order, true_order)


def test_separated_hard_decisions_need_regularisation() -> None:
    decisions = hard_decisions(bt_matrix(np.array([2.0, 1.0, 0.0])))
    with pytest.raises(ValueError, match="alpha > 0"):
        bradley_terry_scores(decisions, alpha=0.0)
    regularised = bradley_terry_scores(decisions, alpha=0.01)
    assert np.all(np.diff(regularised) < 0)


def test_bootstrap_interval_brackets_estimate_and_is_reproducible() -> None:
    rng = np.random.default_rng(2)
    scores = np.array([1.5, 0.5, 0.0, -1.0, -1.0])
    noisy = np.clip(bt_matrix(scores) + rng.normal(0, 0.15, (5, 5)), 0.01, 0.99)
    decisions = hard_decisions(noisy)
    fit = bradley_terry_bootstrap(decisions, n_boot=100, seed=7)
    assert fit.replicates.shape == (100, 5)
    assert np.all(fit.ci_low <= fit.ci_high)
    assert np.all((fit.ci_low <= fit.scores + 1e-9) & (fit.scores - 1e-9 <= fit.ci_high))
    again = bradley_terry_bootstrap(decisions, n_boot=100, seed=7)
    np.testing.assert_array_equal(fit.ci_low, again.ci_low)


def test_bootstrap_rejects_bad_settings() -> None:
    probs = bt_matrix(np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="n_boot"):
        bradley_terry_bootstrap(probs, n_boot=1)
    with pytest.raises(ValueError, match="confidence"):
        bradley_terry_bootstrap(probs, confidence=1.5)
    with pytest.raises(TypeError, match="n_boot must be an integer"):
        bradley_terry_bootstrap(probs, n_boot=20.5)
    with pytest.raises(ValueError, match="alpha must be finite"):
        bradley_terry_bootstrap(probs, alpha=float("nan"))


def test_alpha_must_be_a_finite_pseudo_count() -> None:
    probs = bt_matrix(np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="alpha must be finite"):
        bradley_terry_scores(probs, alpha=float("nan"))  # NaN < 0 is False: it used to reach choix
    with pytest.raises(ValueError, match="alpha must be >= 0"):
        bradley_terry_scores(probs, alpha=-0.1)


def test_from_wins_orders_by_wins_and_refuses_bad_counts() -> None:
    from nlgjudge.stats import bradley_terry_from_wins

    wins = np.array([[0, 8, 9], [2, 0, 6], [1, 4, 0]], dtype=float)
    scores = bradley_terry_from_wins(wins)
    assert scores[0] > scores[1] > scores[2] and abs(scores.mean()) < 1e-12
    # two equally strong players with ties only: equal strengths
    np.testing.assert_allclose(bradley_terry_from_wins(np.array([[0, 2.5], [2.5, 0]])), [0.0, 0.0], atol=1e-9)
    with pytest.raises(ValueError, match="square"):
        bradley_terry_from_wins(np.ones((2, 3)))
    with pytest.raises(ValueError, match="non-negative"):
        bradley_terry_from_wins(np.array([[0, -1.0], [1, 0]]))
