"""More random draws where they settle a subsets finding (seed 000 §5.6): the draws are simulation,
not data, so a finding whose interval end lies near its threshold takes more of them instead of
letting the seed decide its verdict (:func:`settled_strategy_claims`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from nlgjudge.analysis.subsets import (
    CLAIM_STRATEGIES,
    STRATEGY_CLAIMS,
    _subset_frames,
    holm_open,
    strategy_claim_frames,
    strategy_claims,
)
from nlgjudge.data import JudgeDataset
from nlgjudge.register import verdict as registered_verdict
from nlgjudge.stats.claims import NOT_TESTED

#: How many times the draws of a borderline finding are quadrupled, at most (200 -> 800 -> 3,200 -> 12,800).
SETTLE_ROUNDS = 3
#: Each round's draws, as a multiple of the draws so far.
SETTLE_FACTOR = 4
#: How near its threshold a row's interval end must lie, in borderline bands, to take more draws: in
#: the first round twice the band (a row just outside it on one seed may be inside on another), for
#: the per-dataset findings and Fig. 5's cells alike; after it, only per-dataset findings still
#: borderline (the registered claims; a cell is a description beside them, and one more round of
#: SummEval's 16 candidates costs about a quarter of an hour).
FIRST_ROUND_BANDS, LATER_ROUND_BANDS = 2.0, 1.0


def settled_strategy_claims(
    comparisons: pd.DataFrame, datasets: Mapping[str, JudgeDataset], n_draws: int = 200, seed: int = 0,
    gates: Mapping[str, str | None] | None = None, rounds: int = SETTLE_ROUNDS,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict[tuple[str, str], int]]:
    """§5.6's findings per dataset and per dataset and aspect (:func:`strategy_claims`), with more draws
    where the draws' Monte Carlo error left a row borderline.

    A borderline row is one the random draws could still decide, so its seed would move it: its
    interval end lies within the band of its threshold, or Holm's correction over its family (the
    datasets, or the cells, of one finding) keeps it at some draws within the band and not at others
    (:func:`~nlgjudge.analysis.subsets.holm_open`). In the first round, the draws of every row within
    twice the band (its comparison on its dataset) are extended (a fresh seed stream,
    ``SETTLE_FACTOR - 1`` times the draws so far, pooled with them; only the strategies and budgets
    that comparison reads); in each later round, those of every per-dataset finding still borderline
    (:data:`LATER_ROUND_BANDS`). Every row is read again after each round, up to ``rounds`` rounds.
    The Monte Carlo error shrinks as 1/sqrt(draws), so a row whose interval end lies clear of its
    threshold leaves the band, and one still borderline after the last round stays "not resolved".
    The draws are simulation, not data (no unit changes). Returns the two claim frames, the
    per-context frame they read and the draws per budget of each (dataset, comparison) that took
    more than ``n_draws``."""
    per_context, per_draw = strategy_claim_frames(comparisons, datasets, n_draws=n_draws, seed=seed)
    used: dict[tuple[str, str], int] = {}

    def read() -> tuple[pd.DataFrame, pd.DataFrame]:
        return (strategy_claims(per_context, by=["dataset"], gates=gates, per_draw=per_draw),
                strategy_claims(per_context, by=["dataset", "aspect"], gates=gates, per_draw=per_draw))

    claims, cells = read()
    for round_ in range(rounds):
        bands = FIRST_ROUND_BANDS if round_ == 0 else LATER_ROUND_BANDS
        open_rows = _open_rows([claims, cells] if round_ == 0 else [claims], bands)
        if not open_rows:
            break
        # one draw per (dataset, draws so far): a row Holm's correction leaves open may not have
        # been drawn again before, while its family's others were
        groups: dict[tuple[str, int], list[str]] = {}
        for dataset, name in sorted(open_rows):
            groups.setdefault((dataset, used.get((dataset, name), n_draws)), []).append(name)
        for (dataset, before), names in groups.items():
            extra = before * (SETTLE_FACTOR - 1)
            _, more_context, more_draws = _subset_frames(comparisons, datasets, CLAIM_STRATEGIES, extra, (False, True),
                                                         None, 0.95, seed, stream=2 + round_, only=names,
                                                         only_dataset=dataset)
            per_context, per_draw = _pooled(per_context, per_draw, more_context, more_draws, before, extra)
            used.update({(dataset, c): before + extra for c in names})
        claims, cells = read()
    return claims, cells, per_context, used


def _open_rows(frames: list[pd.DataFrame], bands: float) -> set[tuple[str, str]]:
    """The (dataset, comparison) of every row the draws could still decide within ``bands``
    borderline bands: its own interval end (:func:`_near_the_band`), or its Holm decision over its
    comparison's family in that frame (:func:`~nlgjudge.analysis.subsets.holm_open`)."""
    found: set[tuple[str, str]] = set()
    for frame in frames:
        if frame.empty:
            continue
        found |= {(str(row.dataset), str(row.comparison)) for row in frame.itertuples() if _near_the_band(row, bands)}
        for _, part in frame.groupby("comparison", sort=False):
            moved = holm_open(part, bands)
            found |= {(str(d), str(c)) for d, c in zip(part["dataset"][moved], part["comparison"][moved], strict=True)}
    return found


def _near_the_band(row: Any, bands: float) -> bool:
    """Whether a row's interval end lies within ``bands`` borderline bands of its threshold: with two,
    the rows a seed could move (not only those borderline on this seed's draws, or a row just outside
    the band on one seed and inside on another would keep its first draws)."""
    mc_se = float(row.monte_carlo_se)
    if not (np.isfinite(mc_se) and mc_se > 0) or row.verdict == NOT_TESTED:
        return False
    wide = registered_verdict(f"subsets.{row.comparison}", row.estimate, row.low, row.high, row.n,
                              monte_carlo_se=bands * mc_se)
    return "Monte Carlo" in str(wide.reason)


def settled_words(used: Mapping[tuple[str, str], int], n_draws: int) -> str:
    """What :func:`settled_strategy_claims` drew, for the page: which findings took more draws."""
    if not used:
        return f"no finding needed more; each kept {n_draws:,} draws per budget"
    parts = []
    for dataset in dict.fromkeys(d for d, _ in sorted(used)):
        counts: dict[int, int] = {}
        for (d, _), n in used.items():
            if d == dataset:
                counts[n] = counts.get(n, 0) + 1
        taken = sorted(counts.items())
        if len(taken) == 1:
            (n, k), = taken
            parts.append(f"on {dataset}, {k} of the {len(STRATEGY_CLAIMS)} comparisons took {n:,} draws per budget")
            continue
        each = ", ".join(f"{k} took {n:,}" for n, k in taken[:-1]) + f" and {taken[-1][1]} took {taken[-1][0]:,}"
        parts.append(f"on {dataset}, {sum(counts.values())} of the {len(STRATEGY_CLAIMS)} comparisons took more "
                     f"draws per budget ({each})")
    return "; ".join(parts)


def _pooled(per_context: pd.DataFrame, per_draw: pd.DataFrame, more_context: pd.DataFrame, more_draws: pd.DataFrame,
            before: int, added: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The draws so far and ``added`` more of the same rows (dataset, comparison), as if drawn at once:
    each context's sides are the draw-weighted mean, and the per-draw rows are stacked with the new
    draws numbered after the old."""
    keys = ["model", "dataset", "template", "aspect", "n_candidates", "context_id", "comparison"]
    new = more_context.set_index(keys)
    context = per_context.set_index(keys)
    mine = context.index.isin(new.index)
    # both ways: every new row matches an old one, and every old row of a redrawn (dataset,
    # comparison) gets new draws (else it would keep its old value while counted as redrawn)
    redrawn = pd.MultiIndex.from_frame(per_context[["dataset", "comparison"]]).isin(
        pd.MultiIndex.from_frame(more_context[["dataset", "comparison"]]))
    if int(mine.sum()) != len(new) or int(redrawn.sum()) != len(new):
        raise ValueError("the added draws do not cover the same contexts and comparisons as the first")
    sides = ["first_x100", "second_x100"]
    context.loc[mine, sides] = (context.loc[mine, sides] * before + new.reindex(context.index[mine])[sides] * added) / (before + added)
    shifted = more_draws.assign(draw=more_draws["draw"] + before)
    return context.reset_index()[per_context.columns], pd.concat([per_draw, shifted[per_draw.columns]], ignore_index=True)
