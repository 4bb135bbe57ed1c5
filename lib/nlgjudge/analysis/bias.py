"""Positional bias and debiasing (seed 000 §3.5, §5.2-5.4; Tables 5, 6, 7, 9, 10) as tidy tables.

Input is the comparative study's tidy frame (:func:`nlgjudge.studies.comparative.run_comparative`:
one row per ordered comparison with its P(A)); output is one row per
(model, dataset, template, aspect[, debiased]). All numbers come from :mod:`nlgjudge.stats`:

* **P(A)** (eq. 8): the fraction of comparisons decided for position A with the plain eq. 2
  decisions (``p > 0.5``), pooled over the contexts. On the full, symmetric set every pair appears
  in both orders, so an order-blind judge scores exactly 0.5.
* **Debiasing** (eq. 9-10): one threshold tau per (model, dataset, template, aspect), fitted on
  that *whole* comparison set pooled over contexts (as the paper does), so that P(A) = 0.5 after
  it; ``alpha = (1 - tau) / tau`` is the equivalent reweighting of eq. 9.
* **Spearman** (Table 6): win ratio (eq. 6) per context against the human scores, x100, averaged
  over contexts. **Pairwise accuracy** (Tables 7, 10): over the comparisons whose two candidates
  differ in human score, pooled over contexts.

Gathering the comparisons (which may call a model) is :func:`nlgjudge.studies.collect.collect_comparisons`;
the paper-beside-ours layout is :func:`nlgjudge.analysis.side_by_side.side_by_side`; the figure is
:func:`nlgjudge.plotting.bias.bias_figure`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from nlgjudge.analysis.frames import SET_KEYS, comparison_sets, gold_scores
from nlgjudge.data import JudgeDataset
from nlgjudge.stats import (
    DebiasThreshold,
    correlation_test,
    debias_threshold,
    debiased_decisions,
    hard_decisions,
    pairwise_accuracy,
    positional_bias,
    summary_level_correlation,
    win_ratio,
)
from nlgjudge.stats.intervals import mean_interval, paired_difference_interval


def fit_threshold(matrices: Mapping[str, np.ndarray]) -> DebiasThreshold:
    """The eq. 10 threshold fitted on all comparisons of all contexts of one set (P(A) = 0.5 after)."""
    values = np.concatenate([m[~np.isnan(m)] for m in matrices.values()])
    return debias_threshold(values)


def bias_table(comparisons: pd.DataFrame) -> pd.DataFrame:
    """P(A) (eq. 8, Tables 5 and 9) with the debiasing threshold of every comparison set.

    Columns: model, dataset, template, aspect, p_a (hard decisions), mean_prob_a (the mean of the
    judge's probabilities for A, a soft view of the same bias), tau, alpha, n_contexts,
    n_comparisons, symmetric (every context's set holds both orders of every pair it compares).
    """
    rows = []
    for (model, dataset, template, aspect), matrices in comparison_sets(comparisons).items():
        decisions = [hard_decisions(m) for m in matrices.values()]
        made = np.concatenate([d[~np.isnan(d)] for d in decisions])
        symmetric = all(positional_bias(d).symmetric for d in decisions)
        fit = fit_threshold(matrices)
        probs = np.concatenate([m[~np.isnan(m)] for m in matrices.values()])
        rows.append(
            {
                "model": model,
                "dataset": dataset,
                "template": template,
                "aspect": aspect,
                "p_a": float(made.mean()),
                "mean_prob_a": float(probs.mean()),
                "tau": fit.tau,
                "alpha": fit.alpha,
                "n_contexts": len(matrices),
                "n_comparisons": int(made.size),
                "symmetric": symmetric,
            }
        )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class _Scored:
    spearman: float
    n_contexts_used: int
    n_constant_pred: int
    accuracy: float
    n_pairs: int
    per_context: np.ndarray
    """Spearman of each usable context (constant gold left out; a tied prediction counts 0), in order."""
    usable: tuple[int, ...]
    """Indices of the usable contexts (``per_context``'s order)."""


def _score(decisions: list[np.ndarray], gold: list[np.ndarray]) -> _Scored:
    # Contexts whose human scores are all equal have no correlation whatever the judge does: left
    # out. A judge that ties every candidate of a context (e.g. one that always answers A on a
    # symmetric set) is scored 0 there (chance), not dropped: dropping would flatter it.
    usable = [k for k, g in enumerate(gold) if np.ptp(g) > 0]
    if not usable:
        raise ValueError("every context has constant human scores; Spearman is undefined")
    ratios = [win_ratio(decisions[k]) for k in usable]
    corr = summary_level_correlation(ratios, [gold[k] for k in usable], "spearman", undefined="zero")
    accuracy = pairwise_accuracy(decisions, gold)
    values = np.where(np.isnan(corr.per_context), 0.0, corr.per_context)
    return _Scored(corr.value_x100, len(usable), corr.n_undefined, accuracy.percent, accuracy.n_comparisons,
                   values, tuple(usable))


#: The two ways to fit the debiasing threshold of eq. 10, by name (one definition each, used by
#: every chapter): ``pooled`` fits one tau per comparison set on the comparisons of all its contexts
#: (the paper's set-up, the bias chapter's default); ``per context`` fits one tau per context on that
#: context's own comparisons (all a user judging one context has; what the subsets chapter uses,
#: since its partial comparison sets are per context).
THRESHOLD_SCOPES = ("pooled", "per context")
#: Significance level of the closing summary's "the more biased sets gain more" (the book's 95%).
RELATION_ALPHA = 0.05


def _check_scopes(scopes: Sequence[str]) -> None:
    unknown = [scope for scope in scopes if scope not in THRESHOLD_SCOPES]
    if unknown or isinstance(scopes, str):
        raise ValueError(f"unknown threshold scope(s) {unknown or scopes!r}; choose from {THRESHOLD_SCOPES}")


def _set_gold(matrices: Mapping[str, np.ndarray], datasets: Mapping[str, JudgeDataset], dataset: str, aspect: str) -> list[np.ndarray]:
    """The human scores of a comparison set's contexts, in its order, checked against the matrices."""
    if dataset not in datasets:
        raise ValueError(f"no human scores for dataset {dataset!r}: pass its JudgeDataset in datasets")
    all_gold = gold_scores(datasets[dataset], aspect)
    missing = [c for c in matrices if c not in all_gold]
    if missing:
        raise ValueError(f"contexts {missing[:3]} of {dataset} are not in the dataset passed for the human scores")
    for context_id, matrix in matrices.items():
        if matrix.shape[0] != all_gold[context_id].size:
            raise ValueError(
                f"{dataset} context {context_id}: {matrix.shape[0]} compared candidates but "
                f"{all_gold[context_id].size} human scores; the comparisons must cover every candidate"
            )
    return [all_gold[c] for c in matrices]


def _threshold_decisions(
    matrices: Mapping[str, np.ndarray], fit: DebiasThreshold, threshold: str
) -> tuple[list[np.ndarray], float, float]:
    """The decisions of a comparison set under ``threshold`` ("none" or a :data:`THRESHOLD_SCOPES`
    name, ``fit`` being the pooled fit), with tau and alpha (for "per context": the contexts' means)."""
    if threshold == "pooled":
        return [debiased_decisions(m, fit) for m in matrices.values()], fit.tau, fit.alpha
    if threshold == "per context":
        fits = [debias_threshold(m[~np.isnan(m)]) for m in matrices.values()]
        decisions = [debiased_decisions(m, f) for m, f in zip(matrices.values(), fits, strict=True)]
        return decisions, float(np.mean([f.tau for f in fits])), float(np.mean([f.alpha for f in fits]))
    return [hard_decisions(m) for m in matrices.values()], 0.5, 1.0


def debiasing_table(
    comparisons: pd.DataFrame, datasets: Mapping[str, JudgeDataset], scopes: Sequence[str] = ("pooled",)
) -> pd.DataFrame:
    """Spearman x100 (Table 6) and pairwise accuracy % (Tables 7, 10) with and without debiasing.

    ``datasets`` maps dataset name -> the loaded :class:`JudgeDataset` (for the human scores, in the
    candidates' order). One row per comparison set and threshold: ``threshold`` is "none" (eq. 2)
    or one of ``scopes`` (:data:`THRESHOLD_SCOPES`), ``debiased`` says whether it is not "none";
    columns also give tau (for "per context", the mean of the contexts' taus), alpha, P(A) after the
    decisions used, the contexts used and the comparisons counted.
    """
    _check_scopes(scopes)
    rows = []
    for (model, dataset, template, aspect), matrices in comparison_sets(comparisons).items():
        gold = _set_gold(matrices, datasets, dataset, aspect)
        fit = fit_threshold(matrices)
        for threshold in ("none", *scopes):
            decisions, tau, alpha = _threshold_decisions(matrices, fit, threshold)
            scored = _score(decisions, gold)
            made = np.concatenate([d[~np.isnan(d)] for d in decisions])
            rows.append(
                {
                    "model": model,
                    "dataset": dataset,
                    "template": template,
                    "aspect": aspect,
                    "debiased": threshold != "none",
                    "threshold": threshold,
                    "spearman_x100": scored.spearman,
                    "accuracy_pct": scored.accuracy,
                    "p_a": float(made.mean()),
                    "tau": tau,
                    "alpha": alpha,
                    "n_contexts": scored.n_contexts_used,
                    "n_contexts_constant_gold": len(matrices) - scored.n_contexts_used,
                    "n_contexts_tied_prediction": scored.n_constant_pred,
                    "n_pairs": scored.n_pairs,
                }
            )
    return pd.DataFrame(rows)


def debiasing_gain_intervals(
    comparisons: pd.DataFrame,
    datasets: Mapping[str, JudgeDataset],
    scope: str = "pooled",
    confidence: float = 0.95,
) -> pd.DataFrame:
    """How sure is each comparison set's P(A) and its debiasing change? The contexts are the units.

    Per comparison set: P(A) as the mean of its contexts' P(A) with the t interval over contexts
    (:func:`nlgjudge.stats.intervals.mean_interval`; equal to :func:`bias_table`'s pooled P(A) when
    every context makes the same number of comparisons), and the change in Spearman x100 that
    debiasing with ``scope`` makes, as the mean over the usable contexts of (debiased - plain) with
    its paired t interval (:func:`~nlgjudge.stats.intervals.paired_difference_interval`; its mean is
    :func:`debiasing_table`'s change, since both average the same per-context correlations).
    Columns: model, dataset, template, aspect, threshold, p_a, p_a_low, p_a_high, spearman_gain,
    gain_low, gain_high, gain_excludes_zero, n_contexts, small_n.
    """
    _check_scopes([scope])
    rows = []
    for (model, dataset, template, aspect), matrices in comparison_sets(comparisons).items():
        gold = _set_gold(matrices, datasets, dataset, aspect)
        fit = fit_threshold(matrices)
        plain = _score(_threshold_decisions(matrices, fit, "none")[0], gold)
        debiased = _score(_threshold_decisions(matrices, fit, scope)[0], gold)
        per_context_p_a = [float(np.nanmean(hard_decisions(m))) for m in matrices.values()]
        p_a = mean_interval(per_context_p_a, confidence)
        gain = paired_difference_interval(100.0 * debiased.per_context, 100.0 * plain.per_context, confidence)
        rows.append({
            "model": model, "dataset": dataset, "template": template, "aspect": aspect, "threshold": scope,
            "p_a": p_a.mean, "p_a_low": p_a.low, "p_a_high": p_a.high,
            "spearman_gain": gain.mean, "gain_low": gain.low, "gain_high": gain.high,
            "gain_excludes_zero": gain.excludes_zero, "n_contexts": gain.n, "small_n": gain.small,
        })
    return pd.DataFrame(rows)


def average_over_templates(table: pd.DataFrame, values: Sequence[str], keys: Sequence[str] | None = None) -> pd.DataFrame:
    """Mean of ``values`` over the prompt templates (the paper averages its two prompts, Table 6),
    with ``n_templates`` saying how many were averaged."""
    keys = list(keys) if keys is not None else [
        k for k in [*SET_KEYS, "debiased", "threshold"] if k in table.columns and k != "template"
    ]
    grouped = table.groupby(keys, sort=False)
    out = grouped[list(values)].mean()
    out["n_templates"] = grouped["template"].nunique()
    return out.reset_index()



def debiasing_summary(scores: pd.DataFrame, bias: pd.DataFrame) -> list[str]:
    """The chapter's closing statements, computed from :func:`debiasing_table` (``scores``) and
    :func:`bias_table` (``bias``): per model, the P(A) range, how often debiasing raised or lowered
    Spearman and accuracy, and (with at least three sets that have a gain) whether the more biased
    sets gain more: claimed only when the Spearman correlation between |P(A) - 0.5| and the gain is
    significant (two-sided p < :data:`RELATION_ALPHA`,
    :func:`~nlgjudge.stats.correlation.correlation_test`); a large coefficient on a few sets is not."""
    keys = ["model", "dataset", "template", "aspect"]
    wide = scores.pivot_table(index=keys, columns="debiased", values=["spearman_x100", "accuracy_pct"])
    gain_rho = wide[("spearman_x100", True)] - wide[("spearman_x100", False)]
    gain_acc = wide[("accuracy_pct", True)] - wide[("accuracy_pct", False)]
    distance = bias.set_index(keys)["p_a"].sub(0.5).abs().reindex(gain_rho.index)
    lines = []
    for judge_name in dict.fromkeys(scores["model"]):
        g_rho, g_acc, d = gain_rho.loc[judge_name], gain_acc.loc[judge_name], distance.loc[judge_name]
        p_a = bias.loc[bias["model"] == judge_name, "p_a"]
        lines.append(f"{judge_name}: {len(g_rho)} comparison sets; P(A) between {p_a.min():.2f} and {p_a.max():.2f}")
        lines.append(
            f"  debiasing raised Spearman in {(g_rho > 0).sum()}, lowered it in {(g_rho < 0).sum()} "
            f"(mean change {g_rho.mean():+.1f}); raised accuracy in {(g_acc > 0).sum()}, lowered it in "
            f"{(g_acc < 0).sum()} (mean change {g_acc.mean():+.1f} points)"
        )
        has_gain = g_rho.notna() & d.notna()  # a set with no defined Spearman has no gain to relate
        d, g_rho = d[has_gain], g_rho[has_gain]
        if len(d) >= 3 and d.nunique() > 1 and g_rho.nunique() > 1:
            rho, p_value = correlation_test(d.to_numpy(), g_rho.to_numpy())
            reading = ("no clear relation: these sets cannot tell it from none" if not p_value < RELATION_ALPHA
                       else "the more biased sets gain more, as the paper observes" if rho > 0
                       else "the more biased sets gain less, unlike the paper")
            lines.append(
                f"  across its {len(d)} sets, Spearman between |P(A) - 0.5| and the Spearman gain: {rho:+.2f} "
                f"(p = {p_value:.3f}; {reading})"
            )
    return lines


def threshold_scope_gains(scores: pd.DataFrame) -> pd.DataFrame:
    """Per model and dataset, the mean change from debiasing (Spearman x100 and accuracy points)
    with each threshold scope of ``scores`` (a :func:`debiasing_table` run with several scopes), and
    how many comparison sets it raised: the two definitions side by side, under their names."""
    keys = ["model", "dataset", "template", "aspect"]
    plain = scores[scores["threshold"] == "none"].set_index(keys)
    rows = []
    for scope in [s for s in THRESHOLD_SCOPES if s in set(scores["threshold"])]:
        debiased = scores[scores["threshold"] == scope].set_index(keys)
        gain = (debiased[["spearman_x100", "accuracy_pct"]] - plain[["spearman_x100", "accuracy_pct"]]).dropna()
        for (model, dataset), part in gain.groupby(level=["model", "dataset"], sort=False):
            rows.append({
                "model": model, "dataset": dataset, "threshold": scope, "sets": len(part),
                "spearman_gain": float(part["spearman_x100"].mean()), "sets_raised": int((part["spearman_x100"] > 0).sum()),
                "accuracy_gain": float(part["accuracy_pct"].mean()),
            })
    return pd.DataFrame(rows)


#: Fewer contexts than this per comparison set, and a chapter's summary declines to draw conclusions.
MIN_CONTEXTS_FOR_A_CLAIM = 3


def prose_values(scores: pd.DataFrame, bias: pd.DataFrame, judge: str) -> dict[str, str]:
    """The numbers the bias chapter's prose cites for ``judge``, as display strings (for glue):
    the P(A) range, the pooled-debiasing changes and a one-sentence verdict that refuses to claim
    anything on a degenerate run (too few contexts; a judge whose plain decisions tie every
    candidate of every context, for which any "gain" is the threshold's doing)."""
    from nlgjudge.prose import number

    mine = scores[(scores["model"] == judge) & (scores["threshold"].isin(["none", "pooled"]))]
    p_a = bias.loc[bias["model"] == judge, "p_a"]
    if mine.empty or p_a.empty:
        raise ValueError(f"no comparisons of judge {judge!r} in the tables")
    keys = ["dataset", "template", "aspect"]
    plain = mine[~mine["debiased"]].set_index(keys)
    debiased = mine[mine["debiased"]].set_index(keys)
    gain_rho = (debiased["spearman_x100"] - plain["spearman_x100"]).dropna()
    gain_acc = (debiased["accuracy_pct"] - plain["accuracy_pct"]).dropna()
    n_sets, fewest = len(gain_rho), int(plain["n_contexts"].min())
    all_tied = bool((plain["n_contexts_tied_prediction"] >= plain["n_contexts"]).all())
    if fewest < MIN_CONTEXTS_FOR_A_CLAIM:
        verdict = (f"with as few as {fewest} context(s) in a comparison set, this run is too small to say whether "
                   "debiasing helps")
    elif all_tied:
        verdict = ("its plain decisions tie every candidate of every context (it answers by position), so the plain "
                   "rankings are empty and the debiased ones show only what its probabilities follow")
    else:
        verdict = (f"on the rank correlation, pooled debiasing {_direction(gain_rho)}; on pairwise accuracy, "
                   f"it {_direction(gain_acc)}")
    return {
        "judge": judge,
        "pa_min": number(float(p_a.min()), 2),
        "pa_max": number(float(p_a.max()), 2),
        "n_sets": str(n_sets),
        "fewest_contexts": str(fewest),
        "rho_gain": number(float(gain_rho.mean()), 1, signed=True),
        "rho_raised": str(int((gain_rho > 0).sum())),
        "acc_gain": number(float(gain_acc.mean()), 1, signed=True),
        "acc_raised": str(int((gain_acc > 0).sum())),
        "verdict": verdict,
    }


def _direction(gains: pd.Series) -> str:
    """How a set of changes went, in words (a majority and the mean must agree to name a direction)."""
    if (gains.abs() < 1e-9).all():
        return "left it unchanged"
    if (gains > 0).sum() > len(gains) / 2 and gains.mean() > 0:
        return "raised it in most comparison sets"
    if (gains < 0).sum() > len(gains) / 2 and gains.mean() < 0:
        return "lowered it in most comparison sets"
    return "moved it both ways, with no clear direction"
