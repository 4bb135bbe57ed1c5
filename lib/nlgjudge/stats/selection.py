"""Which comparisons to make: selection strategies for a budget of R comparisons among N candidates.

Seed 000 §3.4 and seed 002 Fig. 2 define the static strategies; ``active`` goes beyond the papers.

* ``full``: all N(N-1) ordered pairs (both positions of every pair).
* ``random``: R ordered pairs drawn uniformly without replacement from all N(N-1).
* ``no-repeat``: R unordered pairs drawn without replacement, each shown in one random order; if
  (i, j) is selected, (j, i) is not (at most N(N-1)/2 comparisons).
* ``symmetric``: R/2 unordered pairs, each shown in both orders (R must be even).
* ``active``: sequential. The scores get a Gaussian posterior ``N(mu, Sigma)`` (prior ``N(0, I)``);
  every observed comparison is a Bradley-Terry expert ``P(i beats j) = sigmoid(s_i - s_j)`` whose
  Laplace (Gaussian) approximation multiplies into the posterior in closed form - a Gaussian
  product of experts, updated by one Newton step and a rank-one (Sherman-Morrison) covariance update:
  ``mu += Sigma a (y - pi) / (1 + w a'Sigma a)``, ``Sigma -= w Sigma a a'Sigma / (1 + w a'Sigma a)``
  with ``a = e_i - e_j``, ``pi = sigmoid(mu_i - mu_j)``, ``w = pi (1 - pi)`` and ``y`` the judge's
  probability ``p_ij``. The next comparison is the not-yet-made ordered pair whose expected
  reduction of the total posterior variance, ``w ||Sigma a||^2 / (1 + w a'Sigma a)``, is largest
  (ties, including the two orders of one pair, broken at random). It therefore needs the judge's
  outcomes as it goes: pass the full matrix of probabilities as the oracle.

Every strategy yields a *selection order*: a budget of R means its first R comparisons, so the
subsets for growing budgets are nested (and each is, marginally, a draw of the stated kind).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit

from nlgjudge.stats import _validation as check

STRATEGIES = ("full", "random", "no-repeat", "symmetric", "active")


def max_budget(n_candidates: int, strategy: str) -> int:
    """Largest number of comparisons a strategy can make among ``n_candidates``."""
    check.choice(strategy, STRATEGIES, "selection strategy")
    _check_n(n_candidates)
    total = n_candidates * (n_candidates - 1)
    return total // 2 if strategy == "no-repeat" else total


def valid_budgets(n_candidates: int, strategy: str) -> NDArray[np.int_]:
    """All budgets R a strategy accepts (symmetric: even R; full: only N(N-1))."""
    top = max_budget(n_candidates, strategy)
    if strategy == "full":
        return np.array([top])
    if strategy == "symmetric":
        return np.arange(2, top + 1, 2)
    return np.arange(1, top + 1)


def check_budget(n_candidates: int, budget: int, strategy: str) -> int:
    """Raise unless ``budget`` is one the strategy can make; return it as int."""
    top = max_budget(n_candidates, strategy)
    if int(budget) != budget or not 1 <= budget <= top:
        raise ValueError(
            f"budget must be an integer in 1..{top} for strategy {strategy!r} with N={n_candidates}; got {budget}."
        )
    if strategy == "symmetric" and budget % 2:
        raise ValueError(
            f"the symmetric strategy makes comparisons in both orders, so the budget must be even; got {budget}."
        )
    if strategy == "full" and budget != top:
        raise ValueError(f"the full strategy makes all N(N-1) = {top} comparisons; got budget {budget}.")
    return int(budget)


def _check_n(n_candidates: int) -> None:
    check.integer(n_candidates, "n_candidates", minimum=check.MIN_CANDIDATES)


def selection_orders(
    n_candidates: int,
    strategy: str,
    n_sets: int = 1,
    seed: int | np.random.Generator | None = None,
    probs: ArrayLike | None = None,
) -> NDArray[np.int_]:
    """Selection orders (seed 000 §3.4 strategies, plus ``active``) for ``n_sets`` independent draws:
    an int array (n_sets, max_budget, 2) of ordered pairs ``(i, j)`` (i in position A) in selection order.

    ``probs`` (shape (N, N), or (n_sets, N, N) for one oracle per draw) is required by ``active`` and
    ignored by the others.
    """
    check.choice(strategy, STRATEGIES, "selection strategy")
    _check_n(n_candidates)
    n_sets = check.integer(n_sets, "n_sets", minimum=1)
    rng = check.rng_from(seed)
    n = n_candidates
    if strategy == "active":
        if probs is None:
            raise ValueError("the active strategy needs the judge's probabilities: pass probs (the oracle matrix).")
        oracle = check.comparison_stack(probs, "probs")
        if oracle.shape[1] != n:
            raise ValueError(f"probs is for {oracle.shape[1]} candidates but n_candidates={n}.")
        if oracle.shape[0] == 1:
            oracle = np.broadcast_to(oracle, (n_sets, n, n))
        elif oracle.shape[0] != n_sets:
            raise ValueError(f"probs holds {oracle.shape[0]} matrices; pass one or n_sets={n_sets}.")
        return _active_orders(oracle, rng)
    rows, cols = np.nonzero(~np.eye(n, dtype=bool))
    if strategy == "full":
        return np.broadcast_to(np.stack([rows, cols], axis=1), (n_sets, rows.size, 2)).copy()
    if strategy == "random":
        perm = np.argsort(rng.random((n_sets, rows.size)), axis=1)
        return np.stack([rows[perm], cols[perm]], axis=-1)
    upper_i, upper_j = np.triu_indices(n, k=1)
    perm = np.argsort(rng.random((n_sets, upper_i.size)), axis=1)
    first, second = upper_i[perm], upper_j[perm]
    flip = rng.random(first.shape) < 0.5
    first, second = np.where(flip, second, first), np.where(flip, first, second)
    if strategy == "no-repeat":
        return np.stack([first, second], axis=-1)
    # symmetric: each drawn pair in both orders, consecutively.
    forward = np.stack([first, second], axis=-1)
    backward = np.stack([second, first], axis=-1)
    return np.stack([forward, backward], axis=2).reshape(n_sets, -1, 2)


def select_comparisons(
    n_candidates: int,
    budget: int | None,
    strategy: str,
    seed: int | np.random.Generator | None = None,
    probs: ArrayLike | None = None,
) -> NDArray[np.int_]:
    """``budget`` ordered pairs (i, j) (i in position A) chosen by ``strategy`` (seed 000 §3.4, seed 002 Fig. 2).

    Returns an int array of shape (budget, 2).

    ``budget=None`` means the strategy's maximum. ``probs`` is the oracle for ``active``.
    """
    check.choice(strategy, STRATEGIES, "selection strategy")
    size = max_budget(n_candidates, strategy) if budget is None else check_budget(n_candidates, budget, strategy)
    return selection_orders(n_candidates, strategy, 1, seed, probs)[0, :size]


def selection_mask(pairs: ArrayLike, n_candidates: int) -> NDArray[np.bool_]:
    """Boolean (N, N) mask with True at every selected ordered pair."""
    _check_n(n_candidates)
    raw = np.asarray(pairs)
    if raw.ndim != 2 or raw.shape[1] != 2:
        raise ValueError(f"pairs must have shape (R, 2), one ordered pair (i, j) per row; got {raw.shape}.")
    if raw.size and raw.dtype.kind not in "iu":
        raise ValueError(f"pairs must hold integer candidate indices; got dtype {raw.dtype}.")
    index = raw.astype(int)
    if index.size and (index.min() < 0 or index.max() >= n_candidates or (index[:, 0] == index[:, 1]).any()):
        raise ValueError(f"pairs must hold two different candidate indices in 0..{n_candidates - 1}.")
    mask = np.zeros((n_candidates, n_candidates), dtype=bool)
    mask[index[:, 0], index[:, 1]] = True
    return mask


def restrict_to(probs: ArrayLike, pairs: ArrayLike) -> NDArray[np.float64]:
    """The comparison matrix with only the selected comparisons kept (NaN elsewhere)."""
    matrix = check.comparison_matrix(probs, require_full=True)
    mask = selection_mask(pairs, matrix.shape[0])
    return np.where(mask, matrix, np.nan)


class BradleyTerryPosterior:
    """The Gaussian posterior over Bradley-Terry scores that ``active`` selection steers by (module
    docstring): prior ``N(0, prior_variance I)``, one Laplace (Newton + rank-one) update per observed
    comparison, for ``n_sets`` independent problems at once (arrays carry a leading set axis)."""

    def __init__(self, n_candidates: int, n_sets: int = 1, prior_variance: float = 1.0) -> None:
        n = check.integer(n_candidates, "n_candidates", minimum=1)
        n_sets = check.integer(n_sets, "n_sets", minimum=1)
        self.mean = np.zeros((n_sets, n))
        self.cov = np.broadcast_to(np.eye(n) * prior_variance, (n_sets, n, n)).copy()
        self.cov_sq = self.cov @ self.cov  # kept up to date by rank-one updates instead of a matrix product per step

    @classmethod
    def from_observations(
        cls, n_candidates: int, pairs: ArrayLike, outcomes: ArrayLike, prior_variance: float = 1.0
    ) -> BradleyTerryPosterior:
        """One posterior (``n_sets = 1``) after the comparisons ``pairs`` (R, 2) with outcomes ``p_ij``, in order."""
        posterior = cls(n_candidates, 1, prior_variance)
        index = np.asarray(pairs, dtype=int).reshape(-1, 2)
        values = np.asarray(outcomes, dtype=float).reshape(-1)
        if index.shape[0] != values.size:
            raise ValueError(f"{index.shape[0]} pairs but {values.size} outcomes")
        for (i, j), y in zip(index, values, strict=True):
            posterior.observe(np.array([i]), np.array([j]), np.array([y]))
        return posterior

    def copy(self) -> BradleyTerryPosterior:
        other = object.__new__(BradleyTerryPosterior)
        other.mean, other.cov, other.cov_sq = self.mean.copy(), self.cov.copy(), self.cov_sq.copy()
        return other

    @property
    def variances(self) -> NDArray[np.float64]:
        """(n_sets, N) posterior variances of the scores."""
        return np.diagonal(self.cov, axis1=1, axis2=2).copy()

    def gains(self) -> NDArray[np.float64]:
        """(n_sets, N, N): expected reduction of the total posterior variance if ``(i, j)`` were compared next."""
        cov, cov_sq = self.cov, self.cov_sq
        diag = np.diagonal(cov, axis1=1, axis2=2)
        diag_sq = np.diagonal(cov_sq, axis1=1, axis2=2)
        pair_var = diag[:, :, None] + diag[:, None, :] - 2 * cov  # a' Sigma a
        pair_sq = diag_sq[:, :, None] + diag_sq[:, None, :] - 2 * cov_sq  # ||Sigma a||^2
        win = expit(self.mean[:, :, None] - self.mean[:, None, :])
        weight = win * (1 - win)
        return weight * pair_sq / (1 + weight * pair_var)

    def observe(self, i: NDArray[np.int_], j: NDArray[np.int_], y: NDArray[np.float64] | None) -> None:
        """Fold one comparison per set, ``i`` in position A with outcome ``y = p_ij``, into the posterior.
        ``y=None`` updates as if the outcome were its expected value: the mean stays, the covariance
        shrinks (how a batch is planned before its outcomes are known)."""
        sets = np.arange(self.mean.shape[0])
        mean, cov = self.mean, self.cov
        pi = expit(mean[sets, i] - mean[sets, j])
        w = pi * (1 - pi)
        sigma_a = cov[sets, :, i] - cov[sets, :, j]  # (n_sets, n)
        a_sigma_a = sigma_a[sets, i] - sigma_a[sets, j]
        denominator = 1 + w * a_sigma_a
        if y is not None:
            self.mean = mean + sigma_a * ((y - pi) / denominator)[:, None]
        c = (w / denominator)[:, None, None]
        outer = sigma_a[:, :, None] * sigma_a[:, None, :]
        # Sigma' = Sigma - c u u'  =>  Sigma'^2 = Sigma^2 - c (Sigma u u' + u u' Sigma) + c^2 (u'u) u u'
        sigma_u = np.einsum("bkl,bl->bk", cov, sigma_a)
        cross = sigma_u[:, :, None] * sigma_a[:, None, :]
        self.cov_sq = (
            self.cov_sq - c * (cross + cross.transpose(0, 2, 1)) + c * c * (sigma_a * sigma_a).sum(1)[:, None, None] * outer
        )
        self.cov = cov - c * outer


def plan_active_batch(
    posterior: BradleyTerryPosterior, available: ArrayLike, seed: int | np.random.Generator | None = None
) -> list[tuple[int, int] | None]:
    """One comparison for each of several groups (e.g. contexts sharing the candidates' scores), all
    chosen before any outcome is known: group g takes its available ordered pair (``available[g]``, a
    (N, N) bool mask) of largest expected variance reduction, then the posterior is updated as if that
    outcome were its expected value (the batch "believer" rule), so that the groups of one batch
    spread over different pairs. ``None`` for a group with nothing left. ``posterior`` (one set) is
    not changed."""
    masks = np.asarray(available, dtype=bool)
    if masks.ndim != 3 or masks.shape[1:] != posterior.mean.shape[1:] * 2:
        raise ValueError(f"available must have shape (groups, {posterior.mean.shape[1]}, {posterior.mean.shape[1]}); got {masks.shape}")
    if posterior.mean.shape[0] != 1:
        raise ValueError("plan_active_batch plans for one posterior (n_sets = 1)")
    rng = check.rng_from(seed)
    planning = posterior.copy()
    n = masks.shape[1]
    picks: list[tuple[int, int] | None] = []
    for mask in masks:
        if not mask.any():
            picks.append(None)
            continue
        gain = planning.gains()[0] * (1 + 1e-9 * rng.random((n, n)))
        flat = int(np.argmax(np.where(mask, gain, -np.inf)))
        i, j = flat // n, flat % n
        picks.append((i, j))
        planning.observe(np.array([i]), np.array([j]), None)
    return picks


def _active_orders(
    oracle: NDArray[np.float64], rng: np.random.Generator, prior_variance: float = 1.0
) -> NDArray[np.int_]:
    """Greedy expected-variance-reduction selection under the online Bradley-Terry-Laplace posterior."""
    n_sets, n, _ = oracle.shape
    total = n * (n - 1)
    posterior = BradleyTerryPosterior(n, n_sets, prior_variance)
    available = np.broadcast_to(~np.eye(n, dtype=bool), (n_sets, n, n)).copy()
    order = np.empty((n_sets, total, 2), dtype=int)
    sets = np.arange(n_sets)
    # Random tie-break (e.g. the two orders of a pair have equal gain) that never reorders real gains.
    tie_break = 1 + 1e-9 * rng.random((n_sets, n, n))
    for step in range(total):
        gain = np.where(available, posterior.gains() * tie_break, -np.inf)
        flat = np.argmax(gain.reshape(n_sets, -1), axis=1)
        i, j = flat // n, flat % n
        order[:, step, 0], order[:, step, 1] = i, j
        available[sets, i, j] = False
        # Observe the judge and fold the comparison into the Gaussian posterior.
        posterior.observe(i, j, oracle[sets, i, j])
    return order
