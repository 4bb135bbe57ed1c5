"""Positional bias and its removal: P(A), P(B) (seed 000 eq. 8) and the debiasing threshold tau /
weight alpha (eq. 9-10), computed exactly rather than by grid search.

Exact threshold and its tie rule
--------------------------------
Eq. 10 decides ``y_ij = 1 if p_ij > tau``. On a comparison set of R probabilities, P(A) = 0.5 needs
exactly R/2 of them above tau. Sort them, ``v_1 <= ... <= v_R``:

* R even and the two middle values differ (``v_{R/2} < v_{R/2+1}``): every tau in
  ``[v_{R/2}, v_{R/2+1})`` works. We return the midpoint *in log-odds*,
  ``tau = sigmoid((logit v_{R/2} + logit v_{R/2+1}) / 2)``, so that ``log alpha = -logit tau`` is the
  midpoint of the admissible log-weights; this choice recovers a constant logit pull towards position
  A exactly (see the tests). No comparison sits at tau, so no tie rule is needed.
* Otherwise (R odd, or several values equal the median) no threshold alone gives exactly R/2 wins for
  A, because hard decisions cannot split the comparisons sitting at the median. Then tau is the
  median value and every comparison with ``p_ij == tau`` receives the fractional decision
  ``w = (R/2 - #above) / #tied`` (``0 <= w <= 1``), which is the expected decision of a random
  tie-break that splits them so that P(A) = 0.5 exactly. With R odd and no duplicates, ``w = 1/2``.

Relation to the paper's code
----------------------------
The first paper's code (as recorded in the project's papers index) takes "the smallest t on a 0.001
grid with at least half of the P(A) values below t" (:func:`grid_debias_threshold`). That is the
first grid point strictly above ``v_{ceil(R/2)}``; it gives P(A) = 0.5 exactly only when a grid point
falls in ``(v_{R/2}, v_{R/2+1}]`` and otherwise leaves P(A) slightly below 0.5 (every value between
the lower median and the grid point goes to B). The exact rule agrees with it whenever the grid rule
is exact and removes the grid error otherwise.

Weight and threshold
--------------------
Eq. 9 reweights ``p^ = alpha p / (alpha p + 1 - p)``; ``p^ > 0.5`` iff ``p > 1/(1 + alpha)``, so
``alpha = (1 - tau) / tau`` and ``p^ = 0.5`` exactly at ``p = tau`` (the ties above). The threshold is
the exact form; eq. 9 evaluated in floating point can misplace values within rounding of tau.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit, logit

from nlgjudge.stats import _validation as check


@dataclass(frozen=True)
class PositionalBias:
    """P(A) and P(B) of eq. 8 over a comparison set."""

    p_a: float
    """Fraction of comparisons won by the candidate in position A."""
    p_b: float
    """Fraction won by position B (``1 - p_a``; equals eq. 8's ``sum y~_ij / |C|`` on a symmetric set)."""
    n_comparisons: int
    symmetric: bool
    """Whether the set holds both orders of every pair (where P(A) = 0.5 means "unbiased")."""


@dataclass(frozen=True)
class DebiasThreshold:
    """The exact debiasing threshold (eq. 10) and the equivalent weight (eq. 9) on one comparison set."""

    tau: float
    """Threshold of eq. 10: ``y = 1 if p > tau``; ``p == tau`` gets ``tie_weight``."""
    alpha: float
    """Weight of eq. 9, ``(1 - tau) / tau`` (``inf`` when tau = 0, ``0`` when tau = 1)."""
    tie_weight: float
    """Fractional decision for comparisons with ``p == tau``; NaN when none sits at tau."""
    interval: tuple[float, float]
    """All thresholds in ``[low, high)`` give P(A) = 0.5 without ties; ``low == high`` when ties are split."""
    n_comparisons: int
    n_above: int
    n_tied: int
    p_a_before: float
    """P(A) with the plain eq. 2 decisions (threshold 0.5)."""
    p_a_after: float
    """P(A) with the debiased decisions; 0.5 exactly by construction."""


def positional_bias(decisions: ArrayLike) -> PositionalBias:
    """P(A) and P(B) of seed 000 eq. 8 from a decision matrix over the made comparisons.

    ``P(A) = sum_{(i,j) in C} y^_ij / |C|``. Eq. 8 writes ``P(B) = sum y~_ij / |C|`` with
    ``y~_ij = 1 - y^_ji``; that literal form needs the reversed comparison of every pair, i.e. a
    symmetric set, on which it equals the fraction of comparisons won by position B, ``1 - P(A)``.
    We return that fraction for any set. Pass ``hard_decisions(P)`` for the paper's Tables 5 and 9.
    """
    matrix = check.comparison_matrix(decisions, "decisions")
    made = ~np.isnan(matrix)
    count = int(made.sum())
    if count == 0:
        raise ValueError("decisions holds no comparisons (all off-diagonal entries are NaN).")
    p_a = float(matrix[made].mean())
    return PositionalBias(p_a=p_a, p_b=1.0 - p_a, n_comparisons=count, symmetric=bool((made == made.T).all()))


def _comparison_values(probs: ArrayLike) -> NDArray[np.float64]:
    array = np.asarray(probs, dtype=float)
    if array.ndim == 2:
        matrix = check.comparison_matrix(array)
        values = matrix[~np.isnan(matrix)]
        if values.size == 0:
            raise ValueError("probs holds no comparisons (all off-diagonal entries are NaN).")
        return values
    return check.probability_vector(array, "probs")


def debias_thresholds_batch(values: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Exact eq. 10 thresholds for many comparison sets of equal size at once.

    ``values`` has shape (B, R): row b holds the R probabilities of comparison set b. Returns
    ``(tau, tie_weight)`` of shape (B,), following the rule in the module docstring (tie_weight is NaN
    where no comparison sits at tau). Used by the subset curves; :func:`debias_threshold` wraps it.
    """
    probs = np.asarray(values, dtype=float)
    if probs.ndim != 2 or probs.shape[1] < 1:
        raise ValueError(f"values must have shape (n_sets, R) with R >= 1; got {probs.shape}.")
    if np.isnan(probs).any() or probs.min() < 0.0 or probs.max() > 1.0:
        raise ValueError("values must be probabilities in [0, 1] without NaN.")
    return _thresholds_unchecked(probs)


def _thresholds_unchecked(probs: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    # The subset curves call this thousands of times on values they already checked.
    n_values = probs.shape[1]
    middle = n_values // 2
    # Only the middle order statistics matter: a partition is linear where a sort is not.
    kth = [middle - 1, middle] if n_values % 2 == 0 else [middle]
    ordered = np.partition(probs, kth, axis=1)
    if n_values % 2 == 0:
        low, high = ordered[:, middle - 1], ordered[:, middle]
        interior = (low > 0.0) & (high < 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            logit_mid = expit((logit(np.where(interior, low, 0.5)) + logit(np.where(interior, high, 0.5))) / 2)
        candidate = np.where(interior, logit_mid, (low + high) / 2)
        # Rounding can push a midpoint of adjacent floats onto an end; the lower end is always admissible.
        candidate = np.where((candidate >= low) & (candidate < high), candidate, low)
        tau = np.where(low < high, candidate, high)
    else:
        tau = ordered[:, middle]
    n_above = (probs > tau[:, None]).sum(axis=1)
    n_tied = (probs == tau[:, None]).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        tie_weight = np.where(n_tied > 0, (n_values / 2 - n_above) / n_tied, np.nan)
    return tau, tie_weight


def debias_threshold(probs: ArrayLike) -> DebiasThreshold:
    """Exact debiasing threshold tau (seed 000 eq. 10) and weight alpha (eq. 9) with P(A) = P(B) = 0.5.

    ``probs`` is a comparison matrix (its made comparisons form the set C) or a 1-D array of the
    probabilities p_ij of the comparisons in C. See the module docstring for the choice of tau inside
    the admissible interval, the exact tie split and the relation to the paper's 0.001 grid.
    """
    values = _comparison_values(probs)
    tau_array, weight_array = debias_thresholds_batch(values[None, :])
    tau, tie_weight = float(tau_array[0]), float(weight_array[0])
    ordered = np.sort(values)
    n_values = values.size
    n_above = int((values > tau).sum())
    n_tied = int((values == tau).sum())
    if n_values % 2 == 0 and n_tied == 0:
        interval = (float(ordered[n_values // 2 - 1]), float(ordered[n_values // 2]))
    else:
        interval = (tau, tau)
    decided = threshold_decisions_values(values, tau, tie_weight)
    return DebiasThreshold(
        tau=tau,
        alpha=alpha_from_threshold(tau),
        tie_weight=tie_weight,
        interval=interval,
        n_comparisons=n_values,
        n_above=n_above,
        n_tied=n_tied,
        p_a_before=float((values > 0.5).mean()),
        p_a_after=float(decided.mean()),
    )


def alpha_from_threshold(tau: float) -> float:
    """Eq. 9 weight equivalent to the eq. 10 threshold: ``alpha = (1 - tau) / tau``."""
    if not 0.0 <= tau <= 1.0:
        raise ValueError(f"tau must lie in [0, 1]; got {tau}.")
    if tau == 0.0:
        return float("inf")
    return (1.0 - tau) / tau


def threshold_from_alpha(alpha: float) -> float:
    """Eq. 10 threshold equivalent to the eq. 9 weight: ``tau = 1 / (1 + alpha)``."""
    if not alpha >= 0.0:
        raise ValueError(f"alpha must be a non-negative number; got {alpha}.")
    return 1.0 / (1.0 + alpha)


def threshold_decisions_values(values: NDArray[np.float64], tau: float, tie_weight: float) -> NDArray[np.float64]:
    """Eq. 10 decisions for an array of probabilities: 1 above tau, ``tie_weight`` at tau, 0 below."""
    decisions = (values > tau).astype(float)
    at_tau = values == tau
    if at_tau.any():
        if np.isnan(tie_weight):
            raise ValueError("some probabilities equal tau but tie_weight is NaN; pass the tie weight to use.")
        decisions[at_tau] = tie_weight
    return decisions


def debiased_decisions(probs: ArrayLike, threshold: DebiasThreshold | None = None) -> NDArray[np.float64]:
    """Debiased decision matrix of eq. 10 (with the exact tie split of :func:`debias_threshold`).

    By default tau is fitted on ``probs``' own made comparisons, which then have P(A) = 0.5 exactly.
    Pass a ``threshold`` fitted elsewhere to apply it unchanged. NaN (not compared) stays NaN.
    """
    matrix = check.comparison_matrix(probs)
    made = ~np.isnan(matrix)
    if not made.any():
        raise ValueError("probs holds no comparisons (all off-diagonal entries are NaN).")
    if threshold is not None and not isinstance(threshold, DebiasThreshold):
        raise TypeError(
            f"threshold must be a DebiasThreshold (from debias_threshold(...)), not {type(threshold).__name__}; "
            "to apply a bare tau use hard_decisions(probs, tau)."
        )
    fitted = debias_threshold(matrix[made]) if threshold is None else threshold
    decisions = np.full_like(matrix, np.nan)
    decisions[made] = threshold_decisions_values(matrix[made], fitted.tau, fitted.tie_weight)
    return decisions


def reweight_probabilities(probs: ArrayLike, alpha: float) -> NDArray[np.float64]:
    """Reweighted probabilities of seed 000 eq. 9: ``p^ = alpha p / (alpha p + (1 - p))``.

    Equivalent to adding ``log alpha`` to the log-odds of every comparison. ``alpha`` must be a
    positive finite number (a threshold of exactly 0 or 1 has no finite weight; use the threshold).
    """
    if not (np.isfinite(alpha) and alpha > 0.0):
        raise ValueError(
            f"alpha must be a positive finite number; got {alpha}. Thresholds tau = 0 or 1 have no finite "
            "weight: apply them with debiased_decisions instead."
        )
    matrix = check.comparison_matrix(probs)
    return alpha * matrix / (alpha * matrix + (1.0 - matrix))


def grid_debias_threshold(probs: ArrayLike, step: float = 0.001) -> float:
    """The first paper's code's threshold: the smallest ``t`` on a ``step`` grid over [0, 1] with at
    least half of the P(A) values strictly below ``t`` (decisions then are ``p > t``).

    Provided to compare with the exact :func:`debias_threshold` (see the module docstring). If more
    than half the values equal 1.0 no grid point qualifies and the last grid point, 1.0, is returned.
    """
    values = np.sort(_comparison_values(probs))
    if not 0.0 < step <= 1.0:
        raise ValueError(f"step must lie in (0, 1]; got {step}.")
    n_steps = int(round(1.0 / step))
    grid = np.arange(n_steps + 1) * step
    below = np.searchsorted(values, grid, side="left")
    qualifying = np.nonzero(below >= values.size / 2)[0]
    return float(grid[qualifying[0]]) if qualifying.size else 1.0
