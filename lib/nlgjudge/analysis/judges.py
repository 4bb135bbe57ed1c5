"""The degenerate-judge test (:mod:`nlgjudge.stats.degenerate`) on the chapters' tidy comparison frames.

Every chapter where a judge compares two texts reads its "not tested" gate for a judge here, so the
same judge is degenerate (or not) the same way in every chapter, whatever the protocol.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import pandas as pd

from nlgjudge.stats.degenerate import OrderAgreement, degenerate_reason, order_agreement, outcome_words, p_text

#: A comparative frame's comparison sets (the debiasing scope of the test): one prompt on one context.
COMPARISON_SET = ("context_id", "template", "aspect")
#: A whole-run pairwise judge (Elo, narcissism, ``nlgjudge rank``): a frame of (context_id, first,
#: second, p_a), pairs looked for within a context, one debiasing threshold over the judge's run.
WHOLE_RUN = {"set_columns": ("context_id",), "first": "first", "second": "second", "scope_columns": ()}


def judge_order_agreement(
    comparisons: pd.DataFrame, set_columns: Sequence[str] = COMPARISON_SET, *, first: str = "i", second: str = "j",
    p_a: str = "p_a", scope_columns: Sequence[str] | None = None,
) -> OrderAgreement:
    """The test on one judge's comparisons (one row per ordered comparison; missing ones left out).
    ``set_columns`` name a comparison set (where a pair's two orders are), ``scope_columns`` the
    debiasing scope (default: the sets; ``()``: one threshold for the whole frame)."""
    scope = list(set_columns if scope_columns is None else scope_columns)
    missing = [c for c in [*set_columns, *scope, first, second, p_a] if c not in comparisons.columns]
    if missing:
        raise KeyError(f"the comparisons frame lacks column(s) {missing}; it has {list(comparisons.columns)}")
    frame = comparisons.dropna(subset=[p_a])

    def keys(columns: Sequence[str]) -> list[Hashable]:
        return list(zip(*(frame[c] for c in columns), strict=True)) if columns else [0] * len(frame)

    return order_agreement(keys(set_columns), frame[first].tolist(), frame[second].tolist(),
                           frame[p_a].to_numpy(dtype=float), keys(scope))


def degenerate_judges(
    comparisons: Mapping[Hashable, pd.DataFrame], set_columns: Sequence[str] = COMPARISON_SET, **columns: object
) -> dict[Hashable, str | None]:
    """``{key: reason or None}`` for each judge's frame (keys as given, e.g. ``(dataset, model)``)."""
    return {key: degenerate_reason(judge_order_agreement(frame, set_columns, **columns))  # type: ignore[arg-type]
            for key, frame in comparisons.items()}


def agreement_table(comparisons: Mapping[Hashable, pd.DataFrame], key_names: Sequence[str],
                    set_columns: Sequence[str] = COMPARISON_SET, **columns: str) -> pd.DataFrame:
    """One row per judge: pairs judged in both orders, the share whose two orders agree after
    debiasing (%), the one-sided binomial p-value and the gate's outcome, for a chapter to show."""
    rows = []
    for key, frame in comparisons.items():
        result = judge_order_agreement(frame, set_columns, **columns)
        keys = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(key_names, keys, strict=True)), "pairs in both orders": result.n_pairs,
                     "orders agree (%)": round(100 * result.agreement, 1) if result.n_pairs else float("nan"),
                     "p (vs chance)": p_text(result.p_value, relation=False),
                     "outcome": "degenerate: not tested" if result.degenerate else "passes: tested"})
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
        low, high = min(r.agreement for r in passed), max(r.agreement for r in passed)
        share = f"{low:.0%}" if round(100 * low) == round(100 * high) else f"{low:.0%} to {high:.0%}"
        p_max = max(r.p_value for r in passed)
        return (f"passes the degenerate-judge test in all {len(results)} {runs}: its two orders agree on {share} of pairs "
                f"after debiasing (the largest one-sided binomial p {p_text(p_max)})")
    said = "; ".join(f"{name}: {degenerate_reason(r)}" for name, r in failed.items())
    rest = f"; it passes in the other {len(passed)}" if passed else ""
    return f"is a degenerate judge in {len(failed)} of its {len(results)} {runs} ({said}){rest}"


def whole_run_agreement(frame: pd.DataFrame) -> OrderAgreement:
    """The test on one whole-run pairwise judge's frame (:data:`WHOLE_RUN`)."""
    return judge_order_agreement(frame, **WHOLE_RUN)  # type: ignore[arg-type]


def whole_run_gates(judged: Mapping[str, pd.DataFrame]) -> dict[str, str | None]:
    """``{judge: "not tested" reason or None}`` for whole-run pairwise judges (:data:`WHOLE_RUN`)."""
    return degenerate_judges(judged, **WHOLE_RUN)  # type: ignore[return-value]


def whole_run_words(judged: Mapping[str, pd.DataFrame]) -> dict[str, str]:
    """The test's outcome in words (:func:`outcome_words`) for each whole-run pairwise judge."""
    return {judge: outcome_words(result) for judge, result in order_agreements(judged, **WHOLE_RUN).items()}


def whole_run_table(judged: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The test in a table (:func:`agreement_table`), one row per whole-run pairwise judge."""
    return agreement_table(judged, ["judge"], **WHOLE_RUN).set_index("judge")  # type: ignore[arg-type]
