"""Comparative assessment (seed 000 sections 3.2-3.5): every ordered pair of a context's candidates.

For a context with N candidates, each template and aspect gives N(N-1) prompts
``T(x_i, x_j, d)``; the judge's label probabilities give p_ij = P(A) (eq. 3). The results come
back as a tidy frame (one row per comparison) and as comparison matrices
``P[i, j] = P(candidate i preferred | i in position A)`` for :mod:`nlgjudge.stats`.

Prompts are built context-first (context, candidate A, candidate B, question), so the engine
computes each context once, each (context, A) once, and each (context, A, B) once for all aspects.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import permutations

import pandas as pd

from nlgjudge.data import JudgeDataset
from nlgjudge.analysis.frames import COMPARISON_COLUMNS
from nlgjudge.engine import ClassifyRequest, Judge
from nlgjudge.models import ModelHandle
from nlgjudge.prompts import ANSWER_SUFFIX, Wording, comparative_ending, comparative_prompt
from nlgjudge.studies.prompting import classify_request, prompt_style
from nlgjudge.studies.registry import Check, StudyOptions

TEMPLATES = (1, 2)


def check_aspects(ds: JudgeDataset, aspects: Sequence[str] | None) -> list[str]:
    """The aspects to judge (all of the dataset's by default); unknown names are an error."""
    known = list(ds.info.aspects)
    if aspects is None:
        return known
    unknown = [a for a in aspects if a not in known]
    if unknown or not aspects:
        raise ValueError(f"unknown aspect(s) {unknown} for {ds.info.name}; choose from {known}")
    return list(aspects)


def dataset_aspects(ds: JudgeDataset, aspects: Sequence[str] | None) -> list[str]:
    """The aspects a chapter judges on ``ds``: all of them for ``None``; otherwise the listed ones
    that ``ds`` has (a chapter's ``aspects`` may name aspects of several datasets, e.g.
    ``["COH", "SEM"]``). A list naming none of ``ds``'s aspects is an error listing the valid ones."""
    if aspects is None:
        return check_aspects(ds, None)
    if isinstance(aspects, str):
        raise TypeError(f"aspects must be a list of aspect names, not the single string {aspects!r}")
    return check_aspects(ds, [a for a in aspects if a in ds.info.aspects] or list(aspects))


def check_templates(templates: Sequence[int]) -> list[int]:
    bad = [t for t in templates if t not in TEMPLATES]
    if bad or not templates:
        raise ValueError(f"unknown template(s) {bad}; the paper's comparative templates are {list(TEMPLATES)}")
    return list(templates)


def comparative_requests(
    ds: JudgeDataset,
    *,
    aspects: Sequence[str] | None = None,
    templates: Sequence[int] = TEMPLATES,
    style: str = "chat",
    answer_suffix: bool = False,
) -> tuple[list[ClassifyRequest], pd.DataFrame]:
    """All ordered-pair comparison requests of ``ds`` and a frame describing each (same order).

    ``answer_suffix`` appends the paper's "Answer:" (its Llama-2 set-up) to every prompt.
    """
    aspects = check_aspects(ds, aspects)
    templates = check_templates(templates)
    wording = Wording.for_dataset(ds.info)
    ending = comparative_ending(wording, user_suffix=ANSWER_SUFFIX if answer_suffix else "")
    requests: list[ClassifyRequest] = []
    rows: list[tuple[object, ...]] = []
    for context_id in ds.context_ids():
        cands = ds.candidates(context_id)
        if len(cands) < 2:
            raise ValueError(f"context {context_id!r} of {ds.info.name} has {len(cands)} candidate(s); comparisons need two")
        source = str(cands["source"].iloc[0])
        ids = cands["candidate_id"].tolist()
        texts = cands["text"].tolist()
        for template in templates:
            for i, j in permutations(range(len(ids)), 2):
                for aspect in aspects:
                    text = comparative_prompt(template, source, texts[i], texts[j], aspect, wording)
                    meta = {"context_id": context_id, "template": template, "aspect": aspect, "a": ids[i], "b": ids[j]}
                    requests.append(classify_request(text, ending, style, meta))
                    rows.append((context_id, template, aspect, i, j, ids[i], ids[j]))
    return requests, pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


def run_comparative(
    judge: Judge,
    ds: JudgeDataset,
    *,
    aspects: Sequence[str] | None = None,
    templates: Sequence[int] = TEMPLATES,
    style: str = "auto",
    answer_suffix: bool = False,
    on_context_done: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """P(A) for every ordered pair, template and aspect of every context of ``ds``.

    Contexts are sent to the judge one at a time (each context's requests share their prefixes),
    so a long run writes its outputs to the cache context by context; ``on_context_done`` is
    called after each (the background runner exports released outputs there).
    """
    style = prompt_style(judge.handle, style)
    frames = []
    for context_id, one in ds.per_context():
        requests, frame = comparative_requests(
            one, aspects=aspects, templates=templates, style=style, answer_suffix=answer_suffix
        )
        results = judge.label_probs(requests)
        frame["p_a"] = [float(r.probs[0]) for r in results]
        frame["from_cache"] = [r.from_cache for r in results]
        frames.append(frame)
        if on_context_done is not None:
            on_context_done(context_id)
    out = pd.concat(frames, ignore_index=True)
    out.insert(0, "model", judge.handle.name)
    out.insert(1, "dataset", ds.info.name)
    out.attrs["prompt_style"] = style
    return out


@dataclass(frozen=True)
class ComparativeStudy:
    """The registry's ``comparative`` study: P(A) of every ordered pair, template and aspect."""

    name: str = "comparative"
    description: str = "pairwise label probabilities P(A), all ordered pairs of every context (seed 000 §3)"
    operations: tuple[str, ...] = ("label_probs",)
    depends_on: tuple[str, ...] = ()

    def checks(self, handle: ModelHandle, ds: JudgeDataset, options: StudyOptions) -> list[Check]:
        style = prompt_style(handle)

        def build(one: JudgeDataset) -> list[ClassifyRequest]:
            return comparative_requests(one, aspects=options.aspects, templates=options.templates_or(TEMPLATES), style=style)[0]

        return [("label_probs", build)]

    def run_context(self, judge: Judge, ds: JudgeDataset, options: StudyOptions) -> pd.DataFrame:
        return run_comparative(judge, ds, aspects=options.aspects, templates=options.templates_or(TEMPLATES))


STUDY = ComparativeStudy()
