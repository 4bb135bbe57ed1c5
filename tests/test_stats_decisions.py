"""Known answers and properties for hard decisions (eq. 2), the win ratio (eq. 6, seed 002 eq. 4), ranks."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nlgjudge.stats.decisions import (
    comparison_mask,
    hard_decisions,
    ranks_from_scores,
    win_counts,
    win_ratio,
    win_ratio_full_matrix,
)

NAN = np.nan
# P[i, j] = P(i beats j | i in position A).
PROBS = np.array(
    [
        [NAN, 0.9, 0.8],
        [0.3, NAN, 0.6],
        [0.1, 0.45, NAN],
    ]
)


def test_hard_decisions_eq2_known_answer() -> None:
    expected = np.array([[NAN, 1, 1], [0, NAN, 1], [0, 0, NAN]])
    np.testing.assert_array_equal(hard_decisions(PROBS), expected)


def test_hard_decisions_tie_at_half_goes_to_position_b() -> None:
    # Eq. 2: "1 if p_ij > 0.5, 0 otherwise".
    decisions = hard_decisions(np.array([[NAN, 0.5], [0.5000001, NAN]]))
    assert decisions[0, 1] == 0.0 and decisions[1, 0] == 1.0


def test_hard_decisions_keeps_missing_comparisons_missing() -> None:
    probs = PROBS.copy()
    probs[1, 2] = NAN
    decisions = hard_decisions(probs)
    assert np.isnan(decisions[1, 2]) and decisions[2, 1] == 0.0
    assert comparison_mask(probs).sum() == 5


def test_diagonal_is_ignored_whatever_it_holds() -> None:
    probs = PROBS.copy()
    np.fill_diagonal(probs, 0.5)
    np.testing.assert_array_equal(win_ratio(hard_decisions(probs)), win_ratio(hard_decisions(PROBS)))


def test_win_ratio_eq6_known_answer() -> None:
    # Candidate 0 wins both its A comparisons and both B ones: 4/4. Candidate 1: wins (1,2) as A and
    # (2,1) as B: 2/4. Candidate 2 wins nothing: 0/4.
    wins, games = win_counts(hard_decisions(PROBS))
    np.testing.assert_array_equal(wins, [4, 2, 0])
    np.testing.assert_array_equal(games, [4, 4, 4])
    np.testing.assert_array_equal(win_ratio(hard_decisions(PROBS)), [1.0, 0.5, 0.0])


def test_win_ratio_on_a_subset_counts_only_made_comparisons() -> None:
    probs = PROBS.copy()
    probs[1, 2] = probs[2, 1] = NAN
    # 0: 4/4; 1: loses (1,0) as A and (0,1) as B: 0/2; 2: likewise 0/2.
    np.testing.assert_array_equal(win_ratio(hard_decisions(probs)), [1.0, 0.0, 0.0])


def test_win_ratio_unseen_candidate() -> None:
    probs = np.full((3, 3), NAN)
    probs[0, 1] = 0.8
    assert np.isnan(win_ratio(hard_decisions(probs))[2])
    assert win_ratio(hard_decisions(probs), unseen=0.5)[2] == 0.5


def test_soft_win_ratio_uses_probabilities() -> None:
    # Candidate 2: 0.1 + 0.45 as A, (1 - 0.8) + (1 - 0.6) as B, over 4 games.
    assert win_ratio(PROBS)[2] == pytest.approx((0.1 + 0.45 + 0.2 + 0.4) / 4)


def test_full_matrix_win_ratio_seed002_eq4_known_answer() -> None:
    np.testing.assert_allclose(win_ratio_full_matrix(hard_decisions(PROBS)), [1.0, 0.5, 0.0])


def test_full_matrix_win_ratio_rejects_missing_comparisons() -> None:
    probs = PROBS.copy()
    probs[0, 1] = NAN
    with pytest.raises(ValueError, match="missing"):
        win_ratio_full_matrix(probs)


def test_ranks_from_scores_best_is_one_and_ties_average() -> None:
    np.testing.assert_array_equal(ranks_from_scores([0.2, 0.9, 0.2]), [2.5, 1.0, 2.5])


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (np.zeros((2, 3)), "square"),
        (np.array([[NAN]]), "at least 2"),
        (np.array([[NAN, 1.2], [0.1, NAN]]), r"\[0, 1\]"),
        (np.array([[NAN, np.inf], [0.1, NAN]]), "infinite"),
    ],
)
def test_bad_matrices_raise(bad: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        win_ratio(bad)


def test_ranks_reject_nan() -> None:
    with pytest.raises(ValueError, match="NaN"):
        ranks_from_scores([0.1, NAN])


def _random_matrix(seed: int, n: int, missing: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    probs = rng.random((n, n))
    probs[rng.random((n, n)) < missing] = NAN
    np.fill_diagonal(probs, NAN)
    return probs


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 9), missing=st.sampled_from([0.0, 0.3]))
def test_permuting_candidates_permutes_win_ratio_and_ranks(seed: int, n: int, missing: float) -> None:
    probs = _random_matrix(seed, n, missing)
    perm = np.random.default_rng(seed + 1).permutation(n)
    permuted = probs[np.ix_(perm, perm)]
    original = win_ratio(hard_decisions(probs), unseen=0.5)
    np.testing.assert_array_equal(win_ratio(hard_decisions(permuted), unseen=0.5), original[perm])
    np.testing.assert_array_equal(
        ranks_from_scores(win_ratio(hard_decisions(permuted), unseen=0.5)), ranks_from_scores(original)[perm]
    )


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 9))
def test_full_matrix_form_equals_eq6_on_full_matrices(seed: int, n: int) -> None:
    decisions = hard_decisions(_random_matrix(seed, n, 0.0))
    np.testing.assert_allclose(win_ratio_full_matrix(decisions), win_ratio(decisions))
