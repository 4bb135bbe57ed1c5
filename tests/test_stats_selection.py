"""Comparison selection strategies (seed 000 §3.4, seed 002 Fig. 2) and the active strategy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nlgjudge.stats.selection import (
    STRATEGIES,
    BradleyTerryPosterior,
    plan_active_batch,
    max_budget,
    restrict_to,
    select_comparisons,
    selection_mask,
    selection_orders,
    valid_budgets,
)
from scipy.special import expit

NAN = np.nan


def unordered(pairs: np.ndarray) -> set[tuple[int, int]]:
    return {(min(i, j), max(i, j)) for i, j in pairs.tolist()}


def test_max_budgets() -> None:
    assert max_budget(16, "full") == max_budget(16, "random") == max_budget(16, "symmetric") == 240
    assert max_budget(16, "no-repeat") == 120
    assert valid_budgets(4, "symmetric").tolist() == [2, 4, 6, 8, 10, 12]
    assert valid_budgets(4, "full").tolist() == [12]


def test_full_selects_every_ordered_pair_once() -> None:
    pairs = select_comparisons(4, None, "full")
    assert pairs.shape == (12, 2)
    assert selection_mask(pairs, 4).sum() == 12
    with pytest.raises(ValueError, match="all N"):
        select_comparisons(4, 6, "full")


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 10), seed=st.integers(0, 2**32 - 1), data=st.data())
def test_static_strategies_follow_their_definitions(n: int, seed: int, data: st.DataObject) -> None:
    total = n * (n - 1)
    r = data.draw(st.integers(1, total))
    random_pairs = select_comparisons(n, r, "random", seed)
    assert len({tuple(p) for p in random_pairs.tolist()}) == r  # without replacement
    assert np.all(random_pairs[:, 0] != random_pairs[:, 1])

    r_nr = data.draw(st.integers(1, total // 2))
    no_repeat = select_comparisons(n, r_nr, "no-repeat", seed)
    mask = selection_mask(no_repeat, n)
    assert mask.sum() == r_nr and not np.any(mask & mask.T)  # never both orders

    r_sym = 2 * data.draw(st.integers(1, total // 2))
    symmetric = select_comparisons(n, r_sym, "symmetric", seed)
    mask = selection_mask(symmetric, n)
    assert mask.sum() == r_sym and np.array_equal(mask, mask.T)  # both orders of every pair
    assert len(unordered(symmetric)) == r_sym // 2


def test_selection_is_seeded_and_nested() -> None:
    a = select_comparisons(8, 20, "random", seed=3)
    b = select_comparisons(8, 40, "random", seed=3)
    np.testing.assert_array_equal(a, b[:20])
    assert not np.array_equal(a, select_comparisons(8, 20, "random", seed=4))
    orders = selection_orders(8, "no-repeat", n_sets=5, seed=0)
    assert orders.shape == (5, 28, 2)
    assert len({tuple(map(tuple, o)) for o in orders}) == 5  # independent draws differ


def test_unknown_strategy_names_valid_choices() -> None:
    with pytest.raises(ValueError) as error:
        select_comparisons(4, 4, "round-robin")
    for name in STRATEGIES:
        assert repr(name) in str(error.value)


@pytest.mark.parametrize(
    ("n", "budget", "strategy", "message"),
    [
        (4, 3, "symmetric", "even"),
        (4, 7, "no-repeat", "1..6"),
        (4, 0, "random", "1..12"),
        (1, 1, "random", "at least 2"),
    ],
)
def test_bad_budgets_raise(n: int, budget: int, strategy: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        select_comparisons(n, budget, strategy)


def test_restrict_to_keeps_only_selected_comparisons() -> None:
    probs = np.array([[NAN, 0.9, 0.8], [0.3, NAN, 0.6], [0.1, 0.45, NAN]])
    restricted = restrict_to(probs, np.array([[0, 1], [2, 1]]))
    assert restricted[0, 1] == 0.9 and restricted[2, 1] == 0.45
    assert np.isnan(restricted).sum() == 7


def test_active_needs_the_oracle() -> None:
    with pytest.raises(ValueError, match="probs"):
        select_comparisons(4, 4, "active")


def clean_judge(n: int, seed: int) -> np.ndarray:
    scores = np.random.default_rng(seed).normal(size=n)
    probs = expit(2 * (scores[:, None] - scores[None, :]))
    np.fill_diagonal(probs, NAN)
    return probs


def test_active_uses_every_comparison_once_at_full_budget() -> None:
    pairs = select_comparisons(6, None, "active", seed=0, probs=clean_judge(6, 0))
    assert pairs.shape == (30, 2) and selection_mask(pairs, 6).sum() == 30


def test_active_first_spreads_over_all_candidates() -> None:
    # Under the identity prior the largest variance reduction comes from pairs of unseen candidates,
    # so the first N/2 comparisons form a perfect matching.
    pairs = select_comparisons(16, 8, "active", seed=1, probs=clean_judge(16, 1))
    assert sorted(pairs.ravel().tolist()) == list(range(16))


@pytest.mark.parametrize("seed", range(4))
def test_active_prefers_informative_close_pairs(seed: int) -> None:
    # After the opening matching, w = pi (1 - pi) favours candidates the posterior thinks are close:
    # the chosen pairs differ in true score by clearly less than the average pair does.
    scores = 2 * np.random.default_rng(seed).normal(size=16)
    probs = expit(scores[:, None] - scores[None, :])
    np.fill_diagonal(probs, NAN)
    pairs = select_comparisons(16, 60, "active", seed=seed, probs=probs)
    chosen_gap = np.abs(scores[pairs[8:, 0]] - scores[pairs[8:, 1]]).mean()
    average_gap = np.abs(scores[:, None] - scores[None, :])[~np.eye(16, dtype=bool)].mean()
    assert chosen_gap < 0.8 * average_gap


def test_active_is_reproducible_with_a_seed() -> None:
    probs = clean_judge(8, 3)
    np.testing.assert_array_equal(
        select_comparisons(8, 20, "active", seed=5, probs=probs),
        select_comparisons(8, 20, "active", seed=5, probs=probs),
    )


def test_counts_and_pairs_must_be_integers() -> None:
    with pytest.raises(TypeError, match="n_sets must be an integer"):
        selection_orders(4, "random", n_sets=2.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="n_candidates must be an integer"):
        max_budget(4.5, "random")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="integer candidate indices"):
        selection_mask(np.array([[0.0, 1.5]]), 3)  # used to be truncated to (0, 1) silently


def test_the_posterior_after_one_comparison_has_the_hand_computed_laplace_update() -> None:
    """Prior N(0, I), candidate 0 beats 1 with y = 1: pi = 1/2, w = 1/4, a'Sigma a = 2, so the mean moves
    by (y - pi) / (1 + w a'Sigma a) = 1/3 and the variances shrink by w / 1.5 = 1/6."""
    posterior = BradleyTerryPosterior.from_observations(3, [(0, 1)], [1.0])
    np.testing.assert_allclose(posterior.mean[0], [1 / 3, -1 / 3, 0.0])
    np.testing.assert_allclose(posterior.variances[0], [5 / 6, 5 / 6, 1.0])
    np.testing.assert_allclose(posterior.cov_sq[0], posterior.cov[0] @ posterior.cov[0])
    before = BradleyTerryPosterior(3).gains()[0]
    after = posterior.gains()[0]
    assert after[0, 1] < before[0, 1] and after[0, 2] > after[0, 1]  # a compared pair is worth less now


def test_a_planned_batch_spreads_over_pairs_and_leaves_the_posterior_alone() -> None:
    posterior = BradleyTerryPosterior(4)
    mask = ~np.eye(4, dtype=bool)
    picks = plan_active_batch(posterior, np.stack([mask, mask, np.zeros((4, 4), bool)]), seed=0)
    assert picks[2] is None
    (i, j), (k, m) = picks[0], picks[1]  # type: ignore[misc]
    assert {i, j}.isdisjoint({k, m})  # the second group avoids the first group's candidates
    np.testing.assert_array_equal(posterior.mean, 0.0)
    np.testing.assert_array_equal(posterior.cov[0], np.eye(4))
    with pytest.raises(ValueError, match="available must have shape"):
        plan_active_batch(posterior, mask)
