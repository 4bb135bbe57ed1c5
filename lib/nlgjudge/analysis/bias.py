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

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from nlgjudge.analysis.judges import degenerate_judges
from nlgjudge.stats.multiplicity import count_words, holm_rejections, paired_t_p_value, share_p_value
from nlgjudge.analysis.frames import SET_KEYS, comparison_sets, gold_scores
from nlgjudge.data import JudgeDataset
from nlgjudge.stats import (
    CONTRADICTED,
    NOT_RESOLVED,
    NOT_TESTED,
    SUPPORTED,
    VERDICTS,
    DebiasThreshold,
    correlation_test,
    verdict_from_test,
    debias_threshold,
    debiased_decisions,
    hard_decisions,
    pairwise_accuracy,
    positional_bias,
    summary_level_correlation,
    win_ratio,
)
from nlgjudge.register import claim as registered_claim, lead_note
from nlgjudge.register import ALREADY_ENOUGH, already_enough, contexts_needed_for, needed_cell
from nlgjudge.register import verdict as registered_verdict
from nlgjudge.stats.correlation import within_strata_correlation_test
from nlgjudge.stats.intervals import mean_interval, paired_difference_interval, share_interval


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


def _plain_and_debiased(
    comparisons: pd.DataFrame, datasets: Mapping[str, JudgeDataset], scope: str
) -> Iterator[tuple[tuple[str, str, int, str], Mapping[str, np.ndarray], _Scored, _Scored]]:
    """Every comparison set's key and matrices, scored plain (eq. 2) and debiased with ``scope``."""
    _check_scopes([scope])
    for key, matrices in comparison_sets(comparisons).items():
        gold = _set_gold(matrices, datasets, key[1], key[3])
        fit = fit_threshold(matrices)
        plain = _score(_threshold_decisions(matrices, fit, "none")[0], gold)
        yield key, matrices, plain, _score(_threshold_decisions(matrices, fit, scope)[0], gold)


def debiasing_gain_intervals(
    comparisons: pd.DataFrame,
    datasets: Mapping[str, JudgeDataset],
    scope: str = "pooled",
    confidence: float = 0.95,
) -> pd.DataFrame:
    """How sure is each comparison set's P(A) and its debiasing change? The contexts are the units.

    Per comparison set: P(A) as the mean of its contexts' P(A) with the share's interval over contexts
    (:func:`nlgjudge.stats.intervals.share_interval`: the t interval, bounded and exact at an end; equal to :func:`bias_table`'s pooled P(A) when
    every context makes the same number of comparisons), and the change in Spearman x100 that
    debiasing with ``scope`` makes, as the mean over the usable contexts of (debiased - plain) with
    its paired t interval (:func:`~nlgjudge.stats.intervals.paired_difference_interval`; its mean is
    :func:`debiasing_table`'s change, since both average the same per-context correlations).
    Columns: model, dataset, template, aspect, threshold, p_a, p_a_low, p_a_high, spearman_gain,
    gain_low, gain_high, gain_excludes_zero, n_contexts, small_n.
    """
    rows = []
    for (model, dataset, template, aspect), matrices, plain, debiased in _plain_and_debiased(comparisons, datasets, scope):
        per_context_p_a = [float(np.nanmean(hard_decisions(m))) for m in matrices.values()]
        p_a = share_interval(per_context_p_a, confidence)  # a share: never zero-width at an end (glossary: interval)
        gain = paired_difference_interval(100.0 * debiased.per_context, 100.0 * plain.per_context, confidence)
        rows.append({
            "model": model, "dataset": dataset, "template": template, "aspect": aspect, "threshold": scope,
            "p_a": p_a.mean, "p_a_low": p_a.low, "p_a_high": p_a.high,
            "spearman_gain": gain.mean, "gain_low": gain.low, "gain_high": gain.high,
            "gain_excludes_zero": gain.excludes_zero, "n_contexts": gain.n, "small_n": gain.small,
            # the tests behind the two intervals, for counts over a family of sets (Holm)
            "p_a_p_value": share_p_value(per_context_p_a, 0.5),
            "gain_p_value": paired_t_p_value(100.0 * (debiased.per_context - plain.per_context)),
        })
    return pd.DataFrame(rows)


def interval_counts(gain_intervals: pd.DataFrame, judge: str) -> dict[str, str]:
    """The bias chapter's counts over one judge's comparison sets, each a family: sets whose P(A)
    interval excludes 0.5, and whose debiasing change lies above or below 0, counted after Holm's
    correction over the judge's sets (the uncorrected count beside it where they differ)."""
    mine = gain_intervals[gain_intervals["model"] == judge]
    far_raw = (mine["p_a_low"] > 0.5) | (mine["p_a_high"] < 0.5)
    far = far_raw & holm_rejections(mine["p_a_p_value"].to_numpy(dtype=float))
    gain_kept = mine["gain_excludes_zero"].astype(bool) & holm_rejections(mine["gain_p_value"].to_numpy(dtype=float))
    above_raw, below_raw = mine["gain_excludes_zero"] & (mine["spearman_gain"] > 0), mine["gain_excludes_zero"] & (mine["spearman_gain"] < 0)
    return {
        "sets": str(len(mine)),
        "p_a_far": count_words(int(far.sum()), int(far_raw.sum())),
        "toward_a": str(int((far & (mine["p_a_low"] > 0.5)).sum())), "toward_b": str(int((far & (mine["p_a_high"] < 0.5)).sum())),
        "above": count_words(int((gain_kept & (mine["spearman_gain"] > 0)).sum()), int(above_raw.sum())),
        "below": count_words(int((gain_kept & (mine["spearman_gain"] < 0)).sum()), int(below_raw.sum())),
        "fewest": str(int(mine["n_contexts"].min())) if len(mine) else "0",
        "most": str(int(mine["n_contexts"].max())) if len(mine) else "0",
    }


def per_context_gains(
    comparisons: pd.DataFrame, datasets: Mapping[str, JudgeDataset], scope: str = "pooled"
) -> pd.DataFrame:
    """The change in Spearman x100 that debiasing with ``scope`` makes in every usable context of
    every comparison set (debiased minus plain; contexts with constant human scores have none):
    model, dataset, template, aspect, context_id, gain."""
    rows = []
    for (model, dataset, template, aspect), matrices, plain, debiased in _plain_and_debiased(comparisons, datasets, scope):
        ids = list(matrices)
        for k, before, after in zip(plain.usable, plain.per_context, debiased.per_context, strict=True):
            rows.append({"model": model, "dataset": dataset, "template": template, "aspect": aspect,
                         "context_id": ids[k], "gain": 100.0 * (after - before)})
    return pd.DataFrame(rows, columns=["model", "dataset", "template", "aspect", "context_id", "gain"])


#: The claim of Table 6 the chapter tests, per model and dataset.
DEBIASING_CLAIM = "debiasing raises the Spearman"
#: Its entry in the claims register (threshold, minimum contexts, minimal effect, family).
GAIN_CLAIM_ID = "bias.debiasing_gain"
#: "The more biased sets gain more" in the claims register.
RELATION_CLAIM_ID = "bias.gain_relation"


def judge_gates(comparisons: pd.DataFrame) -> dict[tuple[str, str], str | None]:
    """The book's judge screen (:mod:`nlgjudge.stats.degenerate`) per (model, dataset)."""
    return degenerate_judges({key: part for key, part in comparisons.groupby(["model", "dataset"], sort=False)})


def context_gains(gains: pd.DataFrame) -> dict[tuple[str, str], np.ndarray]:
    """The chapter's one definition of a model's Spearman change on a dataset: per (model, dataset),
    each context's change (:func:`per_context_gains`) averaged over the dataset's prompts and
    aspects, one value per context; its mean over contexts is *the* Spearman change, wherever the
    chapter prints one."""
    return {key: part.groupby("context_id", sort=False)["gain"].mean().to_numpy()
            for key, part in gains.groupby(["model", "dataset"], sort=False)}


def debiasing_claims(gains: pd.DataFrame, confidence: float = 0.95,
                     judges: Mapping[tuple[str, str], str | None] | None = None) -> pd.DataFrame:
    """Seed 000 Table 6's claim, "debiasing raises the rank correlation", per model and dataset, by
    the claim rule. The unit is the context: each context's gain is averaged over the dataset's
    prompts and aspects (its comparison sets share that context, so they are not independent
    observations), then the t interval of the mean over contexts gives the verdict
    (:func:`nlgjudge.register.verdict` on ``bias.debiasing_gain``: threshold 0, its minimum of
    contexts). ``gains`` is :func:`per_context_gains`. Columns: model, dataset, gain, gain_low,
    gain_high, n_contexts, verdict, reason, contexts_needed (rows not resolved: the contexts that
    would detect the registered minimal effect at the per-context spread; NaN otherwise or out of reach), p_value (the interval's t test; NaN when not tested), holm and family_verdict (each
    model's datasets one family, after Holm's correction: :func:`comparative.with_family_verdicts`). ``judges``: :func:`judge_gates` of the
    comparisons; a degenerate judge's rows are not tested (the book's one test, as in every chapter)."""
    rows = []
    for (model, dataset), per_context in context_gains(gains).items():
        interval = mean_interval(per_context, confidence)
        tied = bool(np.all(np.abs(per_context) < 1e-12))
        gate = (judges or {}).get((model, dataset)) or ("debiasing changes no ranking" if tied else None)
        verdict = registered_verdict(GAIN_CLAIM_ID, interval.mean, interval.low, interval.high, interval.n,
                                     degenerate=gate)
        # at the registered minimal effect of interest, with the per-context spread (never the observed effect)
        needed = (contexts_needed_for(GAIN_CLAIM_ID, float(np.std(per_context, ddof=1)))
                  if verdict.verdict == NOT_RESOLVED and len(per_context) >= 2 else None)
        rows.append({"model": model, "dataset": dataset, "gain": interval.mean, "gain_low": interval.low,
                     "gain_high": interval.high, "n_contexts": interval.n, "verdict": verdict.verdict,
                     "reason": verdict.reason, "contexts_needed": float(needed) if needed is not None else np.nan,
                     "p_value": paired_t_p_value(per_context) if verdict.tested else np.nan})
    from nlgjudge.analysis.comparative import with_family_verdicts

    # a model's datasets are one family (the book's one rule), read as the comparative chapter reads its rows
    return with_family_verdicts(pd.DataFrame(rows, columns=["model", "dataset", "gain", "gain_low", "gain_high",
                                                            "n_contexts", "verdict", "reason", "contexts_needed", "p_value"]))


def claims_table(claims: pd.DataFrame, decimals: int = 1) -> pd.DataFrame:
    """:func:`debiasing_claims` for the page: the gain with its 95% interval, n, the verdict (with its
    reason when not tested), and the contexts a not-resolved row would need ("–" otherwise, "out of reach" past
    100,000)."""
    from nlgjudge.prose import interval_text, verdict_after_holm

    family = claims["family_verdict"] if "family_verdict" in claims else claims["verdict"]
    return pd.DataFrame(
        {
            "verdict": [verdict_after_holm(v, f, r, "the model's datasets") + lead_note(GAIN_CLAIM_ID, d)
                        for v, f, r, d in zip(claims["verdict"], family, claims["reason"],
                                              claims.get("dataset", pd.Series("", index=claims.index)), strict=True)],
            # a row that is not tested still shows what was measured, labelled as not read
            "Spearman change [95%]": [interval_text(g, lo, hi, decimals) + (" (not read)" if f == NOT_TESTED and g == g else "")
                                      for g, lo, hi, f in zip(claims["gain"], claims["gain_low"], claims["gain_high"], family,
                                                              strict=True)],
            "n": claims["n_contexts"].to_numpy(),
            "contexts needed": [needed_cell(n, k) if v == NOT_RESOLVED else "–"
                                for v, n, k in zip(claims["verdict"], claims["contexts_needed"], claims["n_contexts"], strict=True)],
        },
        index=pd.MultiIndex.from_frame(claims[["model", "dataset"]]),
    )


def table6_average(per_model: pd.DataFrame, reported: pd.DataFrame, value: str = "spearman_x100") -> pd.DataFrame:
    """Our counterpart of a reported table's "Avg." column: per model and debias mark, the mean of
    ``value`` over exactly the (dataset, aspect) columns the paper averages (read from ``reported``,
    a :func:`~nlgjudge.analysis.side_by_side.reported_tidy` frame); NaN where this run lacks one of
    them, since an average over other columns would not be the same quantity. Rows carry dataset and
    aspect "Avg." like the reported ones."""
    columns = reported.loc[(reported["dataset"] != "Avg.") & (reported["aspect"] != "Avg."), ["dataset", "aspect"]]
    wanted = set(map(tuple, columns.drop_duplicates().to_numpy()))
    rows = []
    for (model, debias), part in per_model.groupby(["model", "debias"], sort=False):
        have = {(d, a): v for d, a, v in zip(part["dataset"], part["aspect"], part[value], strict=True)}
        complete = wanted <= set(have)
        rows.append({"model": model, "debias": debias, "dataset": "Avg.", "aspect": "Avg.",
                     value: float(np.mean([have[k] for k in wanted])) if complete and wanted else np.nan})
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



def debiasing_summary(scores: pd.DataFrame, bias: pd.DataFrame,
                      judges: Mapping[tuple[str, str], str | None] | None = None) -> list[str]:
    """The chapter's closing statements, computed from :func:`debiasing_table` (``scores``) and
    :func:`bias_table` (``bias``): per model, the P(A) range, how often debiasing raised or lowered
    Spearman and accuracy (a description, not a test), and the relation "the more biased sets gain
    more" (:func:`bias_gain_relation`)."""
    keys = ["model", "dataset", "template", "aspect"]
    wide = scores.pivot_table(index=keys, columns="debiased", values=["spearman_x100", "accuracy_pct"])
    gain_acc = wide[("accuracy_pct", True)] - wide[("accuracy_pct", False)]
    relation = bias_gain_relation(scores, bias, judges=judges)
    gain_rho = wide[("spearman_x100", True)] - wide[("spearman_x100", False)]
    lines = []
    for judge_name in dict.fromkeys(scores["model"]):
        g_rho, g_acc = gain_rho.loc[judge_name], gain_acc.loc[judge_name]
        p_a = bias.loc[bias["model"] == judge_name, "p_a"]
        lines.append(f"{judge_name}: {len(g_rho)} comparison sets; P(A) between {p_a.min():.2f} and {p_a.max():.2f}")
        # Counts of sets only: the chapter's Spearman change is a mean over contexts per dataset (the
        # claims table), and a mean over sets of several datasets would be a second definition.
        lines.append(
            f"  debiasing raised Spearman in {(g_rho > 0).sum()} sets, lowered it in {(g_rho < 0).sum()}; raised "
            f"accuracy in {(g_acc > 0).sum()}, lowered it in {(g_acc < 0).sum()} (counts of sets, not tests)"
        )
        mine = relation[relation["model"] == judge_name]
        if len(mine):
            lines.append("  " + mine["sentence"].iloc[0])
    return lines


#: Permutations of the within-dataset test of "the more biased sets gain more".
RELATION_PERMUTATIONS = 9999


def bias_gain_relation(scores: pd.DataFrame, bias: pd.DataFrame, seed: int = 0,
                       judges: Mapping[tuple[str, str], str | None] | None = None) -> pd.DataFrame:
    """"The more biased sets gain more from debiasing" (seed 000 §5.4), per model, tested with the
    dependence of the comparison sets accounted for. The sets of one dataset share its contexts,
    and the bias clusters by dataset, so a Spearman over all sets treated as independent is close to
    a contrast between a few datasets. The test here is within datasets
    (:func:`nlgjudge.stats.correlation.within_strata_correlation_test`: the gains shuffled among
    the sets of the same dataset) and its verdict is the claim rule's
    (:func:`nlgjudge.stats.claims.verdict_from_test`, alpha :data:`RELATION_ALPHA`); the pooled
    coefficient is shown beside it as a description. Columns: model, n_sets, pooled, within,
    p_value, n_datasets, verdict, reason, sentence. ``judges``: :func:`judge_gates`; the sets of a
    degenerate judge on a dataset are left out (the book's one test), and a model degenerate on every
    dataset is not tested."""
    keys = ["model", "dataset", "template", "aspect"]
    wide = scores.pivot_table(index=keys, columns="debiased", values="spearman_x100")
    gain = (wide[True] - wide[False]).rename("gain")
    distance = bias.set_index(keys)["p_a"].sub(0.5).abs().reindex(gain.index).rename("distance")
    frame = pd.concat([gain, distance], axis=1).dropna().reset_index()
    rows = []
    for judge_name, part in frame.groupby("model", sort=False):
        gates = {d: (judges or {}).get((judge_name, d)) for d in part["dataset"].unique()}
        if gates and all(gates.values()):
            reason = next(iter(gates.values()))
            rows.append({"model": judge_name, "n_sets": len(part), "pooled": np.nan, "within": np.nan, "p_value": np.nan,
                         "n_datasets": 0, "verdict": NOT_TESTED, "reason": reason,
                         "sentence": f"'the more biased sets gain more': not tested ({reason})"})
            continue
        part = part[[not gates[d] for d in part["dataset"]]]
        n_sets = len(part)
        pooled = float("nan")
        if n_sets >= 3 and part["distance"].nunique() > 1 and part["gain"].nunique() > 1:
            pooled = correlation_test(part["distance"].to_numpy(), part["gain"].to_numpy())[0]
        test = within_strata_correlation_test(part["distance"].to_numpy(), part["gain"].to_numpy(),
                                              part["dataset"].to_numpy(), n_permutations=RELATION_PERMUTATIONS, seed=seed)
        verdict = verdict_from_test(test.statistic, test.p_value, test.n, alpha=RELATION_ALPHA,
                                    min_n=registered_claim(RELATION_CLAIM_ID).min_units, degenerate=None if test.n_strata else "no dataset has 3 sets that vary in both")
        described = f"pooled over its {n_sets} sets {pooled:+.2f}" if np.isfinite(pooled) else f"{n_sets} sets"
        within = (f"within datasets {test.statistic:+.2f} over {test.n} sets of {test.n_strata} dataset{'s' if test.n_strata != 1 else ''}, "
                  f"permutation p = {test.p_value:.3f}") if test.n_strata else "no within-dataset test possible"
        # the tested reading first; the pooled one last, as the description it is (sets share contexts)
        sentence = (f"'the more biased sets gain more': Spearman between |P(A) - 0.5| and the Spearman gain {within}: "
                    f"{verdict.verdict}")
        if verdict.verdict == NOT_RESOLVED:  # at the plan's smallest effect that matters, never the observed one
            effect = registered_claim(RELATION_CLAIM_ID).minimal_effect
            sentence += (f"; about {correlation_units_needed(effect)} independent sets would give an 80% chance to detect a "
                         f"correlation of {effect:.1f}, the smallest that matters (this run has {test.n}, and its sets share "
                         "contexts, so they count for fewer: more sets of the same contexts would not get there)")
        sentence += f"; {described} (sets share contexts: a description)"
        rows.append({"model": judge_name, "n_sets": n_sets, "pooled": pooled, "within": test.statistic,
                     "p_value": test.p_value, "n_datasets": test.n_strata, "verdict": verdict.verdict,
                     "reason": verdict.reason, "sentence": sentence})
    return pd.DataFrame(rows, columns=["model", "n_sets", "pooled", "within", "p_value", "n_datasets", "verdict",
                                       "reason", "sentence"])


def threshold_scope_gains(scores: pd.DataFrame, gains: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Per model and dataset and threshold scope: the Spearman change (x100) by the chapter's one
    definition (:func:`context_gains` of ``gains[scope]``, a :func:`per_context_gains` per scope:
    the mean over contexts, as in the claims table), how many comparison sets of ``scores`` (a
    :func:`debiasing_table` run with several scopes) it raised, and the mean change in pairwise
    accuracy over those sets (points; accuracy is pooled within a set, so the set is its unit)."""
    keys = ["model", "dataset", "template", "aspect"]
    plain = scores[scores["threshold"] == "none"].set_index(keys)
    rows = []
    for scope in [s for s in THRESHOLD_SCOPES if s in set(scores["threshold"])]:
        if scope not in gains:
            raise ValueError(f"no per-context gains for the threshold scope {scope!r}; pass per_context_gains(..., scope={scope!r})")
        per_context = context_gains(gains[scope])
        debiased = scores[scores["threshold"] == scope].set_index(keys)
        gain = (debiased[["spearman_x100", "accuracy_pct"]] - plain[["spearman_x100", "accuracy_pct"]]).dropna()
        for (model, dataset), part in gain.groupby(level=["model", "dataset"], sort=False):
            values = per_context.get((model, dataset), np.array([]))
            rows.append({
                "model": model, "dataset": dataset, "threshold": scope, "sets": len(part), "contexts": len(values),
                "spearman_gain": float(values.mean()) if len(values) else np.nan,
                "sets_raised": int((part["spearman_x100"] > 0).sum()),
                "accuracy_gain": float(part["accuracy_pct"].mean()),
            })
    return pd.DataFrame(rows)


# Fewer contexts than this and a claim is "not tested": the claim rule's one minimum (stats.claims).
from nlgjudge.stats.claims import MIN_CONTEXTS_FOR_A_CLAIM, correlation_units_needed  # noqa: E402


def prose_values(scores: pd.DataFrame, bias: pd.DataFrame, judge: str, claims: pd.DataFrame) -> dict[str, str]:
    """The numbers the bias chapter's prose cites for ``judge``, as display strings (for glue):
    the P(A) range, the pooled-debiasing changes (described: counts of sets), and a one-sentence
    verdict that counts ``claims`` (:func:`debiasing_claims`: the claim rule over contexts, per
    dataset) and refuses to claim anything on a degenerate run (too few contexts; a judge whose
    plain decisions tie every candidate of every context, for which any "gain" is the threshold's
    doing)."""
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
    mine = claims[claims["model"] == judge]
    verdicts = mine["family_verdict"] if "family_verdict" in mine else mine["verdict"]
    count = {v: count_words(int((verdicts == v).sum()), int((mine["verdict"] == v).sum())) for v in VERDICTS}
    family = ", after Holm's correction over them" if len(verdicts) > 1 else ""  # one dataset: no family
    if fewest < MIN_CONTEXTS_FOR_A_CLAIM:
        verdict = (f"with as few as {fewest} context(s) in a comparison set, this run is too small to say whether "
                   "debiasing helps")
    elif all_tied:
        verdict = ("its plain decisions tie every candidate of every context (it answers by position), so the plain "
                   "rankings are empty and the debiased ones show only what its probabilities follow")
    else:
        # every verdict with a count, the empty ones left out ("not resolved on all 3", never "not tested on 0")
        said = [f"{v} on {count[v]}" for v in VERDICTS if int((verdicts == v).sum()) or int((mine["verdict"] == v).sum())]
        datasets = f"{len(verdicts)} dataset{'s' if len(verdicts) != 1 else ''}"
        verdict = ("by the claim rule over contexts, 'debiasing raises the Spearman' is "
                   + (f"{said[0].split(' on ')[0]} on {'all ' if len(verdicts) > 1 else 'its '}{datasets}" if len(said) == 1
                      else f"{', '.join(said[:-1])} and {said[-1]} of its {datasets}")
                   + f"{family}; on pairwise accuracy, pooled debiasing {_direction(gain_acc)} (a description: "
                   "a count of sets, not a test)")
    return {
        "judge": judge,
        "pa_min": number(float(p_a.min()), 2),
        "pa_max": number(float(p_a.max()), 2),
        "n_sets": str(n_sets),
        "fewest_contexts": str(fewest),
        "rho_by_dataset": _changes_by_dataset(claims[claims["model"] == judge]),
        "rho_raised": str(int((gain_rho > 0).sum())),
        "acc_raised": str(int((gain_acc > 0).sum())),
        "n_supported": str(count[SUPPORTED]),
        "n_not_resolved": str(count[NOT_RESOLVED]),
        "needed": _needed_words(claims.loc[(claims["model"] == judge) & (claims["verdict"] == NOT_RESOLVED)]),
        "verdict": verdict,
    }


def _changes_by_dataset(rows: pd.DataFrame) -> str:
    """The Spearman change per dataset with its interval, as the claims table gives it."""
    from nlgjudge.prose import interval_text

    if rows.empty:
        return "none computed"
    return "; ".join(f"{r.dataset} {interval_text(r.gain, r.gain_low, r.gain_high, 1)} over {r.n_contexts} contexts"
                     for r in rows.itertuples())


def _needed_words(rows: pd.DataFrame) -> str:
    """The contexts that the not-resolved datasets of one model would need, in words."""
    if rows.empty:
        return "no dataset is left unresolved"
    from nlgjudge.analysis.comparative import BENCHMARK_CONTEXTS

    parts = []
    for r in rows.itertuples():
        if not np.isfinite(r.contexts_needed):
            parts.append(f"{r.dataset} out of reach")
            continue
        if already_enough(r.contexts_needed, r.n_contexts):
            parts.append(f"{r.dataset} none: its {r.n_contexts} contexts are {ALREADY_ENOUGH}")
            continue
        size = BENCHMARK_CONTEXTS.get(r.dataset)
        beyond = f", more than the benchmark's {size}" if size is not None and r.contexts_needed > size else ""
        parts.append(f"{r.dataset} {int(r.contexts_needed)} contexts{beyond} (this run has {r.n_contexts})")
    return "; ".join(parts)


def _direction(gains: pd.Series) -> str:
    """How a set of changes went, in words (a majority and the mean must agree to name a direction)."""
    if (gains.abs() < 1e-9).all():
        return "left it unchanged"
    if (gains > 0).sum() > len(gains) / 2 and gains.mean() > 0:
        return "raised it in most comparison sets"
    if (gains < 0).sum() > len(gains) / 2 and gains.mean() < 0:
        return "lowered it in most comparison sets"
    return "moved it both ways, with no clear direction"


#: Table 5 prints FlanT5 11B as "FlanT5 7B" (a size FlanT5 does not come in); matched to Table 9's row.
TABLE5_ROW_NAMES = {"FlanT5 7B": "FlanT5 11B"}


def reported_tables_5_and_9(table5: pd.DataFrame, table9: pd.DataFrame) -> dict[str, int]:
    """How many of Table 5's cells (SummEval, both templates) Table 9 prints differently: the paper's
    two printings of the same P(A) values, compared cell by cell. Raw reported frames in (the files of
    ``data/reported``); keys ``n_cells`` and ``n_differ``. A cell of one table missing from the other
    is an error, not a silent drop."""
    five = table5.assign(row_group=table5["row_group"].replace(TABLE5_ROW_NAMES))
    nine = table9[table9["column_group"].isin(set(five["column_group"]))]
    keys = ["row_group", "row", "column_group", "column"]
    joined = five.merge(nine, on=keys, how="outer", suffixes=("_5", "_9"), indicator=True)
    unmatched = joined[joined["_merge"] != "both"]
    if len(unmatched):
        raise ValueError(f"Tables 5 and 9 do not hold the same cells: {unmatched[keys].to_dict('records')[:3]} ...")
    differ = ~np.isclose(joined["value_5"], joined["value_9"], equal_nan=True)
    return {"n_cells": len(joined), "n_differ": int(differ.sum())}
