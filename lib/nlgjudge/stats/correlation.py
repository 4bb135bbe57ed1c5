"""Correlation with human scores: the headline number of every table in the three papers.

* :func:`correlation`: Spearman, Kendall or Pearson on one pair of score vectors;
  :func:`correlation_test` adds its two-sided p-value;
* :func:`summary_level_correlation`: within each context, then averaged over contexts (x100);
* :func:`system_level_correlation`: per-system means first, then one correlation (x100);
* :func:`length_score_spearman`: the length bias of seed 003 Fig. 5;
* :func:`spearman_rows` / :func:`centred_average_ranks`: vectorised Spearman for many short rows
  (the subset curves and the bootstrap call them thousands of times).

Units: correlations are returned in [-1, 1] except where a name or field says ``x100`` (the papers'
tables print Spearman x 100).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from nlgjudge.stats import _validation as check

CORRELATIONS = ("spearman", "kendall", "pearson")
UNDEFINED_POLICIES = ("exclude", "zero", "raise")


_SCIPY_TESTS = {"spearman": stats.spearmanr, "kendall": stats.kendalltau, "pearson": stats.pearsonr}


def _scipy_test(x: ArrayLike, y: ArrayLike, method: str, min_size: int) -> tuple[float, float]:
    """Statistic and two-sided p-value of scipy.stats' test; ``(nan, nan)`` on constant input."""
    check.choice(method, CORRELATIONS, "correlation method")
    a = check.finite_vector(x, "x", min_size=min_size)
    b = check.finite_vector(y, "y", min_size=min_size)
    check.same_length([a, b], ["x", "y"])
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan"), float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        result = _SCIPY_TESTS[method](a, b)
    return float(result.statistic), float(result.pvalue)


def correlation(x: ArrayLike, y: ArrayLike, method: str = "spearman") -> float:
    """Spearman, Kendall (tau-b) or Pearson correlation via scipy.stats; NaN when undefined (constant input).

    The papers' correlation with human scores (seed 000 Tables 1-4; seed 003 Tables 2-3)."""
    return _scipy_test(x, y, method, min_size=2)[0]


def correlation_test(x: ArrayLike, y: ArrayLike, method: str = "spearman") -> tuple[float, float]:
    """:func:`correlation` and its two-sided p-value against no association (scipy.stats' test:
    a t approximation for Spearman and Pearson, exact for Kendall on small samples without ties);
    ``(nan, nan)`` when undefined (constant input). At least 3 pairs: with 2 there is no test."""
    return _scipy_test(x, y, method, min_size=3)


def centred_average_ranks(values: ArrayLike) -> NDArray[np.float64]:
    """Row-wise average ranks (ties share their mean rank) minus their mean ``(N + 1) / 2``.

    Same ranks as ``scipy.stats.rankdata(values, axis=-1) - (N + 1) / 2``, computed with one argsort
    per row batch (faster for many short rows, as in the subset curves).
    """
    x = np.asarray(values, dtype=float)
    if x.ndim < 1 or x.shape[-1] < 1:
        raise ValueError(f"values must have shape (..., N) with N >= 1; got shape {x.shape}.")
    if np.isnan(x).any():
        raise ValueError("values contain NaN, which has no rank; rank only complete rows.")
    return _centred_ranks_unchecked(x)


def _centred_ranks_unchecked(x: NDArray[np.float64]) -> NDArray[np.float64]:
    # For callers that have checked their input already (spearman_rows).
    n = x.shape[-1]
    order = np.argsort(x, axis=-1, kind="stable")
    ordered = np.take_along_axis(x, order, axis=-1)
    index = np.broadcast_to(np.arange(n), x.shape)
    starts_group = np.ones(x.shape, dtype=bool)
    starts_group[..., 1:] = ordered[..., 1:] != ordered[..., :-1]
    ends_group = np.ones(x.shape, dtype=bool)
    ends_group[..., :-1] = starts_group[..., 1:]
    first = np.maximum.accumulate(np.where(starts_group, index, 0), axis=-1)
    last = np.flip(np.minimum.accumulate(np.flip(np.where(ends_group, index, n), axis=-1), axis=-1), axis=-1)
    centred = (first + last) / 2 - (n - 1) / 2
    ranks = np.empty_like(centred)
    np.put_along_axis(ranks, order, centred, axis=-1)
    return ranks


def spearman_rows(a: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
    """Row-wise Spearman correlation of two arrays of shape (..., N) (average ranks for ties).

    Vectorised equivalent of calling ``scipy.stats.spearmanr`` on every row (tested against it); rows
    that are constant in either argument give NaN.
    """
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    try:
        x, y = np.broadcast_arrays(x, y)
    except ValueError:
        raise ValueError(f"a and b must have the same shape (..., N); got {x.shape} and {y.shape}.") from None
    if x.ndim < 1 or x.shape[-1] < 2:
        raise ValueError(f"Spearman needs at least 2 values per row; got shape {x.shape}.")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("spearman_rows got NaN values; rank only complete rows.")
    rx = _centred_ranks_unchecked(x)
    ry = _centred_ranks_unchecked(y)
    denominator = np.sqrt((rx * rx).sum(-1) * (ry * ry).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (rx * ry).sum(-1) / denominator
    return np.where(denominator > 0, np.clip(rho, -1.0, 1.0), np.nan)


@dataclass(frozen=True)
class ContextCorrelation:
    """Summary-level correlation: computed within each context, then averaged over contexts."""

    value_x100: float
    per_context: NDArray[np.float64]
    """Raw per-context correlations (NaN where undefined)."""
    n_contexts: int
    n_undefined: int
    """Contexts with constant predictions or gold scores (correlation undefined)."""
    method: str
    undefined: str


def summary_level_correlation(
    pred: ArrayLike | Sequence[ArrayLike],
    gold: ArrayLike | Sequence[ArrayLike],
    method: str = "spearman",
    undefined: str = "exclude",
) -> ContextCorrelation:
    """Correlation per context averaged over contexts, x100: the papers' "summary-level" figure.

    ``pred`` and ``gold`` are (n_contexts, N) arrays or sequences of per-context 1-D arrays (contexts
    may differ in N). Contexts whose predictions or gold scores are constant have no correlation;
    ``undefined`` says what to do with them: ``"exclude"`` them from the mean (the count is reported),
    count them as ``"zero"`` (chance), or ``"raise"``.
    """
    check.choice(method, CORRELATIONS, "correlation method")
    check.choice(undefined, UNDEFINED_POLICIES, "undefined policy")
    pred_rows = check.context_list(pred, "pred")
    gold_rows = check.context_list(gold, "gold")
    check.same_length([np.empty(len(pred_rows)), np.empty(len(gold_rows))], ["pred contexts", "gold contexts"])
    per_context = np.empty(len(pred_rows))
    for k, (p, g) in enumerate(zip(pred_rows, gold_rows, strict=True)):
        if p.shape != g.shape:
            raise ValueError(f"context {k}: pred has {p.size} candidates but gold has {g.size}.")
        per_context[k] = correlation(p, g, method)
    bad = np.isnan(per_context)
    if bad.any() and undefined == "raise":
        raise ValueError(
            f"{int(bad.sum())} context(s) have constant predictions or gold scores (first: {int(np.argmax(bad))}); "
            "use undefined='exclude' or 'zero'."
        )
    if bad.all() and undefined == "exclude":
        raise ValueError("the correlation is undefined in every context (constant predictions or gold scores).")
    values = np.where(bad, 0.0, per_context) if undefined == "zero" else per_context[~bad]
    return ContextCorrelation(
        value_x100=float(100.0 * values.mean()),
        per_context=per_context,
        n_contexts=len(pred_rows),
        n_undefined=int(bad.sum()),
        method=method,
        undefined=undefined,
    )


def system_level_correlation(pred: ArrayLike, gold: ArrayLike, systems: ArrayLike, method: str = "spearman") -> float:
    """System-level correlation x100 (seed 000 Table 2): average each system's scores over contexts,
    then correlate the per-system means. Inputs are aligned 1-D arrays, one entry per candidate."""
    check.choice(method, CORRELATIONS, "correlation method")
    p = check.finite_vector(pred, "pred", min_size=2)
    g = check.finite_vector(gold, "gold", min_size=2)
    labels = check.label_vector(systems, "systems", "a sequence of system names", "one system name per candidate")
    check.same_length([p, g, labels], ["pred", "gold", "systems"])
    names, index = np.unique(labels, return_inverse=True)
    if names.size < 2:
        raise ValueError("system-level correlation needs at least 2 distinct systems.")
    counts = np.bincount(index)
    pred_means = np.bincount(index, weights=p) / counts
    gold_means = np.bincount(index, weights=g) / counts
    return 100.0 * correlation(pred_means, gold_means, method)


def length_score_spearman(lengths: ArrayLike, scores: ArrayLike) -> float | NDArray[np.float64]:
    """Spearman correlation between text length and score (seed 003 Fig. 5), raw in [-1, 1].

    ``scores`` is (n,) for one evaluator or (n, n_evaluators) for several (one value per column).
    """
    length = check.finite_vector(lengths, "lengths", min_size=2)
    values = np.asarray(scores, dtype=float)
    if values.ndim == 1:
        return correlation(length, check.finite_vector(values, "scores"), "spearman")
    if values.ndim != 2 or values.shape[0] != length.size:
        raise ValueError(f"scores must be (n,) or (n, n_evaluators) with n = {length.size}; got {values.shape}.")
    if not np.isfinite(values).all():
        raise ValueError(f"scores contain {int((~np.isfinite(values)).sum())} NaN or infinite value(s).")
    return np.array([correlation(length, values[:, j], "spearman") for j in range(values.shape[1])])


@dataclass(frozen=True)
class WithinStrataTest:
    """A correlation measured within strata (e.g. datasets) and its permutation p-value."""

    statistic: float
    """The strata's Spearman correlations averaged, weighted by their sizes (strata with a constant
    side or fewer than 3 points are left out)."""
    p_value: float
    """Two-sided: the share of permutations (values of ``y`` shuffled within each stratum) whose
    statistic is at least as far from 0, counting the observed one."""
    n: int
    """Points in the strata used."""
    n_strata: int
    n_permutations: int


def within_strata_correlation_test(
    x: ArrayLike, y: ArrayLike, strata: ArrayLike, n_permutations: int = 9999, seed: int = 0
) -> WithinStrataTest:
    """Does ``y`` rise with ``x`` *within* each stratum? Spearman within every stratum, averaged by
    size, tested by shuffling ``y`` within strata. Points of one stratum that differ between strata
    on both sides (a dataset where the judge is both more biased and gains more) make a pooled
    correlation look strong and its p-value small though the points are not independent; this test
    keeps that contrast in every permutation, so it measures only the association inside strata.
    NaN statistic and p-value when no stratum can be used."""
    a = check.finite_vector(x, "x", min_size=1)
    b = check.finite_vector(y, "y", min_size=1)
    labels = check.label_vector(strata, "strata", "a sequence of stratum labels", "one label per point")
    check.same_length([a, b, labels], ["x", "y", "strata"])
    if int(n_permutations) != n_permutations or n_permutations < 99:
        raise ValueError(f"n_permutations must be an integer of at least 99; got {n_permutations}")
    groups = [np.flatnonzero(labels == s) for s in dict.fromkeys(labels.tolist())]
    groups = [g for g in groups if g.size >= 3 and np.ptp(a[g]) > 0 and np.ptp(b[g]) > 0]
    if not groups:
        return WithinStrataTest(float("nan"), float("nan"), 0, 0, int(n_permutations))
    sizes = np.array([g.size for g in groups], dtype=float)
    ranked_x = [stats.rankdata(a[g]) for g in groups]

    def statistic(ys: list[np.ndarray]) -> float:
        values = [np.corrcoef(rx, stats.rankdata(v))[0, 1] for rx, v in zip(ranked_x, ys, strict=True)]
        return float(np.average(values, weights=sizes))

    observed = statistic([b[g] for g in groups])
    rng = np.random.default_rng(seed)
    extreme = sum(
        abs(statistic([rng.permutation(b[g]) for g in groups])) >= abs(observed) - 1e-12 for _ in range(int(n_permutations))
    )
    return WithinStrataTest(observed, (1 + extreme) / (1 + int(n_permutations)), int(sizes.sum()), len(groups),
                            int(n_permutations))
