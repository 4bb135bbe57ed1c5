"""Evaluation metrics of the three papers: correlations with human scores (summary- and system-level),
pairwise accuracy, self-consistency, Cohen's kappa, min-max normalisation, length bias, the binned
regression of seed 004 and bootstrap confidence intervals.

Units: correlations are returned in [-1, 1] except where a name or field says ``x100`` (the papers'
tables print Spearman x 100); accuracies are percentages, as in the papers' tables.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats
from sklearn.linear_model import LinearRegression
from sklearn.metrics import cohen_kappa_score

from nlgjudge.stats import _validation as check
from nlgjudge.stats.decisions import hard_decisions

CORRELATIONS = ("spearman", "kendall", "pearson")
UNDEFINED_POLICIES = ("exclude", "zero", "raise")


# --------------------------------------------------------------------------------------------------
# Correlations


def correlation(x: ArrayLike, y: ArrayLike, method: str = "spearman") -> float:
    """Spearman, Kendall (tau-b) or Pearson correlation via scipy.stats; NaN when undefined (constant input).

    The papers' correlation with human scores (seed 000 Tables 1-4; seed 003 Tables 2-3)."""
    check.choice(method, CORRELATIONS, "correlation method")
    a = check.finite_vector(x, "x", min_size=2)
    b = check.finite_vector(y, "y", min_size=2)
    check.same_length([a, b], ["x", "y"])
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.ConstantInputWarning)
        if method == "spearman":
            return float(stats.spearmanr(a, b).statistic)
        if method == "kendall":
            return float(stats.kendalltau(a, b).statistic)
        return float(stats.pearsonr(a, b).statistic)


def centred_average_ranks(values: ArrayLike) -> NDArray[np.float64]:
    """Row-wise average ranks (ties share their mean rank) minus their mean ``(N + 1) / 2``.

    Same ranks as ``scipy.stats.rankdata(values, axis=-1) - (N + 1) / 2``, computed with one argsort
    per row batch (faster for many short rows, as in the subset curves).
    """
    x = np.asarray(values, dtype=float)
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
    x, y = np.broadcast_arrays(x, y)
    if x.shape[-1] < 2:
        raise ValueError("Spearman needs at least 2 values per row.")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("spearman_rows got NaN values; rank only complete rows.")
    rx = centred_average_ranks(x)
    ry = centred_average_ranks(y)
    denominator = np.sqrt((rx * rx).sum(-1) * (ry * ry).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (rx * ry).sum(-1) / denominator
    return np.where(denominator > 0, np.clip(rho, -1.0, 1.0), np.nan)


def _context_list(values: ArrayLike | Sequence[ArrayLike], name: str) -> list[NDArray[np.float64]]:
    if isinstance(values, np.ndarray) and values.ndim == 2:
        return [row for row in values.astype(float)]
    rows = [np.asarray(v, dtype=float) for v in values]  # type: ignore[union-attr]
    if not rows:
        raise ValueError(f"{name} holds no contexts.")
    for k, row in enumerate(rows):
        if row.ndim != 1:
            raise ValueError(f"{name}[{k}] must be a 1-D array of candidate scores; got shape {row.shape}.")
    return rows


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
    pred_rows = _context_list(pred, "pred")
    gold_rows = _context_list(gold, "gold")
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
    p = check.finite_vector(pred, "pred", min_size=2)
    g = check.finite_vector(gold, "gold", min_size=2)
    labels = np.asarray(systems)
    check.same_length([p, g, labels], ["pred", "gold", "systems"])
    names, index = np.unique(labels, return_inverse=True)
    if names.size < 2:
        raise ValueError("system-level correlation needs at least 2 distinct systems.")
    counts = np.bincount(index)
    pred_means = np.bincount(index, weights=p) / counts
    gold_means = np.bincount(index, weights=g) / counts
    return 100.0 * correlation(pred_means, gold_means, method)


# --------------------------------------------------------------------------------------------------
# Pairwise accuracy and self-consistency


@dataclass(frozen=True)
class PairwiseAccuracy:
    """Accuracy of individual comparisons against gold (seed 000 Tables 7 and 10)."""

    percent: float
    n_comparisons: int
    """Made comparisons whose two candidates differ in gold score (the denominator)."""
    per_context_percent: NDArray[np.float64]
    """NaN for contexts without any such comparison."""


def pairwise_accuracy(
    decisions: ArrayLike | Sequence[ArrayLike], gold: ArrayLike | Sequence[ArrayLike]
) -> PairwiseAccuracy:
    """Comparison-level accuracy over comparisons whose candidates differ in gold score (Tables 7, 10).

    ``decisions``: one decision matrix (N, N) or a sequence / (C, N, N) stack of them (pass
    ``hard_decisions(P)`` or debiased decisions); ``gold``: the matching (N,) or (C, N) scores. A
    comparison ``(i, j)`` is right when ``y_ij = 1(gold_i > gold_j)``; fractional decisions earn
    fractional credit. All such comparisons are pooled over contexts (micro average).
    """
    decision_list = _matrix_list(decisions)
    if len(decision_list) == 1 and all(np.ndim(g) == 0 for g in gold):  # type: ignore[union-attr]
        gold_list = [np.asarray(gold, dtype=float)]  # one context given as a flat score vector
    else:
        gold_list = _context_list(gold, "gold")
    if len(decision_list) != len(gold_list):
        raise ValueError(f"{len(decision_list)} decision matrices but {len(gold_list)} gold score vectors.")
    correct_total, count_total = 0.0, 0
    per_context = np.full(len(gold_list), np.nan)
    for k, (d, g) in enumerate(zip(decision_list, gold_list, strict=True)):
        matrix = check.comparison_matrix(d, f"decisions[{k}]")
        if g.shape != (matrix.shape[0],):
            raise ValueError(f"context {k}: gold has {g.size} scores for a {matrix.shape[0]}-candidate matrix.")
        scores = check.finite_vector(g, f"gold[{k}]")
        usable = ~np.isnan(matrix) & (scores[:, None] != scores[None, :])
        first_better = scores[:, None] > scores[None, :]
        credit = np.where(first_better, matrix, 1.0 - matrix)[usable]
        if credit.size:
            per_context[k] = 100.0 * credit.mean()
        correct_total += float(credit.sum())
        count_total += int(credit.size)
    if count_total == 0:
        raise ValueError("no made comparison has candidates with different gold scores; accuracy is undefined.")
    return PairwiseAccuracy(
        percent=100.0 * correct_total / count_total, n_comparisons=count_total, per_context_percent=per_context
    )


def _matrix_list(decisions: ArrayLike | Sequence[ArrayLike]) -> list[NDArray[np.float64]]:
    if isinstance(decisions, np.ndarray):
        if decisions.ndim == 2:
            return [decisions.astype(float)]
        if decisions.ndim == 3:
            return [m for m in decisions.astype(float)]
        raise ValueError(f"decisions must be (N, N), (C, N, N) or a sequence of (N, N); got shape {decisions.shape}.")
    matrices = [np.asarray(m, dtype=float) for m in decisions]  # type: ignore[union-attr]
    if matrices and all(m.ndim == 1 for m in matrices):  # a single matrix written as nested lists
        return [np.asarray(decisions, dtype=float)]
    return matrices


def _batched_win_ratio(decisions: NDArray[np.float64]) -> NDArray[np.float64]:
    # decisions (..., n, n) with NaN diagonal and no other NaN.
    filled = np.nan_to_num(decisions, nan=0.0)
    n = decisions.shape[-1]
    off = ~np.eye(n, dtype=bool)
    wins = filled.sum(-1) + ((1.0 - filled) * off).sum(-2)
    return wins / (2 * n - 2)


def _pair_agreement(pred: NDArray[np.float64], reference: NDArray[np.float64]) -> tuple[float, int]:
    # Over unordered pairs whose reference differs: 1 if pred orders them the same way, 0.5 if pred ties.
    ref_diff = reference[..., :, None] - reference[..., None, :]
    pred_diff = pred[..., :, None] - pred[..., None, :]
    n = pred.shape[-1]
    upper = np.triu(np.ones((n, n), dtype=bool), k=1)
    usable = (ref_diff != 0) & upper
    credit = np.where(pred_diff == 0, 0.5, (np.sign(pred_diff) == np.sign(ref_diff)).astype(float))
    return float(credit[usable].sum()), int(usable.sum())


@dataclass(frozen=True)
class SelfConsistency:
    """Seed 000 Table 8: ranking accuracy on random subsets of n candidates."""

    subset_sizes: NDArray[np.int_]
    final_percent: NDArray[np.float64]
    """Pairwise agreement with the ranking from all N candidates (pairs the full ranking does not tie)."""
    gold_percent: NDArray[np.float64]
    """Pairwise agreement with gold (pairs whose gold scores differ)."""
    n_draws: int


def self_consistency(
    decisions: ArrayLike,
    gold: ArrayLike,
    subset_sizes: Sequence[int] = (2, 3, 4, 6, 8, 12, 16),
    n_draws: int = 20,
    seed: int | np.random.Generator | None = 0,
) -> SelfConsistency:
    """Self-consistency of seed 000 §5.5 / Table 8.

    For each size n: draw n of the N candidates of a context (``n_draws`` times per context), rank
    them by win ratio over all n(n-1) comparisons among them, and score every pair of the n candidates:
    1 if the subset ranking orders it as the reference does, 0.5 if the subset ranking ties it, 0
    otherwise. References: the win-ratio ranking of all N candidates ("Final"; pairs it ties are
    skipped) and the gold scores ("Gold"; pairs with equal gold skipped). Pooled over pairs, draws and
    contexts. ``decisions``: (C, N, N) full decision matrices (e.g. ``hard_decisions`` of each context);
    ``gold``: (C, N).
    """
    stack = np.asarray(decisions, dtype=float)
    if stack.ndim == 2:
        stack = stack[None]
    stack = np.stack([check.comparison_matrix(m, "decisions", require_full=True) for m in stack])
    scores = np.asarray(gold, dtype=float)
    if scores.ndim == 1:
        scores = scores[None]
    n_contexts, n = stack.shape[0], stack.shape[1]
    if scores.shape != (n_contexts, n):
        raise ValueError(f"gold must have shape {(n_contexts, n)} to match decisions; got {scores.shape}.")
    if not np.isfinite(scores).all():
        raise ValueError("gold contains NaN or infinite scores.")
    sizes = np.asarray(subset_sizes, dtype=int)
    if sizes.ndim != 1 or sizes.size == 0 or sizes.min() < 2 or sizes.max() > n:
        raise ValueError(f"subset_sizes must lie in 2..{n} (the number of candidates); got {sizes.tolist()}.")
    if n_draws < 1:
        raise ValueError(f"n_draws must be at least 1; got {n_draws}.")
    rng = check.rng_from(seed)
    final_scores = _batched_win_ratio(stack)
    final_pct = np.empty(sizes.size)
    gold_pct = np.empty(sizes.size)
    contexts = np.arange(n_contexts)[None, :, None, None]
    for k, size in enumerate(sizes):
        picks = np.argsort(rng.random((n_draws, n_contexts, n)), axis=-1)[..., :size]
        sub = stack[contexts, picks[..., :, None], picks[..., None, :]]
        sub_scores = _batched_win_ratio(sub)
        ctx = np.arange(n_contexts)[None, :, None]
        agree_final, count_final = _pair_agreement(sub_scores, final_scores[ctx, picks])
        agree_gold, count_gold = _pair_agreement(sub_scores, scores[ctx, picks])
        final_pct[k] = 100.0 * agree_final / count_final if count_final else np.nan
        gold_pct[k] = 100.0 * agree_gold / count_gold if count_gold else np.nan
    return SelfConsistency(subset_sizes=sizes, final_percent=final_pct, gold_percent=gold_pct, n_draws=n_draws)


def self_consistency_from_probs(probs: ArrayLike, gold: ArrayLike, **kwargs: object) -> SelfConsistency:
    """:func:`self_consistency` on the eq. 2 hard decisions of (C, N, N) probability matrices."""
    stack = np.asarray(probs, dtype=float)
    if stack.ndim == 2:
        stack = stack[None]
    return self_consistency(np.stack([hard_decisions(m) for m in stack]), gold, **kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------------
# Agreement, normalisation, length bias, binned regression


def cohen_kappa(labels_a: ArrayLike, labels_b: ArrayLike) -> float:
    """Cohen's kappa between two judges' outcomes on the same items (scikit-learn), seed 004 §4.5.

    Seed 004 uses two labels (0 = first model chosen, 1 = second). Raises when kappa is undefined
    (both judges use one and the same label throughout, so chance agreement is 1).
    """
    a = np.asarray(labels_a)
    b = np.asarray(labels_b)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError("labels must be 1-D arrays, one outcome per item.")
    check.same_length([a, b], ["labels_a", "labels_b"])
    if a.size == 0:
        raise ValueError("no labels given.")
    for name, arr in (("labels_a", a), ("labels_b", b)):
        if arr.dtype.kind == "f" and np.isnan(arr).any():
            raise ValueError(f"{name} contains NaN; drop unparsed outcomes explicitly before computing kappa.")
    if np.unique(np.concatenate([a, b])).size < 2:
        raise ValueError("kappa is undefined: both judges give one and the same label to every item.")
    return float(cohen_kappa_score(a, b))


def min_max_normalise(scores: ArrayLike, alpha: float = 1.0, axis: int = 0) -> NDArray[np.float64]:
    """Min-max normalisation of seed 003 eq. 4: ``alpha (X_ij - min_i X_ij) / (max_i X_ij - min_i X_ij)``.

    With ``X[i, j]`` the score evaluator ``j`` gives generator ``i``, normalisation runs over generators
    (``axis=0``) separately for every evaluator. A constant evaluator cannot be normalised (raises).
    """
    values = np.asarray(scores, dtype=float)
    if values.ndim < 1 or values.shape[axis] < 2:
        raise ValueError(f"need at least 2 values along axis {axis}; got shape {values.shape}.")
    if not np.isfinite(values).all():
        raise ValueError("scores contain NaN or infinite values.")
    low = values.min(axis=axis, keepdims=True)
    span = values.max(axis=axis, keepdims=True) - low
    if (span == 0).any():
        raise ValueError("an evaluator gives the same score to every generator; min-max normalisation divides by zero.")
    return alpha * (values - low) / span


def length_score_spearman(lengths: ArrayLike, scores: ArrayLike) -> float | NDArray[np.float64]:
    """Spearman correlation between text length and score (seed 003 Fig. 5), raw in [-1, 1].

    ``scores`` is (n,) for one evaluator or (n, n_evaluators) for several (one value per column).
    """
    length = check.finite_vector(lengths, "lengths", min_size=2)
    values = np.asarray(scores, dtype=float)
    if values.ndim == 1:
        return correlation(length, values, "spearman")
    if values.ndim != 2 or values.shape[0] != length.size:
        raise ValueError(f"scores must be (n,) or (n, n_evaluators) with n = {length.size}; got {values.shape}.")
    return np.array([correlation(length, values[:, j], "spearman") for j in range(values.shape[1])])


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
    if n_bins < 2:
        raise ValueError(f"n_bins must be at least 2; got {n_bins}.")
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


# --------------------------------------------------------------------------------------------------
# Bootstrap confidence intervals


@dataclass(frozen=True)
class ConfidenceInterval:
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

    Beyond the papers, which report point estimates only.

    If any resample makes the correlation undefined (all values equal after resampling, likely only
    for tiny samples) the interval is undefined and this raises instead of guessing.
    """
    check.choice(method, CORRELATIONS, "correlation method")
    a = check.finite_vector(x, "x", min_size=3)
    b = check.finite_vector(y, "y", min_size=3)
    check.same_length([a, b], ["x", "y"])
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


def bootstrap_mean_ci(
    values: ArrayLike, n_boot: int = 2000, confidence: float = 0.95, seed: int | np.random.Generator | None = 0
) -> ConfidenceInterval:
    """Percentile bootstrap interval for a mean, e.g. of per-context correlations (resampling contexts)."""
    data = check.finite_vector(values, "values", min_size=2)
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
) -> ConfidenceInterval:
    if n_boot < 10:
        raise ValueError(f"n_boot must be at least 10; got {n_boot}.")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1); got {confidence}.")
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
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    if np.isnan(low) or np.isnan(high):
        raise ValueError("the bootstrap interval is undefined (too many degenerate resamples); use more data.")
    return ConfidenceInterval(estimate=estimate, low=low, high=high, confidence=confidence, n_boot=n_boot)
