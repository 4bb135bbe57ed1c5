"""The binned regression of seed 004 Fig. 5: does the judge prefer the model with the higher ROUGE?

Each encounter of two models has a ROUGE difference ``R = R_2 - R_1`` and a 0/1 outcome (the judge
chose model 1). Binning the differences and fitting a count-weighted line through the per-bin
proportions summarises how strongly the judge's choice follows ROUGE (the slope) and how well a line
describes it (r^2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.linear_model import LinearRegression

from nlgjudge.stats import _validation as check


@dataclass(frozen=True)
class BinnedRegression:
    """Seed 004 Fig. 5: weighted line through per-bin proportions."""

    slope: float
    intercept: float
    r_squared: float
    """Count-weighted coefficient of determination."""
    bin_centres: NDArray[np.float64]
    proportions: NDArray[np.float64]
    counts: NDArray[np.int_]
    """Only non-empty bins are listed (empty bins carry no data point)."""


def binned_regression(
    rouge_difference: ArrayLike,
    chose_model_1: ArrayLike,
    n_bins: int = 40,
    value_range: tuple[float, float] | None = None,
) -> BinnedRegression:
    """Binned, count-weighted linear regression of P(model 1 chosen) on the ROUGE difference (seed 004).

    Following the Annex: cut the ROUGE differences ``R = R_2 - R_1`` into ``n_bins`` equal-width bins
    (over ``value_range``, default the data's range), take each non-empty bin's centre as x and the
    proportion of encounters in it where the judge chose model 1 as y, and fit ``y = intercept + slope x``
    by least squares weighted by the bin counts (scikit-learn); r^2 is count-weighted too. The paper's
    text also describes a model with the intercept fixed at ``2(rho - 1/2)``; its Fig. 5 reports the fitted
    slope and r^2, which is what this returns.
    """
    x = check.finite_vector(rouge_difference, "rouge_difference", min_size=2)
    chosen = np.asarray(chose_model_1, dtype=float)
    check.same_length([x, chosen], ["rouge_difference", "chose_model_1"])
    if chosen.ndim != 1 or not np.isin(chosen, (0.0, 1.0)).all():
        raise ValueError("chose_model_1 must be 1-D booleans or 0/1 (1 = the judge chose model 1).")
    n_bins = check.integer(n_bins, "n_bins", minimum=2)
    if value_range is not None:
        if len(value_range) != 2:
            raise ValueError(f"value_range must be a pair (low, high); got {value_range!r}.")
        low, high = (check.real(v, "value_range bound") for v in value_range)
        if not low < high:
            raise ValueError(f"value_range must have low < high; got {value_range!r}.")
        value_range = (low, high)
    edges = np.histogram_bin_edges(x, bins=n_bins, range=value_range)
    if value_range is not None and (x.min() < edges[0] or x.max() > edges[-1]):
        raise ValueError(f"some ROUGE differences fall outside value_range={value_range}; widen it.")
    which = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, n_bins - 1)
    counts = np.bincount(which, minlength=n_bins)
    chosen_counts = np.bincount(which, weights=chosen, minlength=n_bins)
    filled = counts > 0
    if filled.sum() < 2:
        raise ValueError("fewer than 2 non-empty bins; a line needs at least two points.")
    centres = ((edges[:-1] + edges[1:]) / 2)[filled]
    proportions = chosen_counts[filled] / counts[filled]
    weights = counts[filled].astype(float)
    model = LinearRegression().fit(centres[:, None], proportions, sample_weight=weights)
    r_squared = float(model.score(centres[:, None], proportions, sample_weight=weights))
    return BinnedRegression(
        slope=float(model.coef_[0]),
        intercept=float(model.intercept_),
        r_squared=r_squared,
        bin_centres=centres,
        proportions=proportions,
        counts=counts[filled],
    )
