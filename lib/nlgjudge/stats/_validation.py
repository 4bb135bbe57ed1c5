"""Shared input checks for ``nlgjudge.stats``.

Every public function funnels its inputs through these helpers so that bad input fails loudly with a
message saying what is wrong and how to fix it, instead of producing a silently wrong number.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

MIN_CANDIDATES = 2


def comparison_matrix(
    probs: ArrayLike,
    name: str = "probs",
    *,
    allow_nan: bool = True,
    require_full: bool = False,
    min_candidates: int = MIN_CANDIDATES,
) -> NDArray[np.float64]:
    """Return ``probs`` as a float (N, N) comparison matrix, checked.

    The convention of the whole package: ``P[i, j]`` is the probability (or the 0/1 decision) that
    candidate ``i`` beats ``j`` when ``i`` is shown in position A; NaN marks a comparison that was not
    made. The diagonal is not a comparison and is ignored (returned as NaN) whatever it holds.
    """
    matrix = np.array(probs, dtype=float, copy=True)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(
            f"{name} must be a square (N, N) comparison matrix with P[i, j] = P(i beats j | i in "
            f"position A); got shape {matrix.shape}."
        )
    n = matrix.shape[0]
    if n < min_candidates:
        raise ValueError(f"{name} has {n} candidate(s); at least {min_candidates} are needed to rank.")
    np.fill_diagonal(matrix, np.nan)
    _check_unit_interval(matrix, name, allow_nan=True)
    off_diagonal = ~np.eye(n, dtype=bool)
    missing = np.isnan(matrix) & off_diagonal
    if missing.any() and (require_full or not allow_nan):
        first = tuple(int(v) for v in np.argwhere(missing)[0])
        raise ValueError(
            f"{name} has {int(missing.sum())} missing (NaN) off-diagonal entries, first at {first}; "
            "this function needs the full matrix of N(N-1) comparisons. Use a subset-aware function "
            "or fill the missing comparisons."
        )
    return matrix


def comparison_stack(probs: ArrayLike, name: str = "probs") -> NDArray[np.float64]:
    """Return a (C, N, N) stack of full comparison matrices (one per context), checked."""
    stack = np.array(probs, dtype=float, copy=True)
    if stack.ndim == 2:
        stack = stack[None]
    if stack.ndim != 3 or stack.shape[1] != stack.shape[2]:
        raise ValueError(f"{name} must have shape (n_contexts, N, N) (or (N, N) for one context); got {stack.shape}.")
    n = stack.shape[1]
    if n < MIN_CANDIDATES:
        raise ValueError(f"{name} has {n} candidate(s); at least {MIN_CANDIDATES} are needed to rank.")
    diagonal = np.eye(n, dtype=bool)
    stack[:, diagonal] = np.nan
    _check_unit_interval(stack, name, allow_nan=True)
    missing = np.isnan(stack) & ~diagonal
    if missing.any():
        first = tuple(int(v) for v in np.argwhere(missing)[0])
        raise ValueError(
            f"{name} has {int(missing.sum())} missing (NaN) off-diagonal entries, first at "
            f"(context, i, j) = {first}; subset curves draw subsets from the full matrix, so every "
            "context needs all N(N-1) comparisons."
        )
    return stack


def _check_unit_interval(values: NDArray[np.float64], name: str, *, allow_nan: bool) -> None:
    finite = values[~np.isnan(values)]
    if np.isinf(finite).any():
        raise ValueError(f"{name} contains infinite values; probabilities must lie in [0, 1].")
    if finite.size and (finite.min() < 0.0 or finite.max() > 1.0):
        raise ValueError(
            f"{name} must hold probabilities in [0, 1] (or 0/1 decisions); found values in "
            f"[{finite.min():.4g}, {finite.max():.4g}]."
        )
    if not allow_nan and np.isnan(values).any():
        raise ValueError(f"{name} contains NaN; NaN is not allowed here.")


def probability_vector(values: ArrayLike, name: str = "probs", *, min_size: int = 1) -> NDArray[np.float64]:
    """Return a 1-D float array of probabilities in [0, 1] without NaN, checked."""
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {array.shape}.")
    if array.size < min_size:
        raise ValueError(f"{name} needs at least {min_size} value(s); got {array.size}.")
    if np.isnan(array).any():
        raise ValueError(
            f"{name} contains {int(np.isnan(array).sum())} NaN value(s); pass only the comparisons that were made."
        )
    _check_unit_interval(array, name, allow_nan=False)
    return array


def finite_vector(values: ArrayLike, name: str, *, min_size: int = 1) -> NDArray[np.float64]:
    """Return a 1-D finite float array, checked."""
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {array.shape}.")
    if array.size < min_size:
        raise ValueError(f"{name} needs at least {min_size} value(s); got {array.size}.")
    if not np.isfinite(array).all():
        raise ValueError(
            f"{name} contains {int((~np.isfinite(array)).sum())} NaN or infinite value(s); remove or "
            "impute them before calling."
        )
    return array


def same_length(arrays: Sequence[NDArray[np.generic]], names: Sequence[str]) -> None:
    """Raise if the arrays do not all have the same length."""
    lengths = {name: len(array) for array, name in zip(arrays, names, strict=True)}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"length mismatch: {lengths}; these inputs must be aligned element by element.")


def not_text(values: object, name: str, what: str = "a sequence of labels") -> None:
    """Raise if ``values`` is one string where a sequence is expected.

    A string is itself a sequence, so ``"AB"`` would silently become the two labels ``"A"`` and
    ``"B"`` (and ``np.asarray("AB")`` is a 0-d array); neither is what the caller meant.
    """
    text = isinstance(values, str | bytes)
    text_scalar = isinstance(values, np.ndarray) and values.dtype.kind in "US" and values.ndim == 0
    if text or text_scalar:
        raise TypeError(
            f"{name} must be {what} (a list or 1-D array, one entry per item), not the single string "
            f"{values!r}; pass list({name}) if each character really is one item."
        )


def label_vector(values: object, name: str, what: str, each: str) -> NDArray[np.generic]:
    """A 1-D array of labels (not a single string): ``what`` names the expected input, ``each`` one entry."""
    not_text(values, name, what)
    labels = np.asarray(values)
    if labels.ndim != 1:
        raise ValueError(f"{name} must be 1-D, {each}; got shape {labels.shape}.")
    return labels


def context_list(values: object, name: str) -> list[NDArray[np.float64]]:
    """Per-context 1-D float arrays from an (n_contexts, N) array or a sequence of 1-D arrays (N may differ)."""
    not_text(values, name, "an (n_contexts, N) array or a sequence of per-context score arrays")
    if isinstance(values, np.ndarray) and values.ndim == 2:
        return [row for row in values.astype(float)]
    try:
        rows = [np.asarray(v, dtype=float) for v in values]  # type: ignore[attr-defined]
    except TypeError:
        raise TypeError(
            f"{name} must be an (n_contexts, N) array or a sequence of per-context score arrays; "
            f"got {type(values).__name__}."
        ) from None
    if not rows:
        raise ValueError(f"{name} holds no contexts.")
    for k, row in enumerate(rows):
        if row.ndim != 1:
            raise ValueError(f"{name}[{k}] must be a 1-D array of candidate scores; got shape {row.shape}.")
    return rows


def integer(value: object, name: str, *, minimum: int | None = None) -> int:
    """Return ``value`` as int if it is a whole number (not a bool, not 2.5) and at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer; got {value!r} ({type(value).__name__}).")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be at least {minimum}; got {value}.")
    return int(value)


def real(value: object, name: str, *, positive: bool = False) -> float:
    """Return ``value`` as float if it is a finite real number (and > 0 when ``positive``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {value!r} ({type(value).__name__}).")
    number = float(value)
    if not np.isfinite(number):
        raise ValueError(f"{name} must be finite; got {number}.")
    if positive and number <= 0:
        raise ValueError(f"{name} must be positive; got {number}.")
    return number


def choice(value: str, valid: Sequence[str], what: str) -> str:
    """Return ``value`` if it is one of ``valid``; otherwise raise naming the valid choices."""
    if value not in valid:
        raise ValueError(f"unknown {what} {value!r}; valid choices: {', '.join(repr(v) for v in valid)}.")
    return value


def rng_from(seed: int | np.random.Generator | None) -> np.random.Generator:
    """A numpy Generator from a seed or an existing Generator (so callers can share one stream)."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)
