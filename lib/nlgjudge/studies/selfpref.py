"""Beyond seed 003: do the instruct models, as pairwise judges, prefer their own summaries?

The narcissism chapter's generators' summaries of a document become the *candidates* of that
document, and each instruct model judges every ordered pair of them with the first paper's
comparative prompt (template 1, overall quality: "Which Summary is better, Summary A or Summary
B?", the Elo study's question), by label probabilities. Both orders of every pair are judged, so
the chapter can debias (seed 000 eq. 10) and ask how often a judge prefers its own summary,
against what the *other* judges say about the same two summaries.

Released as ``data/outputs/selfpref-<dataset>``; the summaries are the released ``generation``
study's (read back through the same requests, as the likelihood study does).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from nlgjudge.data import JudgeDataset
from nlgjudge.engine import ClassifyRequest, Judge
from nlgjudge.models import ModelHandle
from nlgjudge.studies.elo import elo_requests, run_elo_judge
from nlgjudge.studies.plan import NARCISSISM_MODELS
from nlgjudge.studies.prompting import prompt_style
from nlgjudge.studies.registry import Check, StudyOptions

#: Whose summaries are the candidates: every generator of the narcissism chapter.
GENERATORS: tuple[str, ...] = NARCISSISM_MODELS


def candidate_dataset(ds: JudgeDataset, generations: pd.DataFrame) -> JudgeDataset:
    """The documents of ``ds`` with the generators' summaries as their candidates (``system`` = the
    generator). An empty summary stays a candidate (judged as it is, with nothing under its heading)."""
    documents = ds.frame.groupby("context_id", sort=False)["source"].first()
    rows = []
    for context_id in ds.context_ids():
        mine = generations[generations["context_id"] == context_id]
        if mine.empty:
            raise ValueError(f"{ds.info.name}: document {context_id!r} has no generated summary")
        for row in mine.itertuples(index=False):
            rows.append({"context_id": context_id, "source": documents[context_id], "references": [],
                         "candidate_id": f"{context_id}-{row.generator}", "system": row.generator, "text": row.summary})
    info = dataclasses.replace(ds.info, aspects={}, score_ranges={})
    return JudgeDataset(pd.DataFrame(rows)[list(info.columns)], info)


def _summaries(ds: JudgeDataset, cache: object, generators: Sequence[str], data_dir: str | None) -> pd.DataFrame:
    from nlgjudge.studies.generation import read_generations

    return read_generations(generators, ds, cache=cache, data_dir=data_dir)


def run_selfpref(
    judge: Judge, ds: JudgeDataset, *, generators: Sequence[str] = GENERATORS, data_dir: str | None = None,
    generations: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """P(A) of every ordered pair of the generators' summaries of every document of ``ds`` (the Elo
    study's frame: model, dataset, context_id, template, first, second, i, j, p_a, from_cache)."""
    if generations is None:
        generations = _summaries(ds, judge.cache, generators, data_dir)
    return run_elo_judge(judge, candidate_dataset(ds, generations))


@dataclass(frozen=True)
class SelfPreferenceStudy:
    """The registry's ``selfpref`` study: a judge's P(A) between every two generators' summaries."""

    name: str = "selfpref"
    description: str = "which of two generators' summaries is better, every ordered pair of every document (own-summary preference)"
    operations: tuple[str, ...] = ("label_probs",)
    depends_on: tuple[str, ...] = ("generation",)

    def checks(self, handle: ModelHandle, ds: JudgeDataset, options: StudyOptions) -> list[Check]:
        from nlgjudge.studies.released import chapter_cache

        cache, _ = chapter_cache(True, [f"generation-{ds.info.name}"])
        style = prompt_style(handle)

        def build(one: JudgeDataset) -> list[ClassifyRequest]:
            candidates = candidate_dataset(one, _summaries(one, cache, GENERATORS, options.data_dir))
            return elo_requests(candidates, style=style)[0]

        return [("label_probs", build)]

    def run_context(self, judge: Judge, ds: JudgeDataset, options: StudyOptions) -> pd.DataFrame:
        return run_selfpref(judge, ds, data_dir=options.data_dir)


STUDY = SelfPreferenceStudy()
