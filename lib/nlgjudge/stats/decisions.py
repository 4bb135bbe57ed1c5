"""From pairwise comparisons to scores and ranks: hard decisions and the win ratio.

Conventions (whole package): ``P[i, j]`` is the probability that candidate ``i`` beats ``j`` when ``i``
sits in position A (seed 000 eq. 1); NaN marks a comparison that was not made; the diagonal is ignored.
A *decision matrix* ``Y`` has the same layout with ``Y[i, j]`` the (possibly fractional) win credited
to ``i`` for the comparison ``(i, j)``; ``1 - Y[i, j]`` goes to ``j``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.stats import rankdata

from nlgjudge.stats import _validation as check


def hard_decisions(probs: ArrayLike, threshold: float = 0.5) -> NDArray[np.float64]:
    """Hard decisions of seed 000 eq. 2: ``y_ij = 1 if p_ij > threshold else 0``.

    With the default ``threshold = 0.5`` this is eq. 2 literally, including its tie rule: a probability
    of exactly 0.5 counts as a win for position B (``0``). Passing the debiasing threshold ``tau`` gives
    eq. 10 without tie splitting; :func:`nlgjudge.stats.bias.debiased_decisions` adds the exact split.
    Missing comparisons (NaN) stay NaN; the diagonal is NaN.
    """
    matrix = check.comparison_matrix(probs)
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must lie in [0, 1]; got {threshold}.")
    decisions = (matrix > threshold).astype(float)
    decisions[np.isnan(matrix)] = np.nan
    return decisions


def comparison_mask(probs: ArrayLike) -> NDArray[np.bool_]:
    """Boolean (N, N) mask of the comparisons that were made (the set C of seed 000 §3.1)."""
    matrix = check.comparison_matrix(probs)
    return ~np.isnan(matrix)


def win_counts(decisions: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Wins and games per candidate over the comparisons made (numerator and denominator of eq. 6).

    Candidate ``i`` wins ``Y[i, j]`` of comparison ``(i, j)`` (it sat in position A) and ``1 - Y[j, i]``
    of comparison ``(j, i)`` (it sat in position B); each made comparison is one game for both.
    """
    matrix = check.comparison_matrix(decisions, "decisions")
    made = ~np.isnan(matrix)
    as_first = np.where(made, matrix, 0.0)
    as_second = np.where(made, 1.0 - matrix, 0.0)
    wins = as_first.sum(axis=1) + as_second.sum(axis=0)
    games = made.sum(axis=1) + made.sum(axis=0)
    return wins, games.astype(float)


def win_ratio(decisions: ArrayLike, unseen: float = np.nan) -> NDArray[np.float64]:
    """Win ratio of seed 000 eq. 6: ``s_i = #wins of x_i / #comparisons involving x_i``.

    ``decisions`` is a decision matrix (pass ``hard_decisions(P)`` for the paper's eq. 6, debiased
    decisions for eq. 10, or the probabilities themselves for a soft "expected wins" variant). Every
    made comparison counts, in whichever position the candidate sat. A candidate that took part in no
    comparison has no win ratio; it gets ``unseen`` (NaN by default; the subset curves use 0.5, i.e.
    neither better nor worse than the others).
    """
    wins, games = win_counts(decisions)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = wins / games
    ratio[games == 0] = unseen
    return ratio


def win_ratio_full_matrix(decisions: ArrayLike) -> NDArray[np.float64]:
    """Full-matrix win ratio of seed 002 eq. 4: ``y_i = 1/(2N-2) * sum_{j != i} c(x_i, x_j) + c~(x_i, x_j)``.

    ``c(x_i, x_j)`` is the decision with ``x_i`` first; ``c~(x_i, x_j)`` is the same pair in the opposite
    order, read as "x_i wins when shown second", i.e. ``1 - c(x_j, x_i)`` (seed 002 writes
    ``c~(x_i, x_j) = c(x_j, x_i)``, which would count x_j's wins; seed 000 §3.5 gives the consistent
    ``y~_ij = 1 - y^_ji``). Needs all N(N-1) comparisons; on a full matrix it equals eq. 6.
    """
    matrix = check.comparison_matrix(decisions, "decisions", require_full=True)
    n = matrix.shape[0]
    filled = np.nan_to_num(matrix, nan=0.0)
    off_diagonal = ~np.eye(n, dtype=bool)
    first = filled.sum(axis=1)
    second = ((1.0 - filled) * off_diagonal).sum(axis=0)
    return (first + second) / (2 * n - 2)


def ranks_from_scores(scores: ArrayLike) -> NDArray[np.float64]:
    """Ranks with 1 = best (highest score); tied scores share their average rank (``r_{1:N}`` of §3.1)."""
    values = check.finite_vector(scores, "scores", min_size=check.MIN_CANDIDATES)
    return rankdata(-values, method="average")
