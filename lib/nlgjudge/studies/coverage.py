"""Which planned contexts already have all their outputs (released or cached), without a model.

The book's chapters default to ``released_only=True``: they use the planned contexts whose every
output is available and say how many of the planned ones that is, so that ``make book`` never
starts hours of computation on a fresh clone while ``make outputs`` is still filling
``data/outputs``. Readers who rerun a chapter with another model pass ``released_only=False``.

The checks come from the study registry (:meth:`nlgjudge.studies.registry.Study.checks`): per
judge operation, how to build one context's requests. Building requests loads no weights.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nlgjudge.data import JudgeDataset
from nlgjudge.engine import Judge
from nlgjudge.studies.registry import Check, StudyOptions, get_study


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


def available_contexts(judge: Judge, ds: JudgeDataset, checks: Sequence[Check]) -> Coverage:
    """Contexts of ``ds`` whose requests, for every ``(operation, build)`` check, are all cached."""
    if not checks:
        raise ValueError("no coverage checks given: pass the study's checks (Study.checks)")
    available = []
    for context_id, one in ds.per_context():
        if all(all(judge.cached_mask(operation, build(one))) for operation, build in checks):
            available.append(context_id)
    return Coverage(ds.info.name, ds.context_ids(), available)


def usable_subset(
    judge: Judge,
    ds: JudgeDataset,
    checks: Sequence[Check],
    *,
    released_only: bool,
    what: str,
) -> tuple[JudgeDataset | None, str]:
    """The contexts of ``ds`` whose outputs for every check are all there.

    Returns the restricted dataset (``None`` when no context is complete) and a sentence for the
    reader. With ``released_only=False`` every planned context is used (missing outputs will be
    computed, which loads the model).
    """
    if not released_only:
        return ds, f"{what}: all {ds.n_contexts} contexts (missing outputs are computed)"
    kept = available_contexts(judge, ds, checks).available
    message = f"{what}: {len(kept)} of {ds.n_contexts} planned contexts have every output (released or cached)"
    return (ds.restrict(kept) if kept else None), message


#: What each study computed, as the chapters' notes name it.
_STUDY_WORDS = {"comparative": "comparisons", "scoring": "scores", "elo": "contest judgements", "generation": "summaries",
                "likelihood": "likelihoods", "selfpref": "pairwise judgements", "gaming": "comparisons with the attacks",
                "gaming_reference": "comparisons with the attacks, the reference shown", "rank": "comparisons"}
#: The runtimes by the names the book gives them.
_RUNTIME_WORDS = {"llamacpp": "llama.cpp", "torch": "torch", "server": "a server"}


def reader_label(study: str, ds: JudgeDataset, judge: Judge) -> str:
    """A coverage note's subject in reader words: "Qwen2.5-Coder-1.5B-Instruct's comparisons on SummEval
    (llama.cpp)", never the study's, dataset's or runtime's code name."""
    from nlgjudge.models import model_title
    from nlgjudge.reader_names import DATASET_NAMES

    backend = getattr(judge, "backend", None)
    runtime = f" ({_RUNTIME_WORDS.get(str(backend), str(backend))})" if backend else ""
    where = DATASET_NAMES.get(ds.info.name, ds.info.title)  # the dataset's short name in the book
    return f"{model_title(judge.handle.name)}'s {_STUDY_WORDS.get(study, study)} on {where}{runtime}"


def study_subset(
    study: str,
    judge: Judge,
    ds: JudgeDataset,
    options: StudyOptions,
    *,
    released_only: bool,
    what: str | None = None,
) -> tuple[JudgeDataset | None, str]:
    """:func:`usable_subset` with the checks of the registered study called ``study``."""
    checks = get_study(study).checks(judge.handle, ds, options)
    label = what or reader_label(study, ds, judge)
    return usable_subset(judge, ds, checks, released_only=released_only, what=label)
