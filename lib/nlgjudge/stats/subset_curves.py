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
from nlgjudge.stats.bias import debias_thresholds_batch
from nlgjudge.stats.metrics import spearman_rows
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
            raise ValueError(f"budget {budget} is not on this curve; budgets run {self.budgets.min()}..{self.budgets.max()}.")
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
    """Spearman against the number of comparisons for each strategy, with and without debiasing.

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
    if n_draws < 2:
        raise ValueError(f"n_draws must be at least 2 (the band needs a spread); got {n_draws}.")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1); got {confidence}.")
    if not strategies:
        raise ValueError(f"no strategies given; valid choices: {', '.join(STRATEGIES)}.")
    for strategy in strategies:
        check.choice(strategy, STRATEGIES, "selection strategy")
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
    hard = (stack > 0.5).astype(float)  # eq. 2, exactly 0.5 -> position B
    curves: dict[tuple[str, bool], SubsetCurve] = {}
    for strategy in strategies:
        strategy_budgets = _budgets_for(strategy, n, budgets)
        oracle = np.tile(stack, (n_draws, 1, 1)) if strategy == "active" else None
        orders = selection_orders(n, strategy, n_draws * n_used, rng, oracle)
        evaluation = _evaluate_strategy(stack, hard, scores, orders, strategy_budgets, n_draws, debias_flags)
        for flag, (per_draw, pairs, p_a) in evaluation.items():
            mean = per_draw.mean(axis=0)
            sd = per_draw.std(axis=0, ddof=1)
            half = z * sd / np.sqrt(n_draws)
            curves[(strategy, flag)] = SubsetCurve(
                strategy=strategy,
                debiased=flag,
                budgets=strategy_budgets,
                per_draw_x100=per_draw,
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


def _budgets_for(strategy: str, n: int, budgets: Sequence[int] | Mapping[str, Sequence[int]] | None) -> NDArray[np.int_]:
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
    hard: NDArray[np.float64],
    scores: NDArray[np.float64],
    orders: NDArray[np.int_],
    budgets: NDArray[np.int_],
    n_draws: int,
    debias_flags: tuple[bool, ...],
) -> dict[bool, tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]]:
    n_contexts, n = stack.shape[0], stack.shape[1]
    n_sets, max_steps = orders.shape[0], orders.shape[1]
    context_of_set = np.tile(np.arange(n_contexts), n_draws)
    # position[s, i, j]: step at which set s selects comparison (i, j); never selected -> max_steps.
    position = np.full((n_sets, n, n), max_steps, dtype=np.int32)
    set_index = np.repeat(np.arange(n_sets), max_steps)
    position[set_index, orders[..., 0].ravel(), orders[..., 1].ravel()] = np.tile(np.arange(max_steps), n_sets)
    # Views per set without copying the (contexts, N, N) data n_draws times.
    probs_by_set = stack.reshape(1, n_contexts, n, n)
    hard_by_set = hard.reshape(1, n_contexts, n, n)
    selected_values = stack[context_of_set[:, None], orders[..., 0], orders[..., 1]]  # (n_sets, max_steps)
    gold = scores.reshape(1, n_contexts, n)
    results: dict[bool, tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]] = {
        flag: (np.empty((n_draws, budgets.size)), np.empty(budgets.size), np.empty(budgets.size)) for flag in debias_flags
    }
    for column, budget in enumerate(budgets):
        made = (position < budget).reshape(n_draws, n_contexts, n, n)
        made_float = made.astype(float)
        games = made_float.sum(-1) + made_float.sum(-2)
        seen_pair = made | made.transpose(0, 1, 3, 2)
        pairs = seen_pair.sum(axis=(-1, -2)).mean() / 2
        for flag in debias_flags:
            if flag:
                tau, tie_weight = debias_thresholds_batch(selected_values[:, :budget])
                tau = tau.reshape(n_draws, n_contexts, 1, 1)
                tie_weight = np.nan_to_num(tie_weight, nan=0.0).reshape(n_draws, n_contexts, 1, 1)
                decisions = (probs_by_set > tau) + tie_weight * (probs_by_set == tau)
            else:
                decisions = hard_by_set
            credited = made_float * decisions
            wins = credited.sum(-1) + games * 0 + made_float.sum(-2) - credited.sum(-2)
            with np.errstate(invalid="ignore", divide="ignore"):
                ratio = np.where(games > 0, wins / games, 0.5)
            rho = np.nan_to_num(spearman_rows(ratio, gold), nan=0.0)
            per_draw, pair_counts, p_a = results[flag]
            per_draw[:, column] = 100.0 * rho.mean(axis=1)
            pair_counts[column] = pairs
            p_a[column] = credited.sum(axis=(-1, -2)).mean() / budget
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
    perception_noise: float = 0.6,
    comparison_noise: float = 1.0,
    sharpness: float = 2.0,
    seed: int | np.random.Generator | None = 0,
) -> SyntheticJudge:
    """A simulated comparative judge: ``p_ij = sigmoid(k (q_i - q_j) + b + e_ij)``.

    Gold scores ``s ~ N(0, 1)``; the judge perceives ``q = s + N(0, perception_noise^2)`` (an error
    shared by all of a candidate's comparisons, which caps its correlation with gold); every ordered
    comparison adds its own noise ``e_ij ~ N(0, comparison_noise^2)`` (so (i, j) and (j, i) disagree
    sometimes, as real judges do); ``b = position_pull`` is a constant pull in log-odds towards
    position A (negative: towards B; -1.5 gives P(A) of about 0.25, like FlanT5-11B in Table 5).
    """
    rng = check.rng_from(seed)
    if n_contexts < 1:
        raise ValueError(f"n_contexts must be at least 1; got {n_contexts}.")
    if n_candidates < check.MIN_CANDIDATES:
        raise ValueError(f"n_candidates must be at least {check.MIN_CANDIDATES}; got {n_candidates}.")
    gold = rng.normal(size=(n_contexts, n_candidates))
    perceived = gold + perception_noise * rng.normal(size=gold.shape)
    logits = sharpness * (perceived[:, :, None] - perceived[:, None, :]) + position_pull
    logits = logits + comparison_noise * rng.normal(size=logits.shape)
    probs = expit(logits)
    diagonal = np.eye(n_candidates, dtype=bool)
    probs[:, diagonal] = np.nan
    p_a = float(np.nanmean(probs > 0.5) if False else (probs[:, ~diagonal] > 0.5).mean())
    return SyntheticJudge(probs=probs, gold=gold, position_pull=position_pull, p_a=p_a)


@dataclass(frozen=True)
class SubsetDemo:
    """The synthetic demonstration and the comparisons the paper makes in §5.6."""

    judge: SyntheticJudge
    curves: SubsetCurves
    gap_no_repeat_minus_symmetric_equal_r: float
    """Mean over even budgets R <= N(N-1)/2 of no-repeat(R) - symmetric(R) (paper: about 1 point)."""
    gap_symmetric_minus_no_repeat_equal_pairs: float
    """Mean over m of symmetric(2m) - no-repeat(m): same distinct pairs, symmetric shows each twice."""
    debias_gain_small_budgets: float
    """Mean of debiased - plain (random strategy) over budgets up to N(N-1)/8."""
    debias_gain_full: float
    """Debiased - plain with all N(N-1) comparisons."""
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
    no_repeat = curves.curve("no-repeat")
    symmetric = curves.curve("symmetric")
    random_plain = curves.curve("random")
    random_debiased = curves.curve("random", True)
    equal_r = [b for b in symmetric.budgets if b <= total // 2]
    gap_equal_r = float(np.mean([no_repeat.at(b) - symmetric.at(b) for b in equal_r]))
    gap_equal_pairs = float(np.mean([symmetric.at(2 * m) - no_repeat.at(m) for m in no_repeat.budgets]))
    small = random_plain.budgets <= total // 8
    gain_small = float((random_debiased.mean_x100 - random_plain.mean_x100)[small].mean())
    gain_full = random_debiased.at(total) - random_plain.at(total)
    return SubsetDemo(
        judge=judge,
        curves=curves,
        gap_no_repeat_minus_symmetric_equal_r=gap_equal_r,
        gap_symmetric_minus_no_repeat_equal_pairs=gap_equal_pairs,
        debias_gain_small_budgets=gain_small,
        debias_gain_full=gain_full,
        details={
            "seconds": curves.seconds,
            "p_a": judge.p_a,
            "full_plain_x100": random_plain.at(total),
            "full_debiased_x100": random_debiased.at(total),
        },
    )
