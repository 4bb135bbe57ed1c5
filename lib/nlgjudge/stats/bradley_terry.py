"""Bradley-Terry maximum-likelihood scores through ``choix``, with bootstrap confidence intervals.

The Bradley-Terry model says ``P(i beats j) = sigmoid(s_i - s_j)`` (log-strengths ``s``). Each made
comparison ``(i, j)`` contributes ``p_ij`` of a win to ``i`` and ``1 - p_ij`` to ``j`` (soft counts), or
the hard decisions if those are passed; the scores maximise the resulting likelihood. Position is
ignored (the model has no position-A term), as in win-ratio ranking.
"""

from __future__ import annotations

from dataclasses import dataclass

import choix
import numpy as np
from numpy.typing import ArrayLike, NDArray

from nlgjudge.stats import _validation as check


@dataclass(frozen=True)
class BradleyTerryFit:
    """Bradley-Terry log-strengths (mean zero) and percentile bootstrap intervals."""

    scores: NDArray[np.float64]
    ci_low: NDArray[np.float64]
    ci_high: NDArray[np.float64]
    confidence: float
    n_boot: int
    replicates: NDArray[np.float64]
    """(n_boot, N) bootstrap scores, for any other summary."""


def win_matrix(probs: ArrayLike) -> NDArray[np.float64]:
    """Dense (soft) win counts ``W[i, j]``: how much i beat j over all made comparisons of the pair."""
    matrix = check.comparison_matrix(probs)
    made = ~np.isnan(matrix)
    wins = np.where(made, matrix, 0.0) + np.where(made, 1.0 - matrix, 0.0).T
    np.fill_diagonal(wins, 0.0)
    return wins


def _fit_wins(wins: NDArray[np.float64], alpha: float) -> NDArray[np.float64]:
    try:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            scores = choix.ilsr_pairwise_dense(wins, alpha=alpha, max_iter=1000)
    except (RuntimeError, ValueError, FloatingPointError) as error:
        raise ValueError(
            "the Bradley-Terry maximum-likelihood estimate failed to converge. With alpha = 0 it does not "
            "exist when the comparison graph is disconnected or some candidate wins (or loses) every "
            f"comparison; pass alpha > 0 (e.g. 0.01). choix said: {error}"
        ) from error
    if not np.all(np.isfinite(scores)):
        raise ValueError(
            "the Bradley-Terry estimate is not finite (perfectly separated or disconnected comparisons); "
            "pass alpha > 0 (e.g. 0.01)."
        )
    return scores - scores.mean()


def bradley_terry_from_wins(wins: ArrayLike, alpha: float = 0.01) -> NDArray[np.float64]:
    """Bradley-Terry log-strengths (mean 0) from a dense win-count matrix ``W[i, j]`` (how often i
    beat j; fractional counts allowed, e.g. 0.5 each for a tie), fitted by choix."""
    matrix = np.asarray(wins, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] < 2:
        raise ValueError(f"wins must be a square (N, N) matrix with N >= 2; got shape {matrix.shape}.")
    if not np.all(np.isfinite(matrix)) or (matrix < 0).any():
        raise ValueError("wins must be finite, non-negative counts.")
    matrix = matrix.copy()
    np.fill_diagonal(matrix, 0.0)
    return _fit_wins(matrix, _check_alpha(alpha))


def bradley_terry_scores(probs: ArrayLike, alpha: float = 0.01) -> NDArray[np.float64]:
    """Bradley-Terry log-strengths (mean zero) from a comparison or decision matrix, via choix's ILSR.

    ``alpha`` is choix's LSR regularisation (a pseudo-count on every pair): it keeps the estimate
    finite when a candidate never loses or the comparisons do not connect all candidates; ``alpha = 0``
    gives the plain maximum-likelihood estimate.
    """
    return _fit_wins(win_matrix(probs), _check_alpha(alpha))


def _check_alpha(alpha: float) -> float:
    value = check.real(alpha, "alpha")
    if value < 0:
        raise ValueError(f"alpha must be >= 0 (a pseudo-count; 0 = plain maximum likelihood); got {alpha}.")
    return value


def bradley_terry_bootstrap(
    probs: ArrayLike,
    n_boot: int = 200,
    confidence: float = 0.95,
    alpha: float = 0.01,
    seed: int | np.random.Generator | None = 0,
) -> BradleyTerryFit:
    """Bradley-Terry scores with percentile bootstrap intervals (comparisons resampled with replacement).

    Each replicate draws the made comparisons (ordered pairs with their probabilities) with
    replacement, refits, and centres the scores; the interval is the central ``confidence`` range of the
    replicates.
    """
    matrix = check.comparison_matrix(probs)
    n_boot = check.integer(n_boot, "n_boot", minimum=2)
    alpha = _check_alpha(alpha)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1); got {confidence}.")
    rng = check.rng_from(seed)
    first, second = np.nonzero(~np.isnan(matrix))
    if first.size == 0:
        raise ValueError("probs holds no comparisons (all off-diagonal entries are NaN).")
    outcome = matrix[first, second]
    n = matrix.shape[0]
    estimate = bradley_terry_scores(matrix, alpha)
    replicates = np.empty((n_boot, n))
    for b in range(n_boot):
        pick = rng.integers(0, first.size, size=first.size)
        wins = np.zeros((n, n))
        np.add.at(wins, (first[pick], second[pick]), outcome[pick])
        np.add.at(wins, (second[pick], first[pick]), 1.0 - outcome[pick])
        replicates[b] = _fit_wins(wins, alpha)
    tail = (1.0 - confidence) / 2 * 100
    low, high = np.percentile(replicates, [tail, 100 - tail], axis=0)
    return BradleyTerryFit(
        scores=estimate, ci_low=low, ci_high=high, confidence=confidence, n_boot=n_boot, replicates=replicates
    )
