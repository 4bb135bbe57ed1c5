"""A claim read again on the contexts added for it: the fresh sample that is not optional stopping.

When a claim that was not resolved is given more contexts *because* its interval only just reached
its threshold, testing it again on every context mixes the contexts that made it look promising
with the new ones. The fair test is the same claim rule on the added contexts alone; these
functions read :func:`nlgjudge.analysis.comparative.comparative_vs_scoring`'s rows that way and
put the two readings side by side.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from nlgjudge.analysis.comparative import (
    COMPARATIVE,
    NOT_RESOLVED,
    SCORING_SHORT,
    _needed,
    _require,
    with_family_verdicts,
)
from nlgjudge.prose import interval_text, verdict_cell
from nlgjudge.register import verdict as registered_verdict
from nlgjudge.stats import mean_interval
from nlgjudge.stats.multiplicity import paired_t_p_value


def fresh_sample_claims(claim: pd.DataFrame, contexts: Sequence[str], confidence: float = 0.95) -> pd.DataFrame:
    """The same claim read on ``contexts`` alone: contexts added after the claim was picked for
    more data, so the verdict on them is not optional stopping.

    ``claim``: :func:`comparative_vs_scoring` on every context. Each row's per-context gaps
    (comparative minus the same scoring reading as on every context) are restricted to
    ``contexts``; ``gap`` is their mean with its paired t interval (``gap_low``, ``gap_high``,
    ``n_paired``), ``contexts_needed`` (rows not resolved) and ``verdict``/``reason`` come from the same claim rule, minimum n and
    judge screen (the judge's, from every context) as on every context. Rows keep the claim's order; columns
    ``model, dataset, aspect, comparator_method, comparative, comparator_score`` (the two methods' means
    on ``contexts``, x100), ``gap, gap_low, gap_high, n_paired, verdict, reason,
    contexts_needed``, ``p_value`` (the paired t test's, as on every context) and ``per_context_gap``
    (the gaps of ``contexts``).
    """
    _require(claim, ["model", "dataset", "aspect", "comparator_method", "per_context_gap"], "claim table")
    wanted = set(contexts)
    if not wanted:
        raise ValueError("no contexts given: name the contexts of the fresh sample")
    records = []
    for row in claim.to_dict("records"):
        values = np.array([g for c, g in row["per_context_gap"].items() if c in wanted], dtype=float)
        gap = low = high = np.nan
        if values.size >= 2:
            interval = mean_interval(values, confidence)
            gap, low, high = interval.mean, interval.low, interval.high
        elif values.size == 1:
            gap = float(values[0])
        verdict = registered_verdict("comparative.fresh_sample", gap, low, high, int(values.size),
                                     degenerate=row.get("degenerate_judge") if isinstance(row.get("degenerate_judge"), str) else None)
        per_context = row.get("per_context_scores")
        scores = [v for c, v in per_context.items() if c in wanted] if isinstance(per_context, dict) else []
        comparative, comparator = (np.mean([v[0] for v in scores]), np.mean([v[1] for v in scores])) if scores else (np.nan, np.nan)
        records.append({"model": row["model"], "dataset": row["dataset"], "aspect": row["aspect"],
                        "comparator_method": row["comparator_method"], "comparative": comparative, "comparator_score": comparator,
                        "gap": gap, "gap_low": low, "gap_high": high,
                        "n_paired": int(values.size), "verdict": verdict.verdict, "reason": verdict.reason,
                        "contexts_needed": _needed(list(values)) if verdict.verdict == NOT_RESOLVED else np.nan,
                        "p_value": paired_t_p_value(list(values)) if verdict.tested else np.nan,
                        "per_context_gap": {c: g for c, g in row["per_context_gap"].items() if c in wanted}})
    return pd.DataFrame.from_records(
        records, columns=["model", "dataset", "aspect", "comparator_method", "comparative", "comparator_score", "gap", "gap_low", "gap_high", "n_paired",
                          "verdict", "reason", "contexts_needed", "p_value", "per_context_gap"])


#: The readings :func:`fresh_sample_table` shows, in its order (its ``contexts`` index level).
CHOSEN_ON, ADDED_ONLY, EVERY_CONTEXT = "chosen on", "added only", "every context"


def interval_reading(low: float, high: float) -> str:
    """Where a reading's interval lies against 0, in words without a verdict word: for the readings
    beside a registered claim that are not claims themselves (the register's rule)."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return "no interval"
    return "interval above 0" if low > 0 else "interval below 0" if high < 0 else "interval includes 0"


def fresh_sample_table(claim: pd.DataFrame, fresh: pd.DataFrame, chosen: pd.DataFrame | None = None,
                       decimals: int = 1, registered: tuple[str, str, str] | None = None) -> pd.DataFrame:
    """:func:`fresh_sample_claims` beside the claim on every context: per model, dataset and aspect,
    the gap with its paired 95% interval, n and the verdict on the contexts the claim was chosen on
    (``chosen``, :func:`fresh_sample_claims` on them; left out when None), on the added contexts
    alone and on every context, one row per reading (index level ``contexts``). The index names
    the scoring reading every gap is taken against. Only the registered claim, the added contexts
    alone of ``registered`` (model, dataset, aspect), carries a verdict word; every other reading says
    where its interval lies (:func:`interval_reading`), a description."""
    keys = ["model", "dataset", "aspect"]
    rows = fresh.set_index(keys)
    readings = {CHOSEN_ON: chosen, ADDED_ONLY: fresh, EVERY_CONTEXT: claim}
    frames = {label: frame.set_index(keys).loc[rows.index] for label, frame in readings.items() if frame is not None}
    against = {key: SCORING_SHORT.get(m, "–") if isinstance(m, str) else "–"
               for key, m in zip(rows.index, rows["comparator_method"], strict=True)}
    records, index = [], []
    for key in rows.index:
        for label, frame in frames.items():
            r = frame.loc[key]
            index.append((*key, against[key], label))
            claimed = label == ADDED_ONLY and tuple(key) == registered
            records.append({"gap [paired 95%]": interval_text(r["gap"], r["gap_low"], r["gap_high"], decimals),
                            "n": int(r["n_paired"]),
                            READING_COLUMN: verdict_cell(r["verdict"], r["reason"]) if claimed
                            else interval_reading(r["gap_low"], r["gap_high"])})
    return pd.DataFrame.from_records(
        records, index=pd.MultiIndex.from_tuples(index, names=[*keys, "against scoring", "contexts"]),
        columns=["gap [paired 95%]", "n", READING_COLUMN])


#: The last column of :func:`fresh_sample_table`: the verdict of the registered reading, where the others' intervals lie.
READING_COLUMN = "verdict (the registered reading) or where the interval lies"


def claim_sentence(frame: pd.DataFrame, model: str, dataset: str, aspect: str, decimals: int = 1,
                   registered: bool = True) -> str | None:
    """The gap of ``model`` on ``dataset``/``aspect`` in ``frame`` (a claim table or
    :func:`fresh_sample_claims`) with its interval, n and verdict (``registered``) or where its interval
    lies (a reading that is not the registered claim), as a chapter says it; None when the frame has no such row."""
    row = frame[(frame["model"] == model) & (frame["dataset"] == dataset) & (frame["aspect"] == aspect)]
    if row.empty:
        return None
    r = row.iloc[0]
    said = verdict_cell(r["verdict"], r["reason"]) if registered else f"a description: {interval_reading(r['gap_low'], r['gap_high'])}"
    return f"{interval_text(r['gap'], r['gap_low'], r['gap_high'], decimals)} over {int(r['n_paired'])} contexts ({said})"


def fresh_sample_prose(claim: pd.DataFrame, fresh: pd.DataFrame | None, model: str, dataset: str, aspect: str,
                       decimals: int = 1) -> str:
    """One sentence for a chapter: the gap of ``model`` on ``dataset``/``aspect`` on the added
    contexts alone and on every context, each with its interval, n and verdict; what is missing
    when ``fresh`` is None or lacks the row."""
    added = None if fresh is None else claim_sentence(fresh, model, dataset, aspect, decimals)
    if added is None:
        return f"not read on this run: it has no contexts added after the claim was chosen for {model} on {dataset} {aspect}"
    every = claim_sentence(claim, model, dataset, aspect, decimals, registered=False)
    return f"{added} on the added contexts alone, against {every} on every context"


def headline_claim(claim: pd.DataFrame, fresh: pd.DataFrame | None, model: str, dataset: str, aspect: str,
                   decimals: int = 1) -> pd.DataFrame:
    """``claim`` as a chapter headlines it: the row chosen for more data (``model`` on ``dataset``/
    ``aspect``) is read on its fresh sample (the added contexts alone, the test that is not optional
    stopping): its gap, interval, n, per-context gaps, p-value, verdict and contexts needed are the
    fresh sample's, the reading on every context kept beside it (``pooled_gap``, ``pooled_gap_low``,
    ``pooled_gap_high``, ``pooled_n_paired``, ``pooled_verdict``, and in words in ``reason`` and
    ``headline_note``). Holm's correction over the model's rows (``holm``, ``family_verdict``) is
    redone with the fresh p-value. Unchanged when ``fresh`` lacks the row."""
    out = claim.copy()
    if fresh is None:
        return out
    mine = (out["model"] == model) & (out["dataset"] == dataset) & (out["aspect"] == aspect)
    row = fresh[(fresh["model"] == model) & (fresh["dataset"] == dataset) & (fresh["aspect"] == aspect)]
    if not mine.any() or row.empty:
        return out
    r = row.iloc[0]
    every = out.loc[mine].iloc[0]
    pooled_interval = interval_text(every["gap"], every["gap_low"], every["gap_high"], decimals)
    # the reading on every context is optional stopping: a description, never a verdict word
    side = ("interval above 0" if every["gap_low"] > 0 else "interval below 0" if every["gap_high"] < 0
            else "interval contains 0")
    pooled = f"every context: {pooled_interval} over {int(every['n_paired'])} (a description, {side}: optional stopping)"
    for column in ("gap", "gap_low", "gap_high", "n_paired", "verdict"):
        out[f"pooled_{column}"] = np.nan if column != "verdict" else None
        out.loc[mine, f"pooled_{column}"] = every[column]
    index = out.index[mine][0]
    for column in ("gap", "gap_low", "gap_high", "n_paired", "verdict", "contexts_needed", "p_value"):
        out.loc[index, column] = r.get(column, np.nan)
    # the two methods' means on the same fresh contexts (their difference is the fresh gap)
    for column, source in ((COMPARATIVE, "comparative"), ("comparator_score", "comparator_score")):
        if column in out.columns and np.isfinite(r.get(source, np.nan)):
            out.loc[index, column] = r[source]
    if "per_context_gap" in out.columns and isinstance(r.get("per_context_gap"), dict):
        out.at[index, "per_context_gap"] = r["per_context_gap"]
    out.loc[mine, "reason"] = f"fresh sample of {int(r['n_paired'])} added contexts: {r['reason']}; {pooled}"
    out["headline_note"] = out.get("headline_note", pd.Series("", index=out.index)).fillna("")
    out.loc[mine, "headline_note"] = (f"fresh sample of {int(r['n_paired'])} added contexts; every context: "
                                      f"{pooled_interval}, n = {int(every['n_paired'])}, a description, {side}")
    # the family's correction is redone with the fresh sample's p-value in the row's place
    return with_family_verdicts(out) if "family_verdict" in out.columns else out


def family_on_chosen(claim: pd.DataFrame, chosen: pd.DataFrame | None, model: str, dataset: str) -> pd.DataFrame:
    """``model``'s family as it reads with ``dataset``'s rows on the contexts the extension was chosen on
    (``chosen``: :func:`fresh_sample_claims` on them) instead of every context, Holm's correction redone
    (``holm``, ``family_verdict``): a description beside the plan's reading, showing whether the added
    contexts change *which* rows the correction keeps, not only how many. Unchanged without ``chosen``."""
    out = claim[claim["model"] == model].copy()
    if chosen is None or chosen.empty:
        return with_family_verdicts(out)
    for row in chosen.to_dict("records"):
        mine = (out["dataset"] == dataset) & (out["aspect"] == row["aspect"])
        for column in ("gap", "gap_low", "gap_high", "n_paired", "verdict", "p_value"):
            out.loc[mine, column] = row[column]
    return with_family_verdicts(out)


def kept_rows(family: pd.DataFrame, names: dict[str, str] | None = None) -> list[str]:
    """The rows of a family read with :func:`with_family_verdicts` that its verdict supports, as
    "Dataset ASPECT" (``names`` maps dataset ids to reader names), in the family's order."""
    names = names or {}
    kept = family[family["family_verdict"] == "supported"]
    return [f"{names.get(d, d)} {a}" for d, a in zip(kept["dataset"], kept["aspect"], strict=True)]
