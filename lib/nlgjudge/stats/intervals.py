"""Intervals for a mean over a few independent units (contexts, articles), valid at small n.

With the 6 to 30 contexts a chapter has, a percentile bootstrap of the mean is too narrow: it
resamples only the values seen, and at n = 6 its nominal 95% interval covers the mean far less
often. The Student t interval, ``mean +- t_{n-1, (1+c)/2} s / sqrt(n)``, is exact for normal
values and robust enough for means of bounded correlations; it is the book's one interval for "the
mean over contexts" (:func:`mean_interval`) and, on per-context differences of two methods on the
same contexts, for comparing them (:func:`paired_difference_interval`: a paired interval, which
a count of signs is not).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

#: Below this many units an interval is shown with a warning: it is honest but very wide.
SMALL_N = 5
METHOD = "Student t, n - 1 degrees of freedom"


@dataclass(frozen=True)
class MeanInterval:
    """The mean of ``n`` values and its t interval (NaN bounds when n < 2 or the values are constant)."""

    mean: float
    low: float
    high: float
    n: int
    confidence: float
    method: str = METHOD

    @property
    def small(self) -> bool:
        """True when n < :data:`SMALL_N`: read the interval as a warning that n is tiny."""
        return self.n < SMALL_N

    @property
    def excludes_zero(self) -> bool:
        return bool(np.isfinite(self.low) and (self.low > 0 or self.high < 0))


def mean_interval(values: ArrayLike, confidence: float = 0.95,
                  bounds: tuple[float, float] | None = None, cap_at_units: bool = False) -> MeanInterval:
    """The t interval of the mean of ``values`` (NaN entries are an error: decide before what they mean).

    ``bounds``: the range of a bounded quantity (a share in [0, 1], a correlation in [-1, 1]). When
    the t interval over a few units would cross an end of the range, the score interval of
    :func:`score_interval` replaces it: asymmetric, inside the range, never cut at its end (its
    effective n at most the number of units with ``cap_at_units``)."""
    x = np.asarray(values, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"values must be one-dimensional; got shape {x.shape}")
    if np.isnan(x).any():
        raise ValueError("values contain NaN; drop or replace them first (say how many and why)")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1); got {confidence}")
    n = int(x.size)
    if n == 0:
        raise ValueError("no values: an interval needs at least one")
    mean = float(x.mean())
    if n < 2:
        return MeanInterval(mean, np.nan, np.nan, n, confidence)
    if np.ptp(x) == 0.0:  # constant values (rounding would otherwise give a hair-thin interval)
        return MeanInterval(mean, mean, mean, n, confidence)
    sd = float(x.std(ddof=1))
    quantile = float(stats.t.ppf((1.0 + confidence) / 2.0, df=n - 1))
    half = quantile * sd / np.sqrt(n)
    low, high = mean - half, mean + half
    method = METHOD
    if bounds is not None:
        floor, ceiling = bounds
        if not floor < ceiling:
            raise ValueError(f"bounds must be (lower, upper) with lower < upper; got {bounds}")
        slack = 1e-9 * (ceiling - floor)  # a correlation of 1 + 2e-16 is rounding, not a wrong range
        if x.min() < floor - slack or x.max() > ceiling + slack:
            raise ValueError(f"values lie outside the bounds {bounds}: the bounds are the quantity's range")
        if low < floor or high > ceiling:
            low, high = (float(v) for v in score_interval(mean, sd / np.sqrt(n), quantile, n, floor, ceiling,
                                                                     cap_at_units=cap_at_units))
            method = BOUNDED_METHOD
    return MeanInterval(mean, low, high, n, confidence, method)


#: A bounded quantity's interval where the t interval would cross an end of its range.
BOUNDED_METHOD = "Wilson score interval on the quantity's range, with the effective n of its standard error"


def score_interval(estimate: ArrayLike, se: ArrayLike, quantile: float, n_units: int, floor: float,
                   ceiling: float, cap_at_units: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The Wilson score interval of a bounded estimate, with the effective sample size of its standard
    error (Korn and Graubard's interval for a mean of bounded values): on the range mapped to
    [0, 1], ``n_eff = p (1 - p) / se^2`` and the interval solves ``|p - pi| <= q sqrt(pi (1 - pi) / n_eff)``.

    Unlike a symmetric interval cut at the range's end, it is asymmetric near the end and never
    touches it unless the estimate does. An estimate at the end with a nonzero standard error takes
    ``n_eff = n_units`` (as if every unit were a success). With ``cap_at_units`` (a mean of shares in
    [0, 1]), ``n_eff`` is at most ``n_units``: units that each sit near an end say no more than as many
    coin flips would, so a share of 0.003 over 8 units is not read as if it came from a thousand (Korn
    and Graubard cap it at the observations of a survey; the book caps it at the units, which is
    stricter where each unit holds many observations). Vectorised over ``estimate`` and ``se``."""
    width = ceiling - floor
    p = np.clip((np.asarray(estimate, dtype=float) - floor) / width, 0.0, 1.0)
    s = np.asarray(se, dtype=float) / width
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where((p > 0) & (p < 1), p * (1 - p) / s ** 2, float(n_units))
        if cap_at_units:
            n_eff = np.minimum(n_eff, float(n_units))
        z2 = quantile ** 2 / n_eff
        centre = (p + z2 / 2) / (1 + z2)
        half = np.sqrt(z2 * p * (1 - p) + z2 ** 2 / 4) / (1 + z2)
    low, high = np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)
    fixed = s == 0  # no spread: the interval is the point
    low, high = np.where(fixed, p, low), np.where(fixed, p, high)
    return floor + width * low, floor + width * high


#: The interval of a share whose every unit sits at one end of [0, 1].
AT_BOUND_METHOD = "Clopper-Pearson bound over the units (every unit at one end of the range)"


def share_interval(values: ArrayLike, confidence: float = 0.95) -> MeanInterval:
    """The interval of the mean of per-unit shares in [0, 1] (e.g. each context's win rate).

    The bounded t interval (:func:`mean_interval`); where it would cross an end, the score interval with
    an effective n of at most the number of units (:func:`score_interval`); and when every unit sits at the same end of the
    range: the t interval then has width zero, which no reader should believe. A share in [0, 1] has at
    most a Bernoulli's spread, so the exact binomial (Clopper-Pearson) interval of 0 (or n) successes
    in n units bounds its mean at the stated confidence, as it would a coin's."""
    x = np.asarray(values, dtype=float)
    interval = mean_interval(x, confidence, bounds=(0.0, 1.0), cap_at_units=True)
    if interval.n >= 2 and np.ptp(x) == 0.0 and 0.0 < x[0] < 1.0:
        # the same share in every unit (a judge whose every decision ties agrees half the time in each
        # context): no spread over units, but no more known than from as many coin flips either, so
        # the score interval of n units at that share, never the zero-width t interval
        quantile = float(stats.t.ppf((1.0 + confidence) / 2.0, df=interval.n - 1))
        p = float(x[0])
        low, high = score_interval(p, math.sqrt(p * (1 - p) / interval.n), quantile, interval.n, 0.0, 1.0, cap_at_units=True)
        return MeanInterval(interval.mean, float(low), float(high), interval.n, confidence, BOUNDED_METHOD)
    if interval.n < 2 or not (np.all(x == 0.0) or np.all(x == 1.0)):
        return interval
    successes = interval.n if x[0] == 1.0 else 0
    ci = stats.binomtest(successes, interval.n).proportion_ci(confidence_level=confidence, method="exact")
    return MeanInterval(interval.mean, float(ci.low), float(ci.high), interval.n, confidence, AT_BOUND_METHOD)


def paired_difference_interval(a: ArrayLike, b: ArrayLike, confidence: float = 0.95) -> MeanInterval:
    """The t interval of the mean of ``a - b`` over the same units (e.g. two methods' per-context
    correlations): paired, so what the units share cancels."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"a paired interval needs the same units on both sides; got shapes {x.shape} and {y.shape}")
    return mean_interval(x - y, confidence)


#: The book's interval for an estimate refitted on resampled units (e.g. Bradley-Terry scores over contexts).
BOOTSTRAP_SE_METHOD = "estimate +- t(n_units - 1) x bootstrap standard error over resampled units"


def bootstrap_se_interval(
    estimate: ArrayLike, replicates: ArrayLike, n_units: int, confidence: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """``estimate +- t_{n_units-1, (1+c)/2} x SE`` with SE the standard deviation of the bootstrap
    ``replicates`` (shape (n_boot, ...) ; NaN replicates, e.g. a resample without the unit a value
    needs, are left out; fewer than 2 finite ones give NaN bounds).

    The same small-n reasoning as :func:`mean_interval`: with the few units a chapter resamples
    (articles, contexts), a percentile interval is too narrow, and it need not contain the estimate;
    this one is centred on it and widens with the t quantile when n is small.
    """
    point = np.asarray(estimate, dtype=float)
    draws = np.asarray(replicates, dtype=float)
    if draws.ndim < 1 or draws.shape[1:] != point.shape:
        raise ValueError(f"replicates must have shape (n_boot, *{point.shape}); got {draws.shape}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1); got {confidence}")
    if int(n_units) != n_units or n_units < 1:
        raise ValueError(f"n_units must be a positive integer; got {n_units}")
    if n_units < 2:
        nan = np.full(point.shape, np.nan)
        return nan, nan.copy()
    finite = np.isfinite(draws)
    count = finite.sum(axis=0)
    centred = np.where(finite, draws, 0.0)
    mean = centred.sum(axis=0) / np.maximum(count, 1)
    squares = np.where(finite, (draws - mean) ** 2, 0.0).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        se = np.where(count >= 2, np.sqrt(squares / np.maximum(count - 1, 1)), np.nan)
    half = float(stats.t.ppf((1.0 + confidence) / 2.0, df=n_units - 1)) * se
    return point - half, point + half


def bootstrap_end_error(half_width: float, n_finite: int) -> float:
    """The Monte Carlo standard error of the ends of :func:`bootstrap_se_interval`: the ends are the
    estimate +- t x the bootstrap SD, and an SD from B resamples has a relative error of about
    1 / sqrt(2 (B - 1)). 0 when there is no width or fewer than 2 resamples to read it from."""
    if n_finite < 2 or not np.isfinite(half_width):
        return 0.0
    return float(abs(half_width)) / float(np.sqrt(2.0 * (n_finite - 1)))


def draws_errors(mean_error: float, n_units: int) -> tuple[float, float]:
    """The Monte Carlo errors of a t interval over ``n_units`` whose per-unit values are themselves
    means of random draws: (its estimate's, ``mean_error``; its standard error's). The draws' noise
    moves the spread too: by the delta method (each unit's noise of about the same size) the standard
    error's error is ``mean_error / sqrt(n_units - 1)``, so an end, estimate -+ t x SE, carries
    sqrt(1 + t^2 / (n_units - 1)) times the estimate's (1.07 at 30 units, 1.14 at 16; :func:`end_error`).
    NaN in, NaN out; fewer than 2 units: no spread to move (0)."""
    if not np.isfinite(mean_error):
        return float("nan"), float("nan")
    if n_units < 2:
        return float(mean_error), 0.0
    return float(mean_error), float(mean_error) / float(np.sqrt(n_units - 1))


def end_error(estimate_error: float, se_error: float, n_units: int, confidence: float = 0.95) -> float:
    """The Monte Carlo standard error of an end of ``estimate +- t(n_units - 1) x SE`` from the
    errors of its estimate and of its SE (independent to first order): sqrt(e^2 + t^2 s^2)."""
    if n_units < 2:
        return float(abs(estimate_error))
    quantile = float(stats.t.ppf((1.0 + confidence) / 2.0, df=n_units - 1))
    return float(np.hypot(estimate_error, quantile * se_error))
