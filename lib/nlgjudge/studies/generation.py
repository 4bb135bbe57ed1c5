"""The narcissism chapter's generators (seed 003): every packaged model summarises every document.

Greedy decoding, one summary per (document, generator). Instruction-tuned models get a user turn
stating the dataset's length budget (:func:`nlgjudge.prompts.narcissism.chat_summary_prompt`);
base models get seed 003 Table 4's decoder-only prompt (``"<document> TL;DR:"``) and their
continuation is cut at its first line break (a base model goes on with whatever follows a summary).
Nothing is dropped: a generation that is empty after cleaning stays in the frame, flagged ``empty``,
and the chapter counts it.

Released as ``data/outputs/generation-<dataset>``; the likelihood study reads the summaries back
through the same requests (:func:`read_generations`), so what the evaluators score is exactly
what was released.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from nlgjudge.data import JudgeDataset
from nlgjudge.engine import GenerateRequest, Judge
from nlgjudge.models import ModelHandle
from nlgjudge.prompts.narcissism import (
    BASE_GENERATOR_ROW,
    chat_summary_prompt,
    family_prompt,
    generation_prompt,
    summary_budget,
)
from nlgjudge.studies.prompting import prompt_style
from nlgjudge.studies.registry import Check, StudyOptions

GENERATION_COLUMNS = [
    "generator", "dataset", "context_id", "style", "raw_text", "summary", "n_words", "empty", "from_cache",
]


def clean_generation(raw: str, style: str) -> str:
    """The summary in a raw generation: stripped; a base (``plain``) model's text up to its first line break."""
    text = raw.strip()
    if style == "plain":
        text = text.split("\n", 1)[0].strip()
    return text


def _documents(ds: JudgeDataset) -> pd.Series:
    """One source document per context, in the dataset's order."""
    firsts = ds.frame.groupby("context_id", sort=False)["source"].first()
    return firsts.loc[ds.context_ids()]


def generation_requests(ds: JudgeDataset, style: str, data_dir: str | None = None) -> list[GenerateRequest]:
    """One greedy summary request per document of ``ds``, worded for the generator's prompt ``style``."""
    budget = summary_budget(ds.info.name)
    requests = []
    for context_id, document in _documents(ds).items():
        meta = {"context_id": str(context_id), "dataset": ds.info.name, "budget": budget.kind}
        if style == "chat":
            prompt: str | list[dict[str, str]] = [{"role": "user", "content": chat_summary_prompt(str(document), budget)}]
        elif style == "plain":
            prompt = generation_prompt(str(document), family_prompt(BASE_GENERATOR_ROW, "generation", data_dir))
        else:
            raise ValueError(
                f"the generation study runs decoder-only models (prompt style 'chat' or 'plain'), got style {style!r}"
            )
        requests.append(GenerateRequest(prompt=prompt, max_new_tokens=budget.max_new_tokens, meta=meta))
    return requests


def _frame(generator: str, ds: JudgeDataset, style: str, texts: Sequence[str], from_cache: Sequence[bool]) -> pd.DataFrame:
    rows = []
    for context_id, raw, cached in zip(ds.context_ids(), texts, from_cache, strict=True):
        summary = clean_generation(raw, style)
        rows.append((generator, ds.info.name, context_id, style, raw, summary, len(summary.split()), summary == "", cached))
    return pd.DataFrame(rows, columns=GENERATION_COLUMNS)


def run_generation(judge: Judge, ds: JudgeDataset, *, style: str = "auto", data_dir: str | None = None) -> pd.DataFrame:
    """Generate (or read from the cache) the judge's model's summary of every document of ``ds``."""
    style = prompt_style(judge.handle, style)
    results = judge.generate(generation_requests(ds, style, data_dir))
    return _frame(judge.handle.name, ds, style, [r.text for r in results], [r.from_cache for r in results])


def read_generations(
    generators: Sequence[str], ds: JudgeDataset, *, cache: object, backend: str | None = None, data_dir: str | None = None
) -> pd.DataFrame:
    """The released summaries of ``generators`` on ``ds``, read from ``cache`` without loading a model.

    Every (generator, document) must be cached; otherwise a clear error says how many are missing
    and how to compute them (nothing is generated here, nothing silently left out).
    """
    from nlgjudge.studies.registry import released_folder

    frames = []
    for generator in generators:
        judge = Judge(generator, cache=cache, study=released_folder("generation", ds.info.name), backend=backend)
        style = prompt_style(judge.handle)
        requests = generation_requests(ds, style, data_dir)
        cached = judge.cached_mask("generate", requests)
        if not all(cached):
            missing = cached.count(False)
            raise LookupError(
                f"{missing} of {len(requests)} summaries of {judge.handle.name} on {ds.info.name} are not generated yet; "
                f"run: nlgjudge studies generation --dataset {ds.info.name} --model {generator}"
            )
        frames.append(run_generation(judge, ds, style=style, data_dir=data_dir))
    return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class GenerationStudy:
    """The registry's ``generation`` study: greedy summaries of every document (seed 003's generators)."""

    name: str = "generation"
    description: str = "greedy summaries of every document by the model (seed 003's generators)"
    operations: tuple[str, ...] = ("generate",)
    depends_on: tuple[str, ...] = ()
    #: Documents per engine call: their summaries are decoded together as parallel sequences, which
    #: on a CPU costs little more per step than one sequence (the weights are read once per step).
    contexts_per_call: int = 8

    def checks(self, handle: ModelHandle, ds: JudgeDataset, options: StudyOptions) -> list[Check]:
        style = prompt_style(handle)
        return [("generate", lambda one: generation_requests(one, style, options.data_dir))]

    def run_context(self, judge: Judge, ds: JudgeDataset, options: StudyOptions) -> pd.DataFrame:
        return run_generation(judge, ds, data_dir=options.data_dir)


STUDY = GenerationStudy()
