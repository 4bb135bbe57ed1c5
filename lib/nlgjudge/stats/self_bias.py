"""Self-bias of likelihood evaluators as numbers (beyond seed 003, which shows a darker diagonal).

Input: ``scores[d, e, g]``, evaluator ``e``'s score of generator ``g``'s summary of document ``d``
(higher = better; every cell finite), and ``own[e]``, the index of evaluator ``e``'s own generator
(-1 when the evaluator wrote no summaries).

Two quantities, each defined once:

* :func:`self_bias_excess`, on seed 003 eq. 4's normalised heatmap: evaluator ``e``'s normalised
  score of its own generator minus the mean normalised score the *other* evaluators give that
  generator. 0 = the evaluator rates its own summaries as the others do; the range is [-1, 1]
  (alpha = 1). :func:`self_bias_bootstrap` resamples documents for an ``estimate +- t x bootstrap SE``
  interval (:func:`~nlgjudge.stats.intervals.bootstrap_se_interval`).
* :func:`self_preference_regression`, controlling for length: per-evaluator z-scores regressed on
  evaluator x document intercepts, generator effects shared by all evaluators, an evaluator-specific
  slope on summary length (words) and an evaluator-specific "own generator" indicator. Its
  coefficient ``gamma[e]`` is the evaluator's extra score (in its own standard deviations) for its
  own generator beyond the consensus of the other evaluators and beyond what length explains.
  Intervals: a bootstrap over documents (:func:`self_preference_bootstrap`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from nlgjudge.stats import _validation as check
from nlgjudge.stats.bootstrap import check_bootstrap_settings
from nlgjudge.stats.intervals import bootstrap_se_interval, score_interval
from nlgjudge.stats.normalisation import min_max_normalise


def _check(scores: ArrayLike, own: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.int_]]:
    values = np.asarray(scores, dtype=float)
    if values.ndim != 3:
        raise ValueError(f"scores must be (documents, evaluators, generators); got shape {values.shape}.")
    n_docs, n_eval, n_gen = values.shape
    if n_docs < 1 or n_eval < 2 or n_gen < 2:
        raise ValueError(f"need at least 1 document, 2 evaluators and 2 generators; got shape {values.shape}.")
    if not np.isfinite(values).all():
        raise ValueError(f"scores contain {int((~np.isfinite(values)).sum())} NaN or infinite value(s); drop those documents first.")
    own_index = np.asarray(own)
    if own_index.shape != (n_eval,) or not np.issubdtype(own_index.dtype, np.integer):
        raise ValueError(f"own must hold one integer generator index per evaluator ({n_eval}); got {own!r}.")
    if ((own_index < -1) | (own_index >= n_gen)).any():
        raise ValueError(f"own holds generator indices in [-1, {n_gen - 1}]; got {own_index.tolist()}.")
    return values, own_index.astype(int)


def _excess(means: NDArray[np.float64], own: NDArray[np.int_], alpha: float) -> NDArray[np.float64]:
    """``means[e, g]`` -> the excess per evaluator (NaN for evaluators without a generator)."""
    normalised = min_max_normalise(means, alpha=alpha, axis=1)  # eq. 4: over generators, per evaluator
    out = np.full(means.shape[0], np.nan)
    for e, g in enumerate(own):
        if g >= 0:
            others = np.delete(normalised[:, g], e)
            out[e] = normalised[e, g] - others.mean()
    return out


def self_bias_excess(scores: ArrayLike, own: ArrayLike, alpha: float = 1.0) -> NDArray[np.float64]:
    """Per evaluator: normalised score of its own generator minus the others' mean for it (eq. 4 heatmap)."""
    values, own_index = _check(scores, own)
    return _excess(values.mean(axis=0), own_index, check.real(alpha, "alpha", positive=True))


@dataclass(frozen=True)
class BootstrapEstimate:
    """Point estimates per evaluator with ``estimate +- t(n_documents - 1) x bootstrap SE`` intervals (documents resampled)."""

    estimate: NDArray[np.float64]
    low: NDArray[np.float64]
    high: NDArray[np.float64]
    n_documents: int
    n_boot: int
    confidence: float
    n_failed: int = 0
    """Resamples without a value (an evaluator tied every generator): left out of the standard error, counted here."""


def _se_intervals(
    estimate: NDArray[np.float64], draws: NDArray[np.float64], n_docs: int, confidence: float, n_failed: int
) -> BootstrapEstimate:
    # The book's interval for a statistic recomputed on each resample (glossary, "Interval"): with the
    # few documents a chapter resamples, a percentile interval is too narrow and need not contain the
    # estimate. Evaluators without a generator have no draws at all and keep NaN bounds.
    low, high = bootstrap_se_interval(estimate, draws, n_docs, confidence)
    return BootstrapEstimate(estimate, low, high, n_docs, draws.shape[0], confidence, n_failed)


def self_bias_bootstrap(
    scores: ArrayLike, own: ArrayLike, n_boot: int = 1000, confidence: float = 0.95, seed: int | np.random.Generator | None = 0,
    alpha: float = 1.0,
) -> BootstrapEstimate:
    """:func:`self_bias_excess` with ``estimate +- t x bootstrap SE`` intervals from resampling documents."""
    values, own_index = _check(scores, own)
    n, level = check_bootstrap_settings(n_boot, confidence)
    rng = check.rng_from(seed)
    estimate = _excess(values.mean(axis=0), own_index, alpha)
    draws = np.full((n, own_index.size), np.nan)
    n_docs, failed = values.shape[0], 0
    for b in range(n):
        means = values[rng.integers(0, n_docs, n_docs)].mean(axis=0)
        try:
            draws[b] = _excess(means, own_index, alpha)
        except ValueError:  # a resample where an evaluator ties every generator: no eq. 4 value
            failed += 1
    result = _se_intervals(estimate, draws, n_docs, level, failed)
    # The excess lies in [-alpha, alpha] (eq. 4's scale): where the symmetric interval would cross an
    # end, the score interval on that range replaces it (asymmetric, never cut at the end).
    crosses = (result.low < -alpha) | (result.high > alpha)
    if not np.any(crosses):
        return result
    quantile = float(stats.t.ppf((1.0 + level) / 2.0, df=n_docs - 1))
    se = (result.high - result.low) / (2 * quantile)
    low, high = score_interval(estimate, se, quantile, n_docs, -alpha, alpha)
    return replace(result, low=np.where(crosses, low, result.low), high=np.where(crosses, high, result.high))


def _zscore_per_evaluator(values: NDArray[np.float64]) -> NDArray[np.float64]:
    flat = values.transpose(1, 0, 2).reshape(values.shape[1], -1)
    sd = flat.std(axis=1)
    if (sd == 0).any():
        raise ValueError("an evaluator gives every summary the same score; it cannot be standardised.")
    return (values - flat.mean(axis=1)[None, :, None]) / sd[None, :, None]


def _gamma(z: NDArray[np.float64], lengths: NDArray[np.float64], own: NDArray[np.int_]) -> NDArray[np.float64]:
    """OLS of the fixed-effects model, within evaluator x document (demeaned over generators)."""
    n_docs, n_eval, n_gen = z.shape
    y = z - z.mean(axis=2, keepdims=True)
    columns = []
    for g in range(1, n_gen):  # generator effects shared by all evaluators (generator 0 is the base)
        dummy = np.zeros((n_docs, n_eval, n_gen))
        dummy[:, :, g] = 1.0
        columns.append(dummy)
    centred_len = lengths - lengths.mean(axis=1, keepdims=True)
    for e in range(n_eval):  # a length slope per evaluator
        col = np.zeros((n_docs, n_eval, n_gen))
        col[:, e, :] = centred_len
        columns.append(col)
    with_own = [e for e in range(n_eval) if own[e] >= 0]
    for e in with_own:  # the self indicator per evaluator that has a generator
        col = np.zeros((n_docs, n_eval, n_gen))
        col[:, e, own[e]] = 1.0
        columns.append(col)
    X = np.stack([c - c.mean(axis=2, keepdims=True) for c in columns], axis=-1).reshape(-1, len(columns))
    coef, _, rank, _ = np.linalg.lstsq(X, y.reshape(-1), rcond=None)
    if rank < X.shape[1]:
        raise ValueError(
            "the self-preference model is not identified (e.g. every evaluator owns a generator no other evaluator "
            "scores, or lengths are constant); add evaluators or generators."
        )
    gamma = np.full(n_eval, np.nan)
    gamma[with_own] = coef[-len(with_own):] if with_own else []
    return gamma


def self_preference_regression(scores: ArrayLike, lengths: ArrayLike, own: ArrayLike) -> NDArray[np.float64]:
    """``gamma[e]``: evaluator ``e``'s extra z-score for its own generator, length and consensus held fixed.

    ``lengths[d, g]`` is the length (words) of generator ``g``'s summary of document ``d``.
    """
    values, own_index = _check(scores, own)
    length = np.asarray(lengths, dtype=float)
    if length.shape != (values.shape[0], values.shape[2]) or not np.isfinite(length).all():
        raise ValueError(f"lengths must be finite, shape (documents, generators) = {(values.shape[0], values.shape[2])}; got {length.shape}.")
    return _gamma(_zscore_per_evaluator(values), length, own_index)


def self_preference_bootstrap(
    scores: ArrayLike, lengths: ArrayLike, own: ArrayLike, n_boot: int = 1000, confidence: float = 0.95,
    seed: int | np.random.Generator | None = 0,
) -> BootstrapEstimate:
    """:func:`self_preference_regression` with ``estimate +- t x bootstrap SE`` intervals from resampling documents."""
    values, own_index = _check(scores, own)
    n, level = check_bootstrap_settings(n_boot, confidence)
    length = np.asarray(lengths, dtype=float)
    estimate = self_preference_regression(values, length, own_index)
    z = _zscore_per_evaluator(values)  # standardised once: the scale is part of the definition
    rng = check.rng_from(seed)
    n_docs = values.shape[0]
    draws = np.full((n, own_index.size), np.nan)
    failed = 0
    for b in range(n):
        pick = rng.integers(0, n_docs, n_docs)
        try:
            draws[b] = _gamma(z[pick], length[pick], own_index)
        except ValueError:  # e.g. a resample of one document whose lengths are all equal
            failed += 1
    return _se_intervals(estimate, draws, n_docs, level, failed)


def self_bias_difference_bootstrap(
    scores: ArrayLike, other_scores: ArrayLike, own: ArrayLike, n_boot: int = 1000, confidence: float = 0.95,
    seed: int | np.random.Generator | None = 0, alpha: float = 1.0,
) -> BootstrapEstimate:
    """Paired: :func:`self_bias_excess` of ``scores`` minus that of ``other_scores``, per evaluator.

    The two cubes score the same documents, evaluators and generators in two conditions (e.g. seed
    003's reference-free and reference-based settings), aligned on every axis. One resample of the
    documents is drawn for both, so the interval is that of the paired difference, not of two
    independent estimates.
    """
    values, own_index = _check(scores, own)
    other, _ = _check(other_scores, own)
    if other.shape != values.shape:
        raise ValueError(f"the two score cubes must be aligned (same documents, evaluators, generators); got {values.shape} and {other.shape}.")
    n, level = check_bootstrap_settings(n_boot, confidence)
    rng = check.rng_from(seed)
    estimate = _excess(values.mean(axis=0), own_index, alpha) - _excess(other.mean(axis=0), own_index, alpha)
    draws = np.full((n, own_index.size), np.nan)
    n_docs, failed = values.shape[0], 0
    for b in range(n):
        pick = rng.integers(0, n_docs, n_docs)
        try:
            draws[b] = _excess(values[pick].mean(axis=0), own_index, alpha) - _excess(other[pick].mean(axis=0), own_index, alpha)
        except ValueError:  # a resample where an evaluator ties every generator in either condition
            failed += 1
    return _se_intervals(estimate, draws, n_docs, level, failed)
