"""Maximum-likelihood ranking from pairwise comparisons (seed 000 Appendix B, eq. 11-13).

The ranks maximising ``P(C | r)`` (eq. 11) are found by maximising a sum of pairwise terms: with
``z_ij = 1(r_i < r_j)``,

    log P(C | r) = sum_{(i,j) in C} z_ij log p_ij + (1 - z_ij) log(1 - p_ij)          (eq. 12)

(eq. 12 as printed joins the two factors with ``+``; the Bernoulli likelihood it describes is the
product ``p^z (1-p)^(1-z)``, which is what we use). Writing ``G[i, j]`` for the log-likelihood gained
by placing ``i`` above ``j`` (both orders of the pair counted), the task is a *linear ordering
problem*, NP-hard in general (the paper's "intractability challenges").

Search
------
* ``exact``: dynamic programming over subsets (the best ordering of every subset placed at the top),
  ``O(2^N N)`` memory and ``O(2^N N^2)`` time: exact and fast up to N = 16 (SummEval's size).
* ``local-search``: start from the order of the soft win ratio and repeatedly apply the single best
  *insertion move* (take one candidate out and reinsert it elsewhere) while it raises the
  log-likelihood; stops at an insertion-local optimum. Used above ``exact_max_n``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from nlgjudge.stats import _validation as check
from nlgjudge.stats.decisions import win_ratio

METHODS = ("auto", "exact", "local-search")
EXACT_MAX_N = 16


@dataclass(frozen=True)
class LikelihoodRanking:
    """Result of a maximum-likelihood ranking."""

    order: NDArray[np.int_]
    """Candidate indices from best to worst."""
    ranks: NDArray[np.float64]
    """Rank of each candidate, 1 = best (``r_{1:N}`` of eq. 11)."""
    log_likelihood: float
    method: str
    """``"exact"`` or ``"local-search"`` (the search actually used)."""


def gain_matrix(probs: ArrayLike, eps: float = 1e-9) -> NDArray[np.float64]:
    """``G[i, j]``: log-likelihood (eq. 12) contributed by the comparisons of i and j when i ranks above j.

    Probabilities are clipped to ``[eps, 1 - eps]`` so that one contradicted certain comparison does not
    make every ranking impossible (``log 0``).
    """
    matrix = check.comparison_matrix(probs)
    if not 0.0 < eps < 0.5:
        raise ValueError(f"eps must lie in (0, 0.5); got {eps}.")
    clipped = np.clip(matrix, eps, 1.0 - eps)
    made = ~np.isnan(matrix)
    log_first_wins = np.where(made, np.log(clipped), 0.0)
    log_first_loses = np.where(made, np.log1p(-clipped), 0.0)
    return _gain_from_logs(log_first_wins, log_first_loses)


def _gain_from_logs(log_first_wins: NDArray[np.float64], log_first_loses: NDArray[np.float64]) -> NDArray[np.float64]:
    # i above j: comparison (i, j) has z=1 and comparison (j, i) has z=0.
    gain = log_first_wins + log_first_loses.T
    np.fill_diagonal(gain, 0.0)
    return gain


def hard_decision_gain_matrix(decisions: ArrayLike, agreement: float = 0.75) -> NDArray[np.float64]:
    """Gain matrix of the approximate likelihood of eq. 13 from hard decisions.

    ``P(y^ | z)`` has one free number: ``agreement = P(y^=1 | z=1) = P(y^=0 | z=0)`` (> 0.5), which sets
    the other three. Fractional decisions (from an exact debiasing tie split) enter linearly. For any
    ``agreement > 0.5`` the maximiser is the same (the ranking agreeing with the most decisions); the
    value only scales the log-likelihood. :func:`agreement_from_consistency` estimates it.
    """
    matrix = check.comparison_matrix(decisions, "decisions")
    if not 0.5 < agreement < 1.0:
        raise ValueError(f"agreement must lie in (0.5, 1); got {agreement}.")
    made = ~np.isnan(matrix)
    y = np.where(made, matrix, 0.0)
    log_a, log_not_a = np.log(agreement), np.log1p(-agreement)
    log_first_wins = np.where(made, y * log_a + (1 - y) * log_not_a, 0.0)
    log_first_loses = np.where(made, y * log_not_a + (1 - y) * log_a, 0.0)
    return _gain_from_logs(log_first_wins, log_first_loses)


def agreement_from_consistency(decisions: ArrayLike) -> float:
    """Estimate ``P(y^ = z)`` for eq. 13 from the judge's own statistics, without labels.

    If each decision is right independently with probability ``a``, the two orders of a pair agree
    (``y^_ij = 1 - y^_ji``) with probability ``c = a^2 + (1-a)^2``, so ``a = (1 + sqrt(2c - 1)) / 2``.
    ``c`` is measured over the pairs compared in both orders; ``c <= 0.5`` (no better than chance)
    gives 0.5.
    """
    matrix = check.comparison_matrix(decisions, "decisions")
    both = ~np.isnan(matrix) & ~np.isnan(matrix.T)
    upper = np.triu(both, k=1)
    if not upper.any():
        raise ValueError("no pair is compared in both orders; consistency needs a (partly) symmetric set.")
    consistent = 1.0 - np.abs(matrix[upper] - (1.0 - matrix.T[upper]))
    rate = float(consistent.mean())
    return 0.5 + 0.5 * float(np.sqrt(max(2.0 * rate - 1.0, 0.0)))


def order_log_likelihood(gain: ArrayLike, order: ArrayLike) -> float:
    """Log-likelihood of the ranking given by ``order`` (best first) under a gain matrix."""
    gains = np.asarray(gain, dtype=float)
    if gains.ndim != 2 or gains.shape[0] != gains.shape[1] or np.isnan(gains).any():
        raise ValueError(f"gain must be a square (N, N) matrix without NaN (see gain_matrix); got shape {gains.shape}.")
    positions = _check_order(order, gains.shape[0])
    above = positions[:, None] < positions[None, :]
    return float(gains[above].sum())


def ranking_log_likelihood(probs: ArrayLike, order: ArrayLike, eps: float = 1e-9) -> float:
    """``log P(C | r)`` of eq. 12 for the ranking given by ``order`` (candidate indices, best first)."""
    return order_log_likelihood(gain_matrix(probs, eps), order)


def _check_order(order: ArrayLike, n: int) -> NDArray[np.int_]:
    indices = np.asarray(order)
    if indices.shape != (n,) or not np.array_equal(np.sort(indices), np.arange(n)):
        raise ValueError(f"order must be a permutation of 0..{n - 1}; got {indices.tolist()}.")
    positions = np.empty(n, dtype=int)
    positions[indices] = np.arange(n)
    return positions


def exact_best_order(gain: NDArray[np.float64]) -> NDArray[np.int_]:
    """Exact maximiser of ``sum_{i above j} G[i, j]`` by dynamic programming over subsets."""
    n = gain.shape[0]
    if n > 20:
        raise ValueError(f"exact search over 2^{n} subsets is too large; use method='local-search'.")
    n_subsets = 1 << n
    # inside[S, k] = sum_{j in S} G[k, j], built one highest bit at a time.
    inside = np.zeros((n_subsets, n))
    for bit in range(n):
        low = 1 << bit
        inside[low : 2 * low] = inside[:low] + gain[:, bit]
    row_total = gain.sum(axis=1)
    best = np.full(n_subsets, -np.inf)
    best[0] = 0.0
    last = np.zeros(n_subsets, dtype=int)
    subsets = np.arange(n_subsets)
    sizes = np.zeros(n_subsets, dtype=int)
    for bit in range(n):
        sizes += (subsets >> bit) & 1
    for size in range(1, n + 1):
        level = subsets[sizes == size]
        level_best = np.full(level.size, -np.inf)
        level_last = np.zeros(level.size, dtype=int)
        for k in range(n):
            has_k = ((level >> k) & 1).astype(bool)
            members = level[has_k]
            # k is placed lowest among S, i.e. above everything outside S.
            value = best[members ^ (1 << k)] + row_total[k] - inside[members, k]
            improve = value > level_best[has_k]
            rows = np.nonzero(has_k)[0][improve]
            level_best[rows] = value[improve]
            level_last[rows] = k
        best[level] = level_best
        last[level] = level_last
    order = np.empty(n, dtype=int)
    remaining = n_subsets - 1
    for position in range(n - 1, -1, -1):
        k = last[remaining]
        order[position] = k
        remaining ^= 1 << k
    return order


def local_search_order(
    gain: NDArray[np.float64], start: NDArray[np.int_], max_moves: int = 100_000
) -> NDArray[np.int_]:
    """Best-improvement insertion local search for ``max sum_{i above j} G[i, j]`` from ``start``."""
    order = np.array(start, dtype=int)
    n = order.size
    net = gain - gain.T  # net[x, y]: gain of x above y over y above x
    for _ in range(max_moves):
        m = net[np.ix_(order, order)]
        # Moving the item at position a up to b < a: it passes positions b..a-1 -> sum_{q=b}^{a-1} m[a, q].
        # Moving it down to b > a: it falls below a+1..b -> sum_{q=a+1}^{b} -m[a, q].
        prefix = np.concatenate([np.zeros((n, 1)), np.cumsum(m, axis=1)], axis=1)
        a_idx = np.arange(n)[:, None]
        b_idx = np.arange(n)[None, :]
        up = prefix[a_idx, a_idx] - prefix[a_idx, b_idx]
        down = -(prefix[a_idx, b_idx + 1] - prefix[a_idx, a_idx + 1])
        delta = np.where(b_idx < a_idx, up, np.where(b_idx > a_idx, down, 0.0))
        a, b = np.unravel_index(int(np.argmax(delta)), delta.shape)
        if delta[a, b] <= 1e-12:
            return order
        item = order[a]
        order = np.insert(np.delete(order, a), b, item)
    raise RuntimeError(f"local search did not settle within {max_moves} moves.")


def _rank_from_gain(
    gain: NDArray[np.float64], start_scores: NDArray[np.float64], method: str, exact_max_n: int
) -> LikelihoodRanking:
    check.choice(method, METHODS, "method")
    check.integer(exact_max_n, "exact_max_n", minimum=0)
    n = gain.shape[0]
    use_exact = method == "exact" or (method == "auto" and n <= exact_max_n)
    if use_exact:
        order = exact_best_order(gain)
        used = "exact"
    else:
        # Stable start: win-ratio order, ties by index.
        start = np.lexsort((np.arange(n), -start_scores))
        order = local_search_order(gain, start)
        used = "local-search"
    ranks = np.empty(n)
    ranks[order] = np.arange(1, n + 1)
    return LikelihoodRanking(order=order, ranks=ranks, log_likelihood=order_log_likelihood(gain, order), method=used)


def max_likelihood_ranking(
    probs: ArrayLike, method: str = "auto", exact_max_n: int = EXACT_MAX_N, eps: float = 1e-9
) -> LikelihoodRanking:
    """Ranks maximising the likelihood of the comparisons (seed 000 eq. 11 with eq. 12).

    ``method``: ``"auto"`` (exact up to ``exact_max_n`` candidates, local search above), ``"exact"``
    or ``"local-search"``; see the module docstring. Missing comparisons (NaN) contribute nothing.
    """
    matrix = check.comparison_matrix(probs)
    start = np.nan_to_num(win_ratio(matrix), nan=0.5)
    return _rank_from_gain(gain_matrix(matrix, eps), start, method, exact_max_n)


def max_likelihood_ranking_hard(
    decisions: ArrayLike, agreement: float = 0.75, method: str = "auto", exact_max_n: int = EXACT_MAX_N
) -> LikelihoodRanking:
    """Ranks maximising the approximate likelihood of hard decisions (seed 000 eq. 11 with eq. 13).

    See :func:`hard_decision_gain_matrix` for ``agreement``; the ranking does not depend on its value.
    """
    matrix = check.comparison_matrix(decisions, "decisions")
    start = np.nan_to_num(win_ratio(matrix), nan=0.5)
    return _rank_from_gain(hard_decision_gain_matrix(matrix, agreement), start, method, exact_max_n)
