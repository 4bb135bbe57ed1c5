"""Can a system game the judge? The gaming chapter's judgments (Zheng et al., ICLR 2025, on our judges).

Each attack of :mod:`nlgjudge.prompts.gaming` joins a SummEval article as an extra candidate and is
compared with every real summary of that article, in both orders, with the first paper's
comparative prompt 1 (the comparative chapter's prompt, so the real summaries' own comparisons are
the comparative study's released ones), on every aspect, by label probabilities. The forged-turns
attack is judged twice: with the library's protection (its control strings read as plain text)
and without it (``protect_texts=False``, a research reading only the in-process runtimes allow).
The padded attack is each real summary repeated to twice its length, compared with the same
summary unpadded.

One row per comparison: ``attack``, ``protected``, ``a``, ``b`` (candidate ids; an attack's id is
its name, a padded summary's ``padded:<system>``), ``attack_first`` and P(A). Released as
``data/outputs/gaming-summeval``. The ``gaming_reference`` study judges the null model and self-praise
again with the article's reference summary after it (``data/outputs/gaming_reference-summeval``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from nlgjudge.data import JudgeDataset
from nlgjudge.engine import ClassifyRequest, Judge
from nlgjudge.models import ModelHandle
from nlgjudge.prompts import Wording, comparative_ending, comparative_prompt
from nlgjudge.prompts.gaming import CONSTANT_ATTACKS, REFERENCE_ATTACKS, padded_text
from nlgjudge.prompts.ranking import reference_context
from nlgjudge.studies.comparative import check_aspects
from nlgjudge.studies.prompting import classify_request, prompt_style
from nlgjudge.studies.registry import Check, StudyOptions

#: The comparative chapter's prompt 1 (the paper's first template).
TEMPLATE = 1
#: The attack also judged without the protection (research reading).
UNPROTECTED_ATTACKS: tuple[str, ...] = ("control",)

GAMING_COLUMNS = ["context_id", "aspect", "attack", "protected", "a", "b", "opponent", "attack_first"]


def gaming_requests(ds: JudgeDataset, *, aspects: Sequence[str] | None = None, style: str = "chat",
                    with_reference: bool = False) -> tuple[list[ClassifyRequest], pd.DataFrame]:
    """Every attack's comparisons on every context of ``ds`` and a frame describing each (same order).
    ``with_reference``: the :data:`REFERENCE_ATTACKS` only, with the context's first reference summary
    after the article (:func:`~nlgjudge.prompts.ranking.reference_context`, ``nlgjudge rank
    --with-reference``'s layout)."""
    aspects = check_aspects(ds, aspects)
    wording = Wording.for_dataset(ds.info)
    ending = comparative_ending(wording)
    requests: list[ClassifyRequest] = []
    rows: list[tuple[object, ...]] = []

    def add(context_id: str, source: str, aspect: str, attack: str, protected: bool,
            attack_id: str, attack_text: str, opponent_id: str, opponent_text: str) -> None:
        for attack_first in (True, False):
            a, b = (attack_id, opponent_id) if attack_first else (opponent_id, attack_id)
            text_a, text_b = (attack_text, opponent_text) if attack_first else (opponent_text, attack_text)
            text = comparative_prompt(TEMPLATE, source, text_a, text_b, aspect, wording)
            meta = {"context_id": context_id, "template": TEMPLATE, "aspect": aspect, "a": a, "b": b,
                    "attack": attack, "protected": protected, **({"reference": True} if with_reference else {})}
            request = classify_request(text, ending, style, meta)
            requests.append(request if protected else dataclasses.replace(request, protect_texts=False))
            rows.append((context_id, aspect, attack, protected, a, b, opponent_id, attack_first))

    for context_id in ds.context_ids():
        cands = ds.candidates(context_id)
        source = str(cands["source"].iloc[0])
        real = list(zip(cands["candidate_id"].astype(str), cands["text"].astype(str), strict=True))
        if with_reference:
            references = list(cands["references"].iloc[0])
            if not references:
                raise ValueError(f"{ds.info.name} context {context_id}: no reference summary, which the reference-based "
                                 "defense shows the judge; use a dataset with references (SummEval has eleven per article)")
            source = reference_context(source, str(references[0]), wording.noun)
            for aspect in aspects:
                for attack in REFERENCE_ATTACKS:
                    for opponent_id, opponent_text in real:
                        add(context_id, source, aspect, attack, True, attack, CONSTANT_ATTACKS[attack], opponent_id, opponent_text)
            continue
        for aspect in aspects:
            for attack, attack_text in CONSTANT_ATTACKS.items():
                for protected in (True, False) if attack in UNPROTECTED_ATTACKS else (True,):
                    for opponent_id, opponent_text in real:
                        add(context_id, source, aspect, attack, protected, attack, attack_text, opponent_id, opponent_text)
            for opponent_id, opponent_text in real:
                add(context_id, source, aspect, "padded", True, f"padded:{opponent_id}", padded_text(opponent_text),
                    opponent_id, opponent_text)
    return requests, pd.DataFrame(rows, columns=GAMING_COLUMNS)


def run_gaming(judge: Judge, ds: JudgeDataset, *, aspects: Sequence[str] | None = None, style: str = "auto",
               with_reference: bool = False) -> pd.DataFrame:
    """P(A) of every attack comparison of every context of ``ds``, context by context."""
    style = prompt_style(judge.handle, style)
    frames = []
    for _, one in ds.per_context():
        requests, frame = gaming_requests(one, aspects=aspects, style=style, with_reference=with_reference)
        results = judge.label_probs(requests)
        frame["p_a"] = [float(r.probs[0]) for r in results]
        frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    out.insert(0, "model", judge.handle.name)
    out.insert(1, "dataset", ds.info.name)
    return out


@dataclass(frozen=True)
class GamingStudy:
    """The registry's ``gaming`` study: every attack against every real summary, both orders. With
    ``with_reference``, the ``gaming_reference`` study: the :data:`REFERENCE_ATTACKS` judged with the
    reference summary in the prompt (the reference-based defense)."""

    name: str = "gaming"
    description: str = "attacks (null model, self-praise, imitated answer, forged chat turns, padding) against every real summary"
    operations: tuple[str, ...] = ("label_probs",)
    depends_on: tuple[str, ...] = ()
    with_reference: bool = False

    def checks(self, handle: ModelHandle, ds: JudgeDataset, options: StudyOptions) -> list[Check]:
        style = prompt_style(handle)

        def build(one: JudgeDataset) -> list[ClassifyRequest]:
            return gaming_requests(one, aspects=options.aspects, style=style, with_reference=self.with_reference)[0]

        return [("label_probs", build)]

    def run_context(self, judge: Judge, ds: JudgeDataset, options: StudyOptions) -> pd.DataFrame:
        return run_gaming(judge, ds, aspects=options.aspects, with_reference=self.with_reference)


STUDY = GamingStudy()
REFERENCE_STUDY = GamingStudy(
    name="gaming_reference",
    description="the null model and self-praise against every real summary, with the reference summary in the prompt",
    with_reference=True,
)
