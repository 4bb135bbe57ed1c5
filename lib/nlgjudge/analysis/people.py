"""The book's one *people ranking* of summarizers, shared by the Elo and "Rank your own outputs" chapters.

**People ranking**: the systems ordered by their mean ACU score (RoSE: the fraction of the
reference's atomic content units a summary contains), averaged over the articles on which every
ranked system was annotated. Why the mean and not a Bradley-Terry fit to pairwise ACU wins: the
mean is RoSE's own system-level reading of its annotation; it keeps how much better a summary is
(a pairwise win turns 0.75 against 0.25 and 0.51 against 0.50 into the same outcome, and makes
equal ACU scores ties: 125 of the 594 contest encounters people judge); and it needs no choice of
tie rule or regularisation. Averaged over the same articles for every system, so that no system
is favoured by easier articles.

A rank correlation between a judge's ranking and people's over a handful of systems is a
**description, never a verdict**: below :data:`MIN_SYSTEMS_FOR_A_CORRELATION_CLAIM` systems not
even a perfect agreement is significant (with 4 systems, Spearman's exact two-sided p for rho = 1
is 2/4! = 0.083), so :func:`ranking_correlation` marks such a correlation "not tested" by the claim
rule.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats


#: The name every chapter gives the people ranking (tables, figures, prose).
PEOPLE_RANKING = "people ranking (mean ACU)"
#: Below this many systems a rank correlation cannot reach p < 0.05 even when the orders agree
#: exactly (Spearman, exact two-sided p = 2 / n!: 0.083 at n = 4, 0.017 at n = 5).
MIN_SYSTEMS_FOR_A_CORRELATION_CLAIM = 5
#: The book's one unit of inference for a correlation between two rankings of systems (the glossary):
#: the question is whether two judges order *systems* alike, so the systems are the units, tested
#: by the exact permutation distribution of Kendall's tau over them; an interval over articles says
#: how stable the estimate is on other articles, not whether it holds for other systems.
RANKING_UNIT = "systems (exact permutation test of Kendall's tau over them)"


def exact_kendall_p(x: "np.ndarray", y: "np.ndarray") -> float:
    """Two-sided exact permutation p-value of Kendall's tau (scipy; ties fall back to its asymptotic p)."""
    result = scipy_stats.kendalltau(x, y, method="exact" if len(set(x)) == len(x) and len(set(y)) == len(y) else "auto")
    return float(result.pvalue)


def smallest_detectable_tau(n: int, alpha: float = 0.05) -> float:
    """The smallest |tau| at which :func:`exact_kendall_p` over ``n`` distinct ranks falls below ``alpha``: a
    design limit (with fewer systems no data can resolve a weaker correlation); NaN when no tau can."""
    pairs = n * (n - 1) // 2
    smallest = float("nan")
    for inversions in range(0, pairs // 2 + 1):  # tau = 1 - 4 inversions / (n (n - 1)), from 1 down to about 0
        order, left = [], inversions
        rest = list(range(n))
        for _ in range(n):  # the permutation with that many inversions (its Lehmer code, greedily)
            step = min(left, len(rest) - 1)
            order.append(rest.pop(step))
            left -= step
        if exact_kendall_p(np.arange(n), np.array(order)) < alpha:
            smallest = 1.0 - 4.0 * inversions / (n * (n - 1))
    return smallest


def systems_test(tau: float, p_value: float, n: int, *, direction: str = "above", degenerate: str | None = None):
    """The claim rule for a ranking correlation over ``n`` systems (:data:`RANKING_UNIT`)."""
    from nlgjudge.stats.claims import verdict_from_test

    return verdict_from_test(tau, p_value, n, direction=direction, min_n=MIN_SYSTEMS_FOR_A_CORRELATION_CLAIM,  # type: ignore[arg-type]
                             degenerate=degenerate)
PEOPLE_COLUMNS = ["system", "people_mean", "people_articles", "people_rank"]


def people_ranking(people: pd.DataFrame, systems: Sequence[str] | None = None, column: str = "ACU") -> pd.DataFrame:
    """The people ranking: mean ``column`` per system over the articles annotated for every system
    that has any annotation (``people``: context_id, system, ``column``; NaN = not annotated).
    ``systems`` restricts and orders the rows (a system without annotation gets NaN and no rank).
    Columns :data:`PEOPLE_COLUMNS`, best first."""
    missing = [c for c in ("context_id", "system", column) if c not in people.columns]
    if missing:
        raise ValueError(f"people needs columns {missing}")
    frame = people if systems is None else people[people["system"].isin(list(systems))]
    annotated = frame.dropna(subset=[column])
    wide = annotated.pivot_table(index="context_id", columns="system", values=column, aggfunc="mean")
    common = wide.dropna(how="any")  # the articles every annotated system shares
    names = list(systems) if systems is not None else list(wide.columns)
    means = common.mean().reindex(names)
    table = pd.DataFrame({"system": names, "people_mean": means.to_numpy(dtype=float),
                          "people_articles": [len(common) if np.isfinite(m) else 0 for m in means]})
    table["people_rank"] = table["people_mean"].rank(ascending=False, method="min").astype("Int64")
    return table.sort_values(["people_mean", "system"], ascending=[False, True], na_position="last").reset_index(drop=True)


def ranking_correlation(scores: pd.Series, people: pd.Series) -> dict[str, object]:
    """Kendall's tau and Spearman's rho between a judge's ``scores`` and people's means (both by
    system), on the systems both rank (``n``; NaN below 3), with the claim rule's verdict on "the
    judge's ranking agrees with people's". The unit is the system (:data:`RANKING_UNIT`): the exact
    permutation test of Kendall's tau over the ``n`` systems (:func:`systems_test`); "not tested"
    below :data:`MIN_SYSTEMS_FOR_A_CORRELATION_CLAIM` systems, where not even a perfect agreement
    is significant (a description only)."""
    both = pd.concat([scores.rename("score"), people.rename("people")], axis=1).dropna()
    n = len(both)
    if n < 3:
        kendall = spearman = p_value = float("nan")
    else:
        kendall = float(scipy_stats.kendalltau(both["score"], both["people"]).statistic)
        spearman = float(scipy_stats.spearmanr(both["score"], both["people"]).statistic)
        p_value = exact_kendall_p(both["score"].to_numpy(), both["people"].to_numpy())
    verdict = systems_test(kendall, p_value, n, direction="above")
    reading = (f"a description only: {n} systems have people's scores, too few for any agreement to be significant, "
               f"which takes {MIN_SYSTEMS_FOR_A_CORRELATION_CLAIM}" if n < MIN_SYSTEMS_FOR_A_CORRELATION_CLAIM else verdict.reason)
    return {"kendall": kendall, "spearman": spearman, "n": n, "verdict": verdict.verdict, "reading": reading}
