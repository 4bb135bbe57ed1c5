"""The judge screen (:mod:`nlgjudge.stats.degenerate`) on the chapters' tidy comparison frames.

Every chapter where a judge compares two texts reads its "not tested" gate for a judge here, so the
same judge is degenerate (or not) the same way in every chapter, whatever the protocol.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import pandas as pd

from nlgjudge.stats.degenerate import OrderAgreement, degenerate_reason, order_agreement, outcome_words

#: A comparative frame's comparison sets (where a pair's two orders are, and the debiasing scope): one
#: prompt on one context. The first column is always the context, the screen's unit.
COMPARISON_SET = ("context_id", "template", "aspect")
#: A pairwise judge with one question per context (Elo, narcissism, ``nlgjudge rank``): a frame of
#: (context_id, first, second, p_a); the context is the comparison set.
WHOLE_RUN = {"set_columns": ("context_id",), "first": "first", "second": "second"}


def judge_order_agreement(
    comparisons: pd.DataFrame, set_columns: Sequence[str] = COMPARISON_SET, *, first: str = "i", second: str = "j",
    p_a: str = "p_a",
) -> OrderAgreement:
    """The screen on one judge's comparisons (one row per ordered comparison; missing ones left out).
    ``set_columns`` name a comparison set (where a pair's two orders are, and the debiasing scope);
    the first of them is the context, the unit."""
    missing = [c for c in [*set_columns, first, second, p_a] if c not in comparisons.columns]
    if missing:
        raise KeyError(f"the comparisons frame lacks column(s) {missing}; it has {list(comparisons.columns)}")
    frame = comparisons.dropna(subset=[p_a])
    sets = list(zip(*(frame[c] for c in set_columns), strict=True))
    return order_agreement(sets, frame[first].tolist(), frame[second].tolist(), frame[p_a].to_numpy(dtype=float),
                           frame[set_columns[0]].tolist())


def degenerate_judges(
    comparisons: Mapping[Hashable, pd.DataFrame], set_columns: Sequence[str] = COMPARISON_SET, **columns: object
) -> dict[Hashable, str | None]:
    """``{key: reason or None}`` for each judge's frame (keys as given, e.g. ``(dataset, model)``)."""
    return {key: degenerate_reason(judge_order_agreement(frame, set_columns, **columns))  # type: ignore[arg-type]
            for key, frame in comparisons.items()}


def agreement_table(comparisons: Mapping[Hashable, pd.DataFrame], key_names: Sequence[str],
                    set_columns: Sequence[str] = COMPARISON_SET, **columns: str) -> pd.DataFrame:
    """One row per judge: contexts, pairs judged in both orders, the mean share per context whose two
    orders agree after debiasing with its interval (%), the chance level it must exceed, and the screen's
    outcome, for a chapter to show."""
    rows = []
    for key, frame in comparisons.items():
        result = judge_order_agreement(frame, set_columns, **columns)
        keys = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(key_names, keys, strict=True)), "contexts": result.n_contexts,
                     "pairs in both orders": result.n_pairs, "orders agree (%, 95% interval)": result.interval_text,
                     "chance (%)": "–" if result.chance != result.chance else result.chance_text,
                     "outcome": "passes" if not result.degenerate else f"fails: {result.outcome}"})
    return pd.DataFrame(rows)


def order_agreements(comparisons: Mapping[Hashable, pd.DataFrame], set_columns: Sequence[str] = COMPARISON_SET,
                     **columns: object) -> dict[Hashable, OrderAgreement]:
    """:func:`judge_order_agreement` of each judge's frame (keys as given)."""
    return {key: judge_order_agreement(frame, set_columns, **columns)  # type: ignore[arg-type]
            for key, frame in comparisons.items()}


def outcomes_sentence(results: Mapping[str, OrderAgreement], runs: str = "runs") -> str:
    """The test's outcome over a judge's runs (``results`` keyed by a run's name, e.g. "torch,
    summeval"), as a sentence's predicate: one run in full (:func:`outcome_words`); several, the
    range of agreement when every run passes, else which runs are degenerate and why."""
    if not results:
        return "has no run to test"
    if len(results) == 1:
        return outcome_words(next(iter(results.values())))
    failed = {name: r for name, r in results.items() if r.degenerate}
    passed = [r for r in results.values() if not r.degenerate]
    if not failed:
        low = min(r.low for r in passed)
        share = ", ".join(r.interval_text for r in passed)
        chances = sorted({f"{r.chance:.0%}" for r in passed})
        return (f"passes the judge screen in all {len(results)} {runs}: its two orders agree on {share} of pairs per "
                f"context after debiasing, every interval above its chance level ({' to '.join(chances[::len(chances) - 1 or 1])}; "
                f"the lowest end {low:.0%})")
    said = "; ".join(f"{name}: {str(degenerate_reason(r)).removeprefix('fails the judge screen: ')}" for name, r in failed.items())
    rest = f"; it passes in the other {len(passed)}" if passed else ""
    return f"fails the judge screen in {len(failed)} of its {len(results)} {runs} ({said}){rest}"


def whole_run_agreement(frame: pd.DataFrame) -> OrderAgreement:
    """The screen on one whole-run pairwise judge's frame (:data:`WHOLE_RUN`)."""
    return judge_order_agreement(frame, **WHOLE_RUN)  # type: ignore[arg-type]


def whole_run_gates(judged: Mapping[str, pd.DataFrame]) -> dict[str, str | None]:
    """``{judge: "not tested" reason or None}`` for whole-run pairwise judges (:data:`WHOLE_RUN`)."""
    return degenerate_judges(judged, **WHOLE_RUN)  # type: ignore[return-value]


def whole_run_words(judged: Mapping[str, pd.DataFrame]) -> dict[str, str]:
    """The screen's outcome in words (:func:`outcome_words`) for each whole-run pairwise judge."""
    return {judge: outcome_words(result) for judge, result in order_agreements(judged, **WHOLE_RUN).items()}


def whole_run_table(judged: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The screen in a table (:func:`agreement_table`), one row per whole-run pairwise judge."""
    return agreement_table(judged, ["judge"], **WHOLE_RUN).set_index("judge")  # type: ignore[arg-type]
