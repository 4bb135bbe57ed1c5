"""Maximum-likelihood ranking (seed 000 Appendix B, eq. 11-13)."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nlgjudge.stats.decisions import hard_decisions, win_ratio
from nlgjudge.stats.max_likelihood import (
    agreement_from_consistency,
    gain_matrix,
    hard_decision_gain_matrix,
    max_likelihood_ranking,
    max_likelihood_ranking_hard,
    order_log_likelihood,
    ranking_log_likelihood,
)
from scipy.special import expit

NAN = np.nan
PROBS = np.array([[NAN, 0.9, 0.8], [0.3, NAN, 0.6], [0.1, 0.45, NAN]])


def eq12_log_likelihood(probs: np.ndarray, order: tuple[int, ...]) -> float:
    """Eq. 12 written out independently: product over made comparisons of p^z (1-p)^(1-z)."""
    rank = {candidate: position for position, candidate in enumerate(order)}
    total = 0.0
    for i, j in itertools.product(range(probs.shape[0]), repeat=2):
        if i != j and not np.isnan(probs[i, j]):
            z = 1 if rank[i] < rank[j] else 0
            total += np.log(probs[i, j] ** z * (1 - probs[i, j]) ** (1 - z))
    return total


def test_known_answer_three_candidates() -> None:
    # Order 0 > 1 > 2: log(.9 * .8 * .7 * .6 * .9 * .55).
    assert ranking_log_likelihood(PROBS, [0, 1, 2]) == pytest.approx(np.log(0.9 * 0.8 * 0.7 * 0.6 * 0.9 * 0.55))
    best = max(itertools.permutations(range(3)), key=lambda o: eq12_log_likelihood(PROBS, o))
    result = max_likelihood_ranking(PROBS)
    assert tuple(result.order) == best == (0, 1, 2)
    np.testing.assert_array_equal(result.ranks, [1, 2, 3])
    assert result.log_likelihood == pytest.approx(eq12_log_likelihood(PROBS, best))
    assert result.method == "exact"


def test_missing_comparisons_contribute_nothing() -> None:
    probs = PROBS.copy()
    probs[0, 1] = probs[1, 0] = NAN
    for order in itertools.permutations(range(3)):
        assert ranking_log_likelihood(probs, order) == pytest.approx(eq12_log_likelihood(probs, order))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 7), missing=st.sampled_from([0.0, 0.4]))
def test_exact_search_matches_brute_force(seed: int, n: int, missing: float) -> None:
    rng = np.random.default_rng(seed)
    probs = rng.uniform(0.02, 0.98, (n, n))
    probs[rng.random((n, n)) < missing] = NAN
    np.fill_diagonal(probs, NAN)
    best = max(eq12_log_likelihood(probs, o) for o in itertools.permutations(range(n)))
    result = max_likelihood_ranking(probs, method="exact")
    assert result.log_likelihood == pytest.approx(best, abs=1e-9)
    local = max_likelihood_ranking(probs, method="local-search")
    assert local.log_likelihood <= best + 1e-9


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 10))
def test_permuting_candidates_permutes_ml_ranks(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    probs = rng.uniform(0.02, 0.98, (n, n))  # continuous: the optimum is unique almost surely
    np.fill_diagonal(probs, NAN)
    perm = rng.permutation(n)
    original = max_likelihood_ranking(probs)
    permuted = max_likelihood_ranking(probs[np.ix_(perm, perm)])
    assert permuted.log_likelihood == pytest.approx(original.log_likelihood)
    np.testing.assert_array_equal(permuted.ranks, original.ranks[perm])


def test_local_search_recovers_clean_order_beyond_exact_size() -> None:
    rng = np.random.default_rng(0)
    n = 24
    scores = rng.normal(size=n)
    probs = expit(2 * (scores[:, None] - scores[None, :]))
    np.fill_diagonal(probs, NAN)
    result = max_likelihood_ranking(probs)
    assert result.method == "local-search"
    np.testing.assert_array_equal(result.order, np.argsort(-scores))


def test_local_search_never_worse_than_its_win_ratio_start() -> None:
    rng = np.random.default_rng(1)
    probs = rng.uniform(0.05, 0.95, (20, 20))
    np.fill_diagonal(probs, NAN)
    start = np.lexsort((np.arange(20), -win_ratio(probs)))
    result = max_likelihood_ranking(probs, method="local-search")
    assert result.log_likelihood >= order_log_likelihood(gain_matrix(probs), start)


def test_hard_decision_likelihood_eq13_maximises_agreements() -> None:
    rng = np.random.default_rng(4)
    n = 6
    decisions = hard_decisions(np.where(np.eye(n, dtype=bool), NAN, rng.random((n, n))))

    def agreements(order: tuple[int, ...]) -> int:
        rank = {c: p for p, c in enumerate(order)}
        return sum(int(decisions[i, j] == (rank[i] < rank[j])) for i in range(n) for j in range(n) if i != j)

    most = max(agreements(o) for o in itertools.permutations(range(n)))
    for agreement in (0.6, 0.9):
        result = max_likelihood_ranking_hard(decisions, agreement=agreement)
        assert agreements(tuple(result.order)) == most
        # log-likelihood = #agree log a + #disagree log(1 - a)
        expected = most * np.log(agreement) + (n * (n - 1) - most) * np.log(1 - agreement)
        assert result.log_likelihood == pytest.approx(expected)


def test_hard_gain_matrix_rejects_uninformative_agreement() -> None:
    with pytest.raises(ValueError, match="agreement"):
        hard_decision_gain_matrix(hard_decisions(PROBS), agreement=0.5)


def test_agreement_from_consistency_known_answers() -> None:
    consistent = hard_decisions(PROBS.copy())  # y_01=1,y_10=0; y_02=1,y_20=0; y_12=1,y_21=0: all consistent
    assert agreement_from_consistency(consistent) == 1.0
    # 0.82 = a^2 + (1 - a)^2 at a = 0.9: 41 consistent pairs of 50.
    n = 11
    decisions = np.full((n, n), NAN)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)][:50]
    for k, (i, j) in enumerate(pairs):
        decisions[i, j] = 1.0
        decisions[j, i] = 0.0 if k < 41 else 1.0
    assert agreement_from_consistency(decisions) == pytest.approx(0.9)


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="valid choices"):
        max_likelihood_ranking(PROBS, method="greedy")
    with pytest.raises(ValueError, match="permutation"):
        ranking_log_likelihood(PROBS, [0, 0, 1])
    with pytest.raises(ValueError, match="both orders"):
        agreement_from_consistency(np.array([[NAN, 1.0], [NAN, NAN]]))
    with pytest.raises(TypeError, match="exact_max_n must be an integer"):
        max_likelihood_ranking(PROBS, exact_max_n=16.0)  # type: ignore[arg-type]
