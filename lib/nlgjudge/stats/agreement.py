"""Agreement of individual decisions: with gold (pairwise accuracy), with the judge itself on subsets
(self-consistency) and between two judges (Cohen's kappa).

* :func:`pairwise_accuracy`: seed 000 Tables 7 and 10, comparisons scored against gold;
* :func:`self_consistency`: seed 000 §5.5 / Table 8, rankings of random candidate subsets;
* :func:`cohen_kappa`: seed 004 §4.5, two judges' outcomes on the same encounters.

Accuracies are percentages, as in the papers' tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.metrics import cohen_kappa_score

from nlgjudge.stats import _validation as check
from nlgjudge.stats.decisions import hard_decisions

# --------------------------------------------------------------------------------------------------
# Pairwise accuracy


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
    check.not_text(gold, "gold", "an (N,) or (C, N) array of gold scores")
    decision_list = _matrix_list(decisions)
    if _is_scalar(gold):
        raise ValueError("gold must be an (N,) score vector or a (C, N) array / sequence of them; got a scalar.")
    if len(decision_list) == 1 and all(np.ndim(g) == 0 for g in gold):  # type: ignore[union-attr]
        gold_list = [np.asarray(gold, dtype=float)]  # one context given as a flat score vector
    else:
        gold_list = check.context_list(gold, "gold")
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


def _is_scalar(value: object) -> bool:
    # np.ndim would choke on ragged nested lists, which are valid here (contexts may differ in N).
    return (isinstance(value, np.ndarray) and value.ndim == 0) or not hasattr(value, "__iter__")


def _matrix_list(decisions: ArrayLike | Sequence[ArrayLike]) -> list[NDArray[np.float64]]:
    check.not_text(decisions, "decisions", "an (N, N) decision matrix or a sequence of them")
    if isinstance(decisions, np.ndarray):
        if decisions.ndim == 2:
            return [decisions.astype(float)]
        if decisions.ndim == 3:
            return [m for m in decisions.astype(float)]
        raise ValueError(f"decisions must be (N, N), (C, N, N) or a sequence of (N, N); got shape {decisions.shape}.")
    if _is_scalar(decisions):
        raise ValueError("decisions must be (N, N), (C, N, N) or a sequence of (N, N) matrices; got a scalar.")
    matrices = [np.asarray(m, dtype=float) for m in decisions]  # type: ignore[union-attr]
    if matrices and all(m.ndim == 1 for m in matrices):  # a single matrix written as nested lists
        return [np.asarray(decisions, dtype=float)]
    return matrices


# --------------------------------------------------------------------------------------------------
# Self-consistency


def _batched_win_ratio(decisions: NDArray[np.float64]) -> NDArray[np.float64]:
    # decisions (..., n, n) with NaN diagonal and no other NaN.
    filled = np.nan_to_num(decisions, nan=0.0)
    n = decisions.shape[-1]
    off = ~np.eye(n, dtype=bool)
    wins = filled.sum(-1) + ((1.0 - filled) * off).sum(-2)
    return wins / (2 * n - 2)


def _pair_agreement(
    pred: NDArray[np.float64], reference: NDArray[np.float64], tie_break: NDArray[np.float64] | None = None
) -> tuple[float, int, int]:
    # Over unordered pairs whose reference differs: 1 if pred orders them the same way, 0.5 if pred ties
    # (after tie_break, a second score that orders the pairs pred ties). Also counts the pairs pred ties.
    ref_diff = reference[..., :, None] - reference[..., None, :]
    pred_diff = pred[..., :, None] - pred[..., None, :]
    n = pred.shape[-1]
    upper = np.triu(np.ones((n, n), dtype=bool), k=1)
    usable = (ref_diff != 0) & upper
    tied = pred_diff == 0
    if tie_break is not None:
        pred_diff = np.where(tied, tie_break[..., :, None] - tie_break[..., None, :], pred_diff)
    credit = np.where(pred_diff == 0, 0.5, (np.sign(pred_diff) == np.sign(ref_diff)).astype(float))
    return float(credit[usable].sum()), int(usable.sum()), int((tied & usable).sum())


@dataclass(frozen=True)
class SelfConsistency:
    """Seed 000 Table 8: ranking accuracy on random subsets of n candidates."""

    subset_sizes: NDArray[np.int_]
    final_percent: NDArray[np.float64]
    """Pairwise agreement with the ranking from all N candidates (pairs the full ranking does not tie)."""
    gold_percent: NDArray[np.float64]
    """Pairwise agreement with gold (pairs whose gold scores differ)."""
    n_draws: int
    final_tied_percent: NDArray[np.float64]
    """Share (%) of the pairs scored against "Final" that the subset's win ratio ties (before any
    tie-break): each counts 1/2. At n = 2 it is the share of two-candidate subsets that tie, which a
    judge answering by position (the same letter in both orders) makes high."""


def self_consistency(
    decisions: ArrayLike,
    gold: ArrayLike,
    subset_sizes: Sequence[int] = (2, 3, 4, 6, 8, 12, 16),
    n_draws: int = 20,
    seed: int | np.random.Generator | None = 0,
    tie_break: ArrayLike | None = None,
) -> SelfConsistency:
    """Self-consistency of seed 000 §5.5 / Table 8.

    For each size n: draw n of the N candidates of a context (``n_draws`` times per context), rank
    them by win ratio over all n(n-1) comparisons among them, and score every pair of the n candidates:
    1 if the subset ranking orders it as the reference does, 0.5 if the subset ranking ties it, 0
    otherwise. References: the win-ratio ranking of all N candidates ("Final"; pairs it ties are
    skipped) and the gold scores ("Gold"; pairs with equal gold skipped). Pooled over pairs, draws and
    contexts. ``decisions``: (C, N, N) full decision matrices (e.g. ``hard_decisions`` of each context);
    ``gold``: (C, N).

    ``tie_break``: optional (C, N, N) probabilities; a pair the subset's win ratio ties is then
    ordered by the win ratio of the probabilities over the same comparisons (the summed
    probabilities), and counts 1/2 only if that ties too. The paper does not say how it scored the
    ties; a two-candidate subset ties whenever the judge gives the same letter in both orders.
    """
    stack = np.asarray(decisions, dtype=float)
    if stack.ndim == 2:
        stack = stack[None]
    if stack.ndim != 3:
        raise ValueError(f"decisions must be (C, N, N) (or (N, N) for one context); got shape {stack.shape}.")
    stack = np.stack([check.comparison_matrix(m, "decisions", require_full=True) for m in stack])
    scores = np.asarray(gold, dtype=float)
    if scores.ndim == 1:
        scores = scores[None]
    n_contexts, n = stack.shape[0], stack.shape[1]
    if scores.shape != (n_contexts, n):
        raise ValueError(f"gold must have shape {(n_contexts, n)} to match decisions; got {scores.shape}.")
    if not np.isfinite(scores).all():
        raise ValueError("gold contains NaN or infinite scores.")
    check.not_text(subset_sizes, "subset_sizes", "a sequence of subset sizes")
    raw_sizes = np.asarray(subset_sizes)
    whole = raw_sizes.dtype.kind in "iu" or (raw_sizes.dtype.kind == "f" and np.all(raw_sizes == np.round(raw_sizes)))
    if raw_sizes.ndim != 1 or raw_sizes.size == 0 or not whole:
        raise ValueError(f"subset_sizes must be a non-empty list of whole numbers; got {raw_sizes.tolist()!r}.")
    sizes = raw_sizes.astype(int)
    if sizes.min() < 2 or sizes.max() > n:
        raise ValueError(f"subset_sizes must lie in 2..{n} (the number of candidates); got {sizes.tolist()}.")
    n_draws = check.integer(n_draws, "n_draws", minimum=1)
    soft = None
    if tie_break is not None:
        soft = np.asarray(tie_break, dtype=float)
        if soft.ndim == 2:
            soft = soft[None]
        if soft.shape != stack.shape:
            raise ValueError(f"tie_break must have the decisions' shape {stack.shape}; got {soft.shape}.")
        soft = np.stack([check.comparison_matrix(m, "tie_break", require_full=True) for m in soft])
    rng = check.rng_from(seed)
    final_scores = _batched_win_ratio(stack)
    final_pct = np.empty(sizes.size)
    gold_pct = np.empty(sizes.size)
    tied_pct = np.empty(sizes.size)
    contexts = np.arange(n_contexts)[None, :, None, None]
    for k, size in enumerate(sizes):
        picks = np.argsort(rng.random((n_draws, n_contexts, n)), axis=-1)[..., :size]
        sub = stack[contexts, picks[..., :, None], picks[..., None, :]]
        sub_scores = _batched_win_ratio(sub)
        sub_soft = None if soft is None else _batched_win_ratio(soft[contexts, picks[..., :, None], picks[..., None, :]])
        ctx = np.arange(n_contexts)[None, :, None]
        agree_final, count_final, tied_final = _pair_agreement(sub_scores, final_scores[ctx, picks], sub_soft)
        agree_gold, count_gold, _ = _pair_agreement(sub_scores, scores[ctx, picks], sub_soft)
        final_pct[k] = 100.0 * agree_final / count_final if count_final else np.nan
        gold_pct[k] = 100.0 * agree_gold / count_gold if count_gold else np.nan
        tied_pct[k] = 100.0 * tied_final / count_final if count_final else np.nan
    return SelfConsistency(subset_sizes=sizes, final_percent=final_pct, gold_percent=gold_pct, n_draws=n_draws,
                           final_tied_percent=tied_pct)


def self_consistency_from_probs(probs: ArrayLike, gold: ArrayLike, **kwargs: object) -> SelfConsistency:
    """:func:`self_consistency` on the eq. 2 hard decisions of (C, N, N) probability matrices."""
    stack = np.asarray(probs, dtype=float)
    if stack.ndim == 2:
        stack = stack[None]
    if stack.ndim != 3:
        raise ValueError(f"probs must be (C, N, N) (or (N, N) for one context); got shape {stack.shape}.")
    return self_consistency(np.stack([hard_decisions(m) for m in stack]), gold, **kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------------
# Agreement between two judges


def cohen_kappa(labels_a: ArrayLike, labels_b: ArrayLike) -> float:
    """Cohen's kappa between two judges' outcomes on the same items (scikit-learn), seed 004 §4.5.

    Seed 004 uses two labels (0 = first model chosen, 1 = second). Raises when kappa is undefined
    (both judges use one and the same label throughout, so chance agreement is 1).
    """
    check.not_text(labels_a, "labels_a", "a sequence of labels, one outcome per item")
    check.not_text(labels_b, "labels_b", "a sequence of labels, one outcome per item")
    a = np.asarray(labels_a)
    b = np.asarray(labels_b)
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError(f"labels must be 1-D arrays, one outcome per item; got shapes {a.shape} and {b.shape}.")
    check.same_length([a, b], ["labels_a", "labels_b"])
    if a.size == 0:
        raise ValueError("no labels given.")
    for name, arr in (("labels_a", a), ("labels_b", b)):
        if arr.dtype.kind == "f" and np.isnan(arr).any():
            raise ValueError(f"{name} contains NaN; drop unparsed outcomes explicitly before computing kappa.")
        if arr.dtype.kind == "O" and any(v is None or (isinstance(v, float) and np.isnan(v)) for v in arr):
            raise ValueError(f"{name} contains None or NaN; drop unparsed outcomes explicitly before computing kappa.")
    try:
        distinct = np.unique(np.concatenate([a, b])).size
    except TypeError:
        raise TypeError(
            "labels_a and labels_b mix label types that cannot be compared (e.g. 0 and 'A'); use one type."
        ) from None
    if distinct < 2:
        raise ValueError("kappa is undefined: both judges give one and the same label to every item.")
    return float(cohen_kappa_score(a, b))


def kappa_from_tables(tables: ArrayLike) -> NDArray[np.float64]:
    """Cohen's kappa of each 2x2 table of counts (the last two axes: judge 1's label, judge 2's);
    NaN where chance agreement is 1 (both judges give one and the same label throughout)."""
    t = np.asarray(tables, dtype=float)
    total = t.sum(axis=(-2, -1))
    observed = np.trace(t, axis1=-2, axis2=-1) / total
    chance = np.einsum("...i,...i->...", t.sum(axis=-1), t.sum(axis=-2)) / total**2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(chance >= 1.0, np.nan, (observed - chance) / (1.0 - chance))


def unit_tables(units: ArrayLike, labels_a: ArrayLike, labels_b: ArrayLike, n_units: int) -> NDArray[np.float64]:
    """Each unit's 2x2 table of (labels_a, labels_b) counts, shape (n_units, 2, 2): ``units`` holds each
    pair's unit index (0 to n_units - 1) and the labels are 0 or 1, the input of :func:`resampled_kappas`."""
    index, a, b = (np.asarray(x, dtype=int) for x in (units, labels_a, labels_b))
    if not (index.shape == a.shape == b.shape) or index.ndim != 1:
        raise ValueError("units, labels_a and labels_b must be 1-D arrays of one length")
    tables = np.zeros((int(n_units), 2, 2))
    np.add.at(tables, (index, a, b), 1.0)
    return tables


def resampled_kappas(article_tables: ArrayLike, n_boot: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """Kappa on ``n_boot`` resamples of the units (articles drawn with replacement), each unit's 2x2
    table of counts given (shape (units, 2, 2)): a resample's table is the sum of its units' tables."""
    tables = np.asarray(article_tables, dtype=float)
    if tables.ndim != 3 or tables.shape[1:] != (2, 2) or len(tables) < 1:
        raise ValueError(f"article_tables must have shape (units, 2, 2); got {tables.shape}")
    units = len(tables)
    counts = rng.multinomial(units, np.full(units, 1.0 / units), size=int(n_boot))
    return kappa_from_tables(np.tensordot(counts, tables, axes=1))


def resampled_kappa_differences(tables_1: ArrayLike, tables_2: ArrayLike, n_boot: int,
                                rng: np.random.Generator) -> NDArray[np.float64]:
    """Kappa of ``tables_1`` minus kappa of ``tables_2`` on ``n_boot`` resamples of the units, the same
    units drawn for both (a paired bootstrap: two protocols judged on the same articles). Each argument
    has shape (units, 2, 2), its units aligned with the other's (a unit with no encounter in one is a
    table of zeros there)."""
    one, two = np.asarray(tables_1, dtype=float), np.asarray(tables_2, dtype=float)
    if one.shape != two.shape or one.ndim != 3 or one.shape[1:] != (2, 2) or len(one) < 1:
        raise ValueError(f"tables_1 and tables_2 must share one shape (units, 2, 2); got {one.shape} and {two.shape}")
    units = len(one)
    counts = rng.multinomial(units, np.full(units, 1.0 / units), size=int(n_boot))
    return kappa_from_tables(np.tensordot(counts, one, axes=1)) - kappa_from_tables(np.tensordot(counts, two, axes=1))
