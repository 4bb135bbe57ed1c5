"""Which planned contexts already have all their outputs (released or cached), without a model.

The book's chapters default to ``released_only=True``: they use the planned contexts whose every
output is available and say how many of the planned ones that is, so that ``make book`` never
starts hours of computation on a fresh clone while ``make outputs`` is still filling
``data/outputs``. Readers who rerun a chapter with another model pass ``released_only=False``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from nlgjudge.data import JudgeDataset
from nlgjudge.engine import Judge
from nlgjudge.studies.comparative import _only


@dataclass(frozen=True)
class Coverage:
    """Planned vs available contexts of one study on one dataset."""

    dataset: str
    planned: list[str]
    available: list[str]

    @property
    def complete(self) -> bool:
        return len(self.available) == len(self.planned)

    def describe(self) -> str:
        state = "all" if self.complete else f"{len(self.available)} of"
        return f"{self.dataset}: {state} {len(self.planned)} planned contexts have every output"


def available_contexts(
    judge: Judge,
    ds: JudgeDataset,
    operation: str,
    build: Callable[[JudgeDataset], Sequence[object]],
) -> Coverage:
    """Contexts of ``ds`` whose requests (``build(one_context_dataset)``) are all in the judge's cache."""
    available = []
    for context_id in ds.context_ids():
        requests = build(_only(ds, context_id))
        if all(judge.cached_mask(operation, requests)):
            available.append(context_id)
    return Coverage(ds.info.name, ds.context_ids(), available)


def restrict(ds: JudgeDataset, context_ids: Sequence[str]) -> JudgeDataset:
    """``ds`` limited to ``context_ids`` (kept in the dataset's order); empty selection is an error."""
    wanted = set(context_ids)
    if not wanted:
        raise ValueError(
            f"no context of {ds.info.name} has all its outputs yet: run `make outputs` (or rerun the chapter "
            "with released_only=False to compute them now)"
        )
    frame = ds.frame[ds.frame["context_id"].isin(wanted)].reset_index(drop=True)
    return JudgeDataset(frame, ds.info)


def usable_subset(
    judge: Judge,
    ds: JudgeDataset,
    checks: Sequence[tuple[str, Callable[[JudgeDataset], Sequence[object]]]],
    *,
    released_only: bool,
    what: str,
) -> tuple[JudgeDataset | None, str]:
    """The contexts of ``ds`` whose outputs for every ``(operation, build)`` check are all there.

    Returns the restricted dataset (``None`` when no context is complete) and a sentence for the
    reader. With ``released_only=False`` every planned context is used (missing outputs will be
    computed, which loads the model).
    """
    if not released_only:
        return ds, f"{what}: all {ds.n_contexts} contexts (missing outputs are computed)"
    available = set(ds.context_ids())
    for operation, build in checks:
        available &= set(available_contexts(judge, ds, operation, build).available)
    kept = [c for c in ds.context_ids() if c in available]
    message = f"{what}: {len(kept)} of {ds.n_contexts} planned contexts have every output (released or cached)"
    return (restrict(ds, kept) if kept else None), message
