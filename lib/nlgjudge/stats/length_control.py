"""A length-controlled win rate (AlpacaEval 2.0's idea), and what length control takes away.

AlpacaEval 2.0 fits a logistic regression of the judge's preference on the two outputs' length
difference, passed through ``tanh(difference / sd)``, and reports the win rate the fit predicts at no
difference. :func:`length_control` does the same for one system's comparisons (its instruction
term left out: the book's comparisons share one prompt per context), by the binomial
quasi-likelihood of statsmodels (each outcome may be 0, 1/2 or 1). The difference it reports, the
raw win rate minus the controlled one, gets a standard error that is cluster-robust over the units
(contexts): the regression's and the raw rate's estimating equations are stacked, their sandwich
variance summed over units, and the delta method carries it to the difference. Pure: arrays in,
numbers out.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats
from scipy.special import expit


@dataclass(frozen=True)
class LengthControl:
    """One system's raw and length-controlled win rates, and their difference with its interval over units."""

    raw: float
    controlled: float
    slope: float  # the length term's coefficient (log-odds per unit of tanh(difference / sd))
    difference: float  # raw - controlled
    low: float
    high: float
    n_units: int
    reason: str | None = None  # why there is no interval (NaN ends), when there is none


def length_feature(length_difference: ArrayLike) -> np.ndarray:
    """``tanh(d / sd(d))``: AlpacaEval 2.0's bounded length term (``sd`` over the system's comparisons)."""
    d = np.asarray(length_difference, dtype=float)
    scale = float(np.std(d, ddof=1)) if d.size >= 2 else 0.0
    if not scale > 0:
        raise ValueError("the length differences do not vary: there is no length term to fit")
    return np.tanh(d / scale)


def length_control(outcomes: ArrayLike, length_difference: ArrayLike, units: ArrayLike,
                   confidence: float = 0.95) -> LengthControl:
    """The raw win rate of ``outcomes`` (0, 1/2 or 1 per comparison), the rate the regression on the
    length term predicts at no length difference, and their difference with a t interval (units - 1
    degrees of freedom) whose standard error is cluster-robust over ``units`` (one id per comparison)."""
    y = np.asarray(outcomes, dtype=float)
    d = np.asarray(length_difference, dtype=float)
    u = np.asarray(units)
    if not (y.shape == d.shape == u.shape) or y.ndim != 1:
        raise ValueError(f"outcomes, length_difference and units need one value per comparison; got {y.shape}, {d.shape}, {u.shape}")
    if y.size == 0 or not np.all(np.isfinite(y) & (y >= 0) & (y <= 1)) or not np.all(np.isfinite(d)):
        raise ValueError("outcomes must be finite shares in [0, 1] and length differences finite, one per comparison")
    labels, cluster = np.unique(u, return_inverse=True)
    raw, nan = float(y.mean()), float("nan")
    if np.ptp(y) == 0:
        return LengthControl(raw, raw, 0.0, 0.0, nan, nan, len(labels),
                             "the outcome is the same in every comparison: no part of it can be put down to length")
    if d.size < 2 or not np.std(d) > 0:
        return LengthControl(raw, raw, 0.0, 0.0, nan, nan, len(labels), "the length differences do not vary")
    x = np.column_stack([np.ones_like(d), length_feature(d)])
    import statsmodels.api as sm
    from statsmodels.tools.sm_exceptions import PerfectSeparationWarning

    with warnings.catch_warnings(), np.errstate(over="ignore", under="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # exp overflow on the way to a separated fit, caught below
        warnings.simplefilter("error", PerfectSeparationWarning)
        try:
            beta = sm.GLM(y, x, family=sm.families.Binomial()).fit().params
        except (PerfectSeparationWarning, np.linalg.LinAlgError, ValueError) as error:
            return LengthControl(raw, nan, nan, nan, nan, nan, len(labels),
                                 f"the length term separates the outcomes, so the fit has no finite solution ({type(error).__name__})")
    p = expit(x @ beta)
    controlled = float(expit(beta[0]))
    # stacked estimating equations (regression, raw mean), summed per unit: the sandwich's meat
    scores = np.column_stack([(y - p)[:, None] * x, y - raw])
    per_unit = np.zeros((len(labels), 3))
    np.add.at(per_unit, cluster, scores)
    bread = np.zeros((3, 3))
    bread[:2, :2] = (x * (p * (1 - p))[:, None]).T @ x
    bread[2, 2] = y.size
    g = len(labels)
    inverse = np.linalg.inv(bread)
    variance = inverse @ (per_unit.T @ per_unit) @ inverse.T * (g / max(g - 1, 1))
    gradient = np.array([-controlled * (1 - controlled), 0.0, 1.0])  # d(raw - expit(a)) / d(a, b, raw)
    se = float(np.sqrt(max(gradient @ variance @ gradient, 0.0)))
    difference = raw - controlled
    if g < 2:
        return LengthControl(raw, controlled, float(beta[1]), difference, nan, nan, g, "fewer than two units")
    half = float(stats.t.ppf((1 + confidence) / 2, g - 1)) * se
    return LengthControl(raw, controlled, float(beta[1]), difference, max(-1.0, difference - half),
                         min(1.0, difference + half), g)
