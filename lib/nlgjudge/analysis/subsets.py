"""Fewer comparisons (seed 000 §3.4, §5.5-5.6, Appendix B; Fig. 4-5, Tables 8 and 11) on real judges.

Thin wrappers around :mod:`nlgjudge.stats` that take the comparative study's tidy frame (all
N(N-1) ordered comparisons of every context, see
:func:`nlgjudge.studies.comparative.run_comparative`) and return tidy frames:

* :func:`subset_curve_frame`: Spearman x100 against the number of comparisons R for each selection
  strategy, with and without debiasing, the mean over draws with a confidence band
  (:func:`nlgjudge.stats.subset_curves`). Subsets are *simulated* by reading the selected entries of
  the full matrix, exactly what a judge asked only those comparisons would have answered (the
  probabilities are deterministic). The ``active`` strategy uses the judge's answers as it goes
  (it is sequential), which the full matrix also provides.
* :func:`strategy_comparison_frame`: the comparisons seed 000 §5.6 makes on Fig. 4, per set.
* :func:`self_consistency_frame`: Table 8, ranking accuracy on random subsets of the candidates.
* :func:`ranking_methods_frame`: Table 11, win ratio against maximum likelihood (eq. 11-13), plus
  Bradley-Terry scores (choix).

The figures of the curves are in :mod:`nlgjudge.plotting.subsets`.
"""


from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from nlgjudge.analysis.frames import comparison_sets, gold_scores
from nlgjudge.data import JudgeDataset
from nlgjudge.stats import (
    STRATEGIES,
    bradley_terry_scores,
    compare_strategies,
    hard_decisions,
    max_likelihood_ranking,
    max_likelihood_ranking_hard,
    self_consistency,
    subset_curves,
    summary_level_correlation,
    win_ratio,
)

#: Plot order and names of the strategies.
STRATEGY_ORDER = ("random", "no-repeat", "symmetric", "active", "full")


def stacks_by_size(
    comparisons: pd.DataFrame, datasets: Mapping[str, JudgeDataset]
) -> dict[tuple[str, str, int, str], dict[int, tuple[list[str], np.ndarray, np.ndarray]]]:
    """Per comparison set, the contexts grouped by their number of candidates N:
    ``{(model, dataset, template, aspect): {N: (context_ids, probs (C, N, N), gold (C, N))}}``.

    The subset curves need equal N within a stack (a budget R means something different for other
    N). Every context must have all its N(N-1) comparisons.
    """
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


def subset_curve_frame(
    comparisons: pd.DataFrame,
    datasets: Mapping[str, JudgeDataset],
    strategies: Sequence[str] = ("random", "no-repeat", "symmetric", "active"),
    n_draws: int = 50,
    debias: Sequence[bool] = (False, True),
    budgets: Sequence[int] | None = None,
    confidence: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Tidy subset curves (Fig. 4-5): one row per set, strategy, debiasing flag and budget R.

    Columns: model, dataset, template, aspect, n_candidates, n_contexts (used: contexts with
    constant human scores are left out, counted in n_contexts_constant_gold), strategy, debiased,
    budget, fraction (R / N(N-1)), spearman_x100 (mean over draws), sd_x100, ci_low_x100,
    ci_high_x100, distinct_pairs, p_a (after debiasing when debiased), n_draws. ``attrs["seconds"]``
    holds the total compute time. Each set gets its own seed derived from ``seed``, so adding a
    model or aspect does not change the others' draws.
    """
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown or not strategies:
        raise ValueError(f"unknown strategies {unknown}; choose from {list(STRATEGIES)}")
    rows = []
    started = time.perf_counter()
    for index, (key, groups) in enumerate(stacks_by_size(comparisons, datasets).items()):
        model, dataset, template, aspect = key
        for n, (ids, probs, gold) in groups.items():
            usable = np.ptp(gold, axis=1) > 0
            if not usable.any():
                continue  # no context of this size has varying human scores: no correlation exists
            curves = subset_curves(
                probs, gold, list(strategies), budgets, n_draws, tuple(debias), confidence,
                seed=np.random.default_rng([seed, index, n]),
            )
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
    return frame


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
) -> pd.DataFrame:
    """Table 8: agreement (%) of the win-ratio ranking of n random candidates (all n(n-1) comparisons
    among them, eq. 2 decisions) with the ranking from all N ("Final") and with the human scores
    ("Gold"). Sizes larger than a dataset's N are skipped there and N itself is always added (the
    paper's last column, where "Final" is 100 by definition). Long frame: model, dataset, template,
    aspect, n_candidates, size, reference, percent, n_draws.
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
                seed=np.random.default_rng([seed, index, n]),
            )
            for size, final, human in zip(result.subset_sizes, result.final_percent, result.gold_percent, strict=True):
                for reference, value in (("Final", final), ("Gold", human)):
                    rows.append({"model": model, "dataset": dataset, "template": template, "aspect": aspect,
                                 "n_candidates": n, "size": int(size), "reference": reference,
                                 "percent": float(value), "n_draws": n_draws})
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
    n_contexts.
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
        usable = [k for k, g in enumerate(gold) if np.ptp(g) > 0]
        if not usable:
            continue
        for method, score in methods.items():
            predictions = [score(probs[k]) for k in usable]
            corr = summary_level_correlation(predictions, [gold[k] for k in usable], "spearman", undefined="zero")
            rows.append({"model": model, "dataset": dataset, "template": template, "aspect": aspect,
                         "method": method, "spearman_x100": corr.value_x100, "n_contexts": len(usable)})
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


def prose_values(strategies: pd.DataFrame, methods: pd.DataFrame, judge: str) -> dict[str, str]:
    """The numbers the subsets chapter's prose cites (display strings, for glue).

    ``strategies``: :func:`strategy_comparison_frame`; ``methods``: :func:`ranking_methods_frame`
    averaged over templates (model, dataset, aspect, method, spearman_x100). Per dataset, the
    range of "no-repeat minus symmetric at equal R" (negative: symmetric ahead), and over every
    dataset-aspect how far maximum likelihood and Bradley-Terry move from the win ratio: the
    largest change either way, so the text never calls "little" what the table shows is large.
    """
    from nlgjudge.prose import listing, number

    gap = STRATEGY_COMPARISON_LABELS["no_repeat_minus_symmetric_equal_r"]
    mine = strategies[strategies["model"] == judge]
    parts = []
    for dataset, part in mine.groupby("dataset", sort=False):
        values = part[gap].dropna()
        if len(values):
            parts.append(f"{dataset} {number(values.min(), 1, signed=True)} to {number(values.max(), 1, signed=True)}")
    wide = methods[methods["model"] == judge].pivot_table(index=["dataset", "aspect"], columns="method",
                                                          values="spearman_x100", sort=False)
    out = {"judge": judge, "symmetric_gap_ranges": listing(parts, empty="not computed")}
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
