"""Gather the comparisons of several judges on several datasets, with the chapters' coverage rule.

Shared by the bias and subsets chapters (and the comparative chapter's set-up): every model's
comparisons on every dataset, read from the cache or computed, with notes saying what was left
out and why. This module calls the judge, so it lives with the studies; what the chapters do with
the frame is in :mod:`nlgjudge.analysis`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from nlgjudge.data import JudgeDataset


@dataclass
class CollectedComparisons:
    """The comparisons of every (model, dataset) that has them, with what was left out and why."""

    frame: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    styles: dict[str, str] = field(default_factory=dict)
    """Prompt style used per model ("chat", "plain", "seq2seq")."""
    endings: dict[str, str] = field(default_factory=dict)
    """How the prompts end, per dataset, in a reader's words (``PromptEnding.in_words()``)."""
    contexts: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    """Contexts used per (model, dataset)."""


def collect_comparisons(
    models: Sequence[str],
    datasets: Mapping[str, JudgeDataset],
    *,
    cache: object,
    aspects: Sequence[str] | None,
    templates: Sequence[int],
    released_only: bool,
    answer_suffix: bool = False,
    backend: str | None = None,
    server_url: str | None = None,
) -> CollectedComparisons:
    """Run (or read from the cache) every model's comparisons on every dataset.

    With ``released_only`` a (model, dataset) uses only the contexts whose every comparison is
    already cached (no model is loaded; a pair with none is left out and a note says so); otherwise
    everything missing is computed. ``aspects=None`` means each dataset's own aspects; named aspects
    a dataset does not have are skipped for it (noted).
    """
    from nlgjudge.engine import Judge
    from nlgjudge.prompts import ANSWER_SUFFIX, Wording, comparative_ending
    from nlgjudge.studies.comparative import comparative_requests, run_comparative
    from nlgjudge.studies.coverage import available_contexts
    from nlgjudge.studies.prompting import prompt_style
    from nlgjudge.studies.registry import released_folder

    collected = CollectedComparisons(frame=pd.DataFrame())
    frames = []
    for name, ds in datasets.items():
        wanted = list(ds.info.aspects) if aspects is None else [a for a in aspects if a in ds.info.aspects]
        skipped = [] if aspects is None else [a for a in aspects if a not in ds.info.aspects]
        if skipped:
            collected.notes.append(f"{name}: has no aspect(s) {skipped}; skipped there")
        if not wanted:
            continue
        ending = comparative_ending(Wording.for_dataset(ds.info), user_suffix=ANSWER_SUFFIX if answer_suffix else "")
        collected.endings[name] = ending.in_words()  # for the reader; describe() keeps the exact strings
        for model in models:
            judge = Judge(model, cache=cache, study=released_folder("comparative", name), backend=backend,
                          server_url=server_url)
            style = prompt_style(judge.handle, "auto")
            collected.styles[judge.handle.name] = style
            use = ds
            if released_only:

                def build(one: JudgeDataset, style: str = style, wanted: list[str] = wanted) -> list[object]:
                    requests, _ = comparative_requests(
                        one, aspects=wanted, templates=templates, style=style, answer_suffix=answer_suffix
                    )
                    return list(requests)

                coverage = available_contexts(judge, ds, [("label_probs", build)])
                collected.notes.append(f"{judge.handle.name} on {coverage.describe()}")
                if not coverage.available:
                    continue
                use = ds.restrict(coverage.available)
            frame = run_comparative(judge, use, aspects=wanted, templates=templates, style=style, answer_suffix=answer_suffix)
            collected.contexts[(judge.handle.name, name)] = use.context_ids()
            frames.append(frame)
    if frames:
        collected.frame = pd.concat(frames, ignore_index=True)
    return collected


@dataclass
class ChapterRuns:
    """The comparative chapter's runs: comparisons and prompt scores per (dataset, model)."""

    comparisons: dict[tuple[str, str], pd.DataFrame] = field(default_factory=dict)
    scores: dict[tuple[str, str], dict[str, pd.DataFrame]] = field(default_factory=dict)
    used: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    """Contexts of each comparative run, by (dataset, model)."""
    notes: list[str] = field(default_factory=list)

    @property
    def computed(self) -> int:
        """Outputs computed by this run (not read from the cache)."""
        frames = [*self.comparisons.values(), *(f for parts in self.scores.values() for f in parts.values())]
        return sum(int((~f["from_cache"]).sum()) for f in frames)


def collect_comparative_and_scoring(
    models: Mapping[str, Sequence[str]],
    datasets: Mapping[str, JudgeDataset],
    *,
    cache: object,
    aspects: Mapping[str, Sequence[str]],
    templates: Sequence[int],
    n_samples: int,
    seed: int,
    released_only: bool,
    data_dir: str | None = None,
    backend: str | None = None,
    server_url: str | None = None,
) -> ChapterRuns:
    """Comparative and scoring outputs of every model on every dataset, with the coverage rule.

    ``models`` maps each dataset to the models run on it; ``aspects`` each dataset to its aspects.
    With ``released_only`` each (study, dataset, model) uses only the contexts whose every output
    is cached (a note says how many), so no model is loaded; otherwise missing outputs are computed.
    ``backend`` is the runtime (:class:`nlgjudge.engine.Judge`; ``server_url`` for ``backend="server"``,
    default ``$NLGJUDGE_SERVER_URL``); outputs of different runtimes never
    mix, so it must be the one the released outputs were computed with to find them.
    """
    from nlgjudge.engine import Judge
    from nlgjudge.studies.comparative import run_comparative
    from nlgjudge.studies.coverage import reader_label, study_subset
    from nlgjudge.studies.registry import StudyOptions, released_folder
    from nlgjudge.studies.scoring import geval_scores, prompt_scores, uses_geval

    runs = ChapterRuns()
    for name, ds in datasets.items():
        options = StudyOptions(aspects=aspects[name], templates=tuple(templates), n_samples=n_samples, seed=seed,
                               data_dir=data_dir)
        for model_name in models.get(name, ()):
            judge = Judge(model_name, cache=cache, study=released_folder("comparative", name), backend=backend,
                          server_url=server_url)
            part, note = study_subset("comparative", judge, ds, options, released_only=released_only,
                                      what=reader_label("comparative", ds, judge))
            runs.notes.append(note)
            if part is not None:
                runs.comparisons[(name, model_name)] = run_comparative(judge, part, aspects=aspects[name], templates=templates)
                runs.used[(name, model_name)] = part.context_ids()
            judge = Judge(model_name, cache=cache, study=released_folder("scoring", name), backend=backend,
                          server_url=server_url)
            part, note = study_subset("scoring", judge, ds, options, released_only=released_only,
                                      what=reader_label("scoring", ds, judge))
            runs.notes.append(note)
            if part is not None:
                readings = prompt_scores(judge, part, aspects=aspects[name], templates=templates, n_samples=n_samples, seed=seed)
                if uses_geval(ds):
                    readings["geval"] = geval_scores(judge, part, aspects=aspects[name], data_dir=data_dir)
                runs.scores[(name, model_name)] = readings
    return runs


@dataclass
class PreparedComparisons:
    """What the bias and subsets chapters start from: the comparisons and how they were gathered."""

    collected: CollectedComparisons
    imported: dict[str, int]
    """Released outputs imported into the chapter's cache, per released folder."""
    released_only: bool = False
    """Whether the cache is the chapter's private copy of the released outputs (the book's build)."""

    @property
    def frame(self) -> pd.DataFrame:
        return self.collected.frame

    def log(self) -> str:
        """What was imported into the user's cache (a rerun's: the book's own build reads a private
        copy of the released outputs, nothing to report), then one note per (model, dataset)."""
        lines = [] if self.released_only else [
            f"{study}: {count} released outputs imported into the cache" for study, count in self.imported.items()]
        return "\n".join([*lines, *([""] if lines else []), *self.collected.notes])


def prepare_comparisons(
    models: Sequence[str],
    datasets: Mapping[str, JudgeDataset],
    *,
    aspects: Sequence[str] | None,
    templates: Sequence[int],
    released_only: bool,
    backend: str | None = None,
    server_url: str | None = None,
) -> PreparedComparisons:
    """The shared set-up of the chapters that analyse comparisons (bias, subsets).

    Opens the chapter's cache with the released comparative outputs of ``datasets`` imported
    (:func:`nlgjudge.studies.released.chapter_cache`: with ``released_only`` a private cache holding
    exactly ``data/outputs``, otherwise the user's), then gathers every model's comparisons
    (:func:`collect_comparisons`). Raises a clear error when no comparison is available.
    """
    from nlgjudge.studies.registry import released_folder
    from nlgjudge.studies.released import chapter_cache

    cache, imported = chapter_cache(released_only, [released_folder("comparative", name) for name in datasets])
    unique_models = list(dict.fromkeys(models))
    collected = collect_comparisons(
        unique_models, datasets, cache=cache, aspects=aspects, templates=templates, released_only=released_only,
        backend=backend, server_url=server_url,
    )
    if collected.frame.empty:
        raise RuntimeError(
            "no comparisons are available for these parameters: run `make outputs`, or rerun the chapter "
            "with released_only=False to compute them\n" + "\n".join(collected.notes)
        )
    return PreparedComparisons(collected, imported, released_only)


def collect_elo_judgements(
    models: Sequence[str],
    ds: JudgeDataset,
    *,
    cache: object,
    templates: Sequence[int],
    released_only: bool,
    backend: str | None = None,
    server_url: str | None = None,
) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """Every LLM judge's P(A) for every ordered pair of contestants (the ``elo`` study), with the
    coverage rule: with ``released_only`` a judge is used only on the articles whose every judgement
    is cached, and a note says how many (a judge with none is left out). Returns ``{model: frame}``
    and the notes."""
    from nlgjudge.engine import Judge
    from nlgjudge.studies.coverage import reader_label, study_subset
    from nlgjudge.studies.elo import run_elo_judge
    from nlgjudge.studies.registry import StudyOptions, released_folder

    frames: dict[str, pd.DataFrame] = {}
    notes: list[str] = []
    for model in dict.fromkeys(models):
        judge = Judge(model, cache=cache, study=released_folder("elo", ds.info.name), backend=backend,
                          server_url=server_url)
        part, note = study_subset("elo", judge, ds, StudyOptions(templates=tuple(templates)), released_only=released_only,
                                  what=reader_label("elo", ds, judge))
        notes.append(note)
        if part is not None:
            frames[judge.handle.name] = run_elo_judge(judge, part, templates=templates)
    return frames, notes


@dataclass
class CollectedNarcissism:
    """The narcissism chapter's inputs: generated summaries and their likelihood scores, with notes."""

    generations: pd.DataFrame
    likelihood: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    documents: dict[str, list[str]] = field(default_factory=dict)
    """Per dataset, the documents every kept generator and evaluator covers."""


def collect_narcissism(
    generators: Sequence[str],
    evaluators: Sequence[str],
    datasets: Mapping[str, JudgeDataset],
    *,
    cache: object,
    released_only: bool,
    backend: str | None = None,
    server_url: str | None = None,
    data_dir: str | None = None,
) -> CollectedNarcissism:
    """Every generator's summaries and every evaluator's scores of them on every dataset.

    With ``released_only`` nothing is computed: per dataset, the documents whose summary from every
    generator is released, then those whose every evaluator score is released (a note says how many
    of the planned ones remain; a model with none is left out, noted). Otherwise everything missing
    is computed (generators first).
    """
    from nlgjudge.engine import Judge
    from nlgjudge.studies.coverage import reader_label, study_subset, usable_subset
    from nlgjudge.studies.generation import run_generation
    from nlgjudge.studies.likelihood import evaluator_row, hypotheses, likelihood_requests, run_likelihood
    from nlgjudge.studies.registry import StudyOptions, released_folder

    out = CollectedNarcissism(pd.DataFrame(), pd.DataFrame())
    gen_frames, lik_frames = [], []
    for name, ds in datasets.items():
        use: JudgeDataset | None = ds
        kept_generators = []
        for generator in dict.fromkeys(generators):
            judge = Judge(generator, cache=cache, study=released_folder("generation", name), backend=backend,
                          server_url=server_url)
            part, note = study_subset("generation", judge, ds, StudyOptions(data_dir=data_dir), released_only=released_only,
                                      what=reader_label("generation", ds, judge))
            out.notes.append(note)
            if part is None:
                continue
            kept_generators.append(judge)
            if use is not None:
                common = [c for c in use.context_ids() if c in set(part.context_ids())]
                use = use.restrict(common) if common else None
        if use is None or not kept_generators:
            out.notes.append(f"{name}: no document has a summary from every generator; the dataset is left out")
            continue
        generations = pd.concat([run_generation(judge, use, data_dir=data_dir) for judge in kept_generators], ignore_index=True)
        hyps_all = hypotheses(use, generations)
        for evaluator in dict.fromkeys(evaluators):
            judge = Judge(evaluator, cache=cache, study=released_folder("likelihood", name), backend=backend,
                          server_url=server_url)
            row = evaluator_row(judge.handle)

            def build(one: JudgeDataset, row: str = row) -> list[object]:
                hyps = hyps_all[hyps_all["context_id"].isin(set(one.context_ids()))]
                return list(likelihood_requests(one, hyps, row, data_dir)[0])

            part, note = usable_subset(judge, use, [("loglikelihood", build)], released_only=released_only,
                                       what=reader_label("likelihood", ds, judge))
            out.notes.append(note)
            if part is None:
                continue
            ids = set(part.context_ids())
            lik_frames.append(run_likelihood(judge, part, data_dir=data_dir,
                                             generations=generations[generations["context_id"].isin(ids)]))
        gen_frames.append(generations)
        out.documents[name] = use.context_ids()
    if gen_frames:
        out.generations = pd.concat(gen_frames, ignore_index=True)
    if lik_frames:
        out.likelihood = pd.concat(lik_frames, ignore_index=True)
    return out


def collect_benchmark_likelihood(
    evaluators: Sequence[str],
    datasets: Mapping[str, JudgeDataset],
    *,
    cache: object,
    released_only: bool,
    backend: str | None = None,
    server_url: str | None = None,
    data_dir: str | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """Every evaluator's scores of the human-annotated benchmarks' own systems (``likelihood.BENCHMARKS``).

    With ``released_only`` only the documents whose every score is released (a note says how many;
    an evaluator with none is left out, noted); otherwise missing scores are computed."""
    from nlgjudge.engine import Judge
    from nlgjudge.studies.coverage import reader_label, study_subset
    from nlgjudge.studies.likelihood import run_likelihood
    from nlgjudge.studies.registry import StudyOptions, released_folder

    frames, notes = [], []
    for name, ds in datasets.items():
        for evaluator in dict.fromkeys(evaluators):
            judge = Judge(evaluator, cache=cache, study=released_folder("likelihood", name), backend=backend,
                          server_url=server_url)
            part, note = study_subset("likelihood", judge, ds, StudyOptions(data_dir=data_dir), released_only=released_only,
                                      what=reader_label("likelihood", ds, judge))
            notes.append(note)
            if part is not None:
                frames.append(run_likelihood(judge, part, data_dir=data_dir))
    return (pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()), notes


def collect_selfpref(
    judges: Sequence[str],
    ds: JudgeDataset,
    generations: pd.DataFrame,
    *,
    cache: object,
    released_only: bool,
    backend: str | None = None,
    server_url: str | None = None,
    data_dir: str | None = None,
) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """Every judge's P(A) between every two generators' summaries (``generations``) of the documents
    of ``ds``: with ``released_only`` only the documents whose every comparison is released (a note
    says how many; a judge with none is left out, noted); otherwise missing ones are computed.
    Returns ``{judge: frame}`` and the notes."""
    from nlgjudge.engine import Judge
    from nlgjudge.studies.coverage import reader_label, usable_subset
    from nlgjudge.studies.elo import elo_requests
    from nlgjudge.studies.prompting import prompt_style
    from nlgjudge.studies.registry import released_folder
    from nlgjudge.studies.selfpref import candidate_dataset, run_selfpref

    frames: dict[str, pd.DataFrame] = {}
    notes: list[str] = []
    for model in dict.fromkeys(judges):
        judge = Judge(model, cache=cache, study=released_folder("selfpref", ds.info.name), backend=backend,
                          server_url=server_url)
        style = prompt_style(judge.handle)

        def build(one: JudgeDataset, style: str = style) -> list[object]:
            mine = generations[generations["context_id"].isin(set(one.context_ids()))]
            return list(elo_requests(candidate_dataset(one, mine), style=style)[0])

        part, note = usable_subset(judge, ds, [("label_probs", build)], released_only=released_only,
                                   what=reader_label("selfpref", ds, judge))
        notes.append(note)
        if part is not None:
            ids = set(part.context_ids())
            frames[judge.handle.name] = run_selfpref(judge, part, data_dir=data_dir,
                                                     generations=generations[generations["context_id"].isin(ids)])
    return frames, notes


def collect_gaming(
    judges: Sequence[str],
    ds: JudgeDataset,
    *,
    cache: object,
    aspects: Sequence[str] | None,
    released_only: bool,
    backend: str | None = None,
    server_url: str | None = None,
    with_reference: bool = False,
) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """Every judge's P(A) for every attack comparison (the ``gaming`` study; with ``with_reference``, the
    ``gaming_reference`` study) on the articles of ``ds``, with the coverage rule of
    :func:`collect_elo_judgements`. Returns ``{judge: frame}`` and the notes."""
    from nlgjudge.engine import Judge
    from nlgjudge.studies.coverage import reader_label, study_subset
    from nlgjudge.studies.gaming import run_gaming
    from nlgjudge.studies.registry import StudyOptions, released_folder

    frames: dict[str, pd.DataFrame] = {}
    notes: list[str] = []
    study = "gaming_reference" if with_reference else "gaming"
    for model in dict.fromkeys(judges):
        judge = Judge(model, cache=cache, study=released_folder(study, ds.info.name), backend=backend,
                      server_url=server_url)
        options = StudyOptions(aspects=None if aspects is None else tuple(aspects))
        part, note = study_subset(study, judge, ds, options, released_only=released_only,
                                  what=reader_label(study, ds, judge))
        notes.append(note)
        if part is not None:
            frames[judge.handle.name] = run_gaming(judge, part, aspects=options.aspects, with_reference=with_reference)
    return frames, notes
