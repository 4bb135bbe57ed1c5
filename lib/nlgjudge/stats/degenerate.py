"""The book's one test of a degenerate pairwise judge: do its two orders agree more often than chance?

A pairwise judge is asked about each pair twice, once in each order. Its decisions are first
debiased (seed 000 eq. 10, :func:`nlgjudge.stats.bias.debias_threshold`, one threshold per scope as
the chapter debiases: per comparison set in the first paper's chapters, over the judge's whole run
in the Elo, narcissism and rank chapters), so that answering by position alone cannot look like
agreement. The two orders of a pair then *agree* when they prefer the same candidate;
a decision tied at the threshold counts as half a decision, so a pair's agreement is
``d_ij (1 - d_ji) + (1 - d_ij) d_ji`` with ``d`` the debiased decision for position A.

- a judge that reads the texts agrees with itself more often than not;
- a judge that answers by position (every P(A) the same, or P(A) unrelated to the texts) agrees
  half the time after debiasing: chance;
- a judge whose two orders agree *less* often than chance prefers position A more for some
  candidates than others, not the better candidate.

The judge is **degenerate** on a run when a one-sided exact binomial test (``scipy.stats.binomtest``)
of "the two orders agree more often than half the time" over the run's pairs is not significant at
:data:`ALPHA` (pairs share candidates and contexts, so the test is a screen, not a claim; the book
states the agreement share beside it). A degenerate judge's rows are "not tested" in every chapter,
whatever the protocol, with :func:`degenerate_reason` as the reason.

Pure: arrays in, numbers out; no I/O.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from nlgjudge.stats.bias import debias_threshold, threshold_decisions_values

#: Level of the one-sided binomial test (the book's alpha).
ALPHA = 0.05
#: In words, for glossaries and reasons.
DEFINITION = ("its two orders of a pair, after debiasing, prefer the same candidate no more often than chance "
              f"(one-sided binomial test at {ALPHA:g} over its pairs)")


@dataclass(frozen=True)
class OrderAgreement:
    """How often a judge's two orders agree after debiasing, and the test against chance."""

    n_pairs: int  # pairs judged in both orders
    agreement: float  # share of those pairs whose two debiased decisions prefer the same candidate
    p_value: float  # one-sided binomial test of agreement > 0.5 (NaN without pairs)

    @property
    def degenerate(self) -> bool:
        """True when the test does not show agreement above chance (or there is no pair to test)."""
        return not (self.n_pairs > 0 and self.p_value < ALPHA)


def order_agreement(
    set_ids: Sequence[Hashable], first: Sequence[Hashable], second: Sequence[Hashable], p_a: Sequence[float],
    scope_ids: Sequence[Hashable] | None = None,
) -> OrderAgreement:
    """The test on a judge's comparisons: one row per ordered comparison, ``first`` in position A,
    ``p_a`` = P(first preferred); ``set_ids`` names each row's comparison set (where a pair's two
    orders are looked for: one question about one context), ``scope_ids`` the debiasing scope of
    each row (one threshold per scope, as the chapter debiases; default: the comparison sets).
    Comparisons without their reverse in the same set are left out of the count (not of the
    debiasing)."""
    sets = list(set_ids)  # hashable keys (tuples stay tuples)
    a = np.asarray(list(first), dtype=object)
    b = np.asarray(list(second), dtype=object)
    p = np.asarray(p_a, dtype=float)
    if not (len(sets) == len(a) == len(b) == len(p)):
        raise ValueError(f"set_ids, first, second and p_a need one value per comparison; got lengths "
                         f"{len(sets)}, {len(a)}, {len(b)}, {len(p)}")
    if len(p) and not np.all(np.isfinite(p) & (p >= 0) & (p <= 1)):
        raise ValueError("p_a must be probabilities in [0, 1] (a missing comparison is left out, not NaN)")
    scopes = sets if scope_ids is None else list(scope_ids)
    if len(scopes) != len(p):
        raise ValueError(f"scope_ids needs one value per comparison; got {len(scopes)} for {len(p)}")
    decided = np.empty(len(p))
    by_scope: dict[Hashable, list[int]] = {}
    for row, key in enumerate(scopes):
        by_scope.setdefault(key, []).append(row)
    for rows in by_scope.values():
        threshold = debias_threshold(p[rows])
        decided[rows] = threshold_decisions_values(p[rows], threshold.tau, threshold.tie_weight)
    by_pair: dict[tuple[Hashable, Hashable, Hashable], float] = {}
    for row in range(len(p)):
        by_pair[(sets[row], a[row], b[row])] = decided[row]
    agreed, pairs = 0.0, 0
    for (key, x, y), d_xy in by_pair.items():
        if (key, y, x) in by_pair and str(x) < str(y):
            d_yx = by_pair[(key, y, x)]
            agreed += d_xy * (1.0 - d_yx) + (1.0 - d_xy) * d_yx
            pairs += 1
    if pairs == 0:
        return OrderAgreement(0, float("nan"), float("nan"))
    share = agreed / pairs
    test = stats.binomtest(int(round(agreed)), pairs, 0.5, alternative="greater")
    return OrderAgreement(pairs, share, float(test.pvalue))


def degenerate_reason(result: OrderAgreement) -> str | None:
    """The "not tested" reason for a degenerate judge (None for a judge that passes the test)."""
    if not result.degenerate:
        return None
    if result.n_pairs == 0:
        return "degenerate judge: no pair judged in both orders to test it on"
    return (f"degenerate judge: its two orders agree on {result.agreement:.0%} of {result.n_pairs:,} pairs after "
            f"debiasing, no better than chance (one-sided binomial p = {result.p_value:.2f})")


def p_text(p: float, *, relation: bool = True) -> str:
    """A passing test's p-value as the book prints it: "< 0.001" or "= 0.012" ("0.012" without
    ``relation``, for a table's column); "–" for no test (NaN)."""
    if p != p:
        return "–"
    if p < 0.001:
        return "< 0.001"
    return f"= {p:.3f}" if relation else f"{p:.3f}"


def outcome_words(result: OrderAgreement) -> str:
    """The test's outcome in words, as a sentence's predicate ("the judge ..."), for every judge a
    chapter or report names: that it passes or fails, with the agreement share, n and p."""
    reason = degenerate_reason(result)
    if reason is not None:
        return "fails the degenerate-judge test: " + reason.removeprefix("degenerate judge: ")
    return (f"passes the degenerate-judge test: its two orders agree on {result.agreement:.0%} of {result.n_pairs:,} pairs "
            f"after debiasing (one-sided binomial p {p_text(result.p_value)})")
