"""The study registry: every computation that calls a model, looked up by name.

A *study* turns a dataset into judge requests, runs them context by context (each context's
outputs reach the cache before the next starts, so a killed run resumes where it stopped) and
releases its outputs under ``data/outputs/<study>-<dataset>``. The runner
(``python -m nlgjudge.studies``), the plan, the coverage checks and the chapters find studies
here by name; none of them branches on study names.

Adding a study: write one module under ``nlgjudge/studies/`` that defines an object satisfying
:class:`Study` (usually an instance of a small class) and add one line to :data:`BUILTIN_STUDIES`.
Modules are imported only when their study is asked for, so importing this registry does no work.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from nlgjudge.studies.plan import N_SAMPLES

if TYPE_CHECKING:
    from nlgjudge.data import JudgeDataset
    from nlgjudge.engine import Judge
    from nlgjudge.models import ModelHandle

#: Study name -> "module:attribute" of its :class:`Study` object (the one registry entry per study).
BUILTIN_STUDIES: dict[str, str] = {
    "comparative": "nlgjudge.studies.comparative:STUDY",
    "scoring": "nlgjudge.studies.scoring:STUDY",
    "elo": "nlgjudge.studies.elo:STUDY",
    "generation": "nlgjudge.studies.generation:STUDY",
    "likelihood": "nlgjudge.studies.likelihood:STUDY",
    "selfpref": "nlgjudge.studies.selfpref:STUDY",
    "gaming": "nlgjudge.studies.gaming:STUDY",
    "gaming_reference": "nlgjudge.studies.gaming:REFERENCE_STUDY",
}

#: A coverage check: the judge operation and a function building one context's requests for it.
Check = tuple[str, Callable[["JudgeDataset"], Sequence[object]]]


class UnknownStudyError(KeyError):
    """A study name that is not registered; the message lists the registered ones."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


@dataclass(frozen=True)
class StudyOptions:
    """The settings a study run can take; each study reads the ones it needs.

    ``aspects=None`` means every aspect of the dataset; ``templates`` are the first paper's prompt
    templates (``None``: the study's own default); ``n_samples`` and ``seed`` govern sampled readings; ``data_dir`` locates files a
    study reads besides the dataset (G-Eval's prompts).
    """

    aspects: Sequence[str] | None = None
    templates: Sequence[int] | None = None
    n_samples: int = N_SAMPLES
    seed: int = 0
    data_dir: str | None = None

    def templates_or(self, default: Sequence[int]) -> tuple[int, ...]:
        """The templates asked for, or the study's ``default``."""
        return tuple(default if self.templates is None else self.templates)


@runtime_checkable
class Study(Protocol):
    """What every registered study provides."""

    #: The registry name, also the first part of its released folders (``<name>-<dataset>``).
    name: str
    #: One line for ``python -m nlgjudge.studies list``.
    description: str
    #: The judge operations its requests use (``label_probs``, ``sample``, ``loglikelihood``, ``generate``).
    operations: tuple[str, ...]
    #: Studies whose released outputs it reads (e.g. a judge study reading generated summaries).
    depends_on: tuple[str, ...]

    def checks(self, handle: ModelHandle, ds: JudgeDataset, options: StudyOptions) -> list[Check]:
        """For coverage: per operation, how to build one context's requests (no model is loaded)."""
        ...

    def run_context(self, judge: Judge, ds: JudgeDataset, options: StudyOptions) -> Any:
        """Compute (or read from the cache) every output of a one-context dataset."""
        ...


def released_folder(study: str | Study, dataset: str) -> str:
    """The released-outputs folder of one study on one dataset, e.g. ``comparative-summeval``."""
    name = study if isinstance(study, str) else study.name
    return f"{name}-{dataset}"


def study_names() -> list[str]:
    """Registered study names, in registry order."""
    return list(BUILTIN_STUDIES)


def get_study(name: str) -> Study:
    """The registered study called ``name`` (its module is imported now)."""
    if name not in BUILTIN_STUDIES:
        raise UnknownStudyError(f"no study named {name!r}; the registered studies are: {', '.join(BUILTIN_STUDIES)}")
    module_name, attribute = BUILTIN_STUDIES[name].split(":")
    study = getattr(importlib.import_module(module_name), attribute)
    if not isinstance(study, Study) or study.name != name:
        raise TypeError(f"{BUILTIN_STUDIES[name]} is not a Study named {name!r}; fix the registry entry")
    return study


def list_studies() -> list[Study]:
    """Every registered study (imports their modules)."""
    return [get_study(name) for name in BUILTIN_STUDIES]


def record_requests(study: Study, judge: Judge, ds: JudgeDataset, options: StudyOptions) -> int:
    """Record in ``judge``'s cache, under ``judge.study``, the meta of every request ``study`` makes on
    ``ds`` (its coverage checks build them), so that its export has one line per request, also for
    requests that share an output with another. Returns how many requests were new to the cache."""
    if getattr(judge, "cache", None) is None or not getattr(judge, "study", None):
        return 0  # nothing is kept (no cache), or the outputs belong to no study
    recorded = 0
    for operation, build in study.checks(judge.handle, ds, options):
        requests = list(build(ds))
        keys = judge.request_keys(operation, requests)
        recorded += judge.cache.record_requests(
            judge.study, [(key, dict(getattr(r, "meta", {}) or {})) for key, r in zip(keys, requests, strict=True)]
        )
    return recorded


def run_study(
    study: Study,
    judge: Judge,
    ds: JudgeDataset,
    options: StudyOptions,
    on_context_done: Callable[[str], None] | None = None,
) -> list[Any]:
    """Run ``study`` context by context; ``on_context_done(context_id)`` follows each context.

    Each context's outputs are in the cache when the callback runs (the background runner exports
    the released folder there), so a run killed at any moment loses at most the contexts in progress.
    A study with a ``contexts_per_call`` attribute above 1 gets that many contexts per call (its
    requests are then batched together, e.g. summaries decoded as parallel sequences); the callback
    still follows each context. Every request's meta is recorded with the judge's study
    (:func:`record_requests`), also for requests that share an output.
    Returns each call's result, in order.
    """
    size = int(getattr(study, "contexts_per_call", 1))
    if size < 1:
        raise ValueError(f"study {study.name!r}: contexts_per_call must be at least 1, got {size}")
    ids = ds.context_ids()
    results = []
    for start in range(0, len(ids), size):
        chunk = ids[start : start + size]
        part = ds.restrict(chunk)
        results.append(study.run_context(judge, part, options))
        # The judge stores each output with its first requester's meta; a request sharing it (identical
        # inputs) is recorded here, so the released folder has a line for every request.
        for context_id in chunk:
            record_requests(study, judge, part.restrict([context_id]), options)
        if on_context_done is not None:
            for context_id in chunk:
                on_context_done(context_id)
    return results
