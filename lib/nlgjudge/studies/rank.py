"""The judging half of ``nlgjudge rank``: a user's systems compared pairwise within each context.

Every comparison is one prompt (:class:`nlgjudge.prompts.ranking.RankPrompt`) whose answer is read as
P(A) from the label probabilities of " A" and " B" (the first paper's method). With ``budget = 1``
every ordered pair of the systems of every context is judged (both orders), in one batch so the
engine shares each context's prompt prefix. With ``budget < 1`` the comparisons are chosen in rounds
by active selection (:func:`nlgjudge.stats.selection.plan_active_batch`): one comparison per context
and round, where it most reduces the uncertainty of the systems' Bradley-Terry scores given the
outcomes so far. Every output goes through the judge's cache, so a rerun after a kill recomputes
nothing and (the choices being a function of the seed and the cached outcomes) makes the same choices.

Judgments reach the cache in small steps: one call of the judge per context (its comparisons share
the context's prompt prefix), split further once the measured rate says a context would take more
than :data:`BATCH_SECONDS`; each call is one transaction of the cache, so a kill loses at most the
step in flight, and the progress bar moves after every step.

Two outputs that are the same text are a tie by definition: they are recorded (``identical``) with
P(A) = 0.5 and not sent to the model.
"""

from __future__ import annotations

import unicodedata

import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import permutations
from typing import Any

import numpy as np
import pandas as pd

from nlgjudge.engine import ClassifyRequest, ContextTooLongError
from nlgjudge.prompts.ranking import RankPrompt
from nlgjudge.studies.prompting import classify_request, prompt_style

#: One row per comparison made (or tie recorded), in the order they were made.
JUDGMENT_COLUMNS = ["context_id", "first", "second", "p_a", "identical", "round", "from_cache", "label_mass"]


#: A step of judging (one call of the judge, one cache transaction) aims at most this many seconds
#: once the rate is measured; before that a step is at most :data:`FIRST_STEP` comparisons.
BATCH_SECONDS = 10.0
FIRST_STEP = 8


class NotCachedError(RuntimeError):
    """Judging was asked not to compute (``allow_compute=False``) and some comparisons are not cached."""


class ComparisonTooLongError(ContextTooLongError):
    """One comparison's prompt exceeds the judge's context window; names the context and both systems."""

    def __init__(self, context_id: str, first: str, second: str, detail: str) -> None:
        self.context_id, self.first, self.second, self.detail = context_id, first, second, detail
        super().__init__(f"context {context_id!r}, {first!r} against {second!r}: {detail}")


@dataclass(frozen=True)
class JudgingProgress:
    """Where a run stands after a step: comparisons done of ``total``; of them ``computed`` by the
    model (not from the cache) in ``computed_seconds`` of wall time (the measured rate)."""

    done: int
    total: int
    computed: int
    computed_seconds: float
    truncated: int = 0
    """Comparisons whose prompt was cut to the judge's context window (a judge made with ``truncate=True``)."""

    @property
    def seconds_per_comparison(self) -> float | None:
        return self.computed_seconds / self.computed if self.computed else None


@dataclass(frozen=True)
class ContextPlan:
    """One context: its systems (indices into the run's system list) and texts."""

    context_id: str
    source: str
    reference: str | None
    systems: tuple[int, ...]
    texts: dict[int, str]

    def identical_pairs(self) -> list[tuple[int, int]]:
        return [(i, j) for i, j in permutations(self.systems, 2) if _same_text(self.texts[i], self.texts[j])]

    def judged_pairs(self) -> list[tuple[int, int]]:
        return [(i, j) for i, j in permutations(self.systems, 2) if not _same_text(self.texts[i], self.texts[j])]


def _same_text(a: str, b: str) -> bool:
    """The same text: equal, or equal once Unicode-normalised (NFC): "é" as one character or as "e" and an
    accent is one text to a reader, so a tie, not a comparison."""
    return a == b or unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b)


def context_plans(outputs: pd.DataFrame, systems: list[str]) -> list[ContextPlan]:
    """The contexts of a checked outputs frame (:func:`nlgjudge.data.user_outputs.check_user_outputs`)."""
    index = {name: k for k, name in enumerate(systems)}
    plans = []
    for context_id, part in outputs.groupby("context_id", sort=False):
        ids = tuple(index[s] for s in part["system"])
        reference = part["reference"].iloc[0]
        plans.append(ContextPlan(
            context_id=str(context_id), source=str(part["source"].iloc[0]),
            reference=None if reference is None or (isinstance(reference, float) and np.isnan(reference)) else str(reference),
            systems=ids, texts=dict(zip(ids, part["output"].astype(str), strict=True)),
        ))
    return plans


def comparison_request(plan: ContextPlan, i: int, j: int, prompt: RankPrompt, style: str, systems: list[str]) -> ClassifyRequest:
    """The request for system ``i`` in position A against ``j`` in B on one context."""
    text = prompt.text(plan.source, plan.texts[i], plan.texts[j], plan.reference if prompt.with_reference else None)
    meta = {"context_id": plan.context_id, "a": systems[i], "b": systems[j]}
    return classify_request(text, prompt.ending, style, meta)


def planned_counts(plans: list[ContextPlan], budget: float) -> dict[str, int]:
    """How many model comparisons each context gets: ``budget`` of its ordered pairs of different
    texts, rounded, at least one (all of them when ``budget = 1``)."""
    if not 0.0 < budget <= 1.0:
        raise ValueError(f"budget must lie in (0, 1] (a fraction of all ordered pairs); got {budget}")
    counts = {}
    for plan in plans:
        judged = len(plan.judged_pairs())
        counts[plan.context_id] = judged if budget == 1.0 else min(judged, max(1, int(round(budget * judged))))
    return counts


def judge_comparisons(
    judge: Any,
    outputs: pd.DataFrame,
    systems: list[str],
    prompt: RankPrompt,
    *,
    budget: float = 1.0,
    seed: int = 0,
    allow_compute: bool = True,
    progress: bool = True,
    style: str = "auto",
    on_step: Callable[[JudgingProgress], None] | None = None,
    batch_seconds: float = BATCH_SECONDS,
) -> pd.DataFrame:
    """Judge the comparisons of a ranking run; returns one row per comparison (:data:`JUDGMENT_COLUMNS`).

    ``judge`` is an :class:`nlgjudge.engine.Judge` (or anything with its ``label_probs``,
    ``cached_mask`` and ``handle``). ``allow_compute=False`` raises :class:`NotCachedError` instead
    of computing (how the book replays released judgments without a model). ``on_step`` is called
    after every step (see the module docstring) with a :class:`JudgingProgress`. A prompt too long
    for the judge raises :class:`ComparisonTooLongError` naming its context and systems.
    """
    plans = context_plans(outputs, systems)
    counts = planned_counts(plans, budget)
    style = prompt_style(judge.handle, style)
    rows: list[tuple[Any, ...]] = []
    for plan in plans:
        rows += [(plan.context_id, systems[i], systems[j], 0.5, True, 0, True, float("nan")) for i, j in plan.identical_pairs()]
    total = sum(counts.values())
    state = {"done": 0, "computed": 0, "seconds": 0.0, "truncated": 0}
    bar = None
    if progress and total > 1:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc="comparisons" if budget == 1.0 else "comparisons (active)", unit="cmp", mininterval=1.0)

    def step_size() -> int:
        if not state["computed"]:
            return FIRST_STEP
        return max(1, int(batch_seconds / (state["seconds"] / state["computed"])))

    def judge_step(picks: list[tuple[ContextPlan, int, int]], requests: list[ClassifyRequest]) -> list[Any]:
        started = time.perf_counter()
        try:
            results = judge.label_probs(requests)
        except ContextTooLongError as error:
            raise _too_long(judge, picks, requests, systems, error) from None
        computed = sum(not r.from_cache for r in results)
        state["done"] += len(results)
        state["truncated"] += sum(bool(getattr(r, "truncated", False)) for r in results)
        if computed:
            state["computed"] += computed
            state["seconds"] += time.perf_counter() - started
        if bar is not None:
            bar.update(len(results))
        if on_step is not None:
            on_step(JudgingProgress(state["done"], total, state["computed"], state["seconds"], state["truncated"]))
        return results

    def require_cached(requests: list[ClassifyRequest]) -> None:
        missing = len(requests) - sum(judge.cached_mask("label_probs", requests))
        if missing:
            raise NotCachedError(
                f"{missing} of {len(requests)} comparisons are not in the cache and computing was not allowed; "
                "rank with allow_compute=True (loads the model) or on contexts whose judgments are released"
            )

    def run(picks: list[tuple[ContextPlan, int, int]], round_number: int) -> list[float]:
        requests = [comparison_request(plan, i, j, prompt, style, systems) for plan, i, j in picks]
        if not allow_compute:
            require_cached(requests)
        results: list[Any] = []
        while len(results) < len(requests):
            start, stop = len(results), len(results) + step_size()
            results += judge_step(picks[start:stop], requests[start:stop])
        values = [float(r.probs[0]) for r in results]
        for (plan, i, j), value, result in zip(picks, values, results, strict=True):
            rows.append((plan.context_id, systems[i], systems[j], value, False, round_number, bool(result.from_cache),
                         label_mass(result)))
        return values

    try:
        if budget == 1.0:
            if not allow_compute:  # the whole run at once, before anything is judged
                require_cached([comparison_request(plan, i, j, prompt, style, systems)
                                for plan in plans for i, j in plan.judged_pairs()])
            for plan in plans:  # one context at a time: each reaches the cache before the next starts
                run([(plan, i, j) for i, j in plan.judged_pairs()], 1)
        else:
            _run_active(plans, counts, len(systems), seed, run)
    finally:
        if bar is not None:
            bar.close()
    return pd.DataFrame(rows, columns=JUDGMENT_COLUMNS)


def label_mass(result: Any) -> float:
    """The probability the judge gave its answer labels together (before they are normalised to p(A)):
    near 0, the judge would have answered something else. NaN where the result carries no log-probabilities."""
    given = getattr(result, "logprobs", None)
    logprobs = np.asarray(given if given is not None else [], dtype=float)
    if not logprobs.size or not np.isfinite(logprobs).any():
        return float("nan")
    return float(min(1.0, np.exp(np.logaddexp.reduce(logprobs[np.isfinite(logprobs)]))))


def _too_long(judge: Any, picks: list[tuple[ContextPlan, int, int]], requests: list[ClassifyRequest], systems: list[str],
              error: ContextTooLongError) -> ComparisonTooLongError:
    """Which comparison of a step is too long: each is judged alone (those that fit are cached, so
    nothing is lost) until one fails."""
    for (plan, i, j), request in zip(picks, requests, strict=True):
        try:
            judge.label_probs([request])
        except ContextTooLongError as single:
            return ComparisonTooLongError(plan.context_id, systems[i], systems[j], str(single))
    plan, i, j = picks[0]
    return ComparisonTooLongError(plan.context_id, systems[i], systems[j], str(error))


def _run_active(
    plans: list[ContextPlan],
    counts: dict[str, int],
    n_systems: int,
    seed: int,
    run: Callable[[list[tuple[ContextPlan, int, int]], int], list[float]],
) -> None:
    from nlgjudge.stats.selection import BradleyTerryPosterior, plan_active_batch

    rng = np.random.default_rng(seed)
    posterior = BradleyTerryPosterior(n_systems)
    for plan in plans:  # identical texts are observed ties
        for i, j in plan.identical_pairs():
            posterior.observe(np.array([i]), np.array([j]), np.array([0.5]))
    available = {}
    for plan in plans:
        mask = np.zeros((n_systems, n_systems), dtype=bool)
        for i, j in plan.judged_pairs():
            mask[i, j] = True
        available[plan.context_id] = mask
    made = dict.fromkeys(counts, 0)
    round_number = 0
    while any(made[p.context_id] < counts[p.context_id] for p in plans):
        round_number += 1
        open_plans = [p for p in plans if made[p.context_id] < counts[p.context_id]]
        picks = plan_active_batch(posterior, np.stack([available[p.context_id] for p in open_plans]), rng)
        chosen = [(p, i, j) for p, pick in zip(open_plans, picks, strict=True) if pick is not None for i, j in [pick]]
        values = run(chosen, round_number)
        for (plan, i, j), value in zip(chosen, values, strict=True):
            available[plan.context_id][i, j] = False
            made[plan.context_id] += 1
            posterior.observe(np.array([i]), np.array([j]), np.array([value]))
