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
    MIN_CONTEXTS_FOR_A_CLAIM,
    SCORING_SHORT,
    _require,
    tied_ranking_reason,
)
from nlgjudge.prose import interval_text, verdict_cell
from nlgjudge.stats import claim_verdict, mean_interval


def fresh_sample_claims(claim: pd.DataFrame, contexts: Sequence[str], confidence: float = 0.95) -> pd.DataFrame:
    """The same claim read on ``contexts`` alone: contexts added after the claim was picked for
    more data, so the verdict on them is not optional stopping.

    ``claim``: :func:`comparative_vs_scoring` on every context. Each row's per-context gaps
    (comparative minus the same scoring reading as on every context) are restricted to
    ``contexts``; ``gap`` is their mean with its paired t interval (``gap_low``, ``gap_high``,
    ``n_paired``) and ``verdict``/``reason`` come from the same claim rule, minimum n and
    degenerate-ranking test as on every context. Rows keep the claim's order; columns
    ``model, dataset, aspect, best_method, gap, gap_low, gap_high, n_paired, verdict, reason``.
    """
    _require(claim, ["model", "dataset", "aspect", "best_method", "per_context_gap", "n_tied_cells", "n_cells"],
             "claim table")
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
        verdict = claim_verdict(gap, low, high, int(values.size), min_n=MIN_CONTEXTS_FOR_A_CLAIM,
                                degenerate=tied_ranking_reason(row["n_tied_cells"], row["n_cells"]))
        records.append({"model": row["model"], "dataset": row["dataset"], "aspect": row["aspect"],
                        "best_method": row["best_method"], "gap": gap, "gap_low": low, "gap_high": high,
                        "n_paired": int(values.size), "verdict": verdict.verdict, "reason": verdict.reason})
    return pd.DataFrame.from_records(
        records, columns=["model", "dataset", "aspect", "best_method", "gap", "gap_low", "gap_high", "n_paired",
                          "verdict", "reason"])


def fresh_sample_table(claim: pd.DataFrame, fresh: pd.DataFrame, decimals: int = 1) -> pd.DataFrame:
    """:func:`fresh_sample_claims` beside the claim on every context: per model, dataset and aspect,
    the gap with its paired 95% interval, n and the verdict, on every context and on the added
    contexts alone; the index names the scoring reading both gaps are taken against (the best on
    every context)."""
    keys = ["model", "dataset", "aspect"]
    whole = claim.set_index(keys)
    rows = fresh.set_index(keys)

    def cells(frame: pd.DataFrame) -> dict[str, list[object]]:
        return {
            "gap [paired 95%]": [interval_text(g, lo, hi, decimals)
                                 for g, lo, hi in zip(frame["gap"], frame["gap_low"], frame["gap_high"], strict=True)],
            "n": frame["n_paired"].astype(int).tolist(),
            "verdict": [verdict_cell(v, r) for v, r in zip(frame["verdict"], frame["reason"], strict=True)],
        }

    both = {("every context", k): v for k, v in cells(whole.loc[rows.index]).items()}
    both.update({("added contexts only", k): v for k, v in cells(rows).items()})
    against = [SCORING_SHORT.get(m, "–") if isinstance(m, str) else "–" for m in rows["best_method"]]
    index = pd.MultiIndex.from_tuples([(*key, a) for key, a in zip(rows.index, against, strict=True)],
                                      names=[*keys, "against scoring"])
    return pd.DataFrame(both, index=index)


def fresh_sample_prose(claim: pd.DataFrame, fresh: pd.DataFrame | None, model: str, dataset: str, aspect: str,
                       decimals: int = 1) -> str:
    """One sentence for a chapter: the gap of ``model`` on ``dataset``/``aspect`` on the added
    contexts alone and on every context, each with its interval, n and verdict; what is missing
    when ``fresh`` is None or lacks the row."""
    def said(frame: pd.DataFrame) -> str | None:
        row = frame[(frame["model"] == model) & (frame["dataset"] == dataset) & (frame["aspect"] == aspect)]
        if row.empty:
            return None
        r = row.iloc[0]
        return (f"{interval_text(r['gap'], r['gap_low'], r['gap_high'], decimals)} over {int(r['n_paired'])} "
                f"contexts ({verdict_cell(r['verdict'], r['reason'])})")

    added = None if fresh is None else said(fresh)
    if added is None:
        return f"not read on this run: it has no contexts added after the claim was chosen for {model} on {dataset} {aspect}"
    return f"{added} on the added contexts alone, against {said(claim)} on every context"
