"""Elo ratings by stochastic gradient ascent, as in seed 004's Annex (Harang).

Annex, literally: ``n`` models; input ``x_k`` has ``-1`` at the first member of the pair, ``+1`` at the
second and ``0`` elsewhere; ``y_k = 1`` if the second member won; the estimator is
``Y~ = sigma(X theta^T / b)`` and the update is

    theta_k = theta_{k-1} + beta [y_{k-1} - sigma(x_{k-1} theta_{k-1}^T / b)] x_{k-1}

with ``b = 400``, ``theta_0 = (1000, ..., 1000)`` and ``beta = 50`` "with scheduled decrease until 1".

Which logistic
--------------
The paper (§3.2) defines ``sigma(x) = 1 / (1 + 10^x)`` and in the same sentence says a difference of
``b`` means odds of 10, ``sigma(1) / sigma(-1) = 10``. The printed sigma gives
``sigma(1) / sigma(-1) = (1/11) / (10/11) = 1/10``: it is *decreasing*, so ``sigma(x theta / b)`` would be
the probability that the *first* member wins while ``y`` marks a win of the second. The update then
climbs the wrong way: a winner's rating rises, which makes it look weaker to the model, which makes
the next win look even more surprising, and ratings run away without bound (the spread grows roughly
linearly in the number of updates). The logistic that matches the odds statement and makes the update
gradient *ascent* on the Bradley-Terry log-likelihood is ``sigma(x) = 1 / (1 + 10^(-x))``. This module
uses that one by default (``logistic="consistent"``); ``logistic="as-printed"`` exists only to
demonstrate the runaway. Each update moves the two ratings by equal and opposite amounts, so the mean
rating stays ``theta_0``.

The Annex does not give the schedule's shape; the default decreases beta geometrically from 50 to 1
over all updates (``schedule="linear"`` and ``"constant"`` are available).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from nlgjudge.stats import _validation as check

LOGISTICS = ("consistent", "as-printed")
SCHEDULES = ("geometric", "linear", "constant")


def logistic_consistent(x: ArrayLike) -> NDArray[np.float64]:
    """``sigma(x) = 1 / (1 + 10^(-x))``: increasing, ``sigma(1) / sigma(-1) = 10`` as seed 004 §3.2 states."""
    return 1.0 / (1.0 + np.power(10.0, -np.asarray(x, dtype=float)))


def logistic_as_printed(x: ArrayLike) -> NDArray[np.float64]:
    """``sigma(x) = 1 / (1 + 10^x)`` as printed in seed 004 §3.2: decreasing, ``sigma(1) / sigma(-1) = 1/10``."""
    return 1.0 / (1.0 + np.power(10.0, np.asarray(x, dtype=float)))


@dataclass(frozen=True)
class EloResult:
    """Final ratings and the whole trajectory of the stochastic gradient ascent."""

    ratings: NDArray[np.float64]
    trajectory: NDArray[np.float64]
    """(n_updates + 1, n_models): row 0 is theta_0, row k the ratings after update k."""
    steps: NDArray[np.float64]
    """beta used at each update."""
    logistic: str


def design_matrix(first: ArrayLike, second: ArrayLike, n_models: int) -> NDArray[np.float64]:
    """Annex input rows: ``-1`` at the first member of each pair, ``+1`` at the second, ``0`` elsewhere."""
    first_idx, second_idx = _pair_indices(first, second, n_models)
    design = np.zeros((first_idx.size, n_models))
    rows = np.arange(first_idx.size)
    design[rows, first_idx] = -1.0
    design[rows, second_idx] = 1.0
    return design


def outcomes_from_codes(codes: ArrayLike) -> NDArray[np.float64]:
    """Map winner codes to the Annex's ``y`` (1 = second member won).

    ``-1``: the first member won (``y = 0``); ``+1``: the second member won (``y = 1``); ``0``: draw
    (``y = 0.5``). The same -1/+1 convention as the input rows: the code names the winner's entry.
    """
    values = np.asarray(codes, dtype=float)
    if values.ndim != 1 or not np.isin(values, (-1.0, 0.0, 1.0)).all():
        raise ValueError("outcome codes must be a 1-D array of -1 (first won), +1 (second won) or 0 (draw).")
    return (values + 1.0) / 2.0


def step_schedule(
    n_updates: int, start: float = 50.0, end: float = 1.0, schedule: str = "geometric"
) -> NDArray[np.float64]:
    """Step sizes beta for ``n_updates`` updates, from ``start`` down to ``end`` (seed 004: 50 to 1)."""
    check.choice(schedule, SCHEDULES, "schedule")
    n_updates = check.integer(n_updates, "n_updates", minimum=1)
    _check_steps(start, end, ("start", "end"))
    if schedule == "constant" or n_updates == 1:
        return np.full(n_updates, float(start))
    if schedule == "linear":
        return np.linspace(start, end, n_updates)
    return np.geomspace(start, end, n_updates)


def _check_steps(start: float, end: float, names: tuple[str, str] = ("step_start", "step_end")) -> None:
    for name, value in zip(names, (start, end), strict=True):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (np.isfinite(value) and value > 0):
            raise ValueError(
                f"step sizes must be positive finite numbers (seed 004: beta from 50 down to 1); got {name}={value!r}."
            )


def _check_scale(b: float, theta0: float) -> tuple[float, float]:
    # NaN or infinity here would not fail anywhere else: every rating would silently become NaN or stay put.
    if isinstance(b, bool) or not isinstance(b, numbers.Real) or not (np.isfinite(b) and b > 0):
        raise ValueError(
            f"b must be positive and finite (a rating gap of b means odds of 10; seed 004 uses 400); got {b!r}."
        )
    if isinstance(theta0, bool) or not isinstance(theta0, numbers.Real) or not np.isfinite(theta0):
        raise ValueError(f"theta0 must be a finite number (the starting rating; seed 004 uses 1000); got {theta0!r}.")
    return float(b), float(theta0)


def _pair_indices(first: ArrayLike, second: ArrayLike, n_models: int) -> tuple[NDArray[np.int_], NDArray[np.int_]]:
    first_idx = np.asarray(first)
    second_idx = np.asarray(second)
    if first_idx.ndim != 1 or first_idx.shape != second_idx.shape:
        raise ValueError(f"first and second must be 1-D and aligned; got shapes {first_idx.shape}, {second_idx.shape}.")
    if isinstance(n_models, bool) or not isinstance(n_models, numbers.Integral) or n_models < 2:
        raise ValueError(f"Elo needs an integer number of models, at least 2; got n_models={n_models!r}.")
    if first_idx.size and not (
        np.issubdtype(first_idx.dtype, np.integer) and np.issubdtype(second_idx.dtype, np.integer)
    ):
        raise ValueError("first and second must hold integer model indices.")
    both = np.concatenate([first_idx, second_idx])
    if both.size and (both.min() < 0 or both.max() >= n_models):
        raise ValueError(f"model indices must lie in 0..{n_models - 1}.")
    if np.any(first_idx == second_idx):
        raise ValueError("a model cannot meet itself: first and second differ in every encounter.")
    return first_idx.astype(int), second_idx.astype(int)


def elo_sga(
    design: ArrayLike,
    outcomes: ArrayLike,
    *,
    b: float = 400.0,
    theta0: float = 1000.0,
    step_start: float = 50.0,
    step_end: float = 1.0,
    schedule: str = "geometric",
    n_passes: int = 1,
    seed: int | np.random.Generator | None = None,
    logistic: str = "consistent",
    steps: ArrayLike | None = None,
) -> EloResult:
    """Elo by the stochastic gradient ascent of seed 004's Annex (its last equation), from X and Y.

    ``design`` is the Annex's X (rows with one ``-1``, one ``+1``, zeros elsewhere); ``outcomes`` its Y
    (1 = second member won, 0 = first won, 0.5 = draw; see :func:`outcomes_from_codes`). The encounters
    are visited in order ``n_passes`` times (reshuffled before every pass when ``seed`` is given), with
    beta following :func:`step_schedule` over all updates, or the explicit per-update ``steps`` when given
    (one positive value per update, ``n_passes * n_encounters`` of them). See the module docstring for
    the logistic.
    """
    rows = np.asarray(design, dtype=float)
    if rows.ndim != 2 or rows.shape[1] < 2:
        raise ValueError(f"design must be (n_encounters, n_models) with n_models >= 2; got {rows.shape}.")
    if not (
        np.isin(rows, (-1.0, 0.0, 1.0)).all() and ((rows == 1).sum(1) == 1).all() and ((rows == -1).sum(1) == 1).all()
    ):
        raise ValueError(
            "each design row needs exactly one -1 (first member), one +1 (second member), zeros elsewhere."
        )
    first = np.argmax(rows == -1, axis=1)
    second = np.argmax(rows == 1, axis=1)
    return elo_from_pairs(
        first,
        second,
        outcomes,
        rows.shape[1],
        b=b,
        theta0=theta0,
        step_start=step_start,
        step_end=step_end,
        schedule=schedule,
        n_passes=n_passes,
        seed=seed,
        logistic=logistic,
        steps=steps,
    )


def elo_from_pairs(
    first: ArrayLike,
    second: ArrayLike,
    outcomes: ArrayLike,
    n_models: int,
    *,
    b: float = 400.0,
    theta0: float = 1000.0,
    step_start: float = 50.0,
    step_end: float = 1.0,
    schedule: str = "geometric",
    n_passes: int = 1,
    seed: int | np.random.Generator | None = None,
    logistic: str = "consistent",
    steps: ArrayLike | None = None,
) -> EloResult:
    """Same as :func:`elo_sga`, with the encounters given as index arrays (first member, second member)."""
    first_idx, second_idx = _pair_indices(first, second, n_models)
    y = np.asarray(outcomes, dtype=float)
    if y.shape != first_idx.shape:
        raise ValueError(f"outcomes must align with the encounters: {y.shape} vs {first_idx.shape}.")
    if first_idx.size == 0:
        raise ValueError("no encounters given.")
    if np.isnan(y).any() or y.min() < 0 or y.max() > 1:
        raise ValueError("outcomes must lie in [0, 1] (1 = second member won, 0.5 = draw), without NaN.")
    check.choice(logistic, LOGISTICS, "logistic")
    b, theta0 = _check_scale(b, theta0)
    n_passes = check.integer(n_passes, "n_passes", minimum=1)
    if steps is None:
        _check_steps(step_start, step_end)  # before any work, whatever the number of updates
    rng = check.rng_from(seed) if seed is not None else None
    sequence = []
    for _ in range(n_passes):
        visit = rng.permutation(first_idx.size) if rng is not None else np.arange(first_idx.size)
        sequence.append(visit)
    visits = np.concatenate(sequence)
    if steps is None:
        betas = step_schedule(visits.size, step_start, step_end, schedule)
    else:
        betas = np.asarray(steps, dtype=float)
        if betas.shape != (visits.size,):
            raise ValueError(
                f"steps must hold {visits.size} step sizes (one per update: n_passes x encounters); "
                f"got shape {betas.shape}."
            )
        bad = ~np.isfinite(betas) | (betas <= 0)
        if bad.any():
            first_bad = int(np.argmax(bad))
            raise ValueError(
                f"steps must be positive finite step sizes; {int(bad.sum())} are not, the first at update "
                f"{first_bad}: {betas[first_bad]}."
            )
    # Sign of the logistic's argument: consistent sigma(d) = 1/(1+10^-d); as printed 1/(1+10^d).
    direction = -1.0 if logistic == "consistent" else 1.0
    ratings = [float(theta0)] * n_models
    trajectory = np.empty((visits.size + 1, n_models))
    trajectory[0] = ratings
    f_list, s_list, y_list = first_idx.tolist(), second_idx.tolist(), y.tolist()
    for k, (visit, beta) in enumerate(zip(visits.tolist(), betas.tolist(), strict=True)):
        f, s = f_list[visit], s_list[visit]
        # x . theta = theta_second - theta_first; predicted P(second wins) under the chosen sigma.
        exponent = direction * (ratings[s] - ratings[f]) / b
        predicted = 1.0 / (1.0 + 10.0 ** min(exponent, 300.0))
        delta = beta * (y_list[visit] - predicted)
        ratings[s] += delta
        ratings[f] -= delta
        trajectory[k + 1] = ratings
    return EloResult(ratings=trajectory[-1].copy(), trajectory=trajectory, steps=betas, logistic=logistic)


def elo_expected_score(rating_first: ArrayLike, rating_second: ArrayLike, b: float = 400.0) -> NDArray[np.float64]:
    """Probability that the second member wins under the consistent logistic: ``sigma((r2 - r1) / b)``."""
    b, _ = _check_scale(b, 0.0)
    return logistic_consistent((np.asarray(rating_second, float) - np.asarray(rating_first, float)) / b)
