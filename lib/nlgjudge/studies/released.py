"""Released outputs: the studies' model outputs committed under ``data/outputs/<study>``.

A study's outputs are exported from the cache after each completed context (deterministic,
diff-friendly files) and imported back before a chapter runs, so the book rebuilds on a fresh
clone without loading a model.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from nlgjudge.cache import OutputCache, recover_interrupted_exports
from nlgjudge.config import outputs_dir
from nlgjudge.studies.registry import StudyOptions

if TYPE_CHECKING:
    from nlgjudge.data import JudgeDataset
    from nlgjudge.engine import Judge
    from nlgjudge.studies.plan import Job


def import_released(study: str, cache: OutputCache, root: Path | None = None) -> int:
    """Import ``<outputs>/<study>`` into ``cache`` if it exists; returns the number of new outputs.

    An export killed while swapping the folder in can leave it missing with its previous version
    beside it (``.<study>.old-XXXX``); that version is put back first, so the run sees it.
    """
    folder = (root or outputs_dir()) / study
    recover_interrupted_exports(folder)
    if not folder.is_dir():
        return 0
    return int(cache.import_outputs(folder))


def export_released(study: str, cache: OutputCache, root: Path | None = None) -> list[Path]:
    """Write the study's outputs to ``<outputs>/<study>``, swapped in as one set (an export that changes
    nothing writes nothing)."""
    return list(cache.export_study(study, (root or outputs_dir()) / study))


def chapter_cache(released_only: bool, studies: Iterable[str], root: Path | None = None) -> tuple[OutputCache, dict[str, int]]:
    """The output cache a chapter reads, with the released outputs of ``studies`` imported.

    ``released_only=True`` (how the book is built): a new temporary database that holds exactly
    the released outputs, so the chapter shows the same numbers on every machine whatever the
    user's own cache holds (outputs of other runs, a context half computed). Otherwise the user's
    cache, so that what was computed before is reused and what is computed now is kept.
    Returns the cache and, per study, how many released outputs were new to it.
    """
    if released_only:
        folder = Path(tempfile.mkdtemp(prefix="nlgjudge-released-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        cache = OutputCache(folder / "outputs.sqlite")
    else:
        cache = OutputCache()
    imported = {study: import_released(study, cache, root) for study in dict.fromkeys(studies)}
    return cache, imported


# -- one released line per request ------------------------------------------------------------------


@dataclass(frozen=True)
class PlannedRequest:
    """One request a study makes: the released line it resolves to is ``(key, meta)`` in ``file``.

    Two requests with the same inputs (e.g. two contestants whose summaries are identical) share
    one output and so one key; their metas tell them apart, and each has a line of its own.
    """

    folder: str
    context_id: str
    model_id: str
    operation: str
    runtime: str
    key: str
    meta: str  # canonical JSON

    @property
    def file(self) -> str:
        from nlgjudge.cache.release import output_file_name

        return output_file_name(self.model_id, self.operation)


def request_keys(judge: Judge, operation: str, requests: Sequence[object]) -> list[str]:
    """The cache keys ``judge`` gives ``requests`` (:meth:`nlgjudge.engine.Judge.request_keys`)."""
    return judge.request_keys(operation, requests)


def _job_groups(jobs: Iterable[Job]) -> dict[tuple, int | None]:
    """Jobs that differ only in ``max_contexts`` compute nested prefixes of one subset: keep the largest."""
    groups: dict[tuple, int | None] = {}
    for job in jobs:
        group = (job.study, job.dataset, job.model, job.backend, job.n_contexts, job.seed, job.aspects)
        if group in groups and (groups[group] is None or job.max_contexts is None):
            groups[group] = None
        else:
            groups[group] = max(groups.get(group) or 0, job.max_contexts or 0) or None
    return groups


def _built_requests(build: Callable[[JudgeDataset], Sequence[object]], ds: JudgeDataset) -> Iterator[list[object]]:
    """A check's requests for every context of ``ds``: in one call (the builders loop over contexts, and
    some read files once per call), or context by context when some context cannot be built yet
    because it reads another study's outputs (summaries) that are not released; those are left out."""
    try:
        yield list(build(ds))
        return
    except LookupError:
        pass
    for _, one in ds.per_context():
        try:
            yield list(build(one))
        except LookupError:
            continue


def planned_requests(
    jobs: Iterable[Job] | None = None, *, folders: Iterable[str] | None = None
) -> dict[str, list[PlannedRequest]]:
    """Every request of the plan's jobs (default :data:`nlgjudge.studies.plan.PLAN`) by released folder,
    built by the studies from the datasets exactly as ``make outputs`` runs them (the data directory
    from ``NLGJUDGE_DATA_DIR``; no model is loaded).

    ``folders`` limits it to those released folders. A request planned by several jobs (nested
    subsets) is listed once. A context whose requests need another study's outputs that are not
    released yet (the likelihood study scores released summaries) is left out.
    """
    from nlgjudge.cache import canonical_json
    from nlgjudge.data import load_dataset
    from nlgjudge.engine import Judge
    from nlgjudge.studies.plan import PLAN
    from nlgjudge.studies.registry import get_study, released_folder

    wanted = None if folders is None else set(folders)
    planned: dict[str, dict[tuple[str, str], PlannedRequest]] = {}
    built: dict[tuple, set[str]] = {}
    for (name, dataset, model, backend, n_contexts, seed, aspects), max_contexts in _job_groups(PLAN if jobs is None else jobs).items():
        folder = released_folder(name, dataset)
        if wanted is not None and folder not in wanted:
            continue
        study = get_study(name)
        ds = load_dataset(dataset, n_contexts=n_contexts, seed=seed)
        if max_contexts is not None:
            ds = ds.first_contexts(min(max_contexts, ds.n_contexts))
        judge = Judge(model, cache=False, backend=backend)
        runtime = judge.backend
        options = StudyOptions(seed=seed, aspects=aspects)  # what `python -m nlgjudge.studies` passes a job of the plan
        into = planned.setdefault(folder, {})
        # Nested subsets share contexts, whose requests are the same: build each context once.
        done = built.setdefault((name, dataset, model, backend, seed, aspects), set())
        todo = [c for c in ds.context_ids() if c not in done]
        done.update(todo)
        if not todo:
            continue
        ds = ds.restrict(todo)
        for operation, build in study.checks(judge.handle, ds, options):
            for requests in _built_requests(build, ds):
                for key, request in zip(request_keys(judge, operation, requests), requests, strict=True):
                    labels = dict(getattr(request, "meta", {}) or {})
                    meta = canonical_json(labels)
                    into.setdefault(
                        (key, meta),
                        PlannedRequest(folder, str(labels["context_id"]), judge.handle.name, operation, runtime, key, meta),
                    )
    return {folder: list(requests.values()) for folder, requests in planned.items()}


@dataclass(frozen=True)
class AlignedFile:
    """What :func:`align_release` changed in one released file."""

    file: str
    lines_before: int
    lines_after: int
    added: int
    removed: int


def _released_lines(folder: Path) -> dict[str, set[tuple[str, str]]]:
    from nlgjudge.cache import read_released_file

    return {path.name: {(r.key, r.meta) for r in read_released_file(path)} for path in sorted(folder.glob("*.jsonl"))}


def align_release(folder: str, root: Path | None = None, *, planned: Sequence[PlannedRequest] | None = None) -> list[AlignedFile]:
    """Rewrite the released folder ``folder`` so that it has one line per planned request.

    Through a private cache: the folder is imported, every planned request whose output is released
    is recorded (a request sharing its output with another gains its line), lines of the planned
    contexts that no planned request resolves to are dropped (outputs of unplanned requests, or
    another study's meta on a shared output), and the folder is exported again with its manifest.
    Keys and values never change, and nothing is computed. ``planned`` defaults to the plan's
    requests for the folder (:func:`planned_requests`). Returns what changed, per file.
    """
    import json

    target = (root or outputs_dir()) / folder
    if planned is None:
        planned = planned_requests(folders=[folder]).get(folder, [])
    before = _released_lines(target)
    work = Path(tempfile.mkdtemp(prefix="nlgjudge-align-"))
    try:
        cache = OutputCache(work / "outputs.sqlite")
        cache.import_outputs(target)
        released_keys = {key for lines in before.values() for key, _ in lines}
        cache.record_requests(folder, [(r.key, json.loads(r.meta)) for r in planned if r.key in released_keys])
        wanted = {(r.key, r.meta) for r in planned}
        contexts = {(r.file, r.context_id) for r in planned}
        unplanned = [
            (key, meta)
            for name, lines in before.items()
            for key, meta in lines
            if (key, meta) not in wanted and (name, json.loads(meta).get("context_id")) in contexts
        ]
        cache.drop_requests(folder, unplanned)
        cache.export_study(folder, target, drop_released=True)
        cache.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    after = _released_lines(target)
    return [
        AlignedFile(name, len(before.get(name, ())), len(after.get(name, ())),
                    len(after.get(name, set()) - before.get(name, set())), len(before.get(name, set()) - after.get(name, set())))
        for name in sorted(set(before) | set(after))
    ]
