"""Min-max normalisation of seed 003 eq. 4: evaluators with different score scales on one axis.

Seed 003 compares how each evaluator scores the texts of different generators. Raw scores of
different evaluators live on different scales, so each evaluator's scores are rescaled to
``[0, alpha]`` across the generators before they are compared or averaged.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from nlgjudge.stats import _validation as check


def min_max_normalise(scores: ArrayLike, alpha: float = 1.0, axis: int = 0) -> NDArray[np.float64]:
    """Min-max normalisation of seed 003 eq. 4: ``alpha (X_ij - min_i X_ij) / (max_i X_ij - min_i X_ij)``.

    With ``X[i, j]`` the score evaluator ``j`` gives generator ``i``, normalisation runs over generators
    (``axis=0``) separately for every evaluator. A constant evaluator cannot be normalised (raises).
    """
    values = np.asarray(scores, dtype=float)
    scale = check.real(alpha, "alpha", positive=True)
    axis = check.integer(axis, "axis")
    if values.ndim < 1 or not -values.ndim <= axis < values.ndim:
        raise ValueError(f"axis {axis} does not exist for scores of shape {values.shape}.")
    if values.shape[axis] < 2:
        raise ValueError(f"need at least 2 values along axis {axis}; got shape {values.shape}.")
    if not np.isfinite(values).all():
        raise ValueError("scores contain NaN or infinite values.")
    low = values.min(axis=axis, keepdims=True)
    span = values.max(axis=axis, keepdims=True) - low
    if (span == 0).any():
        raise ValueError("an evaluator gives the same score to every generator; min-max normalisation divides by zero.")
    return scale * (values - low) / span
