"""The book's one claim rule: from an estimate and its interval to one of four verdicts.

Every claims table and every automatic summary of the book reads its verdict here, so that a claim
is only as strong as its interval says, the same way in every chapter:

- **supported**: the interval lies wholly on the claim's side of its threshold;
- **contradicted**: the interval lies wholly on the other side;
- **not resolved**: the interval straddles the threshold (more contexts could settle it:
  :func:`contexts_needed` says how many);
- **not tested**: the run cannot test the claim at all: too few units (n below the claim's minimum),
  no interval, or a degenerate judge or ranking (one that ties everything, or answers by position).

A claim has a direction: ``"above"`` (the estimate exceeds the threshold: a gap above 0),
``"below"`` (it falls short of it), or an equivalence claim, ``"near"`` or ``"within"`` (one test
under two names: the quantity lies within ``threshold +- margin``, "agreement as bad as random" is
kappa within +-0.2 of 0, "about 1 point" is within 1 +- 1). An equivalence claim is read by two
one-sided tests (TOST): supported when the interval lies inside the band (both one-sided tests
reject a departure beyond the margin; with the book's 95% interval each is at the 2.5% level, a
little stricter than the textbook's 90% interval), contradicted when it lies wholly outside it,
not resolved when it straddles an end of the band. An interval that excludes the value itself
but stays inside the margin supports the claim: the margin is what "near" means, so a departure
smaller than it is no finding, however many units pin it down. An ordering claim ("X above Y", "the LLMs above the fine-tuned systems") is
:func:`ordering_verdict`: supported only when every pair it involves is resolved in its direction
by a paired interval.

Pure: numbers in, a :class:`ClaimVerdict` out; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

SUPPORTED = "supported"
CONTRADICTED = "contradicted"
NOT_RESOLVED = "not resolved"
NOT_TESTED = "not tested"
#: The four verdicts, in the order the book lists them.
VERDICTS = (SUPPORTED, CONTRADICTED, NOT_RESOLVED, NOT_TESTED)
#: The claim rule's minimum number of contexts: with fewer, a claim read over contexts is "not
#: tested" (one number for every chapter whose unit is a context: comparative, bias, subsets, runtime).
MIN_CONTEXTS_FOR_A_CLAIM = 3

Direction = Literal["above", "below", "near", "within"]
DIRECTIONS: tuple[str, ...] = ("above", "below", "near", "within")


@dataclass(frozen=True)
class ClaimVerdict:
    """A verdict and the reason for it, in words a reader can check against the row's numbers."""

    verdict: str
    reason: str

    @property
    def tested(self) -> bool:
        """True unless the verdict is "not tested" (the row was a test of the claim)."""
        return self.verdict != NOT_TESTED


def _fmt(value: float) -> str:
    return f"{value:.3g}"


def claim_verdict(
    estimate: float,
    low: float,
    high: float,
    n: int,
    *,
    threshold: float = 0.0,
    direction: Direction = "above",
    min_n: int = 3,
    margin: float | None = None,
    degenerate: str | None = None,
    borderline: float = 0.0,
    borderline_reason: str | None = None,
) -> ClaimVerdict:
    """The verdict on "the quantity is ``direction`` ``threshold``" from ``estimate`` and its
    interval ``[low, high]`` over ``n`` units (contexts, articles, documents).

    ``degenerate`` (a reason in words, e.g. "the judge ties every candidate") or ``n < min_n``
    make it "not tested", as does a missing estimate or interval. ``direction="near"`` or
    ``"within"`` is an equivalence claim read by two one-sided tests, ``margin`` (> 0) required (see
    the module's docstring): supported inside ``threshold +- margin``, contradicted wholly outside
    it, not resolved across one of its ends. ``borderline`` (>= 0): an interval end within this
    distance of a boundary the verdict turns on is *borderline*, "not resolved" whichever side it
    falls: the chapter's printed precision, or the end's own Monte Carlo error, decides nothing.
    ``borderline_reason``: that case's reason, with ``{edge}`` where the boundary goes (default: the
    distance and the boundary).
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}; got {direction!r}")
    if not math.isfinite(threshold):
        raise ValueError(f"threshold must be finite; got {threshold}")
    if int(min_n) != min_n or min_n < 1:
        raise ValueError(f"min_n must be a positive integer; got {min_n}")
    if direction in ("near", "within"):
        if margin is None or not math.isfinite(margin) or margin <= 0:
            raise ValueError(f"a {direction!r} claim needs a positive, finite margin; got {margin}")
    elif margin is not None:
        raise ValueError("margin goes only with direction='near' or 'within'")
    if degenerate:
        return ClaimVerdict(NOT_TESTED, degenerate)
    if n < min_n:
        return ClaimVerdict(NOT_TESTED, f"n = {n} < {min_n}")
    if not all(map(math.isfinite, (estimate, low, high))):
        return ClaimVerdict(NOT_TESTED, "no estimate or interval on this run")
    if low > high:
        raise ValueError(f"the interval's low end {low} lies above its high end {high}")
    t = _fmt(threshold)
    if not borderline >= 0:
        raise ValueError(f"borderline must be a distance >= 0; got {borderline}")
    edges = (threshold - margin, threshold + margin) if direction in ("near", "within") and margin else (threshold,)
    touching = [edge for edge in edges for end in (low, high) if borderline and abs(end - edge) <= borderline]
    if touching:
        if borderline_reason is not None:
            return ClaimVerdict(NOT_RESOLVED, borderline_reason.format(edge=_fmt(touching[0])))
        return ClaimVerdict(NOT_RESOLVED, f"borderline: an end of the interval lies within {_fmt(borderline)} of "
                                          f"{_fmt(touching[0])}, where the verdict would turn")
    if direction in ("near", "within"):  # equivalence: two one-sided tests against the band's ends
        assert margin is not None
        band = f"{t} +- {_fmt(margin)}"
        if low >= threshold - margin and high <= threshold + margin:
            return ClaimVerdict(SUPPORTED, f"interval inside {band}")
        if low > threshold + margin:
            return ClaimVerdict(CONTRADICTED, f"interval above {band}")
        if high < threshold - margin:
            return ClaimVerdict(CONTRADICTED, f"interval below {band}")
        return ClaimVerdict(NOT_RESOLVED, f"interval straddles an end of {band}")
    above = direction == "above"
    if low > threshold:
        return ClaimVerdict(SUPPORTED if above else CONTRADICTED, f"interval above {t}")
    if high < threshold:
        return ClaimVerdict(CONTRADICTED if above else SUPPORTED, f"interval below {t}")
    return ClaimVerdict(NOT_RESOLVED, f"interval contains {t}")


def verdict_from_test(
    statistic: float,
    p_value: float,
    n: int,
    *,
    alpha: float = 0.05,
    direction: Literal["above", "below"] = "above",
    min_n: int = 3,
    degenerate: str | None = None,
) -> ClaimVerdict:
    """The claim rule for a quantity tested against 0 where no interval is computed (a permutation
    test): a two-sided test at level ``alpha`` rejects exactly when the matching ``1 - alpha``
    interval excludes 0, so "the interval excludes 0" reads "p < alpha", on the side of
    ``statistic``'s sign. Otherwise as :func:`claim_verdict` with threshold 0."""
    if direction not in ("above", "below"):
        raise ValueError(f"direction must be 'above' or 'below'; got {direction!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1); got {alpha}")
    if degenerate:
        return ClaimVerdict(NOT_TESTED, degenerate)
    if n < min_n:
        return ClaimVerdict(NOT_TESTED, f"n = {n} < {min_n}")
    if not (math.isfinite(statistic) and math.isfinite(p_value)):
        return ClaimVerdict(NOT_TESTED, "no statistic or p-value on this run")
    if p_value >= alpha or statistic == 0:
        return ClaimVerdict(NOT_RESOLVED, f"p = {p_value:.3f} >= {alpha:g}")
    side = "above" if statistic > 0 else "below"
    return ClaimVerdict(SUPPORTED if side == direction else CONTRADICTED, f"p = {p_value:.3f} < {alpha:g}, {side} 0")


@dataclass(frozen=True)
class PairEvidence:
    """One pair of an ordering claim: ``higher`` is claimed above ``lower``; ``difference`` is
    higher's score minus lower's, with its paired interval over ``n`` units."""

    higher: str
    lower: str
    difference: float
    low: float
    high: float
    n: int


def ordering_verdict(pairs: Sequence[PairEvidence], *, min_n: int = 3, degenerate: str | None = None) -> ClaimVerdict:
    """An ordering claim over several pairs, read as the book reads every claim about every cell:
    supported only when every pair's paired interval lies above 0 (each pair on its own: requiring
    all of them is stricter than any correction, an intersection-union test); contradicted when a
    pair lies below 0 after Holm's correction over the pairs (that pair is ordered the other way;
    one that does not survive the correction is a flag); otherwise not resolved, naming the pairs
    left open. No pairs, a degenerate run or a pair with fewer than ``min_n`` units: not tested."""
    from nlgjudge.stats.multiplicity import holm_rejections, p_from_interval

    if degenerate:
        return ClaimVerdict(NOT_TESTED, degenerate)
    if not pairs:
        return ClaimVerdict(NOT_TESTED, "no pair to compare on this run")
    verdicts = [(p, claim_verdict(p.difference, p.low, p.high, p.n, min_n=min_n)) for p in pairs]
    untested = [f"{p.higher} vs {p.lower} ({v.reason})" for p, v in verdicts if not v.tested]
    if untested:
        return ClaimVerdict(NOT_TESTED, "; ".join(untested))
    p_values = [p_from_interval(p.difference, p.low, p.high, p.n) for p in pairs]
    kept = holm_rejections(p_values)
    family = f"Holm's correction over the {len(pairs)} pairs"
    against = [f"{p.lower} above {p.higher}" for (p, v), k in zip(verdicts, kept, strict=True) if v.verdict == CONTRADICTED and k]
    flags = [f"{p.lower} above {p.higher}" for (p, v), k in zip(verdicts, kept, strict=True) if v.verdict == CONTRADICTED and not k]
    flag_text = f"; a flag, not after {family}: {', '.join(flags)}" if flags else ""
    if against:
        return ClaimVerdict(CONTRADICTED, f"resolved the other way after {family}: " + ", ".join(against) + flag_text)
    open_pairs = [f"{p.higher} vs {p.lower}" for p, v in verdicts if v.verdict != SUPPORTED]
    if open_pairs:
        return ClaimVerdict(NOT_RESOLVED, "not resolved: " + ", ".join(open_pairs) + flag_text)
    return ClaimVerdict(SUPPORTED, f"all {len(pairs)} pair{'s' if len(pairs) != 1 else ''} resolved by their own paired "
                                  "intervals (a claim about every pair needs each on its own, so no correction applies to it; "
                                  f"a pair against it would need {family})")


def family_verdicts(verdicts: Sequence[str], p_values: Sequence[float]) -> list[str]:
    """Each row's verdict read as one of a family (the glossary's rule): a supported or contradicted
    row that does not survive Holm's correction over the family's p-values is not resolved (a flag).
    A row without a p-value (not tested) is not in the family."""
    from nlgjudge.stats.multiplicity import holm_rejections

    if len(verdicts) != len(p_values):
        raise ValueError(f"one p-value per row: got {len(p_values)} for {len(verdicts)} verdicts")
    kept = holm_rejections(p_values)
    return [v if v not in (SUPPORTED, CONTRADICTED) or k else NOT_RESOLVED for v, k in zip(verdicts, kept, strict=True)]


# --------------------------------------------------------------------------------------------
# What more data would settle

POWER = 0.8
ALPHA = 0.05
#: How :func:`contexts_needed` counts, in words for the chapters' tables.
CONTEXTS_NEEDED_METHOD = (
    "smallest n at which a two-sided paired t test (alpha 0.05) has 80% power to tell the claim's minimal "
    "effect of interest, declared in the analysis plan, from its threshold, at the observed per-context "
    "standard deviation (never at the observed effect)"
)
#: How :func:`units_needed_from_interval` counts, for estimates with a bootstrap interval.
UNITS_FROM_INTERVAL_METHOD = (
    "the interval's standard error scaled as 1/sqrt(n) (normal approximation): smallest n at which the "
    "claim's minimal effect of interest, declared in the analysis plan, lies 1.96 + 0.84 standard errors "
    "from the threshold (80% power, alpha 0.05); for a claim of equivalence, the smallest n at which the "
    "band's half-width lies 1.96 + 1.28 standard errors from a true value at the band's centre (two one-sided "
    "tests, 80% power over both ends)"
)
#: Beyond this many units the answer is "out of reach" (None) rather than a number.
MAX_UNITS = 100_000


def t_test_power(effect_size: float, n: int, alpha: float = ALPHA) -> float:
    """Power of a two-sided one-sample (paired) t test with ``n`` units at standardized effect
    ``effect_size`` (mean difference / standard deviation): the noncentral t distribution."""
    if n < 2:
        return float("nan")
    df = n - 1
    crit = float(stats.t.ppf(1.0 - alpha / 2.0, df))
    nc = abs(effect_size) * math.sqrt(n)
    return float(stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc))


def contexts_needed(
    mean: float, sd: float, *, threshold: float = 0.0, power: float = POWER, alpha: float = ALPHA, max_n: int = MAX_UNITS
) -> int | None:
    """How many contexts a paired t test needs to tell ``mean`` from ``threshold`` with ``power``,
    when the per-context values spread with standard deviation ``sd`` (:data:`CONTEXTS_NEEDED_METHOD`).
    None when the observed effect is zero or the answer exceeds ``max_n`` (out of reach)."""
    if not (math.isfinite(mean) and math.isfinite(sd)) or sd < 0:
        raise ValueError(f"mean and sd must be finite and sd >= 0; got mean={mean}, sd={sd}")
    if not 0 < power < 1 or not 0 < alpha < 1:
        raise ValueError(f"power and alpha must lie in (0, 1); got power={power}, alpha={alpha}")
    gap = abs(mean - threshold)
    if gap == 0:
        return None
    if sd == 0:
        return 2  # no spread: any two contexts resolve it
    d = gap / sd
    # the normal approximation starts the search close to the answer; the t test needs a little more
    z = float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power))
    n = max(2, int(math.floor((z / d) ** 2)))
    if n > max_n:
        return None
    while t_test_power(d, n, alpha) < power:
        n += 1
        if n > max_n:
            return None
    while n > 2 and t_test_power(d, n - 1, alpha) >= power:
        n -= 1
    return n


def equivalence_units_needed(
    sd: float, margin: float, *, power: float = POWER, alpha: float = ALPHA, max_n: int = MAX_UNITS
) -> int | None:
    """How many units two one-sided tests need to show a paired difference lies within ``+-margin``
    with ``power`` when its true value is 0 and the per-unit differences spread with standard deviation
    ``sd``: the smallest n with ``margin sqrt(n) / sd >= t(n-1, 1 - alpha/2) + z((1 + power) / 2)`` (the
    book's 95% interval inside the band; power split between the two ends). None beyond ``max_n``."""
    if not (math.isfinite(sd) and math.isfinite(margin)) or sd < 0 or margin <= 0:
        raise ValueError(f"sd must be finite and >= 0 and margin > 0; got sd={sd}, margin={margin}")
    if sd == 0:
        return 2
    z = float(stats.norm.ppf((1 + power) / 2))
    for n in range(2, max_n + 1):
        if margin * math.sqrt(n) / sd >= float(stats.t.ppf(1 - alpha / 2, n - 1)) + z:
            return n
    return None


def kendall_units_needed(effect: float, *, power: float = POWER, alpha: float = ALPHA, max_n: int = MAX_UNITS) -> int | None:
    """How many ranked units (systems) a two-sided test of Kendall's tau = 0 needs to detect a true tau
    of ``effect`` with ``power``: the smallest n with ``|effect| / sd0(n) >= z(1 - alpha/2) + z(power)``,
    by the normal approximation to tau's null distribution, ``sd0(n)^2 = 2 (2n + 5) / (9 n (n - 1))``
    (the exact permutation test over the systems needs about as many). None beyond ``max_n`` or at 0."""
    if not math.isfinite(effect) or not -1.0 <= effect <= 1.0:
        raise ValueError(f"a Kendall's tau lies in [-1, 1]; got {effect}")
    if effect == 0:
        return None
    z = float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power))
    for n in range(3, max_n + 1):
        if abs(effect) / math.sqrt(2 * (2 * n + 5) / (9 * n * (n - 1))) >= z:
            return n
    return None


def correlation_units_needed(effect: float, *, spearman: bool = True, power: float = POWER, alpha: float = ALPHA,
                             max_n: int = MAX_UNITS) -> int | None:
    """How many units a two-sided test of a correlation of 0 needs to detect a true correlation of
    ``effect`` with ``power``, by Fisher's z: ``n = c (z(1 - alpha/2) + z(power))^2 / atanh(effect)^2 + 3``,
    with ``c = 1.06`` for Spearman's (Fieller, Hartley and Pearson's variance) and 1 for Pearson's.
    None at 0 or beyond ``max_n``."""
    if not math.isfinite(effect) or not -1.0 < effect < 1.0:
        raise ValueError(f"a correlation to detect lies in (-1, 1); got {effect}")
    if effect == 0:
        return None
    z = float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power))
    n = math.ceil((1.06 if spearman else 1.0) * (z / math.atanh(abs(effect))) ** 2 + 3)
    return None if n > max_n else n


def contexts_needed_from_values(values: Sequence[float] | np.ndarray, *, threshold: float = 0.0, **kwargs: float) -> int | None:
    """:func:`contexts_needed` at the mean and standard deviation (n - 1) of per-context ``values``."""
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or x.size < 2 or not np.isfinite(x).all():
        raise ValueError(f"need at least two finite per-context values; got {x.size} value(s)")
    return contexts_needed(float(x.mean()), float(x.std(ddof=1)), threshold=threshold, **kwargs)  # type: ignore[arg-type]


def units_needed_from_interval(
    estimate: float, low: float, high: float, n: int, *, threshold: float = 0.0, confidence: float = 0.95,
    power: float = POWER, alpha: float = ALPHA, max_n: int = MAX_UNITS,
) -> int | None:
    """For an estimate whose interval comes from resampling ``n`` units (a kappa, a rank
    correlation): how many units would put the threshold outside the interval with ``power``,
    scaling the interval's standard error as 1/sqrt(n) (:data:`UNITS_FROM_INTERVAL_METHOD`); at
    least n + 1 while the interval contains the threshold. None when the estimate sits on the
    threshold or the answer exceeds ``max_n``."""
    if not all(map(math.isfinite, (estimate, low, high))) or n < 2 or high < low:
        raise ValueError(f"need a finite estimate, an interval low <= high and n >= 2; got "
                         f"{estimate} [{low}, {high}], n={n}")
    gap = abs(estimate - threshold)
    if gap == 0:
        return None
    se = (high - low) / (2.0 * float(stats.norm.ppf((1 + confidence) / 2)))
    if se == 0:
        return n
    z = float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power))
    needed = math.ceil(n * (z * se / gap) ** 2)
    if low <= threshold <= high:
        # a skewed (percentile) interval can contain the threshold although the symmetric standard
        # error puts the estimate far from it: this n does not resolve it, so more units are needed
        needed = max(needed, n + 1)
    return None if needed > max_n else max(needed, 2)
