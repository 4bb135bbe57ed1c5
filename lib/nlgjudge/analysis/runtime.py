"""Does the runtime matter? The same judge's comparisons computed by two runtimes, side by side.

The packaged models are GGUF files: the llama.cpp runtime runs them as shipped (4-bit weights,
8-bit activations in its dot products, an f16 KV cache), the torch runtime de-quantises the same
weights to fp32. Both see identical token ids, so every difference below is numerics. Input is
two comparison frames of one judge (:mod:`nlgjudge.analysis.frames`, e.g. from
:func:`nlgjudge.studies.collect.prepare_comparisons` with ``backend="torch"`` and
``backend="llamacpp"``); output is one row per dataset (or dataset and aspect). Pure functions, no
model calls. Every quantity keeps the definition the other chapters use:

* the **decision** is eq. 2's hard decision (``P(A) > 0.5``; :func:`nlgjudge.stats.hard_decisions`);
* a **ranking** is the comparative chapter's win ratio of one full comparison matrix
  (:func:`nlgjudge.analysis.comparative.comparative_predictions`);
* **P(A)** is the bias chapter's eq. 8, the share of comparisons decided for position A;
* **agreement with humans** is the comparative chapter's summary-level Spearman x100, averaged over
  the two prompt templates (:func:`nlgjudge.analysis.comparative.correlations`);
* **the paper's claim** is the comparative chapter's gap, comparative minus the best prompt-scoring
  reading with its paired interval (:func:`nlgjudge.analysis.comparative.comparative_vs_scoring`).

Comparisons of one context are not independent (they share the judge's reading of its texts), so
every interval treats the *context* as the unit: the t interval of the mean of per-context values
(:func:`nlgjudge.stats.intervals.mean_interval`), and for a difference between the runtimes the
paired t interval over the same contexts (:func:`nlgjudge.stats.intervals.paired_difference_interval`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from nlgjudge.analysis.comparative import (
    COMPARATIVE,
    SCORING_EXPECTED,
    SCORING_SAMPLED,
    TEMPLATE_MEAN,
    comparative_predictions,
    comparative_vs_scoring,
    correlations,
)
from nlgjudge.analysis.frames import check_comparisons, pair_matrix
from nlgjudge.data import JudgeDataset
from nlgjudge.stats import CONTRADICTED, NOT_RESOLVED, NOT_TESTED, SUPPORTED, correlation, hard_decisions
from nlgjudge.stats.claims import MIN_CONTEXTS_FOR_A_CLAIM
from nlgjudge.prose import flag_words, listing, verdict_after_holm
from nlgjudge.stats.multiplicity import count_words
from nlgjudge.stats.intervals import mean_interval, paired_difference_interval

#: The columns that identify one comparison across runtimes.
KEYS = ["model", "dataset", "context_id", "template", "aspect", "i", "j"]
#: Labels of the two runtimes in every table (``pair_runtimes(..., names=...)`` may change them).
REFERENCE, OTHER = "torch", "llama.cpp"
#: The label of each ``Judge(backend=...)`` runtime.
RUNTIME_LABELS = {"torch": REFERENCE, "llamacpp": OTHER}
#: How the prose names a judge behind an inference server (``Judge(backend="server")``).
SERVER_LABEL = "inference-server"


def runtime_label(backend: str) -> str:
    """The runtime a chapter's ``backend`` parameter names, in the words its prose uses."""
    if backend == "auto":
        return f"{OTHER} (packaged models) or {REFERENCE} (other models)"
    if backend == "server":
        return SERVER_LABEL
    if backend not in RUNTIME_LABELS:
        raise ValueError(f"backend {backend!r} is not a runtime: use one of {['auto', *RUNTIME_LABELS, 'server']}")
    return RUNTIME_LABELS[backend]


@dataclass(frozen=True)
class PairedRuntimes:
    """Comparisons computed by both runtimes, and what only one of them computed.

    ``frame``: :data:`KEYS` plus ``candidate_a``, ``candidate_b``, ``p_reference``, ``p_other`` and
    ``difference`` (``p_other - p_reference``). ``only``: per dataset and runtime, the comparisons
    and contexts that runtime computed and the other did not (left out of every table; zero rows
    when both computed the same).
    """

    frame: pd.DataFrame
    only: pd.DataFrame
    reference: str
    other: str


def pair_runtimes(
    reference: pd.DataFrame, other: pd.DataFrame, *, names: tuple[str, str] = (REFERENCE, OTHER)
) -> PairedRuntimes:
    """Join two runtimes' comparison frames on (model, dataset, context, template, aspect, i, j).

    Both must be comparison frames of the same judge. A context computed by one runtime only is
    left out of the pairing and counted in ``only``; a comparison whose two candidates differ
    between the frames (the frames come from different data) is an error.
    """
    for frame, name in ((reference, names[0]), (other, names[1])):
        try:
            check_comparisons(frame)
        except ValueError as err:
            raise ValueError(f"the {name} frame: {err}") from None
    models = {names[0]: sorted(set(reference["model"])), names[1]: sorted(set(other["model"]))}
    if models[names[0]] != models[names[1]]:
        raise ValueError(f"the two runtimes must judge with the same model(s); got {models}")
    columns = [*KEYS, "candidate_a", "candidate_b", "p_a"]
    ref = reference[columns].rename(columns={"p_a": "p_reference"})
    oth = other[columns].rename(columns={"p_a": "p_other", "candidate_a": "other_a", "candidate_b": "other_b"})
    merged = ref.merge(oth, on=KEYS, how="outer", indicator=True)
    both = merged[merged["_merge"] == "both"]
    swapped = (both["candidate_a"] != both["other_a"]) | (both["candidate_b"] != both["other_b"])
    if swapped.any():
        first = both[swapped].iloc[0]
        raise ValueError(
            f"{int(swapped.sum())} comparison(s) show other candidates in the two frames, e.g. "
            f"{first['dataset']} {first['context_id']} ({first['i']}, {first['j']}); load both from the same data"
        )
    only_rows = []
    for side, name in (("left_only", names[0]), ("right_only", names[1])):
        part = merged[merged["_merge"] == side]
        for dataset, group in part.groupby("dataset", sort=True):
            only_rows.append({"dataset": dataset, "runtime": name, "n_comparisons": len(group),
                              "n_contexts": int(group["context_id"].nunique())})
    frame = both.drop(columns=["_merge", "other_a", "other_b"]).reset_index(drop=True)
    frame["difference"] = frame["p_other"] - frame["p_reference"]
    only = pd.DataFrame(only_rows, columns=["dataset", "runtime", "n_comparisons", "n_contexts"])
    if frame.empty:
        raise ValueError(
            "the two runtimes computed no comparison in common; compute the same contexts with both "
            "(see 'Released outputs' in the README)"
        )
    return PairedRuntimes(frame, only, names[0], names[1])


def _interval_columns(
    values: np.ndarray, confidence: float, prefix: str, bounds: tuple[float, float] | None = None
) -> dict[str, float]:
    """The mean and its t interval; a bounded quantity (a share, a correlation) has its interval
    kept inside its range: where the t interval over a few contexts would cross an end, the score interval replaces it."""
    interval = mean_interval(values, confidence, bounds=bounds)
    return {prefix: interval.mean, f"{prefix}_low": interval.low, f"{prefix}_high": interval.high}


def difference_table(paired: PairedRuntimes, confidence: float = 0.95) -> pd.DataFrame:
    """How far P(A) moves between the runtimes, per dataset.

    Columns: dataset, n_contexts, n_comparisons, ``mean_difference`` (other minus reference, the
    mean over contexts of the per-context means, with its t interval ``_low``/``_high``: a
    systematic lean of one runtime), ``mean_abs``, ``median_abs``, ``p95_abs`` and ``max_abs``
    (of |difference| over all comparisons pooled).
    """
    rows = []
    for dataset, part in paired.frame.groupby("dataset", sort=True):
        per_context = part.groupby("context_id")["difference"].mean().to_numpy()
        absolute = part["difference"].abs().to_numpy()
        rows.append({
            "dataset": dataset,
            "n_contexts": len(per_context),
            "n_comparisons": len(part),
            **_interval_columns(per_context, confidence, "mean_difference"),
            "mean_abs": float(absolute.mean()),
            "median_abs": float(np.median(absolute)),
            "p95_abs": float(np.quantile(absolute, 0.95)),
            "max_abs": float(absolute.max()),
        })
    return pd.DataFrame(rows)


def _decisions(frame: pd.DataFrame, column: str) -> np.ndarray:
    """Eq. 2's hard decision of every row, made on its context's comparison matrix."""
    out = np.empty(len(frame))
    for _, part in frame.groupby(["model", "dataset", "context_id", "template", "aspect"], sort=False):
        i, j = part["i"].to_numpy(), part["j"].to_numpy()
        matrix = pair_matrix(i, j, part[column].to_numpy(dtype=float))
        out[frame.index.get_indexer(part.index)] = hard_decisions(matrix)[i, j]
    return out


def decisions_frame(paired: PairedRuntimes) -> pd.DataFrame:
    """The paired frame with each runtime's eq. 2 decision and whether they agree."""
    out = paired.frame.copy()
    out["decision_reference"] = _decisions(out, "p_reference")
    out["decision_other"] = _decisions(out, "p_other")
    out["agree"] = out["decision_reference"] == out["decision_other"]
    return out


def decision_agreement_table(paired: PairedRuntimes, confidence: float = 0.95) -> pd.DataFrame:
    """How often the two runtimes make the same eq. 2 decision, per dataset.

    Columns: dataset, n_contexts, n_comparisons, n_flipped, ``agreement`` (the mean over contexts
    of the per-context share of equal decisions, with its t interval clipped to [0, 1]), ``flipped_margin_median``
    and ``flipped_margin_max`` (|P(A) - 0.5| under the reference runtime for the flipped
    comparisons: how close to a coin toss they were), and ``margin_median`` for all comparisons.
    """
    decided = decisions_frame(paired)
    rows = []
    for dataset, part in decided.groupby("dataset", sort=True):
        per_context = part.groupby("context_id")["agree"].mean().to_numpy(dtype=float)
        flipped = part[~part["agree"]]
        margin = (part["p_reference"] - 0.5).abs()
        flipped_margin = (flipped["p_reference"] - 0.5).abs()
        rows.append({
            "dataset": dataset,
            "n_contexts": len(per_context),
            "n_comparisons": len(part),
            "n_flipped": len(flipped),
            **_interval_columns(per_context, confidence, "agreement", (0.0, 1.0)),
            "flipped_margin_median": float(flipped_margin.median()) if len(flipped) else np.nan,
            "flipped_margin_max": float(flipped_margin.max()) if len(flipped) else np.nan,
            "margin_median": float(margin.median()),
        })
    return pd.DataFrame(rows)


def _runtime_frames(paired: PairedRuntimes) -> dict[str, pd.DataFrame]:
    base = paired.frame[[*KEYS, "candidate_a", "candidate_b"]]
    return {
        paired.reference: base.assign(p_a=paired.frame["p_reference"].to_numpy()),
        paired.other: base.assign(p_a=paired.frame["p_other"].to_numpy()),
    }


def ranking_agreement(paired: PairedRuntimes) -> pd.DataFrame:
    """One row per ranking (dataset, context, template, aspect): the Spearman correlation of the two
    runtimes' win ratios (NaN when a runtime gives every candidate the same win ratio: no ranking
    to compare) and whether the top candidate(s) are the same."""
    predictions = {name: comparative_predictions(frame) for name, frame in _runtime_frames(paired).items()}
    keys = ["model", "dataset", "template", "aspect", "context_id"]
    ref = predictions[paired.reference].rename(columns={"score": "reference"})
    oth = predictions[paired.other].rename(columns={"score": "other"})
    joined = ref.merge(oth[[*keys, "candidate_id", "other"]], on=[*keys, "candidate_id"], how="inner")
    rows = []
    for key, part in joined.groupby(keys, sort=True):
        a, b = part["reference"].to_numpy(dtype=float), part["other"].to_numpy(dtype=float)
        constant = np.ptp(a) == 0 or np.ptp(b) == 0
        rho = np.nan if constant else correlation(a, b, method="spearman")
        top_a = set(part.loc[a == a.max(), "candidate_id"])
        top_b = set(part.loc[b == b.max(), "candidate_id"])
        rows.append({**dict(zip(keys, key, strict=True)), "n_candidates": len(part), "spearman": rho,
                     "same_top": top_a == top_b})
    return pd.DataFrame(rows)


def ranking_agreement_table(paired: PairedRuntimes, confidence: float = 0.95) -> pd.DataFrame:
    """Per dataset: how alike the two runtimes' rankings are.

    Columns: dataset, n_contexts, n_rankings (contexts x templates x aspects), n_undefined
    (rankings where a runtime tied every candidate; left out of the mean, and said), ``spearman``
    (each context's mean over its defined rankings, then the mean over contexts with its t
    interval clipped to [-1, 1]), ``same_top`` (share of all rankings whose top candidates are the same set).
    """
    per_ranking = ranking_agreement(paired)
    rows = []
    for dataset, part in per_ranking.groupby("dataset", sort=True):
        defined = part.dropna(subset=["spearman"])
        per_context = defined.groupby("context_id")["spearman"].mean().to_numpy()
        row = {"dataset": dataset, "n_contexts": int(part["context_id"].nunique()), "n_rankings": len(part),
               "n_undefined": int(part["spearman"].isna().sum())}
        if len(per_context):
            row.update(_interval_columns(per_context, confidence, "spearman", (-1.0, 1.0)))
        else:
            row.update(spearman=np.nan, spearman_low=np.nan, spearman_high=np.nan)
        row["same_top"] = float(part["same_top"].mean())
        rows.append(row)
    return pd.DataFrame(rows)


def human_agreement_table(
    paired: PairedRuntimes, datasets: dict[str, JudgeDataset], confidence: float = 0.95
) -> pd.DataFrame:
    """The comparative chapter's headline number under each runtime, and their paired difference.

    Per dataset and aspect: the summary-level Spearman x100 of the win ratios with the human scores
    (mean over the two templates, :func:`nlgjudge.analysis.comparative.correlations`) under each
    runtime on the same contexts, and ``difference`` (other minus reference) with the paired t
    interval over contexts. ``excludes_zero`` says whether the runtime changed the number beyond
    what these contexts can resolve; ``too_few`` flags fewer than :data:`MIN_CONTEXTS_FOR_A_CLAIM` contexts, where
    the interval is not read as evidence (``excludes_zero`` is False there).
    """
    tables = {}
    for name, frame in _runtime_frames(paired).items():
        parts = []
        for dataset, part in frame.groupby("dataset", sort=True):
            if dataset not in datasets:
                raise KeyError(f"no human scores given for dataset {dataset!r}; pass its JudgeDataset")
            parts.append(correlations(comparative_predictions(part), datasets[dataset], confidence=confidence))
        tables[name] = pd.concat(parts, ignore_index=True)
    table = method_agreement_table(tables[paired.reference], tables[paired.other], [COMPARATIVE], confidence)
    return table.drop(columns="method")


def method_agreement_table(
    reference: pd.DataFrame, other: pd.DataFrame, methods: Sequence[str], confidence: float = 0.95
) -> pd.DataFrame:
    """Agreement with the human scores of each of ``methods`` under two runtimes, paired.

    ``reference`` and ``other``: :func:`nlgjudge.analysis.comparative.correlations` tables of the
    two runtimes. One row per model, dataset, method and aspect of either: the template-mean
    Spearman x100 of each runtime over the contexts both counted (``reference``, ``other``; so
    ``other - reference`` is ``difference``), with the paired t interval of the difference,
    ``n_contexts`` (contexts both counted), ``excludes_zero`` and ``too_few`` (fewer than
    :data:`MIN_CONTEXTS_FOR_A_CLAIM` contexts: not read as evidence, ``excludes_zero`` False). A row that only one
    runtime has is kept, with NaN for the other and ``n_contexts`` 0, so it is seen, not dropped.
    """
    keys = ["model", "dataset", "method", "aspect"]

    def means(table: pd.DataFrame) -> dict[tuple, dict[str, float]]:
        rows = table[(table["template"].astype(str) == TEMPLATE_MEAN) & table["method"].isin(methods)]
        return {tuple(r[k] for k in keys): r["per_context"] for r in rows.to_dict("records")}

    ref_table, oth_table = means(reference), means(other)
    rows = []
    order = list(methods)  # rows by model, dataset, then the methods in the order given, then aspect
    for key in sorted(set(ref_table) | set(oth_table), key=lambda k: (str(k[0]), str(k[1]), order.index(k[2]), str(k[3]))):
        ref, oth = ref_table.get(key, {}), oth_table.get(key, {})
        common = sorted(set(ref) & set(oth))
        a = np.array([oth[c] for c in common]) * 100.0
        b = np.array([ref[c] for c in common]) * 100.0
        diff = paired_difference_interval(a, b, confidence) if common else None
        rows.append({
            **dict(zip(keys, key, strict=True)), "n_contexts": len(common),
            "reference": float(b.mean()) if common else np.nan, "other": float(a.mean()) if common else np.nan,
            "difference": np.nan if diff is None else diff.mean,
            "difference_low": np.nan if diff is None else diff.low,
            "difference_high": np.nan if diff is None else diff.high,
            # with fewer than MIN_CONTEXTS_FOR_A_CLAIM contexts (e.g. two equal differences: a zero-width interval) an
            # interval that excludes 0 is not evidence; such rows are flagged instead of counted
            "excludes_zero": bool(diff is not None and diff.excludes_zero and len(common) >= MIN_CONTEXTS_FOR_A_CLAIM),
            "too_few": len(common) < MIN_CONTEXTS_FOR_A_CLAIM,
        })
    return pd.DataFrame(rows, columns=EMPTY_SCORING.columns)


RunsByKey = Mapping[tuple[str, str], pd.DataFrame]
ScoresByKey = Mapping[tuple[str, str], Mapping[str, pd.DataFrame]]


def shared_context_runs(
    comparisons: Mapping[str, RunsByKey], scores: Mapping[str, ScoresByKey]
) -> tuple[dict[str, dict[tuple[str, str], pd.DataFrame]], dict[str, dict[tuple[str, str], dict[str, pd.DataFrame]]], pd.DataFrame]:
    """Comparative and scoring runs of several runtimes, each kept to the contexts that all computed.

    ``comparisons[runtime][(dataset, model)]`` is a comparison frame and
    ``scores[runtime][(dataset, model)]`` maps each scoring reading to its frame (the shapes of
    :class:`nlgjudge.studies.collect.ChapterRuns`). A (dataset, model) is kept when every runtime
    has both studies for it, with the scoring readings every runtime has, and then only on the
    contexts present in every one of those frames, so that the runtimes (and the methods) are
    compared on the same texts. Returns the two restricted mappings and a frame: dataset, model,
    ``n_shared``, ``n_left_out`` (contexts some frame has but not all), ``missing`` (runtimes and
    studies without outputs) and ``readings_left_out`` (readings some runtime lacks).
    """
    runtimes = list(comparisons)
    if sorted(runtimes) != sorted(scores):
        raise ValueError(f"comparisons and scores must name the same runtimes; got {sorted(runtimes)} and {sorted(scores)}")
    keys = sorted({key for name in runtimes for key in (*comparisons[name], *scores[name])})
    out_comparisons: dict[str, dict[tuple[str, str], pd.DataFrame]] = {name: {} for name in runtimes}
    out_scores: dict[str, dict[tuple[str, str], dict[str, pd.DataFrame]]] = {name: {} for name in runtimes}
    rows = []
    for key in keys:
        missing = [f"{name} {study}" for name in runtimes for study, runs in (("comparative", comparisons[name]), ("scoring", scores[name]))
                   if key not in runs]
        reading_sets = [set(scores[name][key]) for name in runtimes if key in scores[name]]
        readings = sorted(set.intersection(*reading_sets)) if reading_sets and not missing else []
        left_readings = sorted(set.union(*reading_sets) - set(readings)) if reading_sets else []
        present = [comparisons[name][key] for name in runtimes if key in comparisons[name]]
        present += [scores[name][key][r] for name in runtimes if key in scores[name] for r in scores[name][key]]
        sets = [set(frame["context_id"].astype(str)) for frame in present]
        union = set.union(*sets) if sets else set()
        used = [] if missing else [comparisons[name][key] for name in runtimes] + [
            scores[name][key][r] for name in runtimes for r in readings]
        shared = set.intersection(*(set(f["context_id"].astype(str)) for f in used)) if used else set()
        rows.append({"dataset": key[0], "model": key[1], "n_shared": len(shared), "n_left_out": len(union - shared),
                     "missing": ", ".join(missing), "readings_left_out": ", ".join(left_readings)})
        if not shared:
            continue
        for name in runtimes:
            frame = comparisons[name][key]
            out_comparisons[name][key] = frame[frame["context_id"].astype(str).isin(shared)].reset_index(drop=True)
            out_scores[name][key] = {r: scores[name][key][r][scores[name][key][r]["context_id"].astype(str).isin(shared)]
                                     .reset_index(drop=True) for r in readings}
    counts = pd.DataFrame(rows, columns=["dataset", "model", "n_shared", "n_left_out", "missing", "readings_left_out"])
    return out_comparisons, out_scores, counts


#: A row with no gap (no scoring reading of the same model on shared contexts) under a runtime.
UNDEFINED = "undefined"


def _testable(verdict: str) -> bool:
    return verdict in (SUPPORTED, CONTRADICTED, NOT_RESOLVED)


def _claim_side(table: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """:func:`comparative_vs_scoring` of one runtime's correlations: the claim rule's verdict (the
    comparative chapter's, so the two chapters cannot disagree on a row) and the per-context gaps."""
    keys = ["model", "dataset", "aspect"]
    claim = comparative_vs_scoring(table, confidence)
    out = claim[keys].copy()
    out["best"] = [method if isinstance(method, str) else "" for method in claim["comparator_method"]]
    out["gap"], out["gap_low"], out["gap_high"] = claim["gap"], claim["gap_low"], claim["gap_high"]
    out["n_paired"] = claim["n_paired"].astype(int)
    # The verdict the comparative chapter counts: after Holm's correction over the model's rows under
    # this runtime (a row resolved only on its own interval is a flag, shown but not a verdict).
    family = claim["family_verdict"] if "family_verdict" in claim else claim["verdict"]
    out["verdict"] = [v if np.isfinite(g) else UNDEFINED for v, g in zip(family, claim["gap"], strict=True)]
    out["row_verdict"] = [v if np.isfinite(g) else UNDEFINED for v, g in zip(claim["verdict"], claim["gap"], strict=True)]
    out["verdict_shown"] = [verdict_after_holm(v, f, r) if np.isfinite(g) else UNDEFINED
                            for v, r, f, g in zip(claim["verdict"], claim["reason"], family, claim["gap"], strict=True)]
    out["per_context_gap"] = claim["per_context_gap"]
    return out


def claim_table(reference: pd.DataFrame, other: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """The paper's claim under two runtimes, side by side, and how much the gap moves.

    ``reference`` and ``other``: :func:`nlgjudge.analysis.comparative.correlations` tables of the
    two runtimes, on the same contexts. One row per model, dataset and aspect of either: per
    runtime (``ref_``/``oth_`` prefixes) the best scoring reading, the gap (comparative minus it,
    x100) with its paired interval, ``n_paired`` and the claim rule's verdict after Holm's correction
    over the model's rows under that runtime (:func:`nlgjudge.stats.claim_verdict`, counted as the
    comparative chapter counts it; ``verdict_shown`` adds where a row's own interval resolves it but
    the correction does not: a flag).
    ``verdicts_compared`` is True when both verdicts are tests (not tied, undefined or too few
    contexts), and ``same_verdict`` whether they are then the same words (False otherwise).
    ``gap_change`` is the mean over the contexts both have of (other's gap - reference's gap),
    with its paired t interval (``gap_change_low``/``_high``), ``n_change``, and
    ``change_excludes_zero`` / ``change_too_few`` as in :func:`method_agreement_table`: a verdict
    can move from "not resolved" to a side while the gap hardly moves, and this says how far it did.
    """
    keys = ["model", "dataset", "aspect"]
    columns = ["best", "gap", "gap_low", "gap_high", "n_paired", "verdict", "row_verdict", "verdict_shown", "per_context_gap"]
    sides = [_claim_side(table, confidence).rename(columns={c: prefix + c for c in columns})
             for table, prefix in ((reference, "ref_"), (other, "oth_"))]
    merged = sides[0].merge(sides[1], on=keys, how="outer")
    for prefix in ("ref_", "oth_"):
        merged[f"{prefix}verdict"] = merged[f"{prefix}verdict"].fillna(UNDEFINED)
        merged[f"{prefix}verdict_shown"] = merged[f"{prefix}verdict_shown"].fillna(UNDEFINED)
        merged[f"{prefix}row_verdict"] = merged[f"{prefix}row_verdict"].fillna(UNDEFINED)
        merged[f"{prefix}n_paired"] = merged[f"{prefix}n_paired"].fillna(0).astype(int)
        merged[f"{prefix}best"] = merged[f"{prefix}best"].fillna("")
    merged["verdicts_compared"] = [_testable(a) and _testable(b) for a, b in zip(merged["ref_verdict"], merged["oth_verdict"], strict=True)]
    merged["same_verdict"] = merged["verdicts_compared"] & (merged["ref_verdict"] == merged["oth_verdict"])
    changes = []
    for ref, oth in zip(merged["ref_per_context_gap"], merged["oth_per_context_gap"], strict=True):
        ref, oth = (ref if isinstance(ref, dict) else {}), (oth if isinstance(oth, dict) else {})
        common = sorted(set(ref) & set(oth))
        diff = paired_difference_interval([oth[c] for c in common], [ref[c] for c in common], confidence) if common else None
        changes.append({
            "gap_change": np.nan if diff is None else diff.mean,
            "gap_change_low": np.nan if diff is None else diff.low,
            "gap_change_high": np.nan if diff is None else diff.high,
            "n_change": len(common),
            "change_excludes_zero": bool(diff is not None and diff.excludes_zero and len(common) >= MIN_CONTEXTS_FOR_A_CLAIM),
            "change_too_few": len(common) < MIN_CONTEXTS_FOR_A_CLAIM,
        })
    merged = pd.concat([merged.drop(columns=["ref_per_context_gap", "oth_per_context_gap"]).reset_index(drop=True),
                        pd.DataFrame(changes, columns=_GAP_CHANGE_COLUMNS)], axis=1)
    return merged[list(EMPTY_CLAIMS.columns)]


#: The readings :func:`change_by_reading` compares, in the words the text uses.
_READINGS = {COMPARATIVE: "comparative assessment", SCORING_EXPECTED: "prompt scoring's expected score",
             SCORING_SAMPLED: "its sampled score"}


def change_by_reading(reference: pd.DataFrame, other: pd.DataFrame) -> str:
    """Where the change of the gap between runtimes comes from, a description: per reading (comparative,
    prompt scoring's expected and sampled scores), the largest change between the runtimes of its mean
    agreement with people over the dataset-aspects (:func:`method_agreement_table`, Spearman x100).
    The sampled score alone draws its answers again under each runtime's random generator; when its
    change is over twice the others', the sentence says so. "" when a reading is missing."""
    table = method_agreement_table(reference, other, list(_READINGS)).dropna(subset=["difference"])
    largest = table.groupby("method")["difference"].agg(lambda d: float(d.abs().max()))
    if not set(_READINGS) <= set(largest.index):
        return ""
    from nlgjudge.prose import number

    sentence = ("Between the runtimes, the agreement with people of each reading (Spearman x100, per dataset and aspect) "
                f"moves by at most {'; '.join(f'{number(largest[m], 1)} for {words}' for m, words in _READINGS.items())}")
    steady = max(largest[COMPARATIVE], largest[SCORING_EXPECTED])
    if largest[SCORING_SAMPLED] > 2 * steady:
        sentence += (". So most of the change of the gap comes from the sampled answers being drawn again by each "
                     "runtime's own random generator, not from the runtime's arithmetic; a test of the runtime alone "
                     "would reuse the same draws under both (a description, not a test)")
    return sentence + "."


#: Empty tables of :func:`method_agreement_table` and :func:`claim_table` (a run with nothing to compare).
EMPTY_SCORING = pd.DataFrame(columns=["model", "dataset", "method", "aspect", "n_contexts", "reference", "other", "difference",
                                      "difference_low", "difference_high", "excludes_zero", "too_few"])
_GAP_CHANGE_COLUMNS = ["gap_change", "gap_change_low", "gap_change_high", "n_change", "change_excludes_zero", "change_too_few"]
EMPTY_CLAIMS = pd.DataFrame(columns=["model", "dataset", "aspect", "ref_best", "ref_gap", "ref_gap_low", "ref_gap_high",
                                     "ref_n_paired", "ref_verdict", "ref_row_verdict", "ref_verdict_shown", "oth_best", "oth_gap", "oth_gap_low",
                                     "oth_gap_high", "oth_n_paired", "oth_verdict", "oth_row_verdict", "oth_verdict_shown", "verdicts_compared", "same_verdict",
                                     *_GAP_CHANGE_COLUMNS])


#: The chapter's claim in the claims register: the gap moves by less than its margin between runtimes.
GAP_CLAIM_ID = "runtime.gap_unchanged"


def gap_equivalence(claims: pd.DataFrame) -> pd.DataFrame:
    """The registered claim :data:`GAP_CLAIM_ID` per row of :func:`claim_table`: the change of the
    gap between runtimes (other minus reference, paired over the contexts both computed) read by
    two one-sided tests against the register's margin, then Holm's correction over the rows (each
    row's p against the band end nearer its estimate). Columns: ``verdict`` (its own interval),
    ``family_verdict`` (after Holm), ``reason`` and ``contexts_needed`` (for a row not resolved after
    Holm: the contexts two one-sided tests need to show a true change of 0 inside the margin with 80%
    power at the row's spread, :func:`~nlgjudge.stats.claims.equivalence_units_needed`; NaN: out of
    reach or resolved); the index is the claim table's."""
    from scipy import stats as scipy_stats

    from nlgjudge.register import claim as registered_claim
    from nlgjudge.register import verdict as registered_verdict
    from nlgjudge.stats.claims import equivalence_units_needed, family_verdicts
    from nlgjudge.stats.multiplicity import p_from_interval

    spec = registered_claim(GAP_CLAIM_ID)
    margin = float(spec.margin or 0.0)
    verdicts, reasons, p_values, spreads = [], [], [], []
    for row in claims.itertuples():
        change, low, high, n = float(row.gap_change), float(row.gap_change_low), float(row.gap_change_high), int(row.n_change)
        found = registered_verdict(GAP_CLAIM_ID, change, low, high, n)
        verdicts.append(found.verdict)
        reasons.append(found.reason)
        end = min((spec.threshold - margin, spec.threshold + margin), key=lambda e: abs(change - e)) if np.isfinite(change) else 0.0
        p_values.append(p_from_interval(change, low, high, n, end) if found.tested else float("nan"))
        # the per-context spread behind the paired t interval, read back from its width
        spreads.append((high - low) / 2 / float(scipy_stats.t.ppf(0.975, n - 1)) * np.sqrt(n)
                       if found.tested and np.isfinite(high - low) and n >= 2 else float("nan"))
    after = family_verdicts(verdicts, p_values) if verdicts else []
    needed = [float(equivalence_units_needed(sd, margin) or np.nan) if v == NOT_RESOLVED and np.isfinite(sd) else np.nan
              for v, sd in zip(after, spreads, strict=True)]
    return pd.DataFrame({"verdict": verdicts, "family_verdict": after, "reason": reasons, "contexts_needed": needed},
                        index=claims.index)


def claim_values(claims: pd.DataFrame, reference: str = REFERENCE, other: str = OTHER) -> dict[str, str]:
    """What the chapter's text says about the claim, read off :func:`claim_table` (so the prose
    cannot drift). The verdict is the registered claim's (:func:`gap_equivalence`: the change of the
    gap between runtimes, tested as a difference, within the register's margin); whether each
    runtime gives the paper's claim the same verdict words follows as a description, never as the test."""
    from nlgjudge.register import claim as registered_claim

    compared = claims.loc[claims["verdicts_compared"].astype(bool)]
    differing = compared.loc[~compared["same_verdict"].astype(bool)]
    margin = registered_claim(GAP_CLAIM_ID).margin
    if not len(claims):
        sentence = "No (dataset, aspect) has the comparative and scoring outputs of both runtimes on shared contexts."
        counts = {v: 0 for v in (SUPPORTED, CONTRADICTED, NOT_RESOLVED, NOT_TESTED)}
    else:
        reading = gap_equivalence(claims)
        counts = {v: int((reading["family_verdict"] == v).sum()) for v in (SUPPORTED, CONTRADICTED, NOT_RESOLVED, NOT_TESTED)}
        raw = {v: int((reading["verdict"] == v).sum()) for v in (SUPPORTED, CONTRADICTED)}
        said = {v: count_words(counts[v], raw.get(v, counts[v])) for v in counts}
        untested = f" and not tested in {said[NOT_TESTED]}" if counts[NOT_TESTED] else ""
        sentence = (f"The claim that the runtime leaves the gap of comparative over prompt scoring within ±{margin:g} points "
                    f"(the claim's smallest effect that matters) is supported in {said[SUPPORTED]} of the {len(claims)} rows, "
                    f"contradicted in {said[CONTRADICTED]} and not resolved in {said[NOT_RESOLVED]}{untested}, each row by "
                    "the paired interval of the change, after Holm's correction over the rows.")
    return {
        "claim_sentence": sentence,
        "n_claim_rows": str(len(claims)),
        "n_claim_compared": str(len(compared)),
        "n_claim_same": str(int(compared["same_verdict"].astype(bool).sum())),
        "n_gap_within": str(counts[SUPPORTED]),
        "n_gap_beyond": str(counts[CONTRADICTED]),
        "gap_margin": f"{margin:g}",
    }


def bias_comparison_table(paired: PairedRuntimes, confidence: float = 0.95) -> pd.DataFrame:
    """P(A) (eq. 8) under each runtime per dataset, template and aspect, and the paired difference
    over contexts (each context's P(A) under one runtime minus the other's); ``excludes_zero`` and
    ``too_few`` as in :func:`human_agreement_table`."""
    decided = decisions_frame(paired)
    rows = []
    for (dataset, template, aspect), part in decided.groupby(["dataset", "template", "aspect"], sort=True):
        per_context = part.groupby("context_id")[["decision_reference", "decision_other"]].mean()
        diff = paired_difference_interval(per_context["decision_other"], per_context["decision_reference"], confidence)
        rows.append({
            "dataset": dataset, "template": template, "aspect": aspect, "n_contexts": len(per_context),
            "reference": float(part["decision_reference"].mean()), "other": float(part["decision_other"].mean()),
            "difference": diff.mean, "difference_low": diff.low, "difference_high": diff.high,
            "excludes_zero": bool(diff.excludes_zero and len(per_context) >= MIN_CONTEXTS_FOR_A_CLAIM),
            "too_few": len(per_context) < MIN_CONTEXTS_FOR_A_CLAIM,
        })
    return pd.DataFrame(rows)


def summary_values(
    differences: pd.DataFrame, agreement: pd.DataFrame, rankings: pd.DataFrame, humans: pd.DataFrame,
    bias: pd.DataFrame, reference: str = REFERENCE, scoring: pd.DataFrame | None = None,
) -> dict[str, str]:
    """Numbers and sentences the chapter's text quotes, each read off the tables above (so the prose
    cannot drift, and says "undefined" rather than "nan" for a degenerate run). ``scoring`` (the
    :func:`method_agreement_table` of the scoring readings, when the run has them) counts in the
    verdict with the comparative agreements."""
    scoring = EMPTY_SCORING if scoring is None else scoring
    # Each question ("does the runtime change the comparative agreements? the scoring agreements?
    # the positional biases?") is one family: a row counts as changed only if it survives Holm's
    # correction over its table's rows of enough contexts (the glossary's rule).
    survive = changed_after_holm((humans, scoring, bias))
    n_changed, n_scoring_changed, n_bias_changed = (int(k.sum()) for k in survive)
    raw = [int(t["excludes_zero"].astype(bool).sum()) for t in (humans, scoring, bias)]
    tested = [int((~t["too_few"].astype(bool)).sum()) if "too_few" in t else 0 for t in (humans, scoring, bias)]
    families = [f"{r} of the {k} {what}" for k, r, what in
                zip(tested, raw, ("comparative agreements", "prompt-scoring agreements", "positional biases"), strict=True) if k]
    chance = (" Each kind of number is one family, counted after Holm's correction over its rows of enough contexts, "
              "since among many rows tested at 95% some would exclude 0 by chance alone. Before the correction, "
              f"{listing(families)} exclude 0.") if sum(tested) else ""
    if n_changed == 0 and n_scoring_changed == 0 and n_bias_changed == 0:
        verdict = ("On these contexts no agreement with the human scores (comparative or prompt scoring) and no "
                   "positional bias P(A), the share of decisions that go to position A, changes by more than its paired interval can resolve: no change is detected "
                   "here (which is not evidence of none: the intervals bound how large a change could hide)." + chance)
    else:
        verdict = (f"On these contexts {n_changed} comparative and {n_scoring_changed} prompt-scoring agreement(s) "
                   f"with the human scores and {n_bias_changed} positional bias(es) change by more than their paired "
                   "intervals can resolve." + chance + " Read those rows above before comparing numbers computed by "
                   "different runtimes.")
    n_flipped = int(agreement["n_flipped"].sum())
    flips = (f"the {n_flipped} flipped comparisons had a margin of at most "
             f"{agreement['flipped_margin_max'].max():.3f} under {reference} (a description)") if n_flipped else "no decision flipped"
    defined = rankings["spearman"].dropna()
    ranking = (f"{defined.min():.2f}" if len(defined) else
               "undefined: a runtime gave every candidate of every ranking the same win ratio")
    resolvable = ~humans["too_few"] if "too_few" in humans else pd.Series(False, index=humans.index)
    changes = humans.loc[resolvable, "difference"].abs().dropna()  # rows of at least MIN_CONTEXTS_FOR_A_CLAIM contexts
    return {
        "verdict": verdict,
        "n_comparisons": str(int(differences["n_comparisons"].sum())),  # no separator: myst reads "9,480" as a tuple
        "datasets": ", ".join(differences["dataset"]),
        "max_abs": f"{differences['max_abs'].max():.3f}",
        # the per-dataset medians of |difference| (one definition: difference_table's median_abs)
        "median_abs": (f"{differences['median_abs'].min():.4f}" if len(differences) == 1 else
                       f"{differences['median_abs'].min():.4f} to {differences['median_abs'].max():.4f}"),
        "agreement_min": f"{100 * agreement['agreement'].min():.1f}%",
        "agreement_max": f"{100 * agreement['agreement'].max():.1f}%",
        "flips": flips,
        "ranking_spearman_min": ranking,
        "n_human_rows": str(len(humans)),
        "n_human_changed": count_words(n_changed, raw[0]),  # the uncorrected count beside, where it differs
        "human_change_max": f"{changes.max():.1f}" if len(changes) else "undefined",
        "n_bias_rows": str(len(bias)),
        "n_bias_changed": count_words(n_bias_changed, raw[2]),  # the uncorrected count beside, where it differs
        "n_scoring_rows": str(len(scoring)),
        "n_scoring_changed": count_words(n_scoring_changed, raw[1]),  # the uncorrected count beside, where it differs
        "n_scoring_too_few": str(int(scoring["too_few"].astype(bool).sum())),
        "min_contexts": str(MIN_CONTEXTS_FOR_A_CLAIM),
    }


def changed_after_holm(tables: Sequence[pd.DataFrame]) -> list[pd.Series]:
    """Per table, which rows' paired intervals exclude 0 after Holm's correction over that table's
    rows of enough contexts: each table asks one question ("does the runtime change this agreement?",
    "... this positional bias?"), so each is one family; rows of too few contexts never count."""
    from nlgjudge.stats.multiplicity import holm_rejections, p_from_interval

    out = []
    for table in tables:
        kept = pd.Series(False, index=table.index)
        tested = [index for index, row in table.iterrows()
                  if not bool(row.get("too_few", True)) and np.isfinite(row["difference"])]
        p_values = [p_from_interval(table.loc[i, "difference"], table.loc[i, "difference_low"],
                                    table.loc[i, "difference_high"], int(table.loc[i, "n_contexts"])) for i in tested]
        for index, rejected in zip(tested, holm_rejections(p_values) if p_values else [], strict=True):
            kept.loc[index] = bool(rejected) and bool(table.loc[index, "excludes_zero"])
        out.append(kept)
    return out


def gap_changes(claims: pd.DataFrame) -> pd.DataFrame:
    """:func:`claim_table`'s change of the gap in the columns :func:`changed_after_holm` reads."""
    return pd.DataFrame({
        "difference": claims["gap_change"].astype(float), "difference_low": claims["gap_change_low"].astype(float),
        "difference_high": claims["gap_change_high"].astype(float), "n_contexts": claims["n_change"].fillna(0).astype(int),
        "excludes_zero": claims["change_excludes_zero"].astype(bool), "too_few": claims["change_too_few"].astype(bool),
    }, index=claims.index)


def lean_values(differences: pd.DataFrame, reference: str = REFERENCE, other: str = OTHER) -> dict[str, str]:
    """Step 1's systematic lean in words: the datasets whose mean shift of p(A) (other minus
    reference, over contexts) excludes 0 after Holm's correction over the datasets, with the
    interval; so the summary says what the table shows."""
    from nlgjudge.prose import interval_text

    if differences.empty:
        return {"lean": "No dataset has contexts computed by both runtimes."}
    table = pd.DataFrame({
        "difference": differences["mean_difference"], "difference_low": differences["mean_difference_low"],
        "difference_high": differences["mean_difference_high"], "n_contexts": differences["n_contexts"],
        "too_few": differences["n_contexts"] < MIN_CONTEXTS_FOR_A_CLAIM,
    })
    table["excludes_zero"] = ((table["difference_low"] > 0) | (table["difference_high"] < 0)) & ~table["too_few"]
    kept = changed_after_holm([table])[0]
    family = f"after Holm's correction over the {len(table)} datasets" if len(table) > 1 else "on its one dataset"
    shown = [f"{row.dataset} ({interval_text(row.mean_difference, row.mean_difference_low, row.mean_difference_high, 4)}, "
             f"n = {row.n_contexts} contexts)" for row, keep in zip(differences.itertuples(), kept, strict=True) if keep]
    flags = [row.dataset for row, keep, raw in zip(differences.itertuples(), kept, table["excludes_zero"], strict=True)
             if raw and not keep]
    flag = f"; {'; '.join(flag_words('excludes 0') + ': ' + name for name in flags)}" if flags else ""
    if shown:
        leaning = differences.loc[kept.to_numpy()]
        sides = {("towards" if d > 0 else "away from") for d in leaning["mean_difference"]}
        side = f"{other} leans {sides.pop()} position A" if len(sides) == 1 else "the lean's side differs between datasets"
        small = (leaning["mean_difference"].abs() < leaning["median_abs"]).all() if "median_abs" in leaning else False
        size = ", smaller than the median shift of a single comparison there" if small else ""
        text = (f"The mean shift of a single comparison's probability p(A) ({other} minus {reference}) excludes 0 {family} "
                f"on {listing(shown)}: {side} in its probabilities{size}" + flag
                + "; a description of its direction only, since the plan declares no size of lean that matters.")
    else:
        text = (f"No dataset's mean shift of p(A) ({other} minus {reference}) excludes 0 {family}: no systematic lean "
                f"towards either position is detected{flag}.")
    return {"lean": text}


def missing_datasets(paired: PairedRuntimes, expected: list[str]) -> list[str]:
    """A note for each dataset of ``expected`` without a context computed by both runtimes."""
    present = set(paired.frame["dataset"])
    return [f"{name}: no context computed by both runtimes; left out of every table" for name in expected
            if name not in present]


def resolved_words(table: pd.DataFrame, kept: pd.Series | None = None) -> list[str]:
    """The "change detected, after Holm" column in words: "detected" (the paired interval excludes 0 and
    the row survives Holm's correction over the table's rows, ``kept`` from :func:`changed_after_holm`),
    "not detected" (which is not evidence of no change: no margin is declared for these rows), a flag
    where the row's own interval excludes 0 but the correction takes it back, or
    "n < 3" (fewer than :data:`MIN_CONTEXTS_FOR_A_CLAIM` contexts: the interval is not read as
    evidence). Without ``kept`` the table is its own family."""
    if kept is None:
        kept = changed_after_holm([table])[0]
    tested = int((~table["too_few"].astype(bool)).sum())
    flag = f"not detected ({flag_words('excludes 0', f'the {tested} rows')})"
    return [f"n < {MIN_CONTEXTS_FOR_A_CLAIM}" if small else ("detected" if keep else (flag if excludes else "not detected"))
            for small, excludes, keep in zip(table["too_few"], table["excludes_zero"], kept, strict=True)]
