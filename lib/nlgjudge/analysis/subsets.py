"""Fewer comparisons (seed 000 §3.4, §5.5-5.6, Appendix B; Fig. 4-5, Tables 8 and 11) on real judges.

Thin wrappers around :mod:`nlgjudge.stats` that take the comparative study's tidy frame (all N(N-1) ordered
comparisons of every context, :func:`nlgjudge.studies.comparative.run_comparative`) and return tidy frames:

* :func:`subset_curve_frame`: Spearman x100 against the number of comparisons R per selection strategy, with
  and without debiasing, the mean over draws with a band (:func:`nlgjudge.stats.subset_curves`). Subsets are
  *simulated* by reading the selected entries of the full matrix, exactly what a judge asked only those
  comparisons would have answered (deterministic probabilities); ``active`` reads the answers as it goes.
* :func:`strategy_comparison_frame`: the comparisons seed 000 §5.6 makes on Fig. 4, per set.
* :func:`self_consistency_frame`: Table 8, ranking accuracy on random subsets of the candidates.
* :func:`ranking_methods_frame`: Table 11, win ratio against maximum likelihood (eq. 11-13), plus Bradley-Terry.

The figures of the curves are in :mod:`nlgjudge.plotting.subsets`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from nlgjudge.analysis.comparative import BENCHMARK_CONTEXTS, placeholder_candidates, headline_reading as comparative_headline_reading
from nlgjudge.analysis.frames import comparison_sets, gold_scores
from nlgjudge.data import JudgeDataset
from nlgjudge.reader_names import DATASET_NAMES
from nlgjudge.register import ALREADY_ENOUGH, MONTE_CARLO_Z, already_enough, claim as registered_claim, contexts_needed_for, family_p
from nlgjudge.register import choice_lead_words, lead_words, needed_cell, verdict as registered_verdict
from nlgjudge.stats import (STRATEGIES, bradley_terry_scores, compare_strategies, hard_decisions, max_likelihood_ranking,
                            max_likelihood_ranking_hard, self_consistency, subset_curves, summary_level_correlation, win_ratio)
from nlgjudge.stats.claims import CONTRADICTED, NOT_RESOLVED, NOT_TESTED, SUPPORTED
from nlgjudge.stats.claims import family_verdicts as verdicts_after_holm
from nlgjudge.stats.intervals import draws_errors, end_error, paired_difference_interval
from nlgjudge.stats.multiplicity import count_words, holm_rejections, p_from_interval, p_within_error
from nlgjudge.stats.subset_curves import curves_for, per_context_comparisons

#: Plot order and names of the strategies.
STRATEGY_ORDER = ("random", "no-repeat", "symmetric", "active", "full")


def stacks_by_size(
    comparisons: pd.DataFrame, datasets: Mapping[str, JudgeDataset]
) -> dict[tuple[str, str, int, str], dict[int, tuple[list[str], np.ndarray, np.ndarray]]]:
    """Per comparison set, the contexts grouped by their number of candidates N, ``{(model, dataset, template,
    aspect): {N: (context_ids, probs (C, N, N), gold (C, N))}}``: the curves need equal N within a stack (a
    budget R means something else for another N). Every context must have all its N(N-1) comparisons."""
    out: dict[tuple[str, str, int, str], dict[int, tuple[list[str], np.ndarray, np.ndarray]]] = {}
    for key, matrices in comparison_sets(comparisons).items():
        model, dataset, template, aspect = key
        if dataset not in datasets:
            raise ValueError(f"no human scores for dataset {dataset!r}: pass its JudgeDataset in datasets")
        gold = gold_scores(datasets[dataset], aspect)
        groups: dict[int, tuple[list[str], list[np.ndarray], list[np.ndarray]]] = {}
        for context_id, matrix in matrices.items():
            n = matrix.shape[0]
            if context_id not in gold or gold[context_id].size != n:
                raise ValueError(
                    f"{dataset} context {context_id}: the comparisons cover {n} candidates but the dataset passed "
                    "has a different set; pass the dataset the comparisons were run on"
                )
            if np.isnan(matrix[~np.eye(n, dtype=bool)]).any():
                raise ValueError(
                    f"{model} on {dataset} context {context_id} (prompt {template}, {aspect}) lacks some of the "
                    f"{n * (n - 1)} ordered comparisons; the subset studies need the full matrix"
                )
            ids, probs, scores = groups.setdefault(n, ([], [], []))
            ids.append(context_id)
            probs.append(matrix)
            scores.append(gold[context_id])
        out[key] = {n: (ids, np.stack(p), np.stack(g)) for n, (ids, p, g) in groups.items()}
    return out


def subset_curve_frame(comparisons: pd.DataFrame, datasets: Mapping[str, JudgeDataset], *args, **kwargs) -> pd.DataFrame:
    """The curves of :func:`subset_curve_frames` alone (same arguments)."""
    return subset_curve_frames(comparisons, datasets, *args, **kwargs)[0]


def subset_curve_frames(
    comparisons: pd.DataFrame,
    datasets: Mapping[str, JudgeDataset],
    strategies: Sequence[str] = ("random", "no-repeat", "symmetric", "active"),
    n_draws: int = 50,
    debias: Sequence[bool] = (False, True),
    budgets: Sequence[int] | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tidy subset curves (Fig. 4-5), and §5.6's comparisons per context (:func:`_subset_frames`)."""
    curves, per_context, _ = _subset_frames(comparisons, datasets, strategies, n_draws, debias, budgets,
                                            confidence, seed)
    return curves, per_context


#: The strategies §5.6's findings compare (active is the figures' alone).
CLAIM_STRATEGIES = ("random", "no-repeat", "symmetric")


def strategy_claim_frames(
    comparisons: pd.DataFrame, datasets: Mapping[str, JudgeDataset], n_draws: int = 200, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The inputs of :func:`strategy_claims`: §5.6's comparisons per context, and per draw.

    Drawn apart from the figures' curves (its own seed stream, every budget, the three strategies
    the findings compare) and with more draws, so that the findings' verdicts do not move with
    ``seed``: the per-draw frame (columns model, dataset, template, aspect, n_candidates, draw,
    comparison, first_x100, second_x100: each side averaged over the stack's contexts) gives each
    finding's Monte Carlo error.
    """
    _, per_context, per_draw = _subset_frames(comparisons, datasets, CLAIM_STRATEGIES, n_draws, (False, True),
                                              None, 0.95, seed, stream=1)
    return per_context, per_draw


def _subset_frames(
    comparisons: pd.DataFrame,
    datasets: Mapping[str, JudgeDataset],
    strategies: Sequence[str],
    n_draws: int,
    debias: Sequence[bool],
    budgets: Sequence[int] | None,
    confidence: float,
    seed: int,
    stream: int = 0,
    only: Sequence[str] | None = None,
    only_dataset: str | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Tidy subset curves (Fig. 4-5), and §5.6's comparisons per context and per draw.

    The curves: one row per set, strategy, debiasing flag and budget R.
    Columns: model, dataset, template, aspect, n_candidates, n_contexts (used: contexts with
    constant human scores are left out, counted in n_contexts_constant_gold), strategy, debiased,
    budget, fraction (R / N(N-1)), spearman_x100 (mean over draws), sd_x100, ci_low_x100,
    ci_high_x100, distinct_pairs, p_a (after debiasing when debiased), n_draws. ``attrs["seconds"]``
    holds the total compute time. Each set gets its own seed derived from ``seed``, so adding a
    model or aspect does not change the others' draws.

    The comparisons (:func:`nlgjudge.stats.subset_curves.per_context_comparisons`): one row per set,
    context and comparison, with its two sides averaged over the draws and the comparison's budgets
    (``first_x100``, ``second_x100``; the difference is the comparison), for intervals over contexts
    (:func:`strategy_claims`); and per draw (each side averaged over the stack's contexts), for the
    draws' Monte Carlo error. ``stream`` separates independent uses of one ``seed``. ``only``: the
    comparisons to draw for (their strategies and budgets alone, :func:`~nlgjudge.stats.subset_curves.curves_for`);
    ``only_dataset``: the one dataset to draw for (each stack keeps the seed of its place among all of
    ``comparisons``' stacks, so two datasets never share a stream).
    """
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown or not strategies:
        raise ValueError(f"unknown strategies {unknown}; choose from {list(STRATEGIES)}")
    rows, per_context_rows, per_draw_rows = [], [], []
    started = time.perf_counter()
    for index, (key, groups) in enumerate(stacks_by_size(comparisons, datasets).items()):
        model, dataset, template, aspect = key
        if only_dataset is not None and dataset != only_dataset:
            continue
        for n, (ids, probs, gold) in groups.items():
            usable = np.ptp(gold, axis=1) > 0
            if not usable.any():
                continue  # no context of this size has varying human scores: no correlation exists
            drawn, flags, steps = ((list(strategies), tuple(debias), budgets) if only is None
                                   else curves_for(only, n))
            curves = subset_curves(
                probs, gold, drawn, steps, n_draws, flags, confidence,
                seed=np.random.default_rng([seed, index, n] + ([stream] if stream else [])),
            )
            used_ids = [c for c, keep in zip(ids, usable, strict=True) if keep]  # subset_curves' order
            sides = per_context_comparisons(
                {k: (c.budgets, c.per_context_x100) for k, c in curves.curves.items()}, n_candidates=n)
            for name, (first, second) in sides.items():
                if only is not None and name not in only:
                    continue
                per_context_rows.append(pd.DataFrame({
                    "model": model, "dataset": dataset, "template": template, "aspect": aspect,
                    "n_candidates": n, "context_id": used_ids, "comparison": name,
                    "first_x100": first, "second_x100": second,
                }))
            draw_sides = per_context_comparisons(
                {k: (c.budgets, c.per_draw_x100) for k, c in curves.curves.items()}, n_candidates=n)
            for name, (first, second) in draw_sides.items():
                if only is not None and name not in only:
                    continue
                per_draw_rows.append(pd.DataFrame({
                    "model": model, "dataset": dataset, "template": template, "aspect": aspect,
                    "n_candidates": n, "draw": np.arange(len(first)), "comparison": name,
                    "first_x100": first, "second_x100": second,
                }))
            for (strategy, debiased), curve in curves.curves.items():
                rows.append(
                    pd.DataFrame(
                        {
                            "model": model,
                            "dataset": dataset,
                            "template": template,
                            "aspect": aspect,
                            "n_candidates": n,
                            "n_contexts": curves.n_contexts - curves.n_contexts_constant_gold,
                            "n_contexts_constant_gold": curves.n_contexts_constant_gold,
                            "strategy": strategy,
                            "debiased": debiased,
                            "budget": curve.budgets,
                            "fraction": curve.budgets / (n * (n - 1)),
                            "spearman_x100": curve.mean_x100,
                            "sd_x100": curve.sd_x100,
                            "ci_low_x100": curve.ci_low_x100,
                            "ci_high_x100": curve.ci_high_x100,
                            "distinct_pairs": curve.distinct_pairs,
                            "p_a": curve.p_a,
                            "n_draws": n_draws,
                        }
                    )
                )
    if not rows:
        raise ValueError("no comparison set has contexts with varying human scores; nothing to plot")
    frame = pd.concat(rows, ignore_index=True)
    frame.attrs["seconds"] = time.perf_counter() - started
    per_context = pd.concat(per_context_rows, ignore_index=True) if per_context_rows else pd.DataFrame(
        columns=["model", "dataset", "template", "aspect", "n_candidates", "context_id", "comparison",
                 "first_x100", "second_x100"])
    per_draw = pd.concat(per_draw_rows, ignore_index=True) if per_draw_rows else pd.DataFrame(
        columns=["model", "dataset", "template", "aspect", "n_candidates", "draw", "comparison",
                 "first_x100", "second_x100"])
    return frame, per_context, per_draw


def curve_summary(curves: pd.DataFrame, fractions: Sequence[float] = (0.1, 0.25, 0.5, 1.0)) -> pd.DataFrame:
    """Spearman x100 at a few budgets (the largest budget at or below each fraction of N(N-1)) per
    set, strategy and debiasing flag, as a long frame (for tables next to the figure)."""
    keys = ["model", "dataset", "template", "aspect", "n_candidates", "strategy", "debiased"]
    rows = []
    for group_key, group in curves.groupby(keys, sort=False):
        for fraction in fractions:
            below = group[group["fraction"] <= fraction + 1e-12]
            if below.empty:
                continue
            last = below.iloc[below["budget"].to_numpy().argmax()]
            rows.append({**dict(zip(keys, group_key)), "target_fraction": fraction, "budget": int(last["budget"]),
                         "spearman_x100": float(last["spearman_x100"])})
    return pd.DataFrame(rows)


def debiasing_gain(curves: pd.DataFrame) -> pd.DataFrame:
    """Debiased minus plain Spearman x100 at every budget (one row per set, strategy and budget),
    with the band half-widths of both curves to judge whether a gap is more than noise."""
    keys = ["model", "dataset", "template", "aspect", "n_candidates", "strategy", "budget", "fraction"]
    columns = [*keys, "spearman_x100", "ci_low_x100"]
    joined = curves.loc[~curves["debiased"], columns].merge(
        curves.loc[curves["debiased"], columns], on=keys, suffixes=("_plain", "_debiased"), how="inner"
    )
    return joined[keys].assign(
        gain_x100=joined["spearman_x100_debiased"] - joined["spearman_x100_plain"],
        half_band_plain=joined["spearman_x100_plain"] - joined["ci_low_x100_plain"],
        half_band_debiased=joined["spearman_x100_debiased"] - joined["ci_low_x100_debiased"],
    )


#: Column labels of :func:`strategy_comparison_frame`, by field of
#: :class:`nlgjudge.stats.StrategyComparison` (Spearman x100 points).
STRATEGY_COMPARISON_LABELS = {
    "no_repeat_minus_random": "no-repeat - random (R <= N(N-1)/2)",
    "no_repeat_minus_symmetric_equal_r": "no-repeat - symmetric, equal R",
    "symmetric_minus_no_repeat_equal_pairs": "symmetric(2m) - no-repeat(m), equal pairs",
    "debias_gain_small_budgets": "debias gain (per-context threshold), random, N <= R <= N(N-1)/4",
    "debias_gain_tiny_budgets": "debias gain (per-context threshold), random, R < N",
    "debias_gain_full": "debias gain (per-context threshold), all comparisons",
    "debias_gain_small_minus_full": "debias gain at N <= R <= N(N-1)/4 minus debias gain with all comparisons",
}


def strategy_comparison_frame(curves: pd.DataFrame) -> pd.DataFrame:
    """Seed 000 §5.6's comparisons (:func:`nlgjudge.stats.compare_strategies`) for every comparison
    set of a :func:`subset_curve_frame`: one row per model, dataset, template, aspect and N, one
    column per comparison (labels in :data:`STRATEGY_COMPARISON_LABELS`), NaN where a strategy the
    comparison needs was not run."""
    keys = ["model", "dataset", "template", "aspect", "n_candidates"]
    missing = sorted((set(keys) | {"strategy", "debiased", "budget", "spearman_x100"}) - set(curves.columns))
    if missing:
        raise ValueError(f"curves lacks columns {missing}; pass the frame subset_curve_frame() returns.")
    rows = []
    for key, group in curves.groupby(keys, sort=False):
        means = {
            (strategy, bool(debiased)): (part["budget"].to_numpy(), part["spearman_x100"].to_numpy())
            for (strategy, debiased), part in group.groupby(["strategy", "debiased"], sort=False)
        }
        comparison = compare_strategies(means, n_candidates=int(key[-1]))
        rows.append({**dict(zip(keys, key)),
                     **{label: getattr(comparison, name) for name, label in STRATEGY_COMPARISON_LABELS.items()}})
    return pd.DataFrame(rows)


def self_consistency_frame(
    comparisons: pd.DataFrame,
    datasets: Mapping[str, JudgeDataset],
    sizes: Sequence[int],
    n_draws: int = 20,
    seed: int = 0,
    tie_break: bool = False,
) -> pd.DataFrame:
    """Table 8: agreement (%) of the win-ratio ranking of n random candidates (all n(n-1) comparisons
    among them, eq. 2 decisions) with the ranking from all N ("Final") and with the human scores
    ("Gold"). Sizes larger than a dataset's N are skipped there and N itself is always added (the
    paper's last column, where "Final" is 100 by definition). Long frame: model, dataset, template,
    aspect, n_candidates, size, reference, percent, n_draws, and final_tied_percent (the share of
    pairs scored against "Final" that the subset's win ratio ties, each counted 1/2; at n = 2 the
    share of two-candidate subsets that tie). ``tie_break``: order the pairs the win ratio ties by
    the judge's summed probabilities (:func:`nlgjudge.stats.self_consistency`'s ``tie_break``).
    """
    if not sizes or min(sizes) < 2:
        raise ValueError(f"sizes must be candidate counts of at least 2; got {list(sizes)}")
    rows = []
    for index, (key, groups) in enumerate(stacks_by_size(comparisons, datasets).items()):
        model, dataset, template, aspect = key
        for n, (_, probs, gold) in groups.items():
            wanted = sorted({s for s in sizes if s <= n} | {n})
            result = self_consistency(
                np.stack([hard_decisions(m) for m in probs]), gold, wanted, n_draws,
                seed=np.random.default_rng([seed, index, n]), tie_break=probs if tie_break else None,
            )
            for size, final, human, tied in zip(result.subset_sizes, result.final_percent, result.gold_percent,
                                                result.final_tied_percent, strict=True):
                for reference, value in (("Final", final), ("Gold", human)):
                    rows.append({"model": model, "dataset": dataset, "template": template, "aspect": aspect,
                                 "n_candidates": n, "size": int(size), "reference": reference,
                                 "percent": float(value), "n_draws": n_draws, "final_tied_percent": float(tied)})
    return pd.DataFrame(rows)


def ranking_methods_frame(comparisons: pd.DataFrame, datasets: Mapping[str, JudgeDataset]) -> pd.DataFrame:
    """Table 11 and beyond: Spearman x100 of four ways to turn the full comparison matrix into a ranking.

    * ``win ratio``: eq. 6 on the eq. 2 hard decisions (the paper's default);
    * ``max likelihood``: the ranking maximising eq. 12 with the judge's probabilities (exact search
      up to 16 candidates, where the paper needed a greedy approximation);
    * ``max likelihood (hard)``: eq. 13 on the hard decisions (a full tie where the likelihood is
      flat, see :func:`_hard_likelihood_scores`);
    * ``Bradley-Terry``: log-strengths fitted by choix on the probabilities as soft wins.

    Contexts with constant human scores are left out; a method that ties every candidate of a
    context scores 0 there. Long frame: model, dataset, template, aspect, method, spearman_x100,
    n_contexts, per_context (``{context: Spearman x100}``, 0 where a method tied every candidate, as the mean counts it).
    """
    methods = {
        "win ratio": lambda p: win_ratio(hard_decisions(p)),
        "max likelihood": lambda p: -max_likelihood_ranking(p).ranks,
        "max likelihood (hard)": _hard_likelihood_scores,
        "Bradley-Terry": lambda p: bradley_terry_scores(p),
    }
    rows = []
    for key, groups in stacks_by_size(comparisons, datasets).items():
        model, dataset, template, aspect = key
        probs = [m for _, stack, _ in groups.values() for m in stack]
        gold = [g for _, _, scores in groups.values() for g in scores]
        ids = [c for context_ids, _, _ in groups.values() for c in context_ids]
        usable = [k for k, g in enumerate(gold) if np.ptp(g) > 0]
        if not usable:
            continue
        for method, score in methods.items():
            predictions = [score(probs[k]) for k in usable]
            corr = summary_level_correlation(predictions, [gold[k] for k in usable], "spearman", undefined="zero")
            rows.append({"model": model, "dataset": dataset, "template": template, "aspect": aspect,
                         "method": method, "spearman_x100": corr.value_x100, "n_contexts": len(usable),
                         "per_context": {ids[k]: 100.0 * float(np.nan_to_num(v)) for k, v in zip(usable, corr.per_context, strict=True)}})
    return pd.DataFrame(rows)


def _hard_likelihood_scores(probs: np.ndarray) -> np.ndarray:
    """Scores from the eq. 13 ranking; all equal when every ordering is equally likely.

    With hard decisions the likelihood can be flat: a judge that answers "A" to every comparison of
    a symmetric set makes each pair one win each way, so every ranking explains the decisions
    equally well. The exact search would still return one of them (the candidates' index order),
    which can correlate with gold by accident; we return a full tie instead, as the win ratio does.
    Partial ties (several but not all orderings optimal) are broken by the search, by index.
    """
    decisions = hard_decisions(probs)
    made = ~np.isnan(decisions)
    # Flat likelihood <=> for every pair, i's net wins over j equal j's over i.
    wins = np.where(made, decisions, 0.0) + np.where(made, 1.0 - decisions, 0.0).T
    if np.allclose(wins, wins.T):
        return np.zeros(probs.shape[0])
    return -max_likelihood_ranking_hard(decisions).ranks


def prose_values(methods: pd.DataFrame, judge: str) -> dict[str, str]:
    """The numbers the subsets chapter's prose cites about Table 11 (display strings, for glue).

    ``methods``: :func:`ranking_methods_frame` averaged over templates (model, dataset, aspect,
    method, spearman_x100). Over every dataset-aspect, how far maximum likelihood and Bradley-Terry
    move from the win ratio: the largest change either way, so the text never calls "little" what
    the table shows is large.
    """
    from nlgjudge.prose import number

    wide = methods[methods["model"] == judge].pivot_table(index=["dataset", "aspect"], columns="method",
                                                          values="spearman_x100", sort=False)
    out = {"judge": judge}
    for method, name in (("max likelihood", "ml"), ("Bradley-Terry", "bt")):
        if method in wide and "win ratio" in wide:
            change = (wide[method] - wide["win ratio"]).dropna()
            where_max, where_min = change.idxmax(), change.idxmin()
            out[f"{name}_max"] = f"{number(change.max(), 1, signed=True)} ({' '.join(where_max)})"
            out[f"{name}_min"] = f"{number(change.min(), 1, signed=True)} ({' '.join(where_min)})"
            out[f"{name}_mean"] = number(float(change.mean()), 1, signed=True)
        else:
            out[f"{name}_max"] = out[f"{name}_min"] = out[f"{name}_mean"] = "n/a"
    return out


def _dataset_cell(row: Any, after_holm: str) -> str:
    """One dataset's reading of a §5.6 finding: estimate [95%], its verdict after Holm's correction over
    the datasets (a flag named as one), a borderline mark, and n."""
    from nlgjudge.prose import flag_words, interval_text

    spec = registered_claim(f"subsets.{row.comparison}")  # the claim rule's qualifier: a side within the smallest effect
    small = (after_holm in (SUPPORTED, CONTRADICTED) and spec.margin is None
             and max(abs(row.low - spec.threshold), abs(row.high - spec.threshold)) < spec.minimal_effect)
    return (f"{interval_text(row.estimate, row.low, row.high, 1)}, {after_holm}"
            + (", negligible: smaller than the smallest effect that matters" if small else "")
            + (f" ({flag_words(row.verdict)})" if after_holm != row.verdict else "")
            + (", borderline within the draws' error" if "Monte Carlo" in str(row.reason) else "") + f" (n = {row.n})"
            + choice_lead_words(getattr(row, "dataset", "")))


#: The findings the answer box shows, each with the words its row carries there.
ANSWER_FINDINGS = {
    "no_repeat_minus_random": "1. no-repeat above random; no-repeat minus random",
    "no_repeat_minus_symmetric_equal_r": "2. symmetric about 1 point below no-repeat, same budget; no-repeat minus symmetric, 0 to 2 claimed",
    "debias_gain_small_budgets": "3. debiasing helps, budgets from N to a quarter of all; debiased minus plain",
    "debias_gain_tiny_budgets": "ours: debiasing helps, fewer comparisons than candidates; debiased minus plain",
}


def answer_table(claims: pd.DataFrame) -> pd.DataFrame:
    """The answer box's verdicts: one row per finding of :data:`ANSWER_FINDINGS`, one column per dataset,
    each cell as :func:`claims_prose` words it (after Holm's correction over the datasets)."""
    after_all = family_verdicts(claims)
    # the rows' heading as the columns' name: it sits in the header row's corner, not in a row of its own
    columns = pd.Index(list(dict.fromkeys(claims["dataset"])), name="finding (numbered as in the paper)")
    table = pd.DataFrame(index=pd.Index(list(ANSWER_FINDINGS.values()), name=None), columns=columns, dtype=object)
    for name, label in ANSWER_FINDINGS.items():
        rows = claims["comparison"] == name
        for row, after in zip(claims[rows].itertuples(), after_all[rows], strict=True):
            table.loc[label, row.dataset] = _dataset_cell(row, after)
    # a finding whose rule was changed after its data says so in its row's label (the glossary's "lead")
    return table.fillna("not computed").rename(index={label: label + lead_words(f"subsets.{name}") for name, label in ANSWER_FINDINGS.items()})


def claims_prose(claims: pd.DataFrame, cell_claims: pd.DataFrame, reached: pd.DataFrame) -> dict[str, str]:
    """The subsets chapter's sentences about §5.6's findings (display strings, for glue).

    ``claims``: :func:`strategy_claims` by dataset; ``cell_claims``: by dataset and aspect;
    ``reached``: :func:`fraction_reached`. Keys: ``c_<comparison>`` (per dataset: estimate [95%],
    verdict, n), ``fig5_<comparison>`` (the every-cell verdict with the cells' counts), ``needed``
    (the contexts each not-resolved claim would need), ``reached`` (in how many cells the
    strategy reaches the share, and where it does not, with both numbers).
    """
    from nlgjudge.prose import listing, number

    out: dict[str, str] = {}
    after_all = family_verdicts(claims)
    for name in STRATEGY_CLAIMS:
        rows = claims[claims["comparison"] == name]
        after = after_all.loc[rows.index]
        family = f"; Holm over the {len(rows)} datasets" if len(rows) > 1 else ""
        out[f"c_{name}"] = ("; ".join(f"{DATASET_NAMES.get(row.dataset, row.dataset)} {_dataset_cell(row, a)}"
                                      for row, a in zip(rows.itertuples(), after, strict=True)) + family
                            + (lead_words(f"subsets.{name}") if len(rows) else "")) or "not computed"
        cells = cell_claims[cell_claims["comparison"] == name]
        if len(cells):
            # the counts after Holm's correction only (the sentence's own rule; Fig. 5's table gives them before it
            # too), a verdict some cell had before the correction named with its 0
            after, before = after_holm(cells), cells["verdict"].tolist()
            parts = [f"{after.count(v)} {v}" for v in (SUPPORTED, CONTRADICTED, NOT_RESOLVED, NOT_TESTED)
                     if after.count(v) or before.count(v)]
            verdict = every_cell_verdict(cells["verdict"].tolist(), family_p(cells).tolist())
            out[f"fig5_{name}"] = (f"{verdict}: {listing(parts)} of {len(cells)} dataset-aspects after Holm's correction over them"
                                   + lead_words(f"subsets.{name}.every_cell"))
        else:
            out[f"fig5_{name}"] = "not computed"
    open_rows = claims[claims["verdict"] == NOT_RESOLVED]
    n_flags = int(((after_all == NOT_RESOLVED) & (claims["verdict"] != NOT_RESOLVED)).sum())
    out["n_not_resolved"] = count_words(int((after_all == NOT_RESOLVED).sum()), len(open_rows))
    out["needed"] = needed_words(open_rows) + (
        f"; {n_flags} more {'is a flag' if n_flags == 1 else 'are flags'} (resolved on {'its' if n_flags == 1 else 'their'} own "
        "interval, not after Holm's correction)" if n_flags else "")
    out.update(monte_carlo_prose(claims, cell_claims))
    misses = reached[~reached["reached"]]
    out["reached_count"] = f"{int(reached['reached'].sum())} of {len(reached)}"
    out["reached_misses"] = listing([
        f"{DATASET_NAMES.get(row.dataset, row.dataset)} {row.aspect} {'debiased' if row.debiased else 'plain'} ({number(row.at_fraction, 1)} of "
        f"{number(row.full, 1)})" for row in misses.itertuples()], empty="none")
    return out


def monte_carlo_prose(claims: pd.DataFrame, cell_claims: pd.DataFrame) -> dict[str, str]:
    """``mc_range`` (the findings' Monte Carlo errors, smallest to largest) and ``mc_borderline`` (how
    many rows the draws' error left borderline), for the sentence that states the rule."""
    from nlgjudge.prose import number

    errors = claims.get("monte_carlo_se", pd.Series(dtype=float)).dropna()
    errors = errors[errors > 1e-9]  # with all N(N-1) comparisons nothing is drawn (a rounding residue remains)
    if errors.empty:
        return {"mc_range": "not measured on this run", "mc_borderline": "no row was read for it"}
    def borderline(rows: pd.DataFrame) -> int:  # an end within the draws' error, or a Holm decision the draws make
        return int((rows["reason"].str.contains("Monte Carlo", regex=False) | drawn_by_holm(rows)).sum())
    per_dataset, per_cell = borderline(claims), borderline(cell_claims)
    return {"mc_range": f"{number(errors.min(), 2)} to {number(errors.max(), 2)} per dataset",
            "mc_borderline": (f"{per_dataset} of the {len(claims)} rows read per dataset and {per_cell} of the "
                              f"{len(cell_claims)} rows read per dataset and aspect are borderline on this run")}


def needed_words(open_rows: pd.DataFrame) -> str:
    """The contexts the not-resolved claims would need, in words: those within their benchmark's
    size named with their count, the others counted ("beyond the benchmark")."""
    from nlgjudge.prose import listing

    if open_rows.empty:
        return "none (every claim is resolved)"
    within, beyond, enough = [], 0, 0
    for row in open_rows.sort_values("contexts_needed").itertuples():
        size = BENCHMARK_CONTEXTS.get(row.dataset)
        if already_enough(row.contexts_needed, int(row.n)):
            enough += 1
        elif np.isfinite(row.contexts_needed) and (size is None or row.contexts_needed <= size):
            within.append(f"{DATASET_NAMES.get(row.dataset, row.dataset)} '{row.claim}' ({int(row.contexts_needed)} contexts, now {row.n})")
        else:
            beyond += 1
    text = ("within the benchmarks' sizes: " + listing(within)) if within else "none within the benchmarks' sizes"
    text += f"; {beyond} more would need more contexts than the benchmark has (the table lists them)" if beyond else ""
    return text + (f"; {enough} {'has' if enough == 1 else 'have'} {ALREADY_ENOUGH}" if enough else "")


def tie_prose(plain: pd.DataFrame, broken: pd.DataFrame, dataset: str = "summeval") -> dict[str, str]:
    """Table 8's n = 2 column in words (glue): the share of two-candidate subsets that tie and the
    "Final" agreement with ties counted 1/2 and broken by the probabilities, as ranges over the
    dataset's aspects and templates. ``plain``/``broken``: :func:`self_consistency_frame` without
    and with ``tie_break``."""
    from nlgjudge.prose import number

    def span(values: pd.Series, decimals: int = 1) -> str:
        return "n/a" if values.empty else f"{number(values.min(), decimals)} to {number(values.max(), decimals)}"

    pick = lambda f: f[(f["dataset"] == dataset) & (f["size"] == 2) & (f["reference"] == "Final")]  # noqa: E731
    return {"dataset": dataset, "tied_two": span(pick(plain)["final_tied_percent"], 0),
            "final_two_half": span(pick(plain)["percent"]), "final_two_broken": span(pick(broken)["percent"])}


# --------------------------------------------------------------------------------------------
# The WebNLG candidates: the comparative chapter's headline reading


@dataclass(frozen=True)
class HeadlineReading:
    """The comparisons and datasets with the placeholder teams' candidates of one dataset left out
    (the comparative chapter's headline WebNLG reading), and what was left out."""

    comparisons: pd.DataFrame
    datasets: dict[str, JudgeDataset]
    teams_left_out: list[str]
    candidates_left_out: int
    teams_kept: int


def headline_reading(
    comparisons: pd.DataFrame, datasets: Mapping[str, JudgeDataset], dataset: str = "webnlg"
) -> HeadlineReading:
    """:func:`nlgjudge.analysis.comparative.headline_reading` (the book's one WebNLG candidate set:
    the teams with a placeholder output left out of the comparisons and the dataset), with what
    was left out, for the subsets chapter's prose. Unchanged when ``dataset`` is not in the run or
    has no placeholder."""
    frame, kept = comparative_headline_reading(comparisons, datasets, dataset=dataset)
    if dataset not in datasets:
        return HeadlineReading(comparisons, kept, [], 0, 0)
    ds = datasets[dataset]
    teams = sorted(set(placeholder_candidates(ds)["system"]))
    n_teams = int(ds.frame["system"].nunique())
    return HeadlineReading(frame, kept, teams, len(ds.frame) - len(kept[dataset].frame), n_teams - len(teams))


# --------------------------------------------------------------------------------------------
# §5.6's findings with intervals over contexts


@dataclass(frozen=True)
class StrategyClaim:
    """One comparison of :func:`strategy_claims`: the claim in words and how the claim rule reads it."""

    finding: str
    claim: str
    threshold: float = 0.0
    direction: str = "above"
    margin: float | None = None


def _registered(comparison: str, finding: str, claim: str) -> StrategyClaim:
    """A comparison's claim, read as the claims register (``subsets.<comparison>``) sets it."""
    spec = registered_claim(f"subsets.{comparison}")
    return StrategyClaim(finding, claim, threshold=spec.threshold, direction=spec.direction, margin=spec.margin)


#: The claims the comparisons test, keyed by comparison (:data:`STRATEGY_COMPARISON_LABELS`).
#: Finding 2's "only a performance difference of 1" is read as no-repeat minus symmetric at equal R
#: within 1 +- 1 point (symmetric behind by 0 to 2 points): declared in the register.
STRATEGY_CLAIMS = {
    "no_repeat_minus_random": _registered("no_repeat_minus_random", "1", "no-repeat above random (R <= N(N-1)/2)"),
    "no_repeat_minus_symmetric_equal_r": _registered("no_repeat_minus_symmetric_equal_r", "2", (
        "symmetric about 1 point below no-repeat at equal R (no-repeat - symmetric within 1 +- 1)")),
    "symmetric_minus_no_repeat_equal_pairs": _registered("symmetric_minus_no_repeat_equal_pairs", "2 (ours)", (
        "symmetric(2m) above no-repeat(m): equal distinct pairs, each shown in both orders")),
    "debias_gain_tiny_budgets": _registered("debias_gain_tiny_budgets", "3", "debiasing helps at R < N"),
    "debias_gain_small_budgets": _registered("debias_gain_small_budgets", "3", "debiasing helps at N <= R <= N(N-1)/4"),
    "debias_gain_full": _registered("debias_gain_full", "3", "debiasing helps with all N(N-1) comparisons"),
    "debias_gain_small_minus_full": _registered("debias_gain_small_minus_full", "3",
                                                "debiasing helps more at N <= R <= N(N-1)/4 than with all"),
}
#: How :func:`strategy_claims` forms each interval, in words for the page.
CLAIM_INTERVAL_METHOD = (
    "per context: the comparison's two sides averaged over the random draws and over the budgets of its range "
    "(and over the prompt templates and aspects grouped in the row, which share the contexts); then a paired "
    "Student t interval (95%) of the difference over the contexts, the independent unit"
)
#: How the band claim's contexts needed are counted (the rest: CONTEXTS_NEEDED_METHOD).
NEAR_NEEDED_METHOD = (
    "for finding 2 (no-repeat - symmetric within 1 +- 1, a band claim), the same test with the band's half-width "
    "as the effect: a true difference at the band's centre told from either end"
)


def judge_gates(comparisons: pd.DataFrame) -> dict[str, str | None]:
    """The book's judge screen (:mod:`nlgjudge.stats.degenerate`) of the chapter's judge per dataset."""
    from nlgjudge.analysis.judges import degenerate_judges

    return degenerate_judges({name: part for name, part in comparisons.groupby("dataset", sort=False)})


_STACK = ["model", "template", "aspect", "n_candidates"]


def monte_carlo_error(per_context: pd.DataFrame, per_draw: pd.DataFrame) -> float:
    """The Monte Carlo standard error, from the random draws, of one finding's estimate (the mean over
    contexts of each context's difference averaged over the sets that hold it; ``per_context`` and
    ``per_draw``: one group and comparison of :func:`strategy_claim_frames`' frames). Stacks draw
    independently, so their variances add, each weighted by its share of the estimate."""
    holders = per_context.groupby("context_id")["context_id"].transform("size")
    share = (1.0 / (holders * per_context["context_id"].nunique())).groupby(
        [per_context[c] for c in _STACK], sort=False).sum()
    difference = per_draw["first_x100"] - per_draw["second_x100"]
    stacks = difference.groupby([per_draw[c] for c in _STACK], sort=False)
    variance = stacks.var(ddof=1) / stacks.size()
    joined = pd.concat([share.rename("share"), variance.rename("variance")], axis=1, join="inner")
    return float(np.sqrt((joined["share"] ** 2 * joined["variance"]).sum()))


def strategy_claims(per_context: pd.DataFrame, by: Sequence[str] = ("dataset",), confidence: float = 0.95,
                    gates: Mapping[str, str | None] | None = None,
                    per_draw: pd.DataFrame | None = None) -> pd.DataFrame:
    """Seed 000 §5.6's findings with an interval over contexts and a verdict by the claim rule.

    ``per_context``: :func:`subset_curve_frames`' second frame. Rows are grouped by ``by`` (e.g.
    dataset, or dataset and aspect) and comparison; within a group, each context's two sides are
    first averaged over the group's sets (templates, aspects: they share the contexts, so they are
    not independent evidence), then :func:`nlgjudge.stats.intervals.paired_difference_interval`
    over the contexts (:data:`CLAIM_INTERVAL_METHOD`) and :func:`nlgjudge.stats.claim_verdict` with
    the registered claim of :data:`STRATEGY_CLAIMS` (:func:`nlgjudge.register.verdict`).
    ``contexts_needed`` (not-resolved rows only; NaN: out of reach) is
    :func:`nlgjudge.register.contexts_needed_for` at the per-context differences' spread.
    ``gates``: :func:`judge_gates` (by dataset); a degenerate judge's rows are not tested.
    ``per_draw`` (:func:`strategy_claim_frames`): each row's Monte Carlo errors, of its estimate
    (``monte_carlo_mean_se``) and of its interval's ends (``monte_carlo_se``: the estimate's and the
    spread's, :func:`nlgjudge.stats.intervals.draws_errors`), and an interval end within its band of
    a boundary is borderline (:func:`nlgjudge.register.verdict`), never a verdict the random draws
    decided; ``p_family`` is the p Holm's correction reads over a family of rows (:func:`family_p`).
    """
    keys = [*by]
    missing = sorted(({"context_id", "comparison", "first_x100", "second_x100"} | set(keys)) - set(per_context.columns))
    if missing:
        raise ValueError(f"per_context lacks columns {missing}; pass the second frame of subset_curve_frames()")
    rows = []
    # each row's own draws, split once (a filter over the whole draws frame per row is quadratic)
    draw_groups = ({(k if isinstance(k, tuple) else (k,)): g for k, g in per_draw.groupby([*keys, "comparison"], sort=False)}
                   if per_draw is not None else {})
    for group_key, group in per_context.groupby([*keys, "comparison"], sort=False):
        *group_values, name = group_key if isinstance(group_key, tuple) else (group_key,)
        if name not in STRATEGY_CLAIMS:
            continue
        spec = STRATEGY_CLAIMS[name]
        sides = group.groupby("context_id", sort=False)[["first_x100", "second_x100"]].mean()
        interval = paired_difference_interval(sides["first_x100"], sides["second_x100"], confidence)
        differences = (sides["first_x100"] - sides["second_x100"]).to_numpy()
        where = dict(zip(keys, group_values))
        gate = (gates or {}).get(str(where.get("dataset"))) if "dataset" in where else None
        claim_id = f"subsets.{name}"
        mean_se = mc_se = np.nan
        if per_draw is not None:
            draws = draw_groups.get((*group_values, name), per_draw.iloc[:0])
            mean_se = monte_carlo_error(group, draws)
            mc_se = end_error(*draws_errors(mean_se, interval.n), interval.n, confidence)
        verdict = registered_verdict(claim_id, interval.mean, interval.low, interval.high, interval.n, degenerate=gate,
                                     monte_carlo_se=0.0 if np.isnan(mc_se) else mc_se)
        needed = np.nan
        threshold = spec.threshold
        if spec.direction == "within" and spec.margin is not None:  # the band end nearest the estimate
            ends = (threshold - spec.margin, threshold + spec.margin)
            threshold = min(ends, key=lambda end: abs(interval.mean - end))
        # The two-sided p of the row's own test (against the threshold, or the nearest band end), for
        # Holm's correction wherever rows are counted or read as a family.
        p_value = p_from_interval(interval.mean, interval.low, interval.high, interval.n, threshold, confidence)
        # the p Holm reads: the largest the draws within their band could give (a family verdict the
        # draws cannot move, :func:`family_p`)
        p_family = _p_within_draws(interval.mean, interval.low, interval.high, interval.n, threshold, mean_se,
                                   MONTE_CARLO_Z, confidence)[0]
        if verdict.verdict == NOT_RESOLVED and differences.size >= 2:
            # at the registered minimal effect of interest, with the per-context spread
            found = contexts_needed_for(claim_id, float(np.std(differences, ddof=1)))
            needed = float(found) if found is not None else np.nan
        rows.append({**dict(zip(keys, group_values)), "finding": spec.finding, "comparison": name,
                     "claim": spec.claim, "estimate": interval.mean, "low": interval.low, "high": interval.high,
                     "n": interval.n, "sets": group[[c for c in ("template", "aspect") if c in group]].drop_duplicates().shape[0],
                     "verdict": verdict.verdict, "reason": verdict.reason, "contexts_needed": needed,
                     "p_value": p_value, "monte_carlo_se": mc_se, "monte_carlo_mean_se": mean_se,
                     "test_threshold": threshold, "p_family": p_family})
    order = {name: k for k, name in enumerate(STRATEGY_CLAIMS)}
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    out["_order"] = out["comparison"].map(order)
    return out.sort_values([*keys, "_order"], kind="stable").drop(columns="_order").reset_index(drop=True)


def _p_within_draws(estimate: float, low: float, high: float, n: int, threshold: float, mean_se: float, z: float,
                    confidence: float = 0.95) -> tuple[float, float]:
    """The largest and smallest p the draws within ``z`` of their Monte Carlo errors could give a row
    (:func:`nlgjudge.stats.multiplicity.p_within_error`; the SE's error by the delta method,
    :func:`nlgjudge.stats.intervals.draws_errors`); the row's own p twice where nothing was drawn."""
    if not np.isfinite(mean_se):
        mean_se = 0.0
    estimate_error, se_error = draws_errors(mean_se, int(n))
    return p_within_error(estimate, low, high, int(n), threshold, estimate_error, se_error, z, confidence)


def holm_open(rows: pd.DataFrame, bands: float = 1.0) -> np.ndarray:
    """Which rows of one family Holm's correction would keep with every row's p read at the smallest
    its draws within ``bands`` borderline bands give, and not at the largest: the draws, not the data,
    decide whether they survive, so more draws settle them (a row resolved on its own only)."""
    if rows.empty:
        return np.zeros(0, dtype=bool)
    ends = [_p_within_draws(r.estimate, r.low, r.high, r.n, r.test_threshold, r.monte_carlo_mean_se,
                            bands * MONTE_CARLO_Z) for r in rows.itertuples()]
    largest, smallest = (np.array(side, dtype=float) for side in zip(*ends, strict=True))
    resolved = rows["verdict"].isin([SUPPORTED, CONTRADICTED]).to_numpy()
    return resolved & holm_rejections(smallest) & ~holm_rejections(largest)


def drawn_by_holm(claims: pd.DataFrame) -> pd.Series:
    """Per row, whether Holm's correction over its comparison's family keeps it at some of its draws and
    not at others (:func:`holm_open`): the draws decide it, not the data (False without the draws' columns)."""
    drawn = pd.Series(False, index=claims.index)
    if {"test_threshold", "monte_carlo_mean_se"} <= set(claims.columns):
        for _, part in claims.groupby("comparison", sort=False):
            drawn.loc[part.index] = holm_open(part)
    return drawn


def family_verdicts(claims: pd.DataFrame) -> pd.Series:
    """Each row of :func:`strategy_claims` read as one of its comparison's family (the datasets, or
    the dataset-aspect cells, of one finding): :func:`after_holm` within each comparison."""
    after = pd.Series(NOT_RESOLVED, index=claims.index, dtype=object)
    for _, part in claims.groupby("comparison", sort=False):
        after.loc[part.index] = after_holm(part)
    return after


def claims_display(claims: pd.DataFrame, by: Sequence[str] = ("dataset",), decimals: int = 1,
                   family: bool = False) -> pd.DataFrame:
    """:func:`strategy_claims` as the page shows it: the verdict, the claim, the estimate with its
    interval (Spearman x100 points), n contexts and the reason. ``family``: the rows of one
    comparison are read as a family (Fig. 5's cells), and a resolved cell that does not survive
    Holm's correction over them is marked a flag."""
    from nlgjudge.prose import interval_text, verdict_after_holm

    verdicts = claims["verdict"].tolist()
    if family:
        members = "datasets" if list(by) == ["dataset"] else "cells"
        drawn = drawn_by_holm(claims)
        verdicts = [f"{a} (borderline: Holm's correction over the {members} keeps it at some of its draws and not at "
                    "others; more draws settle it)" if d and a != v else verdict_after_holm(v, a, family=f"the {members}")
                    for v, a, d in zip(claims["verdict"], family_verdicts(claims), drawn, strict=True)]
        if members == "datasets":  # a claim amended after its data is a lead on its own row (the cells' claims, in Fig. 5's)
            verdicts = [v + lead_words(f"subsets.{c}") for v, c in zip(verdicts, claims["comparison"], strict=True)]
    return pd.DataFrame({
        "verdict": verdicts,
        "finding": claims["finding"].to_numpy(),
        "claim": claims["claim"].to_numpy(),
        "estimate [95%]": [interval_text(e, lo, hi, decimals) for e, lo, hi in
                           zip(claims["estimate"], claims["low"], claims["high"], strict=True)],
        "n contexts": claims["n"].astype(int).to_numpy(),
        "reason": claims["reason"].to_numpy(),
    }, index=pd.MultiIndex.from_frame(claims[list(by)]) if len(by) > 1 else pd.Index(claims[by[0]], name=by[0]))


def contexts_needed_display(claims: pd.DataFrame, by: Sequence[str] = ("dataset",), decimals: int = 1) -> pd.DataFrame:
    """The not-resolved rows of :func:`strategy_claims`: the estimate with its interval, the
    contexts now and the contexts needed ("out of reach" past 100,000 or at a zero effect)."""
    from nlgjudge.prose import interval_text

    rows = claims[claims["verdict"] == NOT_RESOLVED]
    return pd.DataFrame({
        "claim": rows["claim"].to_numpy(),
        "estimate [95%]": [interval_text(e, lo, hi, decimals) for e, lo, hi in
                           zip(rows["estimate"], rows["low"], rows["high"], strict=True)],
        "n now": rows["n"].astype(int).to_numpy(),
        "contexts needed": [needed_cell(v, int(n), registered_claim(f"subsets.{c}").direction == "within")
                            for v, n, c in zip(rows["contexts_needed"], rows["n"], rows["comparison"], strict=True)],
    }, index=pd.MultiIndex.from_frame(rows[list(by)]))


def every_cell_verdict(verdicts: Sequence[str], p_values: Sequence[float]) -> str:
    """A claim said of every cell (Fig. 5: "equivalent plots for other tasks/scores"): supported only
    when every cell supports it; contradicted when a cell contradicts it after Holm's correction
    over the cells (``p_values``: each cell's p as the correction reads it, :func:`family_p`; a
    single cell against the family before the correction is a flag, not the family's verdict); not
    tested when no cell was tested; otherwise not resolved."""
    if len(p_values) != len(verdicts):
        raise ValueError(f"one p-value per cell: got {len(p_values)} for {len(verdicts)} verdicts")
    tested = [v for v in verdicts if v != NOT_TESTED]
    if not tested:
        return NOT_TESTED
    kept = holm_rejections(p_values)
    if any(v == CONTRADICTED and k for v, k in zip(verdicts, kept, strict=True)):
        return CONTRADICTED
    if len(tested) == len(verdicts) and all(v == SUPPORTED for v in tested):
        return SUPPORTED
    return NOT_RESOLVED


def family_counts(cells: pd.DataFrame) -> dict[str, str]:
    """Per verdict, how many cells have it, supported and contradicted counted after Holm's correction
    over the cells with the uncorrected count beside it where the two differ (the glossary's rule)."""
    after = after_holm(cells)
    before = cells["verdict"].tolist()
    # Every category after the correction (a resolved cell that does not survive it is not resolved,
    # a flag), so the counts add up to the cells; the uncorrected count beside where it differs.
    return {verdict: count_words(after.count(verdict), before.count(verdict))
            for verdict in (SUPPORTED, CONTRADICTED, NOT_RESOLVED, NOT_TESTED)}


def after_holm(cells: pd.DataFrame) -> list[str]:
    """Each cell's verdict read as one of a family: a supported or contradicted cell that does not
    survive Holm's correction over the cells' p-values (:func:`family_p`: each the largest its
    draws could give) becomes not resolved (a flag)."""
    return verdicts_after_holm(cells["verdict"].tolist(), family_p(cells))


def figure5_reading(cell_claims: pd.DataFrame) -> pd.DataFrame:
    """Seed 000 Fig. 5 beside ours. The paper reads its appendix curves only as "equivalent plots
    for other tasks/scores" (§5.6, pointing to App. A.1): the findings of Fig. 4 hold on every
    dataset and aspect. ``cell_claims``: :func:`strategy_claims` by dataset and aspect. One row per
    claim: the reported reading, how many cells have each verdict, and the every-cell verdict
    (:func:`every_cell_verdict`)."""
    rows = []
    for (finding, claim), part in cell_claims.groupby(["finding", "claim"], sort=False):
        if "ours" in finding:
            continue
        lead = lead_words(f"subsets.{part['comparison'].iloc[0]}.every_cell")
        rows.append({
            "finding": finding, "claim": claim,
            "reported (Fig. 5, §5.6)": "the same on every task and score ('equivalent plots')",
            "cells": len(part),
            **family_counts(part),
            "verdict on 'every cell' (Holm)": every_cell_verdict(part["verdict"].tolist(), family_p(part).tolist()) + lead,
        })
    return pd.DataFrame(rows)


def fraction_reached(
    curves: pd.DataFrame, fraction: float = 0.25, share: float = 0.5, strategy: str = "random"
) -> pd.DataFrame:
    """How much of the full-matrix Spearman one strategy reaches at a fraction of the comparisons,
    per dataset, aspect and decisions (templates averaged, as in the table under Fig. 5).

    Columns: dataset, aspect, debiased, budget, at_fraction (Spearman x100 at the largest budget at
    or below ``fraction`` of N(N-1)), full (random with all N(N-1) comparisons, the same decisions),
    ratio (at_fraction / full; NaN when full <= 0: nothing to reach), reached (ratio >= ``share``).
    """
    summary = curve_summary(curves, fractions=(fraction, 1.0))
    mean = summary.groupby(["dataset", "aspect", "strategy", "debiased", "target_fraction"], sort=False).agg(
        spearman_x100=("spearman_x100", "mean"), budget=("budget", "max")).reset_index()
    full = mean[(mean["strategy"] == "random") & np.isclose(mean["target_fraction"], 1.0)]
    full = full.set_index(["dataset", "aspect", "debiased"])["spearman_x100"]
    part = mean[(mean["strategy"] == strategy) & np.isclose(mean["target_fraction"], fraction)].copy()
    part["full"] = [full.get((d, a, b), np.nan) for d, a, b in zip(part["dataset"], part["aspect"], part["debiased"], strict=True)]
    part["at_fraction"] = part["spearman_x100"]
    part["ratio"] = np.where(part["full"] > 0, part["at_fraction"] / part["full"].where(part["full"] > 0), np.nan)
    part["reached"] = part["ratio"] >= share
    return part[["dataset", "aspect", "debiased", "budget", "at_fraction", "full", "ratio", "reached"]].reset_index(drop=True)
