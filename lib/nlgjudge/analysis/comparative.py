"""From the studies' tidy outputs to the papers' tables: per-context Spearman x100, averaged.

Pure functions on frames (no model calls, no I/O). Every method is first turned into one
*prediction* per candidate (:data:`PREDICTION_COLUMNS`), then correlated with the human scores
within each context and averaged over contexts (the papers' "summary-level" correlation,
:func:`nlgjudge.stats.summary_level_correlation`), per prompt template and as the mean over
templates (seed 000 Table 1 caption: "averaged over both prompts").

* comparative assessment: hard decisions of the full comparison matrix (eq. 2), optionally
  debiased (eq. 10), turned into win ratios (eq. 6);
* prompt scoring: the mean of the parsed samples (the paper's reading, with unparseable samples
  counted) or the expected score over the score distribution (ours, as G-Eval does);
* G-Eval and reference-based baselines: their scores as they are.

:func:`side_by_side` lays the paper's reported numbers beside ours in one long frame whose
``source`` column says which is which; :func:`side_by_side_table` pivots it for display with
``source`` in the row labels, so a reported and a computed number never share a row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from nlgjudge.data import JudgeDataset
from nlgjudge.data.summeval import N_ARTICLES
from nlgjudge.data.topicalchat import N_DIALOGUES
from nlgjudge.data.webnlg import N_TRIPLE_SETS
from nlgjudge.prose import interval_text, number, verdict_after_holm
from nlgjudge.stats import (
    CONTRADICTED,
    NOT_RESOLVED,
    NOT_TESTED,
    SUPPORTED,
    VERDICTS,
    mean_interval,
    paired_difference_interval,
    debias_threshold,
    debiased_decisions,
    hard_decisions,
    summary_level_correlation,
    win_ratio_full_matrix,
)
from nlgjudge.analysis.frames import comparison_matrices
from nlgjudge.analysis.judges import degenerate_judges
from nlgjudge.stats.multiplicity import count_words, holm_rejections, paired_t_p_value

PREDICTION_COLUMNS = ["model", "dataset", "method", "template", "aspect", "context_id", "candidate_id", "score"]
GROUP_COLUMNS = ["model", "dataset", "method", "template", "aspect"]
#: ``template`` label of the rows that average the per-template correlations.
TEMPLATE_MEAN = "mean"
#: ``template`` of methods without the paper's two prompt templates (G-Eval, baselines).
NO_TEMPLATE = 0

COMPARATIVE = "comparative"
COMPARATIVE_DEBIASED = "comparative (debiased)"
SCORING_SAMPLED = "prompt scoring (sampled)"
SCORING_EXPECTED = "prompt scoring (expected)"
GEVAL = "G-Eval"

#: The section of seed 000 Tables 1-4 each of our methods belongs to (the tables' ``row_group``).
SECTIONS = {
    COMPARATIVE: "Comparative Assessment (§3)",
    COMPARATIVE_DEBIASED: "Comparative Assessment (§3)",
    SCORING_SAMPLED: "Prompt Scoring (§4.3.2)",
    SCORING_EXPECTED: "Prompt Scoring (§4.3.2)",
    GEVAL: "G-Eval (§4.3.2)",
}
BASELINE_SECTION = "Baselines (§4.3)"
SECTION_ORDER = ["Baselines (§4.3)", "Prompt Scoring (§4.3.2)", "G-Eval (§4.3.2)", "Comparative Assessment (§3)"]
#: seed 000's table of each dataset (Table 2, Podcast, is system- and summary-level: not laid out here).
PAPER_TABLES = {"summeval": 1, "topicalchat": 3, "webnlg": 4}
REPORTED = "reported"
OURS = "ours"


# --------------------------------------------------------------------------------------------
# Predictions: one score per candidate, per method, template and aspect


def _require(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise KeyError(f"{what} lacks columns {missing} (it has {list(frame.columns)})")


def comparative_predictions(
    comparisons: pd.DataFrame, *, debias: bool = False, debias_scope: str = "dataset"
) -> pd.DataFrame:
    """Win ratios (eq. 6) from the hard decisions (eq. 2) of every full comparison matrix.

    ``comparisons`` is the comparison frame (:mod:`nlgjudge.analysis.frames`) (one model
    and dataset per ``(model, dataset)`` group). With ``debias=True`` the decisions use the
    threshold of eq. 10, fitted so that P(A) = 0.5 over all comparisons of one model, dataset,
    template and aspect (``debias_scope="dataset"``, as the paper fits one threshold per
    set-up) or within each context (``"context"``). A matrix with a comparison missing is an
    error: the win ratio here is the full-matrix one.
    """
    _require(comparisons, ["model", "dataset", "context_id", "template", "aspect", "i", "j", "candidate_a", "p_a"], "comparisons")
    if debias_scope not in ("dataset", "context"):
        raise ValueError(f"debias_scope must be 'dataset' or 'context', got {debias_scope!r}")
    method = COMPARATIVE_DEBIASED if debias else COMPARATIVE
    rows: list[pd.DataFrame] = []
    for (model, dataset), part in comparisons.groupby(["model", "dataset"], sort=False):
        matrices = comparison_matrices(part)
        thresholds = {}
        if debias and debias_scope == "dataset":
            for (template, aspect), setup in part.groupby(["template", "aspect"], sort=False):
                thresholds[(int(template), str(aspect))] = debias_threshold(setup["p_a"].to_numpy(dtype=float))
        # candidate ids in matrix order: row i of a context's matrix is the candidate shown as A at index i
        ids = part.drop_duplicates(["context_id", "i"]).set_index(["context_id", "i"])["candidate_a"]
        for (context_id, template, aspect), matrix in matrices.items():
            _check_full(matrix, context_id, template, aspect)
            if debias:
                fitted = thresholds.get((template, aspect)) if debias_scope == "dataset" else None
                decisions = debiased_decisions(matrix, fitted)
            else:
                decisions = hard_decisions(matrix)
            scores = win_ratio_full_matrix(decisions)
            rows.append(
                pd.DataFrame(
                    {
                        "model": model,
                        "dataset": dataset,
                        "method": method,
                        "template": template,
                        "aspect": aspect,
                        "context_id": context_id,
                        "candidate_id": [ids[(context_id, i)] for i in range(len(scores))],
                        "score": scores,
                    }
                )
            )
    if not rows:
        raise ValueError("comparisons is empty: nothing to rank")
    return pd.concat(rows, ignore_index=True)[PREDICTION_COLUMNS]


def _check_full(matrix: np.ndarray, context_id: str, template: int, aspect: str) -> None:
    n = matrix.shape[0]
    made = int((~np.isnan(matrix)).sum() - (~np.isnan(np.diag(matrix))).sum())
    if made != n * (n - 1):
        raise ValueError(
            f"context {context_id!r}, template {template}, aspect {aspect}: {made} of the {n * (n - 1)} ordered "
            "comparisons are present; the full-matrix win ratio needs all of them (run the study to completion, "
            "or use nlgjudge.stats.subset_curves for partial comparison sets)"
        )


def scoring_predictions(scores: pd.DataFrame, reading: str, *, model: str, dataset: str) -> pd.DataFrame:
    """Predictions from a scoring frame of :mod:`nlgjudge.studies.scoring`.

    ``reading``: ``"sampled"`` (mean of the parsed samples; NaN where none parsed, counted later
    by :func:`correlations`), ``"expected"`` (expected score over 1..10) or ``"geval"``.
    """
    column = {"sampled": "score", "expected": "expected", "geval": "expected"}
    method = {"sampled": SCORING_SAMPLED, "expected": SCORING_EXPECTED, "geval": GEVAL}
    if reading not in column:
        raise ValueError(f"unknown reading {reading!r}; choose one of {sorted(column)}")
    _require(scores, ["context_id", "candidate_id", "template", "aspect", column[reading]], f"the {reading} scores")
    out = scores[["context_id", "candidate_id", "template", "aspect"]].copy()
    out["score"] = scores[column[reading]].astype(float).to_numpy()
    out["model"], out["dataset"], out["method"] = model, dataset, method[reading]
    return out[PREDICTION_COLUMNS]


def baseline_predictions(baselines: pd.DataFrame, *, dataset: str) -> pd.DataFrame:
    """Predictions from :func:`nlgjudge.metrics.reference.reference_baselines` (one per metric)."""
    _require(baselines, ["context_id", "candidate_id", "metric", "implementation", "score"], "the baseline scores")
    aspects = baselines.attrs.get("aspects")
    if not aspects:
        raise ValueError("the baseline frame does not say which aspects to correlate with (attrs['aspects'])")
    parts = []
    for aspect in aspects:  # a reference-based metric gives one score, correlated with every aspect
        part = baselines[["context_id", "candidate_id", "score"]].copy()
        part["model"] = baselines["implementation"].to_numpy()
        part["method"] = baselines["metric"].to_numpy()
        part["dataset"], part["template"], part["aspect"] = dataset, NO_TEMPLATE, aspect
        parts.append(part)
    return pd.concat(parts, ignore_index=True)[PREDICTION_COLUMNS]


def unparseable_counts(sampled: pd.DataFrame) -> pd.DataFrame:
    """Per template and aspect: samples drawn, samples that gave no score, candidates left without any."""
    _require(sampled, ["template", "aspect", "n_parsed", "n_unparsed"], "the sampled scores")
    grouped = sampled.groupby(["template", "aspect"], sort=False)
    out = grouped.agg(
        samples=("n_parsed", lambda s: int(s.sum())), unparseable=("n_unparsed", lambda s: int(s.sum()))
    )
    out["samples"] += out["unparseable"]
    out["percent_unparseable"] = 100.0 * out["unparseable"] / out["samples"].where(out["samples"] > 0)
    out["candidates_without_score"] = grouped["n_parsed"].agg(lambda s: int((s == 0).sum()))
    return out.reset_index()


# --------------------------------------------------------------------------------------------
# Correlations


def _gold_lookup(ds: JudgeDataset) -> pd.DataFrame:
    return ds.frame.set_index(["context_id", "candidate_id"])


def correlations(
    predictions: pd.DataFrame,
    ds: JudgeDataset,
    *,
    method: str = "spearman",
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Summary-level correlation x100 per model, dataset, method, template and aspect.

    Columns: the :data:`GROUP_COLUMNS`, ``spearman`` (x100, the mean over the contexts counted),
    ``ci_low``/``ci_high`` (the t interval of that mean over contexts,
    :func:`nlgjudge.stats.intervals.mean_interval`: valid at the few contexts a chapter has, where a
    percentile bootstrap is too narrow; NaN with fewer than two contexts), ``small_n`` (fewer than
    :data:`nlgjudge.stats.intervals.SMALL_N` contexts: read the interval as a warning; a claim needs :data:`nlgjudge.stats.claims.MIN_CONTEXTS_FOR_A_CLAIM`),
    ``n_contexts`` (contexts counted), ``n_tied`` (counted contexts where the method gave every
    candidate the same score: it expressed no ranking, so they count as 0, chance, as in the bias
    and subset chapters), ``n_constant_gold`` (contexts whose human scores are all equal: no
    correlation exists whatever the method does, so they are left out), ``n_unscored`` (candidates
    without a prediction, e.g. no parseable sample: they are left out of their context's
    correlation). For every model, method and aspect a row with ``template == "mean"`` averages the
    per-template values (the paper's figure); its interval is over the per-context template means.
    ``per_context`` holds each row's ``{context_id: correlation}`` (tied contexts as 0), for paired
    comparisons of two methods on the same contexts (:func:`comparative_vs_scoring`).
    """
    _require(predictions, PREDICTION_COLUMNS, "predictions")
    gold = _gold_lookup(ds)
    records = []
    per_context: dict[tuple[object, ...], pd.Series] = {}
    for key, part in predictions.groupby(GROUP_COLUMNS, sort=False):
        aspect = key[4]
        if aspect not in gold.columns:
            raise KeyError(f"aspect {aspect!r} is not a score column of {ds.info.name}")
        preds, golds, contexts = [], [], []
        unscored = constant_gold = 0
        for context_id, one in part.groupby("context_id", sort=False):
            index = pd.MultiIndex.from_arrays([one["context_id"], one["candidate_id"]])
            missing = index.difference(gold.index)
            if len(missing):
                raise KeyError(f"{len(missing)} predicted candidate(s) are not in {ds.info.name}, e.g. {missing[0]}")
            scores = one["score"].to_numpy(dtype=float)
            truth = gold.loc[index, aspect].to_numpy(dtype=float)
            keep = ~np.isnan(scores) & ~np.isnan(truth)
            unscored += int(np.isnan(scores).sum())
            if keep.sum() < 2:
                continue
            if np.ptp(truth[keep]) == 0:
                constant_gold += 1
                continue
            preds.append(scores[keep])
            golds.append(truth[keep])
            contexts.append(context_id)
        record = dict(zip(GROUP_COLUMNS, key, strict=True))
        value, tied, values = np.nan, 0, np.empty(0)
        if contexts:  # gold varies in every context left, so an undefined correlation means tied predictions
            result = summary_level_correlation(preds, golds, method=method, undefined="zero")
            value, tied = result.value_x100, result.n_undefined
            values = np.where(np.isnan(result.per_context), 0.0, result.per_context)
        record.update(spearman=value, n_contexts=len(contexts), n_tied=tied, n_constant_gold=constant_gold,
                      n_unscored=unscored)
        record.update(_interval(values, confidence))
        record["per_context"] = dict(zip(contexts, values.tolist(), strict=True))
        records.append(record)
        per_context[key] = pd.Series(values, index=contexts, dtype=float)
    table = pd.DataFrame.from_records(records)
    means = _template_means(table, per_context, confidence)
    columns = [*GROUP_COLUMNS, "spearman", "ci_low", "ci_high", "small_n", "n_contexts", "n_tied", "n_constant_gold",
               "n_unscored", "per_context"]
    out = pd.concat([table, means], ignore_index=True)[columns]
    out["template"] = out["template"].astype(object)
    return out


def _interval(per_context: np.ndarray, confidence: float) -> dict[str, object]:
    finite = per_context[np.isfinite(per_context)]
    if finite.size == 0:
        return {"ci_low": np.nan, "ci_high": np.nan, "small_n": True}
    interval = mean_interval(finite, confidence, bounds=(-1.0, 1.0))  # a mean of correlations
    return {"ci_low": 100.0 * interval.low, "ci_high": 100.0 * interval.high, "small_n": interval.small}


def _template_means(
    table: pd.DataFrame, per_context: Mapping[tuple[object, ...], pd.Series], confidence: float
) -> pd.DataFrame:
    records = []
    keys = ["model", "dataset", "method", "aspect"]
    for key, part in table.groupby(keys, sort=False):
        record = dict(zip(keys, key, strict=True))
        record["template"] = TEMPLATE_MEAN
        record["spearman"] = float(part["spearman"].mean())  # the paper: mean of the per-prompt figures
        series = [per_context[tuple(r[c] for c in GROUP_COLUMNS)] for r in part.to_dict("records")]
        by_context = pd.concat(series, axis=1).mean(axis=1) if series else pd.Series(dtype=float)
        record.update(
            n_contexts=int(part["n_contexts"].max()),
            n_tied=int(part["n_tied"].sum()),
            n_constant_gold=int(part["n_constant_gold"].sum()),
            n_unscored=int(part["n_unscored"].sum()),
        )
        record.update(_interval(by_context.to_numpy(dtype=float), confidence))
        record["per_context"] = by_context.to_dict()
        records.append(record)
    return pd.DataFrame.from_records(records)


def comparative_correlations(
    comparisons: pd.DataFrame,
    ds: JudgeDataset,
    debias: bool = False,
    *,
    debias_scope: str = "dataset",
) -> pd.DataFrame:
    """:func:`correlations` of the comparative win ratios (see :func:`comparative_predictions`)."""
    predictions = comparative_predictions(comparisons, debias=debias, debias_scope=debias_scope)
    return correlations(predictions, ds)


# --------------------------------------------------------------------------------------------
# The paper's claim, within one model

#: The absolute-scoring methods that comparative assessment is measured against, in display order.
SCORING_METHODS = (SCORING_EXPECTED, SCORING_SAMPLED, GEVAL)

from nlgjudge.register import ALREADY_ENOUGH, claim as registered_claim, contexts_needed_for, flag_needed_cell, lead_note, needed_cell  # noqa: E402,E501
from nlgjudge.register import verdict as registered_verdict  # noqa: E402
from nlgjudge.stats.claims import family_verdicts  # noqa: E402
# WebNLG's placeholder outputs and the book's one candidate set live in their own module; named here too,
# where the chapters have always found them
from nlgjudge.analysis.candidate_sets import (  # noqa: E402,F401
    PLACEHOLDER_DATASET, PLACEHOLDER_TEXTS, drop_candidates, headline_reading, placeholder_candidates, placeholder_outputs,
    placeholder_team_candidates, restrict_runs, without_candidates,
)
#: The chapter's claim in the register (its comparator, threshold, minimal effect and family).
CLAIM_ID = "comparative.above_scoring"
#: The fresh sample's claim, the headline row's (:mod:`nlgjudge.analysis.fresh_sample`).
FRESH_CLAIM_ID = "comparative.fresh_sample"


#: The first release's comparator, amended in the plan: per row, the best scoring reading on the same data.
BEST_OF_THREE = "best of three"


def comparative_vs_scoring(table: pd.DataFrame, confidence: float = 0.95, comparator: str | None = None) -> pd.DataFrame:
    """Seed 000's main claim checked within each model: comparative assessment against the same
    model's absolute scoring, on the same contexts.

    ``table``: :func:`correlations` output (one or more datasets). One row per model, dataset and
    aspect that has a comparative figure: the template-mean Spearman x100 of comparative and of
    each prompt-scoring reading (NaN where not run), ``comparator_score`` (the claims register's
    comparator, the paper's prompt scoring (sampled), never the best reading on the same data) and
    ``comparator_method`` (its name; NaN where it was not run),
    ``gap`` (comparative minus ``comparator_score``), and the paired t interval of that gap over the
    contexts both were computed on (``gap_low``, ``gap_high``, ``n_paired``; ``gap_excludes_zero``).
    Counting positive gaps is not a test; an interval that excludes 0 is one. ``comparator``
    :data:`BEST_OF_THREE` reads the first release's amended rule instead (each row against its best
    scoring reading, picked on the same data), so that a chapter can show which verdicts the amendment moved.

    The registered claim's rule (:func:`nlgjudge.register.verdict` on ``comparative.above_scoring``:
    above 0, at least its minimum of paired contexts) gives ``verdict`` and ``reason``; a judge failing the
    judge screen (:func:`judge_gate`) is not tested; ``n_tied_cells`` of ``n_cells`` count the tied rankings
    as a description. ``contexts_needed`` (rows not resolved only) is :func:`nlgjudge.register.contexts_needed_for`
    at the gaps' spread (NaN: out of reach); ``per_context_gap`` holds ``{context: gap x100}``,
    ``per_context_scores`` ``{context: (comparative, comparator) x100}``."""
    _require(table, [*GROUP_COLUMNS, "spearman", "per_context", "n_contexts", "n_tied"], "correlation table")
    figures = table[table["template"].astype(str) == TEMPLATE_MEAN]  # every method has one, G-Eval too
    figures = figures[figures["method"].isin([COMPARATIVE, *SCORING_METHODS])]
    wide = figures.pivot_table(index=["model", "dataset", "aspect"], columns="method", values="spearman",
                               sort=False, dropna=False)
    wide = wide.reindex(columns=[COMPARATIVE, *SCORING_METHODS])
    wide = wide[wide[COMPARATIVE].notna()]
    if comparator == BEST_OF_THREE:  # the amended rule: the best reading, picked on the same data
        readings = wide[list(SCORING_METHODS)]
        comparator_method = [row.idxmax() if row.notna().any() else np.nan for _, row in readings.iterrows()]
        wide["comparator_score"] = readings.max(axis=1, skipna=True)
    else:
        fixed = registered_claim(CLAIM_ID).comparator_method  # fixed in the plan, not picked on the data
        wide["comparator_score"] = wide[fixed]
        comparator_method = [fixed if np.isfinite(value) else np.nan for value in wide[fixed]]
    wide["comparator_method"] = pd.Series(comparator_method, index=wide.index, dtype=object)
    wide["gap"] = wide[COMPARATIVE] - wide["comparator_score"]
    per_context = figures.set_index(["model", "dataset", "aspect", "method"])["per_context"]
    cells = table[(table["method"] == COMPARATIVE) & (table["template"].astype(str) != TEMPLATE_MEAN)]
    cell_counts = cells.groupby(["model", "dataset", "aspect"], sort=False)[["n_tied", "n_contexts"]].sum()
    lows, highs, counts, gaps, pairs = [], [], [], [], []
    for key, best in zip(wide.index, comparator_method, strict=True):
        ours = per_context[(*key, COMPARATIVE)]
        theirs = per_context[(*key, best)] if isinstance(best, str) else {}
        common = [c for c in ours if c in theirs]
        pairs.append({c: (100.0 * ours[c], 100.0 * theirs[c]) for c in common})
        gaps.append({c: a - b for c, (a, b) in pairs[-1].items()})
        if not common:
            lows.append(np.nan), highs.append(np.nan), counts.append(0)
            continue
        interval = paired_difference_interval([ours[c] for c in common], [theirs[c] for c in common], confidence)
        lows.append(100.0 * interval.low), highs.append(100.0 * interval.high), counts.append(len(common))
    wide["gap_low"], wide["gap_high"], wide["n_paired"] = lows, highs, counts
    wide["gap_excludes_zero"] = (wide["gap_low"] > 0) | (wide["gap_high"] < 0)
    tied = cell_counts.reindex(wide.index)
    wide["n_tied_cells"] = tied["n_tied"].fillna(0).astype(int).to_numpy()
    wide["n_cells"] = tied["n_contexts"].fillna(0).astype(int).to_numpy()
    wide["degenerate_judge"] = pd.Series(judge_gate(table, wide.index), index=wide.index, dtype=object)
    verdicts = [registered_verdict(CLAIM_ID, gap, low, high, n,
                                   degenerate=reason if isinstance(reason, str) and np.isfinite(gap) else None)
                for gap, low, high, n, reason in zip(wide["gap"], wide["gap_low"], wide["gap_high"], wide["n_paired"],
                                                     wide["degenerate_judge"], strict=True)]
    wide["p_value"] = [paired_t_p_value(list(per.values())) if v.tested else np.nan for per, v in zip(gaps, verdicts, strict=True)]
    wide["verdict"] = [v.verdict for v in verdicts]
    wide["reason"] = [v.reason if np.isfinite(g) else "no scoring of the same model to compare with"
                      for v, g in zip(verdicts, wide["gap"], strict=True)]
    wide["contexts_needed"] = [_needed(list(per.values())) if v.verdict == NOT_RESOLVED else np.nan
                               for v, per in zip(verdicts, gaps, strict=True)]
    wide["per_context_gap"] = gaps
    wide["per_context_scores"] = pairs
    wide.columns.name = None
    return with_family_verdicts(wide.reset_index())  # each model's dataset-aspects are one family


def verdicts_moved(now: pd.DataFrame, before: pd.DataFrame) -> list[tuple[str, str, str, str, str]]:
    """The rows of two :func:`comparative_vs_scoring` readings whose verdict after Holm's correction differs:
    ``(model, dataset, aspect, before, now)``, in ``now``'s order (rows only one reading has are left out)."""
    keys = ["model", "dataset", "aspect"]
    then = before.set_index(keys)["family_verdict"]
    return [(m, d, a, str(then[(m, d, a)]), str(v)) for m, d, a, v in now[[*keys, "family_verdict"]].itertuples(index=False)
            if (m, d, a) in then.index and then[(m, d, a)] != v]


def with_family_verdicts(claim: pd.DataFrame) -> pd.DataFrame:
    """``claim`` with each model's rows read as one family: ``holm`` (the row survives Holm's
    correction over the model's rows) and ``family_verdict`` (:func:`stats.claims.family_verdicts`)."""
    out = claim.copy()
    out["holm"], out["family_verdict"] = False, out["verdict"]
    for _, rows in out.groupby("model", sort=False):
        p_values = rows["p_value"].to_numpy(dtype=float)
        out.loc[rows.index, "holm"] = holm_rejections(p_values)
        out.loc[rows.index, "family_verdict"] = family_verdicts(rows["verdict"].tolist(), p_values)
    return out


def judge_gate(table: pd.DataFrame, keys: pd.Index) -> list[str | None]:
    """The judge screen's reason (:mod:`nlgjudge.stats.degenerate`, the book's one test) of each
    ``(model, dataset, aspect)`` key's comparative judge, from the table's ``degenerate_judge``
    column (set by :func:`chapter_correlations`); None where the table does not carry it."""
    if "degenerate_judge" not in table.columns:
        return [None] * len(keys)
    rows = table[table["method"] == COMPARATIVE]
    gate = {(m, d): r for m, d, r in zip(rows["model"], rows["dataset"], rows["degenerate_judge"], strict=True)
            if isinstance(r, str)}
    return [gate.get((model, dataset)) for model, dataset, _ in keys]


def _needed(values: Sequence[float]) -> float:
    """Contexts that would detect the registered minimal effect at these per-context gaps' spread."""
    needed = contexts_needed_for(CLAIM_ID, float(np.std(np.asarray(values, dtype=float), ddof=1))) if len(values) >= 2 else None
    return float(needed) if needed is not None else np.nan


# --------------------------------------------------------------------------------------------
# Reported beside ours


def _our_row(method: str, model: str) -> str:
    if method in (COMPARATIVE, GEVAL):
        return model
    if method == COMPARATIVE_DEBIASED:
        return f"{model} (debiased)"
    if method == SCORING_SAMPLED:
        return f"{model} (sampled)"
    if method == SCORING_EXPECTED:
        return f"{model} (expected score)"
    return f"{method} ({model})"  # baselines: the metric and its implementation


def side_by_side(
    ours: pd.DataFrame,
    reported: pd.DataFrame,
    *,
    table: int,
    our_note: str = "",
) -> pd.DataFrame:
    """One long frame: the paper's cells (``source == "reported"``) and our template means (``"ours"``).

    ``ours`` is :func:`correlations`' output (only its ``template == "mean"`` rows are used: the
    paper's figures average the two prompts); ``reported`` is ``load_reported("liusie2024", table)``.
    Columns: ``section`` (the paper's section of the table), ``source``, ``row`` (the paper's row
    label, or our model with the reading), ``system`` (the paper's row label, or our model),
    ``method`` (ours only: which of our methods), ``aspect``, ``spearman``, ``ci_low``, ``ci_high`` (ours
    only) and ``reference`` ("Liusie et al. 2024, Table N" or ``our_note``).
    """
    _require(ours, [*GROUP_COLUMNS, "spearman", "ci_low", "ci_high"], "ours")
    _require(reported, ["table", "row_group", "row", "column", "value"], "reported")
    if set(reported["table"]) != {table}:
        raise ValueError(f"reported holds tables {sorted(set(reported['table']))}, expected only table {table}")
    paper = pd.DataFrame(
        {
            "section": reported["row_group"].to_numpy(),
            "source": REPORTED,
            "row": reported["row"].to_numpy(),
            "system": reported["row"].to_numpy(),
            "method": "",
            "aspect": reported["column"].to_numpy(),
            "spearman": reported["value"].astype(float).to_numpy(),
            "ci_low": np.nan,
            "ci_high": np.nan,
            "reference": f"Liusie et al. 2024, Table {table}",
        }
    )
    mine = ours[ours["template"].astype(str) == TEMPLATE_MEAN]
    computed = pd.DataFrame(
        {
            "section": [SECTIONS.get(m, BASELINE_SECTION) for m in mine["method"]],
            "source": OURS,
            "row": [_our_row(m, mo) for m, mo in zip(mine["method"], mine["model"], strict=True)],
            "system": mine["model"].to_numpy(),
            "method": mine["method"].to_numpy(),
            "aspect": mine["aspect"].to_numpy(),
            "spearman": mine["spearman"].to_numpy(dtype=float),
            "ci_low": mine["ci_low"].to_numpy(dtype=float),
            "ci_high": mine["ci_high"].to_numpy(dtype=float),
            "reference": our_note,
        }
    )
    return pd.concat([paper, computed], ignore_index=True)


def side_by_side_table(long: pd.DataFrame, *, with_ci: bool = False, decimals: int = 1) -> pd.DataFrame:
    """Display form of :func:`side_by_side`: rows (section, source, row), one column per aspect.

    Sections in the paper's order; within a section the reported rows come first. With
    ``with_ci`` our cells read "41.3 [30.2, 50.1]" (text), otherwise they are numbers.
    """
    _require(long, ["section", "source", "row", "aspect", "spearman"], "the side-by-side frame")
    frame = long.copy()
    if with_ci:
        def cell(r: pd.Series) -> str:
            if np.isnan(r["spearman"]):
                return "-"
            text = f"{r['spearman']:.{decimals}f}"
            if np.isfinite(r.get("ci_low", np.nan)):
                text += f" [{r['ci_low']:.{decimals}f}, {r['ci_high']:.{decimals}f}]"
            return text

        frame["cell"] = frame.apply(cell, axis=1)
    else:
        frame["cell"] = frame["spearman"].round(decimals)
    aspects = list(dict.fromkeys(frame["aspect"]))
    sections = [s for s in SECTION_ORDER if s in set(frame["section"])] + [
        s for s in dict.fromkeys(frame["section"]) if s not in SECTION_ORDER
    ]
    order = []
    for section in sections:
        for source in (REPORTED, OURS):
            rows = frame[(frame["section"] == section) & (frame["source"] == source)]["row"]
            order.extend((section, source, r) for r in dict.fromkeys(rows))
    wide = frame.pivot_table(index=["section", "source", "row"], columns="aspect", values="cell", aggfunc="first", sort=False)
    wide = wide.reindex(index=pd.MultiIndex.from_tuples(order, names=["section", "source", "row"]), columns=aspects)
    wide.columns.name = None
    return wide


# --------------------------------------------------------------------------------------------
# The comparative chapter's tables, from the runs it gathered


def chapter_correlations(
    comparisons: Mapping[tuple[str, str], pd.DataFrame],
    scores: Mapping[tuple[str, str], Mapping[str, pd.DataFrame]],
    baselines: Mapping[str, pd.DataFrame],
    datasets: Mapping[str, JudgeDataset],
    *,
    seed: int = 0,  # kept for callers; the intervals no longer resample
) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """Every method's :func:`correlations` per dataset, and the unparseable-sample counts.

    ``comparisons`` and ``scores`` are keyed by ``(dataset, model)`` (the frames of
    :func:`nlgjudge.studies.comparative.run_comparative` and the readings of
    :func:`nlgjudge.studies.scoring.prompt_scores`, G-Eval included); ``baselines`` by dataset
    (:func:`nlgjudge.metrics.reference.reference_baselines`). Returns ``{dataset: table}`` (only
    datasets with at least one method) and one frame of :func:`unparseable_counts` rows with
    ``dataset`` and ``model`` columns (empty when nothing was sampled).
    """
    tables: dict[str, pd.DataFrame] = {}
    unparsed: list[pd.DataFrame] = []
    for name, ds in datasets.items():
        predictions = [comparative_predictions(frame) for (dataset, _), frame in comparisons.items() if dataset == name]
        for (dataset, model_name), parts in scores.items():
            if dataset != name:
                continue
            for reading, frame in parts.items():
                predictions.append(scoring_predictions(frame, reading, model=model_name, dataset=name))
            counts = unparseable_counts(parts["sampled"])
            counts.insert(0, "model", model_name)
            counts.insert(0, "dataset", name)
            unparsed.append(counts)
        if name in baselines:
            predictions.append(baseline_predictions(baselines[name], dataset=name))
        if predictions:
            table = correlations(pd.concat(predictions, ignore_index=True), ds)
            reasons = degenerate_judges({model: frame for (dataset, model), frame in comparisons.items() if dataset == name})
            table["degenerate_judge"] = [
                reasons.get(model) if method == COMPARATIVE else None for model, method in zip(table["model"], table["method"], strict=True)
            ]
            tables[name] = table
    return tables, (pd.concat(unparsed, ignore_index=True) if unparsed else pd.DataFrame())


def degenerate_counts(ours: pd.DataFrame) -> pd.DataFrame:
    """The template-mean rows of a :func:`correlations` table where some context was tied, had
    constant human scores or unscored candidates (what stands behind a figure), indexed for display."""
    means = ours[ours["template"].astype(str) == TEMPLATE_MEAN]
    flagged = means[(means["n_tied"] > 0) | (means["n_constant_gold"] > 0) | (means["n_unscored"] > 0)]
    return flagged.set_index(["method", "model", "aspect"])[["n_tied", "n_constant_gold", "n_unscored"]]


def per_template_table(ours: pd.DataFrame, aspects: Sequence[str], decimals: int = 1) -> pd.DataFrame:
    """Our Spearman x100 per prompt template (rows method, model, template; columns the aspects):
    what the template means average. Methods without templates (G-Eval, baselines) are left out."""
    rows = ours[(ours["template"].astype(str) != TEMPLATE_MEAN) & (ours["template"] != NO_TEMPLATE)]
    if rows.empty:
        return pd.DataFrame()
    wide = rows.pivot_table(index=["method", "model", "template"], columns="aspect", values="spearman", sort=False)
    return wide[[a for a in aspects if a in wide.columns]].round(decimals)


#: The paper's models nearest in size to ours, drawn beside ours in the chapter's figures.
FIGURE_PAPER_ROWS = ("FlanT5-770M", "FlanT5-3B", "Llama2-chat-7B")
#: Our methods drawn in the figures (the paper's sections they belong to give the groups).
FIGURE_METHODS = (SCORING_SAMPLED, SCORING_EXPECTED, GEVAL, COMPARATIVE)
#: Short group names of the figures, by the paper's section.
FIGURE_GROUPS = {
    "Prompt Scoring (§4.3.2)": "prompt scoring",
    "G-Eval (§4.3.2)": "G-Eval",
    "Comparative Assessment (§3)": "comparative",
}
EXPECTED_GROUP = "expected score (ours only)"


def figure_frame(long: pd.DataFrame, paper_rows: Sequence[str] = FIGURE_PAPER_ROWS) -> pd.DataFrame:
    """The rows of a :func:`side_by_side` frame that the chapter draws: LLM methods only, the
    paper's ``paper_rows`` and our :data:`FIGURE_METHODS`, with ``group`` (the bar group: the
    method, our expected-score reading in a group of its own) and ``who`` ("reported: X" /
    "ours: Y", the bar colour). Undefined correlations are left out (a gap, never a zero bar)."""
    _require(long, ["section", "source", "row", "system", "method", "aspect", "spearman"], "the side-by-side frame")
    frame = long[long["section"].isin(FIGURE_GROUPS)]
    ours = frame["source"] == OURS
    keep = (~ours & frame["row"].isin(list(paper_rows))) | (ours & frame["method"].isin(list(FIGURE_METHODS)))
    frame = frame[keep & frame["spearman"].notna()].copy()
    frame["group"] = frame["section"].map(FIGURE_GROUPS)
    frame.loc[frame["method"] == SCORING_EXPECTED, "group"] = EXPECTED_GROUP
    frame["who"] = frame["source"] + ": " + frame["system"]
    return frame


def run_sizes(datasets: Mapping[str, JudgeDataset], aspects: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """Per dataset: contexts, candidates, comparisons per template and aspect (N(N-1) per context), aspects."""
    rows = []
    for name, ds in datasets.items():
        sizes = ds.frame.groupby("context_id", sort=False).size()
        rows.append({"dataset": ds.info.title, "contexts": ds.n_contexts, "candidates": len(ds.frame),
                     "comparisons per template and aspect": int((sizes * (sizes - 1)).sum()),
                     "aspects": ", ".join(aspects[name])})
    return pd.DataFrame(rows, index=list(datasets))


def gap_verdict(n_supported: int, n_contradicted: int, n_not_resolved: int, n_not_tested: int,
                before_holm: Sequence[int] | None = None) -> str:
    """One sentence on a model's dataset-aspects, counted by their claim-rule verdicts (after Holm) on
    "comparing beats prompt scoring", each with its count before Holm beside where they
    differ (``before_holm``, the same four counts uncorrected). It says "most" only of a strict
    majority of all the cases, and claims nothing when no case was a test."""
    n_cases = n_supported + n_contradicted + n_not_resolved + n_not_tested
    if n_cases == 0:
        return "there is no absolute scoring of the same model to compare with in this run"
    if n_not_tested == n_cases:
        return (f"none of its {n_cases} dataset-aspects tests the claim on this run (too few shared contexts, or a "
                "judge that fails the judge screen)")
    after = (n_supported, n_contradicted, n_not_resolved, n_not_tested)
    said = [count_words(a, b) for a, b in zip(after, before_holm if before_holm is not None else after, strict=True)]
    counts = (f"supported in {said[0]}, contradicted in {said[1]}, not resolved in {said[2]} and "
              f"not tested in {said[3]} of the {n_cases} dataset-aspects, after Holm's correction over them")
    if n_supported > n_cases / 2:
        return f"comparing beats prompt scoring in most dataset-aspects ({counts})"
    if n_contradicted > n_cases / 2:
        return f"prompt scoring beats comparing in most dataset-aspects ({counts})"
    if n_not_resolved > n_cases / 2:
        return f"in most dataset-aspects this run cannot tell comparing from prompt scoring ({counts})"
    return f"no verdict holds in most dataset-aspects ({counts})"


def prose_values(claim: pd.DataFrame, table: pd.DataFrame, judge: str) -> dict[str, str]:
    """The numbers the comparative chapter's prose cites for ``judge`` (display strings, for glue):
    how many dataset-aspects it was compared on, how many gaps are positive, how many rows have each
    claim-rule verdict, the mean gap, the fewest and most paired contexts, the contexts the
    not-resolved rows would need, and :func:`gap_verdict`'s sentence. ``claim`` is
    :func:`comparative_vs_scoring`'s output, ``table`` the :func:`correlations` rows it came from."""
    mine = claim[claim["model"] == judge].dropna(subset=["gap"])
    rows = table[(table["model"] == judge) & (table["method"] == COMPARATIVE) & (table["template"].astype(str) == TEMPLATE_MEAN)]
    if rows.empty:
        raise ValueError(f"no comparative correlations of judge {judge!r}")
    n = len(mine)
    raw = {v: int((mine["verdict"] == v).sum()) for v in VERDICTS}
    family = mine["family_verdict"] if "family_verdict" in mine else mine["verdict"]
    count = {v: int((family == v).sum()) for v in VERDICTS}
    needed = mine.loc[family == NOT_RESOLVED, ["dataset", "contexts_needed", "verdict"]]  # the table's rows
    order = (SUPPORTED, CONTRADICTED, NOT_RESOLVED, NOT_TESTED)
    return {
        "judge": judge,
        "n_cases": str(n),
        "n_positive": str(int((mine["gap"] > 0).sum())),
        "n_supported": count_words(count[SUPPORTED], raw[SUPPORTED]),
        "n_contradicted": count_words(count[CONTRADICTED], raw[CONTRADICTED]),
        "n_not_resolved": count_words(count[NOT_RESOLVED], raw[NOT_RESOLVED]),
        "n_not_tested": str(count[NOT_TESTED]),
        "mean_gap": number(float(mine["gap"].mean()) if n else float("nan"), 1, signed=True),
        "fewest_paired": str(int(mine["n_paired"].min()) if n else 0),
        "most_paired": str(int(mine["n_paired"].max()) if n else 0),
        "needed": needed_range(needed),
        "verdict": gap_verdict(*(count[v] for v in order), before_holm=[raw[v] for v in order]),
        "minimal_effect": f"{registered_claim(CLAIM_ID).minimal_effect:g}",
    }


#: The benchmarks' sizes in contexts (the paper's scale): what more contexts can reach at all.
BENCHMARK_CONTEXTS = {"summeval": N_ARTICLES, "topicalchat": N_DIALOGUES, "webnlg": N_TRIPLE_SETS}


def needed_range(rows: pd.DataFrame) -> str:
    """The contexts that the not-resolved rows (``dataset``, ``contexts_needed``) would need, in
    words: the range of those within their benchmark's size (:data:`BENCHMARK_CONTEXTS`), and how
    many need more contexts than the benchmark has (or are out of reach: a gap too close to 0).
    With a ``verdict`` column (the row's own verdict), rows not resolved only after Holm's
    correction (flags: their own interval resolves them) are counted apart, not as needing more."""
    if rows.empty:
        return "none (no claim is left unresolved)"
    flags = rows["verdict"] != NOT_RESOLVED if "verdict" in rows else pd.Series(False, index=rows.index)
    n_flags = int(flags.sum())
    if not n_flags:
        return _needed_words(rows)
    why = "resolved on its own interval, not after Holm's correction" if n_flags == 1 else \
        "resolved on their own intervals, not after Holm's correction"
    rest = rows.loc[~flags]
    if rest.empty:
        return f"no more contexts: {'the one row is a flag' if n_flags == 1 else f'all {n_flags} rows are flags'} ({why})"
    return f"{_needed_words(rest)}; {n_flags} more {'is a flag' if n_flags == 1 else 'are flags'} ({why})"


def _needed_words(rows: pd.DataFrame) -> str:
    sizes = rows["dataset"].map(BENCHMARK_CONTEXTS).fillna(np.inf)
    needed = rows["contexts_needed"].astype(float)
    enough = needed <= rows["n_paired"].astype(float) if "n_paired" in rows else pd.Series(False, index=rows.index)
    lead = f"for {int(enough.sum())} of them the contexts are {ALREADY_ENOUGH}; " if enough.any() else ""
    if enough.all():
        return lead[:-2]
    rows, needed, sizes = rows[~enough], needed[~enough], sizes[~enough]
    reachable = needed[np.isfinite(needed) & (needed <= sizes)].astype(int)
    beyond = len(rows) - len(reachable)
    if reachable.empty:
        text = "more contexts than the benchmarks have, for every one, to detect a gap as small as the smallest that matters"
    elif reachable.min() == reachable.max():
        text = f"{int(reachable.min())} contexts for {len(reachable)} of them"
    else:
        text = f"from {int(reachable.min())} to {int(reachable.max())} contexts for {len(reachable)} of them"
    if beyond and not reachable.empty:
        text += f", and more contexts than the benchmark has for the other {beyond} (at the smallest gap that matters)"
    return lead + text


def contexts_needed_table(claim: pd.DataFrame, decimals: int = 1) -> pd.DataFrame:
    """The rows the family leaves not resolved (after Holm's correction): the gap with its paired
    interval, the contexts now and :func:`nlgjudge.register.needed_cell` of the claim's design size
    (:data:`nlgjudge.stats.claims.CONTEXTS_NEEDED_METHOD`); a row resolved on its own interval but
    not after the correction (a flag) is given the contexts that would resolve it in its family of k
    tested rows: the design size at Holm's strictest step, alpha 0.05 / k
    (:func:`nlgjudge.register.flag_needed_cell`)."""
    family = claim["family_verdict"] if "family_verdict" in claim else claim["verdict"]
    rows = claim[family == NOT_RESOLVED]
    members = claim[claim["p_value"].notna()].groupby("model").size() if "p_value" in claim else pd.Series(dtype=int)
    gaps = rows["per_context_gap"] if "per_context_gap" in rows else pd.Series(None, index=rows.index, dtype=object)
    return pd.DataFrame({
        "gap [paired 95%]": [interval_text(g, lo, hi, decimals) for g, lo, hi in
                             zip(rows["gap"], rows["gap_low"], rows["gap_high"], strict=True)],
        "n now": rows["n_paired"].astype(int).to_numpy(),
        "contexts needed": [needed_cell(v, n) if own == NOT_RESOLVED else
                            flag_needed_cell(CLAIM_ID, "a flag", per, int(members.get(model, 1)), int(n))
                            for own, v, n, per, model in zip(rows["verdict"], rows["contexts_needed"], rows["n_paired"], gaps,
                                                             rows["model"], strict=True)],
    }, index=pd.MultiIndex.from_frame(rows[["model", "dataset", "aspect"]]))


#: How :func:`model_claim_table` names the scoring reading a gap was taken against.
SCORING_SHORT = {SCORING_EXPECTED: "expected", SCORING_SAMPLED: "sampled", GEVAL: "G-Eval"}


def _fresh_rows(claim: pd.DataFrame) -> list[bool]:
    """Which rows a headline reads on their fresh sample (they carry the every-context reading beside)."""
    return pd.to_numeric(claim.get("pooled_gap", pd.Series(np.nan, index=claim.index)), errors="coerce").notna().tolist()


def model_claim_table(claim: pd.DataFrame, decimals: int = 1) -> pd.DataFrame:
    """:func:`comparative_vs_scoring` in columns that fit a page: the verdict, the comparative and the
    comparator's (prompt scoring, sampled) figures, the gap with its paired 95% interval and n."""
    return pd.DataFrame(
        {
            # The verdict first: it is what the table is read for, and the column a narrow page keeps.
            # a claim whose rule was changed after its data is a lead on its own row (the glossary's "lead")
            "verdict": [verdict_after_holm(v, f, r) + (f" ({note})" if isinstance(note, str) and note else "")
                        + lead_note(FRESH_CLAIM_ID if fresh else CLAIM_ID, d) for v, r, f, note, fresh, d in
                        zip(claim["verdict"], claim["reason"], claim.get("family_verdict", claim["verdict"]),
                            claim.get("headline_note", pd.Series("", index=claim.index)), _fresh_rows(claim),
                            claim.get("dataset", pd.Series("", index=claim.index)), strict=True)],
            # a fresh-sample row (fresh_sample.headline_claim) shows both methods on it: their difference is its gap
            "comparative": [f"{value:.{decimals}f}" + (" (added contexts)" if fresh else "")
                            for value, fresh in zip(claim[COMPARATIVE], _fresh_rows(claim), strict=True)],
            "prompt scoring": [
                (f"{value:.{decimals}f} ({SCORING_SHORT[method]}" + ("; added contexts)" if fresh else ")"))
                if isinstance(method, str) else "–"
                for value, method, fresh in zip(claim["comparator_score"], claim["comparator_method"], _fresh_rows(claim), strict=True)
            ],
            "gap [paired 95%]": [
                interval_text(gap, low, high, decimals)
                for gap, low, high in zip(claim["gap"], claim["gap_low"], claim["gap_high"], strict=True)
            ],
            "n": claim["n_paired"].to_numpy(),
        },
        index=pd.MultiIndex.from_frame(claim[["model", "dataset", "aspect"]]),
    )


def reading_comparison(tables: Mapping[str, pd.DataFrame], aspects: Sequence[str], decimals: int = 1) -> pd.DataFrame:
    """Several readings of one dataset side by side (``tables``: label -> :func:`correlations` table):
    the template-mean Spearman x100 with its t interval, rows (method, model, aspect), one column per
    reading. Shows what a choice of candidates does to every method at once."""
    columns = {}
    for label, table in tables.items():
        means = table[(table["template"].astype(str) == TEMPLATE_MEAN) & table["aspect"].isin(aspects)]
        cells = {}
        for row in means.to_dict("records"):
            value = row["spearman"]
            text = "n/a" if value != value else f"{value:.{decimals}f}"
            if row["ci_low"] == row["ci_low"] and value == value:
                text += f" [{row['ci_low']:.{decimals}f}, {row['ci_high']:.{decimals}f}]"
            cells[(row["method"], row["model"], row["aspect"])] = f"{text} (n={row['n_contexts']})"
        columns[label] = pd.Series(cells, dtype=object)
    out = pd.DataFrame(columns)
    out.index = pd.MultiIndex.from_tuples(out.index, names=["method", "model", "aspect"])
    return out.fillna("")
