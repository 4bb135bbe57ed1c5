"""Bootstrap confidence intervals, via ``scipy.stats.bootstrap``.

Beyond the papers, which report point estimates only: with a few contexts per dataset, an interval
tells a reader whether a gap to a paper's number is more than resampling noise.

* :func:`bootstrap_correlation_ci`: a correlation, pairs resampled together;
* :func:`bootstrap_mean_ci`: a mean, e.g. of per-context correlations (contexts resampled);
* :func:`bootstrap_clustered_correlation_ci`: a correlation over all pairs, whole clusters resampled
  (e.g. documents, each with several summaries: summaries of one document are not independent).

The first two give percentile intervals (generic tools; no chapter verdict reads them). The clustered
one, which the chapters read, gives the book's interval for a statistic recomputed on each resample of
a few units: ``estimate +- t(n_clusters - 1) x bootstrap SE`` (glossary, "Interval"), since a
percentile interval over a few clusters is too narrow and need not contain the estimate.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from nlgjudge.stats import _validation as check
from nlgjudge.stats.correlation import CORRELATIONS, correlation, spearman_rows
from nlgjudge.stats.intervals import bootstrap_se_interval

MIN_RESAMPLES = 10


@dataclass(frozen=True)
class ConfidenceInterval:
    """A point estimate and its bootstrap interval ``[low, high]`` (percentile, or estimate +- t x SE)."""

    estimate: float
    low: float
    high: float
    confidence: float
    n_boot: int


def _spearman_vectorised(x: NDArray[np.float64], y: NDArray[np.float64], axis: int = -1) -> NDArray[np.float64]:
    return spearman_rows(np.moveaxis(x, axis, -1), np.moveaxis(y, axis, -1))


def _pearson_vectorised(x: NDArray[np.float64], y: NDArray[np.float64], axis: int = -1) -> NDArray[np.float64]:
    a = np.moveaxis(x, axis, -1)
    b = np.moveaxis(y, axis, -1)
    a = a - a.mean(-1, keepdims=True)
    b = b - b.mean(-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (a * b).sum(-1) / np.sqrt((a * a).sum(-1) * (b * b).sum(-1))


def bootstrap_correlation_ci(
    x: ArrayLike,
    y: ArrayLike,
    method: str = "spearman",
    n_boot: int = 2000,
    confidence: float = 0.95,
    seed: int | np.random.Generator | None = 0,
) -> ConfidenceInterval:
    """Percentile bootstrap interval for a correlation (pairs resampled together), via scipy.stats.bootstrap.

    If any resample makes the correlation undefined (all values equal after resampling, likely only
    for tiny samples) the interval is undefined and this raises instead of guessing.
    """
    check.choice(method, CORRELATIONS, "correlation method")
    a = check.finite_vector(x, "x", min_size=3)
    b = check.finite_vector(y, "y", min_size=3)
    check.same_length([a, b], ["x", "y"])
    n_boot, confidence = check_bootstrap_settings(n_boot, confidence)
    estimate = correlation(a, b, method)
    if np.isnan(estimate):
        raise ValueError("the correlation is undefined on the full sample (constant input); no interval.")
    statistic: Callable[..., NDArray[np.float64]]
    if method == "spearman":
        statistic, vectorised = _spearman_vectorised, True
    elif method == "pearson":
        statistic, vectorised = _pearson_vectorised, True
    else:

        def statistic(u: NDArray[np.float64], v: NDArray[np.float64]) -> NDArray[np.float64]:
            return np.asarray(correlation(u, v, "kendall"))

        vectorised = False
    return _bootstrap((a, b), statistic, vectorised, estimate, n_boot, confidence, seed, paired=True)


def bootstrap_clustered_correlation_ci(
    x: ArrayLike,
    y: ArrayLike,
    clusters: ArrayLike,
    method: str = "spearman",
    n_boot: int = 2000,
    confidence: float = 0.95,
    seed: int | np.random.Generator | None = 0,
) -> ConfidenceInterval:
    """A correlation over every (x, y) pair, with an ``estimate +- t(n_clusters - 1) x bootstrap SE``
    interval from resampling whole clusters.

    ``clusters`` labels each pair (e.g. its document): a resample draws clusters with replacement and
    keeps all pairs of each drawn cluster, so pairs that share a document are not treated as
    independent (via scipy.stats.bootstrap over the cluster labels). Needs at least 3 clusters; an
    interval made undefined by degenerate resamples raises instead of guessing.
    """
    check.choice(method, CORRELATIONS, "correlation method")
    a = check.finite_vector(x, "x", min_size=3)
    b = check.finite_vector(y, "y", min_size=3)
    labels = check.label_vector(clusters, "clusters", "a sequence of cluster labels", "one label per pair")
    check.same_length([a, b, labels], ["x", "y", "clusters"])
    _, codes = np.unique(labels, return_inverse=True)
    members = [np.flatnonzero(codes == k) for k in range(int(codes.max()) + 1)]
    if len(members) < 3:
        raise ValueError(f"a clustered bootstrap needs at least 3 clusters; got {len(members)}.")
    n_boot, confidence = check_bootstrap_settings(n_boot, confidence)
    estimate = correlation(a, b, method)
    if np.isnan(estimate):
        raise ValueError("the correlation is undefined on the full sample (constant input); no interval.")

    def statistic(drawn: NDArray[np.float64]) -> NDArray[np.float64]:
        rows = np.concatenate([members[int(k)] for k in drawn])
        return np.asarray(correlation(a[rows], b[rows], method))

    return _bootstrap(
        (np.arange(len(members), dtype=float),), statistic, False, estimate, n_boot, confidence, seed, paired=False,
        se_units=len(members),
    )


def bootstrap_mean_ci(
    values: ArrayLike, n_boot: int = 2000, confidence: float = 0.95, seed: int | np.random.Generator | None = 0
) -> ConfidenceInterval:
    """Percentile bootstrap interval for a mean, e.g. of per-context correlations (resampling contexts)."""
    data = check.finite_vector(values, "values", min_size=2)
    n_boot, confidence = check_bootstrap_settings(n_boot, confidence)
    return _bootstrap(
        (data,),
        _mean_along,
        True,
        float(data.mean()),
        n_boot,
        confidence,
        seed,
        paired=False,
    )


def _mean_along(values: NDArray[np.float64], axis: int = -1) -> NDArray[np.float64]:
    return np.asarray(np.mean(values, axis=axis), dtype=float)


def check_bootstrap_settings(n_boot: int, confidence: float) -> tuple[int, float]:
    count = check.integer(n_boot, "n_boot", minimum=MIN_RESAMPLES)
    level = check.real(confidence, "confidence")
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), e.g. 0.95; got {confidence}.")
    return count, level


def _bootstrap(
    data: tuple[NDArray[np.float64], ...],
    statistic: Callable[..., NDArray[np.float64]],
    vectorised: bool,
    estimate: float,
    n_boot: int,
    confidence: float,
    seed: int | np.random.Generator | None,
    *,
    paired: bool,
    se_units: int | None = None,
) -> ConfidenceInterval:
    """Percentile interval, or with ``se_units`` the estimate +- t(se_units - 1) x bootstrap SE."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        result = stats.bootstrap(
            data,
            statistic,
            n_resamples=n_boot,
            vectorized=vectorised,
            paired=paired,
            confidence_level=confidence,
            method="percentile",
            rng=check.rng_from(seed),
        )
    if se_units is None:
        low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    else:
        bounds = bootstrap_se_interval(np.asarray(estimate, dtype=float), result.bootstrap_distribution, se_units, confidence)
        low, high = float(bounds[0]), float(bounds[1])
    if np.isnan(low) or np.isnan(high):
        raise ValueError("the bootstrap interval is undefined (too many degenerate resamples); use more data.")
    return ConfidenceInterval(estimate=estimate, low=low, high=high, confidence=confidence, n_boot=n_boot)
