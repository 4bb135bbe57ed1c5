"""The Elo chapter's LLM judge (seed 004): which of two contestants' summaries is better?

Harang's judge sees the instructions, the article and the two candidates (no reference) and names
the better summary; candidate order is randomised per encounter. Here the judge is the first
paper's comparative judge: prompt template 1 with the overall-quality question ("Which Summary is
better, Summary A or Summary B?", aspect ``OVR``), label probabilities of " A" and " B". Every
ordered pair of an article's contestants is judged (both orders), so the chapter can replay the
paper's randomised order (one order per encounter, drawn with a seed) and also debias with both.

Released as ``data/outputs/elo-<dataset>`` (the dataset is ``cnndm_contest``); each comparison's
meta carries the article, both contestants and the template.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import permutations

import pandas as pd

from nlgjudge.data import JudgeDataset
from nlgjudge.engine import ClassifyRequest, Judge
from nlgjudge.models import ModelHandle
from nlgjudge.prompts import Wording, comparative_ending, comparative_prompt
from nlgjudge.studies.comparative import check_templates
from nlgjudge.studies.prompting import classify_request, prompt_style
from nlgjudge.studies.registry import Check, StudyOptions

#: The question's aspect: overall quality ("Which Summary is better, ...?").
ASPECT = "OVR"
#: Harang's judge sees one prompt per encounter; template 1 (the article first, no label) is ours.
DEFAULT_TEMPLATES = (1,)
ENCOUNTER_COLUMNS = ["context_id", "template", "first", "second", "i", "j"]


def elo_requests(
    ds: JudgeDataset, *, templates: Sequence[int] = DEFAULT_TEMPLATES, style: str = "chat"
) -> tuple[list[ClassifyRequest], pd.DataFrame]:
    """Every ordered pair of every article's contestants as a comparison request, and a frame
    (``first`` in position A, ``second`` in B) in the same order."""
    templates = check_templates(templates)
    wording = Wording.for_dataset(ds.info)
    ending = comparative_ending(wording)
    requests, rows = [], []
    for context_id in ds.context_ids():
        cands = ds.candidates(context_id)
        if len(cands) < 2:
            raise ValueError(f"article {context_id!r} of {ds.info.name} has {len(cands)} contestant(s); an encounter needs two")
        source = str(cands["source"].iloc[0])
        names, texts = cands["system"].tolist(), cands["text"].tolist()
        for template in templates:
            for i, j in permutations(range(len(names)), 2):
                text = comparative_prompt(template, source, texts[i], texts[j], ASPECT, wording)
                meta = {"context_id": context_id, "template": template, "aspect": ASPECT, "a": names[i], "b": names[j]}
                requests.append(classify_request(text, ending, style, meta))
                rows.append((context_id, template, names[i], names[j], i, j))
    return requests, pd.DataFrame(rows, columns=ENCOUNTER_COLUMNS)


def run_elo_judge(
    judge: Judge, ds: JudgeDataset, *, templates: Sequence[int] = DEFAULT_TEMPLATES, style: str = "auto"
) -> pd.DataFrame:
    """P(A) for every ordered pair of contestants of every article of ``ds`` (one frame row each):
    columns model, dataset, context_id, template, first, second, i, j, p_a, from_cache."""
    style = prompt_style(judge.handle, style)
    frames = []
    for _, one in ds.per_context():
        requests, frame = elo_requests(one, templates=templates, style=style)
        results = judge.label_probs(requests)
        frame["p_a"] = [float(r.probs[0]) for r in results]
        frame["from_cache"] = [r.from_cache for r in results]
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    out.insert(0, "model", judge.handle.name)
    out.insert(1, "dataset", ds.info.name)
    return out


@dataclass(frozen=True)
class EloStudy:
    """The registry's ``elo`` study: the LLM judge of seed 004's encounters, both orders."""

    name: str = "elo"
    description: str = "which of two contestants' summaries is better, every ordered pair of every article (seed 004)"
    operations: tuple[str, ...] = ("label_probs",)
    depends_on: tuple[str, ...] = ()

    def checks(self, handle: ModelHandle, ds: JudgeDataset, options: StudyOptions) -> list[Check]:
        style = prompt_style(handle)
        templates = options.templates_or(DEFAULT_TEMPLATES)
        return [("label_probs", lambda one: elo_requests(one, templates=templates, style=style)[0])]

    def run_context(self, judge: Judge, ds: JudgeDataset, options: StudyOptions) -> pd.DataFrame:
        return run_elo_judge(judge, ds, templates=options.templates_or(DEFAULT_TEMPLATES))


STUDY = EloStudy()
