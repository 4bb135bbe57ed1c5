"""Ranking quality against the number of comparisons made (the machinery behind seed 000 Fig. 4-5).

For every strategy and budget R, each of ``n_draws`` draws selects R comparisons per context (nested
across budgets, see :mod:`nlgjudge.stats.selection`), ranks the candidates by win ratio (eq. 6) over the
selected comparisons only, with the plain eq. 2 decisions or with decisions debiased by the exact
eq. 10 threshold fitted on the *selected* comparisons of that context (all one would have), and
scores the ranking by Spearman against gold per context, averaged over contexts (x100). The curve is
the mean over draws with a confidence band.

Choices the papers leave open, made explicit here:
* a candidate that took part in no selected comparison gets win ratio 0.5 (neither better nor worse);
* a context where every candidate ties (tiny budgets) counts as Spearman 0 (chance), not as missing;
* contexts whose *gold* scores are all equal have no correlation at any budget and are left out, and
  counted in ``n_contexts_constant_gold``.

Everything is vectorised over draws x contexts; only the loop over budgets is in Python.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit
from scipy.stats import norm

from nlgjudge.stats import _validation as check
from nlgjudge.stats.bias import _thresholds_unchecked
from nlgjudge.stats.correlation import centred_average_ranks
from nlgjudge.stats.selection import STRATEGIES, check_budget, selection_orders, valid_budgets

DEFAULT_STRATEGIES = ("random", "no-repeat", "symmetric")


@dataclass(frozen=True)
class SubsetCurve:
    """Summary-level Spearman (x100) against the number of comparisons for one strategy."""

    strategy: str
    debiased: bool
    budgets: NDArray[np.int_]
    per_draw_x100: NDArray[np.float64]
    """(n_draws, n_budgets): each draw's Spearman averaged over contexts, x100."""
    per_context_x100: NDArray[np.float64]
    """(n_contexts used, n_budgets): each context's Spearman averaged over draws, x100. The contexts,
    not the draws, are the independent units: intervals over contexts start here."""
    mean_x100: NDArray[np.float64]
    sd_x100: NDArray[np.float64]
    """Standard deviation over draws."""
    ci_low_x100: NDArray[np.float64]
    ci_high_x100: NDArray[np.float64]
    """Normal-approximation confidence interval of the mean over draws."""
    distinct_pairs: NDArray[np.float64]
    """Mean number of distinct unordered pairs compared at each budget."""
    p_a: NDArray[np.float64]
    """Mean fraction of the selected comparisons won by position A (after debiasing when debiased)."""

    def at(self, budget: int) -> float:
        """Mean Spearman x100 at one budget."""
        hits = np.nonzero(self.budgets == budget)[0]
        if hits.size == 0:
            raise ValueError(
                f"budget {budget} is not on this curve; budgets run {self.budgets.min()}..{self.budgets.max()}."
            )
        return float(self.mean_x100[hits[0]])


@dataclass(frozen=True)
class SubsetCurves:
    """All curves of one run, keyed by ``(strategy, debiased)``."""

    curves: dict[tuple[str, bool], SubsetCurve]
    n_contexts: int
    n_contexts_constant_gold: int
    n_candidates: int
    n_draws: int
    confidence: float
    seconds: float

    def curve(self, strategy: str, debiased: bool = False) -> SubsetCurve:
        key = (strategy, debiased)
        if key not in self.curves:
            raise ValueError(f"no curve for {key}; available: {sorted(self.curves)}.")
        return self.curves[key]


def subset_curves(
    probs: ArrayLike,
    gold: ArrayLike,
    strategies: Sequence[str] = DEFAULT_STRATEGIES,
    budgets: Sequence[int] | Mapping[str, Sequence[int]] | None = None,
    n_draws: int = 50,
    debias: Sequence[bool] = (False, True),
    confidence: float = 0.95,
    seed: int | np.random.Generator | None = 0,
) -> SubsetCurves:
    """Spearman against the number of comparisons (seed 000 §5.6, Fig. 4-5) per strategy, with and without debiasing.

    ``probs``: (n_contexts, N, N) full comparison matrices (``P[c, i, j]`` = P(i beats j | i in A));
    ``gold``: (n_contexts, N) human scores. ``budgets``: None (every budget the strategy allows), one
    list for all strategies (budgets a strategy cannot make are skipped, e.g. odd R for symmetric), or a
    mapping strategy -> list. Strategies ``"full"`` and ``"active"`` are accepted too (active is
    sequential and slower: about 3 ms per draw and context for N = 16 on one core).
    """
    stack = check.comparison_stack(probs, "probs")
    scores = np.asarray(gold, dtype=float)
    if scores.ndim == 1:
        scores = scores[None]
    n_contexts, n = stack.shape[0], stack.shape[1]
    if scores.shape != (n_contexts, n):
        raise ValueError(f"gold must have shape {(n_contexts, n)} to match probs; got {scores.shape}.")
    if not np.isfinite(scores).all():
        raise ValueError("gold contains NaN or infinite scores.")
    if check.integer(n_draws, "n_draws") < 2:
        raise ValueError(f"n_draws must be at least 2 (the band needs a spread); got {n_draws}.")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1); got {confidence}.")
    check.not_text(strategies, "strategies", f"a list of selection strategies from {list(STRATEGIES)}")
    if not strategies:
        raise ValueError(f"no strategies given; valid choices: {', '.join(STRATEGIES)}.")
    for strategy in strategies:
        check.choice(strategy, STRATEGIES, "selection strategy")
    check.not_text(debias, "debias", "a list of booleans such as (False, True)")
    if not all(_is_flag(flag) for flag in debias):  # bool("False") is True
        raise TypeError(f"debias must list booleans (False: eq. 2 decisions, True: debiased); got {list(debias)!r}.")
    debias_flags = tuple(bool(flag) for flag in debias)
    if not debias_flags:
        raise ValueError("debias must list at least one of False, True.")
    constant_gold = np.ptp(scores, axis=1) == 0
    if constant_gold.all():
        raise ValueError("every context has constant gold scores; Spearman is undefined everywhere.")
    stack, scores = stack[~constant_gold], scores[~constant_gold]
    n_used = stack.shape[0]

    rng = check.rng_from(seed)
    started = time.perf_counter()
    z = float(norm.ppf(0.5 + confidence / 2))
    curves: dict[tuple[str, bool], SubsetCurve] = {}
    for strategy in strategies:
        strategy_budgets = _budgets_for(strategy, n, budgets)
        oracle = np.tile(stack, (n_draws, 1, 1)) if strategy == "active" else None
        orders = selection_orders(n, strategy, n_draws * n_used, rng, oracle)
        evaluation = _evaluate_strategy(stack, scores, orders, strategy_budgets, n_draws, debias_flags)
        for flag, (per_draw, per_context, pairs, p_a) in evaluation.items():
            mean = per_draw.mean(axis=0)
            sd = per_draw.std(axis=0, ddof=1)
            half = z * sd / np.sqrt(n_draws)
            curves[(strategy, flag)] = SubsetCurve(
                strategy=strategy,
                debiased=flag,
                budgets=strategy_budgets,
                per_draw_x100=per_draw,
                per_context_x100=per_context,
                mean_x100=mean,
                sd_x100=sd,
                ci_low_x100=mean - half,
                ci_high_x100=mean + half,
                distinct_pairs=pairs,
                p_a=p_a,
            )
    return SubsetCurves(
        curves=curves,
        n_contexts=n_contexts,
        n_contexts_constant_gold=int(constant_gold.sum()),
        n_candidates=n,
        n_draws=n_draws,
        confidence=confidence,
        seconds=time.perf_counter() - started,
    )


def _is_flag(value: object) -> bool:
    return isinstance(value, bool | np.bool_) or (isinstance(value, int | np.integer) and value in (0, 1))


def _budgets_for(
    strategy: str, n: int, budgets: Sequence[int] | Mapping[str, Sequence[int]] | None
) -> NDArray[np.int_]:
    if budgets is None:
        return valid_budgets(n, strategy)
    if isinstance(budgets, Mapping):
        if strategy not in budgets:
            raise ValueError(f"budgets has no entry for strategy {strategy!r}.")
        chosen = np.asarray(budgets[strategy], dtype=int)
        for budget in chosen:
            check_budget(n, int(budget), strategy)
        return np.unique(chosen)
    allowed = set(valid_budgets(n, strategy).tolist())
    chosen = np.unique(np.asarray(budgets, dtype=int))
    kept = np.array([b for b in chosen if b in allowed], dtype=int)
    if kept.size == 0:
        raise ValueError(f"none of the budgets {chosen.tolist()} is possible for strategy {strategy!r} with N={n}.")
    return kept


def _evaluate_strategy(
    stack: NDArray[np.float64],
    scores: NDArray[np.float64],
    orders: NDArray[np.int_],
    budgets: NDArray[np.int_],
    n_draws: int,
    debias_flags: tuple[bool, ...],
) -> dict[bool, tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]]:
    """Walk the nested selection orders once, scoring every requested budget on the way: per flag,
    (per-draw means (n_draws, B), per-context means (n_contexts, B), distinct pairs (B,), P(A) (B,)).

    Plain (eq. 2) wins and games grow by one comparison per step, so they are updated incrementally.
    Debiased wins depend on the threshold fitted to the whole prefix, so they are recounted from the
    prefix at each budget (one weighted bincount).
    """
    n_contexts, n = stack.shape[0], stack.shape[1]
    n_sets = orders.shape[0]
    sets = np.arange(n_sets)
    context_of_set = np.tile(np.arange(n_contexts), n_draws)
    first, second = orders[..., 0], orders[..., 1]
    values = stack[context_of_set[:, None], first, second]  # (n_sets, steps): p of each selected comparison
    plain = (values > 0.5).astype(float)  # eq. 2: exactly 0.5 goes to position B
    # Step-major copies make every budget's prefix one contiguous block (no copies in the loop).
    values_by_step = np.ascontiguousarray(values.T)
    first_by_step = np.ascontiguousarray((sets[:, None] * n + first).T)
    second_by_step = np.ascontiguousarray((sets[:, None] * n + second).T)
    gold_ranks = centred_average_ranks(scores)[context_of_set]
    gold_norm = np.sqrt((gold_ranks * gold_ranks).sum(-1))

    def summary_spearman(
        wins: NDArray[np.float64], games: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Spearman x100 averaged over contexts per draw, and over draws per context."""
        ratio = np.where(games > 0, wins / np.maximum(games, 1), 0.5)
        ranks = centred_average_ranks(ratio)
        norm_ratio = np.sqrt((ranks * ranks).sum(-1))
        with np.errstate(invalid="ignore", divide="ignore"):
            rho = np.where(norm_ratio > 0, (ranks * gold_ranks).sum(-1) / (norm_ratio * gold_norm), 0.0)
        grid = 100.0 * rho.reshape(n_draws, n_contexts)
        return grid.mean(axis=1), grid.mean(axis=0)

    results = {
        flag: (np.empty((n_draws, budgets.size)), np.empty((n_contexts, budgets.size)), np.empty(budgets.size),
               np.empty(budgets.size))
        for flag in debias_flags
    }
    column_of = {int(b): c for c, b in enumerate(budgets)}
    wins = np.zeros((n_sets, n))
    games = np.zeros((n_sets, n))
    games_as_second = np.zeros((n_sets, n))
    seen = np.zeros((n_sets, n, n), dtype=bool)
    distinct = np.zeros(n_sets)
    plain_cumulative = np.cumsum(plain, axis=1)
    for step in range(int(budgets.max())):
        a, b, y = first[:, step], second[:, step], plain[:, step]
        wins[sets, a] += y
        wins[sets, b] += 1.0 - y
        games[sets, a] += 1.0
        games[sets, b] += 1.0
        games_as_second[sets, b] += 1.0
        distinct += ~(seen[sets, a, b] | seen[sets, b, a])
        seen[sets, a, b] = True
        budget = step + 1
        column = column_of.get(budget)
        if column is None:
            continue
        for flag in debias_flags:
            per_draw, per_context, pair_counts, p_a = results[flag]
            pair_counts[column] = distinct.mean()
            if not flag:
                per_draw[:, column], per_context[:, column] = summary_spearman(wins, games)
                p_a[column] = plain_cumulative[:, step].mean() / budget
                continue
            tau, tie_weight = _thresholds_unchecked(values[:, :budget])
            prefix = values_by_step[:budget]
            decided = (prefix > tau).astype(float)
            ties = prefix == tau
            if ties.any():
                decided += np.nan_to_num(tie_weight, nan=0.0) * ties
            # Position-B games count as wins unless decided for A: wins = games as B + sum d (1[A] - 1[B]).
            flat_decided = decided.ravel()
            debiased_wins = (
                games_as_second.ravel()
                + np.bincount(first_by_step[:budget].ravel(), weights=flat_decided, minlength=n_sets * n)
                - np.bincount(second_by_step[:budget].ravel(), weights=flat_decided, minlength=n_sets * n)
            )
            per_draw[:, column], per_context[:, column] = summary_spearman(debiased_wins.reshape(n_sets, n), games)
            p_a[column] = flat_decided.mean()
    return results


# --------------------------------------------------------------------------------------------------
# Synthetic demonstration (no model)


@dataclass(frozen=True)
class SyntheticJudge:
    """Comparison matrices of a simulated judge and the gold scores behind them."""

    probs: NDArray[np.float64]
    gold: NDArray[np.float64]
    position_pull: float
    p_a: float
    """Fraction of all comparisons the judge gives to position A (eq. 8 on the full set)."""


def synthetic_judge(
    n_contexts: int = 100,
    n_candidates: int = 16,
    position_pull: float = -1.5,
    perception_noise: float = 1.5,
    comparison_noise: float = 1.0,
    sharpness: float = 1.0,
    seed: int | np.random.Generator | None = 0,
) -> SyntheticJudge:
    """A simulated comparative judge: ``p_ij = sigmoid(k (q_i - q_j) + b + e_ij)``.

    Gold scores ``s ~ N(0, 1)``; the judge perceives ``q = s + N(0, perception_noise^2)`` (an error
    shared by all of a candidate's comparisons, which caps its correlation with gold); every ordered
    comparison adds its own noise ``e_ij ~ N(0, comparison_noise^2)`` (so (i, j) and (j, i) disagree
    sometimes, as real judges do); ``b = position_pull`` is a constant pull in log-odds towards
    position A (negative: towards B). The defaults give a judge whose full-matrix Spearman is near
    FlanT5-3B's on SummEval COH (about 47 against 51 in seed 000 Table 1) with a stronger bias,
    P(A) of about 0.29 (between FlanT5-3B and FlanT5-11B in Table 5).
    """
    rng = check.rng_from(seed)
    check.integer(n_contexts, "n_contexts", minimum=1)
    check.integer(n_candidates, "n_candidates", minimum=check.MIN_CANDIDATES)
    check.real(position_pull, "position_pull")
    check.real(sharpness, "sharpness")
    for name, value in (("perception_noise", perception_noise), ("comparison_noise", comparison_noise)):
        if check.real(value, name) < 0:
            raise ValueError(f"{name} is a standard deviation and must be >= 0; got {value}.")
    gold = rng.normal(size=(n_contexts, n_candidates))
    perceived = gold + perception_noise * rng.normal(size=gold.shape)
    logits = sharpness * (perceived[:, :, None] - perceived[:, None, :]) + position_pull
    logits = logits + comparison_noise * rng.normal(size=logits.shape)
    probs = expit(logits)
    diagonal = np.eye(n_candidates, dtype=bool)
    probs[:, diagonal] = np.nan
    p_a = float((probs[:, ~diagonal] > 0.5).mean())
    return SyntheticJudge(probs=probs, gold=gold, position_pull=position_pull, p_a=p_a)


@dataclass(frozen=True)
class StrategyComparison:
    """The comparisons seed 000 §5.6 makes on its Fig. 4, as Spearman x100 differences.

    Each is a mean over the budgets both curves share in the stated range; NaN where a curve needed
    for it is missing (the strategy was not run) or the range holds no shared budget.
    """

    no_repeat_minus_random: float
    """Mean over R <= N(N-1)/2 of no-repeat(R) - random(R) (paper: no-repeat marginally better)."""
    no_repeat_minus_symmetric_equal_r: float
    """Mean over even R <= N(N-1)/2 of no-repeat(R) - symmetric(R) (paper: about 1 point)."""
    symmetric_minus_no_repeat_equal_pairs: float
    """Mean over m of symmetric(2m) - no-repeat(m): same distinct pairs, symmetric shows each twice."""
    debias_gain_small_budgets: float
    """Mean of debiased - plain (random strategy) over budgets N <= R <= N(N-1)/4."""
    debias_gain_tiny_budgets: float
    """Mean of debiased - plain (random strategy) over budgets R < N, where tau is fitted on so few
    comparisons that forcing P(A) = 0.5 can cost more than the bias."""
    debias_gain_full: float
    """Debiased - plain (random strategy) with all N(N-1) comparisons."""
    debias_gain_small_minus_full: float
    """debias_gain_small_budgets - debias_gain_full (paper: debiasing helps more when R is small)."""


def _comparison_ranges(n_candidates: int) -> dict[str, tuple[tuple[str, bool], tuple[str, bool], range, int]]:
    """Each §5.6 comparison as (first curve, second curve, budgets b, scale): the mean over b of
    first(scale * b) - second(b), over the budgets both curves have."""
    total = n_candidates * (n_candidates - 1)
    random, no_repeat, symmetric = ("random", False), ("no-repeat", False), ("symmetric", False)
    half = range(1, total // 2 + 1)
    return {
        "no_repeat_minus_random": (no_repeat, random, half, 1),
        "no_repeat_minus_symmetric_equal_r": (no_repeat, symmetric, range(2, total // 2 + 1, 2), 1),
        "symmetric_minus_no_repeat_equal_pairs": (symmetric, no_repeat, half, 2),
        "debias_gain_small_budgets": (("random", True), random, range(n_candidates, total // 4 + 1), 1),
        "debias_gain_tiny_budgets": (("random", True), random, range(1, n_candidates), 1),
        "debias_gain_full": (("random", True), random, range(total, total + 1), 1),
    }


def curves_for(names: Sequence[str], n_candidates: int) -> tuple[list[str], tuple[bool, ...], dict[str, list[int]]]:
    """The strategies, debiasing flags and budgets per strategy that :func:`subset_curves` must draw for
    the §5.6 comparisons ``names`` alone (e.g. more draws for one borderline finding, at a fraction of
    the cost of every curve). A derived comparison needs the comparisons it is made of."""
    ranges = _comparison_ranges(n_candidates)
    wanted = set(names)
    if "debias_gain_small_minus_full" in wanted:
        wanted |= {"debias_gain_small_budgets", "debias_gain_full"}
    unknown = sorted(wanted - set(ranges) - {"debias_gain_small_minus_full"})
    if unknown:
        raise ValueError(f"unknown comparisons {unknown}; choose from {sorted([*ranges, 'debias_gain_small_minus_full'])}")
    budgets: dict[str, set[int]] = {}
    flags: set[bool] = set()
    for name in wanted & set(ranges):
        first, second, steps, scale = ranges[name]
        for (strategy, debiased), step in ((first, scale), (second, 1)):
            budgets.setdefault(strategy, set()).update(step * b for b in steps)
            flags.add(debiased)
    return sorted(budgets), tuple(sorted(flags)), {k: sorted(v) for k, v in budgets.items()}


def _comparison_sides(
    curves: Mapping[tuple[str, bool], tuple[ArrayLike, ArrayLike]], n_candidates: int
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per comparison, its two sides (the mean of first(scale * b) and of second(b) over the shared
    budgets b), each of the values' trailing shape; comparisons that cannot be made are absent."""
    check.integer(n_candidates, "n_candidates", minimum=check.MIN_CANDIDATES)
    series: dict[tuple[str, bool], dict[int, np.ndarray]] = {}
    for key, (budgets, values) in curves.items():
        budget_array, value_array = np.asarray(budgets, dtype=int), np.asarray(values, dtype=float)
        if budget_array.ndim != 1 or value_array.ndim not in (1, 2) or value_array.shape[-1] != budget_array.size:
            raise ValueError(f"curve {key}: budgets must be 1-d and the values (B,) or (n_contexts, B) with the same "
                             f"B; got shapes {budget_array.shape} and {value_array.shape}.")
        series[key] = {int(b): value_array[..., k] for k, b in enumerate(budget_array)}
    sides: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name, (first, second, budgets, scale) in _comparison_ranges(n_candidates).items():
        if first not in series or second not in series:
            continue
        shared = [b for b in budgets if scale * b in series[first] and b in series[second]]
        if shared:
            sides[name] = (np.mean([series[first][scale * b] for b in shared], axis=0),
                           np.mean([series[second][b] for b in shared], axis=0))
    small, full = sides.get("debias_gain_small_budgets"), sides.get("debias_gain_full")
    if small is not None and full is not None:
        sides["debias_gain_small_minus_full"] = (small[0] - small[1], full[0] - full[1])
    return sides


def compare_strategies(
    curves: Mapping[tuple[str, bool], tuple[ArrayLike, ArrayLike]], n_candidates: int
) -> StrategyComparison:
    """Seed 000 §5.6's comparisons of Fig. 4 curves for one comparison set of N candidates.

    ``curves`` maps ``(strategy, debiased)`` to ``(budgets, mean Spearman x100 at those budgets)``,
    e.g. ``{key: (c.budgets, c.mean_x100) for key, c in subset_curves(...).curves.items()}``.
    """
    for key, (budgets, means) in curves.items():
        if np.shape(budgets) != np.shape(means) or np.ndim(budgets) != 1:
            raise ValueError(f"curve {key}: budgets and means must be 1-d arrays of one length; "
                             f"got shapes {np.shape(budgets)} and {np.shape(means)}.")
    sides = _comparison_sides(curves, n_candidates)
    return StrategyComparison(**{
        name: float(sides[name][0] - sides[name][1]) if name in sides else float("nan")
        for name in StrategyComparison.__dataclass_fields__
    })


def per_context_comparisons(
    curves: Mapping[tuple[str, bool], tuple[ArrayLike, ArrayLike]], n_candidates: int
) -> dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """The comparisons of :func:`compare_strategies`, per context: ``{name: (first, second)}`` with
    each side an (n_contexts,) array (e.g. no-repeat's and random's Spearman x100 averaged over the
    budgets of the range and over the draws), so that a paired interval over contexts can test
    ``first - second`` (the mean of the differences is :func:`compare_strategies`' value).

    ``curves`` maps ``(strategy, debiased)`` to ``(budgets, per-context Spearman x100 (n_contexts, B))``,
    e.g. ``{key: (c.budgets, c.per_context_x100) for key, c in subset_curves(...).curves.items()}``.
    Comparisons that cannot be made (a strategy not run, no shared budget) are absent.
    """
    shapes = {np.shape(values)[0] for _, values in curves.values() if np.ndim(values) == 2}
    if any(np.ndim(values) != 2 for _, values in curves.values()) or len(shapes) > 1:
        raise ValueError("per_context_comparisons needs (n_contexts, B) values with one n_contexts for every curve")
    return _comparison_sides(curves, n_candidates)


@dataclass(frozen=True)
class SubsetDemo:
    """The synthetic demonstration and the comparisons the paper makes in §5.6."""

    judge: SyntheticJudge
    curves: SubsetCurves
    comparison: StrategyComparison
    details: dict[str, float] = field(default_factory=dict)


def synthetic_subset_demo(
    n_contexts: int = 100,
    n_candidates: int = 16,
    n_draws: int = 50,
    position_pull: float = -1.5,
    seed: int = 0,
) -> SubsetDemo:
    """Run the subset-curve machinery on a biased synthetic judge (no model) and summarise it.

    Defaults match seed 000 Fig. 4: 100 contexts of 16 candidates, 50 draws, every budget of the
    random, no-repeat and symmetric strategies, with and without debiasing.
    """
    rng = np.random.default_rng(seed)
    judge = synthetic_judge(n_contexts, n_candidates, position_pull=position_pull, seed=rng)
    curves = subset_curves(judge.probs, judge.gold, DEFAULT_STRATEGIES, None, n_draws, (False, True), seed=rng)
    total = n_candidates * (n_candidates - 1)
    random_plain = curves.curve("random")
    random_debiased = curves.curve("random", True)
    comparison = compare_strategies(
        {key: (curve.budgets, curve.mean_x100) for key, curve in curves.curves.items()}, n_candidates
    )
    return SubsetDemo(
        judge=judge,
        curves=curves,
        comparison=comparison,
        details={
            "seconds": curves.seconds,
            "p_a": judge.p_a,
            "full_plain_x100": random_plain.at(total),
            "full_debiased_x100": random_debiased.at(total),
        },
    )
