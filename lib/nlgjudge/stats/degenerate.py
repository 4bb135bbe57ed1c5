"""The book's judge screen, set by no data: does a pairwise judge show that it reads the texts?

A pairwise judge is asked about each pair twice, once in each order. Its decisions are first
debiased (Liusie et al. eq. 10, :func:`nlgjudge.stats.bias.debias_threshold`) with one threshold per
context and question (one prompt and aspect on one context), the same scope in every chapter, so that answering
by position alone cannot look like agreement. The two orders of a pair then *agree* when they prefer
the same candidate; a decision tied at the threshold counts as half a decision, so a pair's agreement
is ``d_ij (1 - d_ji) + (1 - d_ij) d_ji`` with ``d`` the debiased decision for position A.

- a judge that reads the texts agrees with itself more often than chance;
- a judge that always answers "A" never agrees before debiasing (each order picks a different
  candidate); after debiasing its decisions all tie at the threshold and every pair agrees half;
- a judge whose two orders agree *less* often than chance prefers position A more for some
  candidates than others, not the better candidate.

**Chance** is what a judge whose answers carry neither the texts nor the position would reach: its
debiased decisions shuffled at random within the set they were debiased in. The threshold is fitted
on the same comparisons, so it makes exactly half of a set's K decisions go to A; two decisions of one
set are then slightly anti-correlated, and a pair's two orders agree with probability K / (2 (K - 1)),
not one half (55% with four candidates, K = 12; 51% with seven, K = 42). :func:`set_chance` gives it
exactly for any decisions, ties included (all tied: one half).

The unit is the context, as for every claim in the book: each context's share of agreeing pairs,
then their mean with the book's interval over contexts (bounded, :func:`~nlgjudge.stats.intervals.share_interval`).
The criterion, the same for every judge and set by no data (chance, and :data:`MIN_CONTEXTS`): a
judge **passes** when the whole interval lies above chance (the mean of its contexts' chance levels),
on at least :data:`MIN_CONTEXTS` contexts. Otherwise its rows
are "not tested" in every chapter, whatever the protocol, with :func:`degenerate_reason` saying which
of three things happened: the interval lies at or below chance (it answers by position, or worse);
the interval reaches chance (the run does not show that it reads the texts: a judge must show it
before its verdicts count, as a measuring instrument is calibrated before it is read); too few contexts.

Pure: arrays in, numbers out; no I/O.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from nlgjudge.stats.bias import debias_threshold, threshold_decisions_values
from nlgjudge.stats.intervals import share_interval

#: The agreement of a pair's two orders for a judge that answers at random, with many comparisons a set
#: (the chance level of a set of K comparisons is K / (2 (K - 1)): :func:`set_chance`).
MINIMUM = 0.5
#: The fewest contexts the screen reads (an interval over fewer says nothing).
MIN_CONTEXTS = 3
#: In words, for glossaries and reasons.
DEFINITION = ("its two orders of a pair, after debiasing, are not shown to prefer the same candidate more often than "
              "chance (the 95% interval over contexts of the share of agreeing pairs reaches the chance level or lies below it)")

#: The screen's outcomes.
PASSES, POSITION, NOT_SHOWN, TOO_FEW = "passes", "answers by position", "not shown to read the texts", "too few contexts"


@dataclass(frozen=True)
class OrderAgreement:
    """How often a judge's two orders agree after debiasing, per context, and the screen's outcome."""

    n_pairs: int  # pairs judged in both orders
    n_contexts: int  # contexts with at least one such pair
    agreement: float  # mean over contexts of each context's share of agreeing pairs (NaN without pairs)
    low: float  # 95% interval over contexts (NaN below two contexts)
    high: float
    chance: float = MINIMUM  # mean over contexts of each context's chance level (:func:`set_chance`)

    @property
    def outcome(self) -> str:
        """:data:`PASSES`, :data:`POSITION`, :data:`NOT_SHOWN` or :data:`TOO_FEW`."""
        if self.n_contexts < MIN_CONTEXTS:
            return TOO_FEW
        if self.low - self.chance > 1e-12:
            return PASSES
        return POSITION if self.high - self.chance <= 1e-12 else NOT_SHOWN

    @property
    def degenerate(self) -> bool:
        """True when the judge does not pass the screen (its rows are then "not tested")."""
        return self.outcome != PASSES

    @property
    def places(self) -> int:
        """Decimals of a percent that keep each interval end on its side of chance ("54.51%" against "54.55%",
        where whole percents would print both as 55%), at most two."""
        places = 0
        for end in (self.low, self.high):
            while (end == end and self.chance == self.chance and end != self.chance and places < 2
                   and f"{end:.{places}%}" == f"{self.chance:.{places}%}"):
                places += 1
        return places

    @property
    def chance_text(self) -> str:
        """Chance in percent, with the decimals :attr:`places` gives the interval."""
        return f"{self.chance:.{self.places}%}"

    @property
    def interval_text(self) -> str:
        """The agreement with its interval, in percent ("71% [66%, 76%]")."""
        if self.n_contexts < 2:
            return "–" if self.agreement != self.agreement else f"{self.agreement:.0%}"
        k = self.places
        return f"{self.agreement:.{k}%} [{self.low:.{k}%}, {self.high:.{k}%}]"


def order_agreement(
    set_ids: Sequence[Hashable], first: Sequence[Hashable], second: Sequence[Hashable], p_a: Sequence[float],
    context_ids: Sequence[Hashable] | None = None,
) -> OrderAgreement:
    """The screen on a judge's comparisons: one row per ordered comparison, ``first`` in position A,
    ``p_a`` = P(first preferred); ``set_ids`` names each row's comparison set (one question about one
    context: where a pair's two orders are looked for, and the debiasing scope), ``context_ids`` each
    row's context, the unit (default: the sets). Comparisons without their reverse in the same set are
    left out of the count (not of the debiasing)."""
    per_context = agreement_per_context(set_ids, first, second, p_a, context_ids)
    # a context of two candidates says nothing: its threshold sends one order to A and the other to B, so
    # its pair always agrees (chance 1); the screen reads the contexts that can show something
    per_context = {c: one for c, one in per_context.items() if one.chance < 1.0 - 1e-9}
    n_pairs = sum(one.pairs for one in per_context.values())
    if n_pairs == 0:
        return OrderAgreement(0, 0, float("nan"), float("nan"), float("nan"), float("nan"))
    shares = np.array([one.share for one in per_context.values()])
    # the mean share with the book's bounded interval over contexts, against the mean of the contexts'
    # chance levels (equal where every context has as many candidates; close to each other otherwise)
    interval = share_interval(shares)
    chance = float(np.mean([one.chance for one in per_context.values()]))
    return OrderAgreement(n_pairs, len(per_context), interval.mean, float(interval.low), float(interval.high), chance)


class ContextAgreement(NamedTuple):
    """One context's pairs: the share whose two orders agree after debiasing, how many, and the share a
    judge answering at random would reach (:func:`set_chance`, averaged over the context's pairs)."""

    share: float
    pairs: int
    chance: float


def set_chance(decisions: np.ndarray) -> float:
    """The expected agreement of a pair's two orders when a set's debiased ``decisions`` (in [0, 1], a
    tie one half) are shuffled at random within it: ``2 m - 2 E[d d']`` over two distinct comparisons,
    m their mean. With K decisions half of them 1, K / (2 (K - 1)); all tied, one half."""
    d = np.asarray(decisions, dtype=float)
    k = d.size
    if k < 2:
        return float("nan")
    total = float(d.sum())
    return float(2.0 * total / k - 2.0 * (total * total - float((d * d).sum())) / (k * (k - 1)))


def agreement_per_context(
    set_ids: Sequence[Hashable], first: Sequence[Hashable], second: Sequence[Hashable], p_a: Sequence[float],
    context_ids: Sequence[Hashable] | None = None,
) -> dict[Hashable, ContextAgreement]:
    """``{context: ContextAgreement(share of its pairs whose two orders agree after debiasing, pairs, chance)}``,
    the screen's per-unit values (arguments as :func:`order_agreement`); contexts without a pair in both
    orders are absent."""
    sets = list(set_ids)  # hashable keys (tuples stay tuples)
    a = np.asarray(list(first), dtype=object)
    b = np.asarray(list(second), dtype=object)
    p = np.asarray(p_a, dtype=float)
    if not (len(sets) == len(a) == len(b) == len(p)):
        raise ValueError(f"set_ids, first, second and p_a need one value per comparison; got lengths "
                         f"{len(sets)}, {len(a)}, {len(b)}, {len(p)}")
    if len(p) and not np.all(np.isfinite(p) & (p >= 0) & (p <= 1)):
        raise ValueError("p_a must be probabilities in [0, 1] (a missing comparison is left out, not NaN)")
    contexts = sets if context_ids is None else list(context_ids)
    if len(contexts) != len(p):
        raise ValueError(f"context_ids needs one value per comparison; got {len(contexts)} for {len(p)}")
    decided = np.empty(len(p))
    by_set: dict[Hashable, list[int]] = {}
    for row, key in enumerate(sets):
        by_set.setdefault(key, []).append(row)
    chance_of: dict[Hashable, float] = {}
    for key, rows in by_set.items():
        threshold = debias_threshold(p[rows])
        decided[rows] = threshold_decisions_values(p[rows], threshold.tau, threshold.tie_weight)
        chance_of[key] = set_chance(decided[rows])
    by_pair: dict[tuple[Hashable, Hashable, Hashable], int] = {}
    for row in range(len(p)):
        by_pair[(sets[row], a[row], b[row])] = row
    agreements: dict[Hashable, list[tuple[float, float]]] = {}
    for (key, x, y), row in by_pair.items():
        if (key, y, x) in by_pair and str(x) < str(y):
            d_xy, d_yx = decided[row], decided[by_pair[(key, y, x)]]
            agreements.setdefault(contexts[row], []).append((d_xy * (1.0 - d_yx) + (1.0 - d_xy) * d_yx, chance_of[key]))
    return {context: ContextAgreement(float(np.mean([a for a, _ in values])), len(values),
                                      float(np.mean([c for _, c in values])))
            for context, values in agreements.items()}


def degenerate_reason(result: OrderAgreement) -> str | None:
    """The "not tested" reason for a judge that does not pass the screen (None for one that passes)."""
    outcome = result.outcome
    if outcome == PASSES:
        return None
    if outcome == TOO_FEW:
        if result.n_pairs == 0:
            return ("judge not screened: no pair judged in both orders in a context of three or more candidates (with "
                    "two, debiasing makes a pair's two orders agree whatever the judge does)")
        return (f"judge not screened: pairs in both orders on {result.n_contexts} context{'s' if result.n_contexts != 1 else ''}, "
                f"and the screen needs {MIN_CONTEXTS}")
    said = (f"its two orders agree on {result.interval_text} of pairs per context after debiasing, over {result.n_contexts} "
            f"contexts, where chance is {result.chance_text}")
    if outcome == POSITION:
        return f"fails the judge screen: {said}, at or below chance: its decisions follow position more than the texts"
    return f"fails the judge screen: {said}; the interval reaches chance, so the run does not show that it reads the texts"


def p_text(p: float, *, relation: bool = True) -> str:
    """A passing test's p-value as the book prints it: "< 0.001" or "= 0.012" ("0.012" without
    ``relation``, for a table's column); "–" for no test (NaN)."""
    if p != p:
        return "–"
    if p < 0.001:
        return "< 0.001"
    return f"= {p:.3f}" if relation else f"{p:.3f}"


def outcome_words(result: OrderAgreement) -> str:
    """The screen's outcome in words, as a sentence's predicate ("the judge ..."), for every judge a
    chapter or report names: that it passes or not, with the agreement, its interval and n."""
    reason = degenerate_reason(result)
    if reason is not None:
        return "fails the judge screen: " + reason.split(": ", 1)[1]
    return (f"passes the judge screen: its two orders agree on {result.interval_text} of pairs per context after "
            f"debiasing, over {result.n_contexts} contexts, above chance, {result.chance_text}")
