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

It also gathers the comparisons of several judges with the chapters' ``released_only`` rule
(:func:`collect_comparisons`) and lays out "reported" beside "ours" (:func:`side_by_side`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from nlgjudge.data import JudgeDataset
from nlgjudge.stats import (
    DebiasThreshold,
    debias_threshold,
    debiased_decisions,
    hard_decisions,
    pairwise_accuracy,
    positional_bias,
    summary_level_correlation,
    win_ratio,
)
from nlgjudge.studies.comparative import comparison_matrices, gold_scores

#: The columns that identify one comparison set (one tau, one P(A)).
SET_KEYS = ["model", "dataset", "template", "aspect"]
REQUIRED_COLUMNS = [*SET_KEYS, "context_id", "i", "j", "p_a"]

#: Dataset names as printed in the paper's tables -> this package's names.
REPORTED_DATASETS = {"SummEval": "summeval", "TopicalChat": "topicalchat", "WebNLG": "webnlg", "Podcast": "podcast"}


def check_comparisons(comparisons: pd.DataFrame) -> None:
    """Raise a clear error unless ``comparisons`` is a comparative frame with at least one row."""
    missing = [c for c in REQUIRED_COLUMNS if c not in comparisons.columns]
    if missing:
        raise ValueError(
            f"the comparison frame lacks columns {missing}; pass the frame returned by run_comparative "
            f"(it has {list(comparisons.columns)})"
        )
    if comparisons.empty:
        raise ValueError("the comparison frame is empty: no comparisons to analyse")
    bad = comparisons["p_a"].isna() | ~comparisons["p_a"].between(0.0, 1.0)
    if bad.any():
        raise ValueError(f"{int(bad.sum())} comparison(s) have P(A) outside [0, 1] or missing")
    duplicated = comparisons.duplicated([*SET_KEYS, "context_id", "i", "j"])
    if duplicated.any():
        raise ValueError(f"{int(duplicated.sum())} comparison(s) appear twice; concatenate each judge's run once")


def comparison_sets(comparisons: pd.DataFrame) -> dict[tuple[str, str, int, str], dict[str, np.ndarray]]:
    """``{(model, dataset, template, aspect): {context_id: P}}`` (P as in :func:`comparison_matrices`)."""
    check_comparisons(comparisons)
    out: dict[tuple[str, str, int, str], dict[str, np.ndarray]] = {}
    for (model, dataset), group in comparisons.groupby(["model", "dataset"], sort=False):
        for (context_id, template, aspect), matrix in comparison_matrices(group).items():
            out.setdefault((str(model), str(dataset), template, aspect), {})[context_id] = matrix
    return out


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
    return _Scored(corr.value_x100, len(usable), corr.n_undefined, accuracy.percent, accuracy.n_comparisons)


def debiasing_table(comparisons: pd.DataFrame, datasets: Mapping[str, JudgeDataset]) -> pd.DataFrame:
    """Spearman x100 (Table 6) and pairwise accuracy % (Tables 7, 10) with and without debiasing.

    ``datasets`` maps dataset name -> the loaded :class:`JudgeDataset` (for the human scores, in the
    candidates' order). One row per comparison set and ``debiased`` flag; columns also give tau,
    alpha, P(A) after the decisions used, the contexts used and the comparisons counted.
    """
    rows = []
    for (model, dataset, template, aspect), matrices in comparison_sets(comparisons).items():
        if dataset not in datasets:
            raise ValueError(f"no human scores for dataset {dataset!r}: pass its JudgeDataset in datasets")
        all_gold = gold_scores(datasets[dataset], aspect)
        missing = [c for c in matrices if c not in all_gold]
        if missing:
            raise ValueError(f"contexts {missing[:3]} of {dataset} are not in the dataset passed for the human scores")
        gold = [all_gold[c] for c in matrices]
        for context_id, matrix in matrices.items():
            if matrix.shape[0] != all_gold[context_id].size:
                raise ValueError(
                    f"{dataset} context {context_id}: {matrix.shape[0]} compared candidates but "
                    f"{all_gold[context_id].size} human scores; the comparisons must cover every candidate"
                )
        fit = fit_threshold(matrices)
        for debiased in (False, True):
            if debiased:
                decisions = [debiased_decisions(m, fit) for m in matrices.values()]
            else:
                decisions = [hard_decisions(m) for m in matrices.values()]
            scored = _score(decisions, gold)
            made = np.concatenate([d[~np.isnan(d)] for d in decisions])
            rows.append(
                {
                    "model": model,
                    "dataset": dataset,
                    "template": template,
                    "aspect": aspect,
                    "debiased": debiased,
                    "spearman_x100": scored.spearman,
                    "accuracy_pct": scored.accuracy,
                    "p_a": float(made.mean()),
                    "tau": fit.tau if debiased else 0.5,
                    "alpha": fit.alpha if debiased else 1.0,
                    "n_contexts": scored.n_contexts_used,
                    "n_contexts_constant_gold": len(matrices) - scored.n_contexts_used,
                    "n_contexts_tied_prediction": scored.n_constant_pred,
                    "n_pairs": scored.n_pairs,
                }
            )
    return pd.DataFrame(rows)


def average_over_templates(table: pd.DataFrame, values: Sequence[str], keys: Sequence[str] | None = None) -> pd.DataFrame:
    """Mean of ``values`` over the prompt templates (the paper averages its two prompts, Table 6),
    with ``n_templates`` saying how many were averaged."""
    keys = list(keys) if keys is not None else [k for k in [*SET_KEYS, "debiased"] if k in table.columns and k != "template"]
    grouped = table.groupby(keys, sort=False)
    out = grouped[list(values)].mean()
    out["n_templates"] = grouped["template"].nunique()
    return out.reset_index()


# --------------------------------------------------------------------------------------------------
# The paper's numbers in the same tidy shape, and the side-by-side layout


def reported_tidy(reported: pd.DataFrame, value_name: str) -> pd.DataFrame:
    """A seed-000 table from :func:`nlgjudge.reported.load_reported` as model, dataset, aspect, <key>, value.

    ``row`` (the prompt "1"/"2" or the debias flag "✗"/"✓") is kept as printed in column ``row``;
    missing cells ("-") are dropped (they are absent in the paper too), and so are the paper's
    "Avg." columns (averages over its own set of aspects, not comparable to a subset).
    """
    frame = reported.loc[reported["value"].notna() & (reported["column_group"] != "Avg.")].copy()
    unknown = sorted(set(frame["column_group"]) - set(REPORTED_DATASETS))
    if unknown:
        raise ValueError(f"reported table has unknown dataset labels {unknown}; known: {sorted(REPORTED_DATASETS)}")
    return pd.DataFrame(
        {
            "model": frame["row_group"].where(frame["row_group"] != "", "(paper)"),
            "row": frame["row"],
            "dataset": frame["column_group"].map(REPORTED_DATASETS),
            "aspect": frame["column"],
            value_name: frame["value"].astype(float),
        }
    )


def side_by_side(
    reported: pd.DataFrame,
    ours: pd.DataFrame,
    value: str,
    column_keys: Sequence[str],
    reported_label: str,
    ours_label: str = "ours",
    row_keys: Sequence[str] = ("dataset", "aspect"),
) -> pd.DataFrame:
    """One table with rows ``row_keys`` and two blocks of columns: the paper's (``reported_label``,
    e.g. "reported (Table 9)") and ours. Each column is one system of one source: never mixed.

    ``reported`` and ``ours`` are tidy frames holding ``row_keys``, ``column_keys`` and ``value``.
    Rows are those of ours (the reported block shows what the paper has for them; blanks where it
    has nothing), then any rows only the paper has.
    """
    blocks = []
    for label, frame in ((reported_label, reported), (ours_label, ours)):
        if frame.empty:
            continue
        wide = frame.pivot_table(index=list(row_keys), columns=list(column_keys), values=value, aggfunc="first", sort=False)
        wide.columns = pd.MultiIndex.from_tuples(
            [(label, *(c if isinstance(c, tuple) else (c,))) for c in wide.columns], names=["source", *column_keys]
        )
        blocks.append(wide)
    if not blocks:
        raise ValueError("both the reported and our table are empty")
    order = list(dict.fromkeys(list(ours.set_index(list(row_keys)).index) + list(reported.set_index(list(row_keys)).index)))
    table = pd.concat(blocks, axis=1)
    return table.reindex(pd.MultiIndex.from_tuples(order, names=list(row_keys)) if len(row_keys) > 1 else order)


# --------------------------------------------------------------------------------------------------
# The figure


def bias_figure(ours: pd.DataFrame, reported: pd.DataFrame | None = None, title: str | None = None) -> Figure:
    """P(A) of every model, prompt and aspect, one panel per dataset (seed 002 Fig. 3-4 style).

    ``ours`` is :func:`bias_table`'s frame; ``reported`` (optional) has the same columns (model,
    dataset, template, aspect, p_a) for the paper's systems and is drawn in its own row of panels
    above ours, so the two are never mixed. Colour is the model, marker the prompt template; the
    dashed line at 0.5 is an order-blind judge.
    """
    for name, frame in (("ours", ours), ("reported", reported)):
        if frame is not None:
            missing = [c for c in ("model", "dataset", "template", "aspect", "p_a") if c not in frame.columns]
            if missing:
                raise ValueError(f"bias_figure: the {name} frame lacks columns {missing}")
    if ours.empty:
        raise ValueError("bias_figure: our bias table is empty")
    rows = [("ours", ours)]
    if reported is not None and not reported.empty:
        rows.insert(0, ("paper (Table 9)", reported))
    datasets = list(dict.fromkeys(ours["dataset"]))
    fig, axes = plt.subplots(
        len(rows), len(datasets), figsize=(3.3 * len(datasets) + 2.6, 2.8 * len(rows)),
        squeeze=False, sharey=True, layout="constrained",
    )
    markers = ["o", "s", "^", "D"]
    for r, (label, frame) in enumerate(rows):
        models = list(dict.fromkeys(frame["model"]))
        colours = dict(zip(models, sns.color_palette("colorblind", len(models))))
        templates = sorted({str(t) for t in frame["template"]})
        width = 0.7 / max(len(models), 1)
        for c, dataset in enumerate(datasets):
            ax = axes[r, c]
            ax.axhline(0.5, color="grey", linestyle="--", linewidth=1)
            part = frame[frame["dataset"] == dataset]
            aspects = list(dict.fromkeys(ours.loc[ours["dataset"] == dataset, "aspect"]))
            aspects += [a for a in dict.fromkeys(part["aspect"]) if a not in aspects]
            for m, model in enumerate(models):
                for t, template in enumerate(templates):
                    cells = part[(part["model"] == model) & (part["template"].astype(str) == template)]
                    x = [aspects.index(a) - 0.35 + width * (m + 0.5) for a in cells["aspect"]]
                    ax.scatter(x, cells["p_a"], color=colours[model], marker=markers[t % len(markers)],
                               s=36, edgecolor="black", linewidth=0.4, zorder=3)
            if part.empty:
                ax.text(0.5, 0.5, "not in this table", ha="center", va="center", transform=ax.transAxes, color="grey")
            ax.set_xticks(range(len(aspects)), aspects)
            ax.set_xlim(-0.5, len(aspects) - 0.5)
            ax.set_ylim(0, 1)
            ax.set_title(f"{label}: {dataset}", fontsize="medium")
            ax.set_ylabel("P(A)" if c == 0 else "")
        handles = [plt.Line2D([], [], color=colours[m], marker="o", linestyle="", label=m) for m in models]
        handles += [plt.Line2D([], [], color="black", marker=markers[t % len(markers)], linestyle="", label=f"prompt {p}")
                    for t, p in enumerate(templates)]
        axes[r, -1].legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False, fontsize="small")
    if title:
        fig.suptitle(title)
    return fig


# --------------------------------------------------------------------------------------------------
# Gathering the comparisons of several judges (shared by the bias and subsets chapters)


@dataclass
class CollectedComparisons:
    """The comparisons of every (model, dataset) that has them, with what was left out and why."""

    frame: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    styles: dict[str, str] = field(default_factory=dict)
    """Prompt style used per model ("chat", "plain", "seq2seq")."""
    endings: dict[str, str] = field(default_factory=dict)
    """How the prompts end, per dataset (``PromptEnding.describe()``)."""
    contexts: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    """Contexts used per (model, dataset)."""


def collect_comparisons(
    models: Sequence[str],
    datasets: Mapping[str, JudgeDataset],
    *,
    cache: object,
    aspects: Sequence[str] | None,
    templates: Sequence[int],
    released_only: bool,
    answer_suffix: bool = False,
) -> CollectedComparisons:
    """Run (or read from the cache) every model's comparisons on every dataset.

    With ``released_only`` a (model, dataset) uses only the contexts whose every comparison is
    already cached (no model is loaded; a pair with none is left out and a note says so); otherwise
    everything missing is computed. ``aspects=None`` means each dataset's own aspects; named aspects
    a dataset does not have are skipped for it (noted).
    """
    from nlgjudge.engine import Judge
    from nlgjudge.prompts import ANSWER_SUFFIX, Wording, comparative_ending
    from nlgjudge.studies.comparative import comparative_requests, run_comparative
    from nlgjudge.studies.coverage import available_contexts, restrict
    from nlgjudge.studies.prompting import prompt_style
    from nlgjudge.studies.released import study_name

    collected = CollectedComparisons(frame=pd.DataFrame())
    frames = []
    for name, ds in datasets.items():
        wanted = list(ds.info.aspects) if aspects is None else [a for a in aspects if a in ds.info.aspects]
        skipped = [] if aspects is None else [a for a in aspects if a not in ds.info.aspects]
        if skipped:
            collected.notes.append(f"{name}: has no aspect(s) {skipped}; skipped there")
        if not wanted:
            continue
        ending = comparative_ending(Wording.for_dataset(ds.info), user_suffix=ANSWER_SUFFIX if answer_suffix else "")
        collected.endings[name] = ending.describe()
        for model in models:
            judge = Judge(model, cache=cache, study=study_name("comparative", name))
            style = prompt_style(judge.handle, "auto")
            collected.styles[judge.handle.name] = style
            use = ds
            if released_only:

                def build(one: JudgeDataset, style: str = style, wanted: list[str] = wanted) -> list[object]:
                    requests, _ = comparative_requests(
                        one, aspects=wanted, templates=templates, style=style, answer_suffix=answer_suffix
                    )
                    return list(requests)

                coverage = available_contexts(judge, ds, "label_probs", build)
                collected.notes.append(f"{judge.handle.name} on {coverage.describe()}")
                if not coverage.available:
                    continue
                use = restrict(ds, coverage.available)
            frame = run_comparative(judge, use, aspects=wanted, templates=templates, style=style, answer_suffix=answer_suffix)
            collected.contexts[(judge.handle.name, name)] = use.context_ids()
            frames.append(frame)
    if frames:
        collected.frame = pd.concat(frames, ignore_index=True)
    return collected
