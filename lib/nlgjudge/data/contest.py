"""The Elo chapter's contest (seed 004): summarizers on the CNN/DM articles they all summarised.

Harang's contestants are BART, DistilBART, PEGASUS, BRIO, GPT-4 and the reference summary (his
"baseline"). All but DistilBART exist in the mirror, on the 99 CNN/DM test articles that RoSE's
protocol sets (``rose``, ``rose_llm``) and SumLLM (``sumllm``) share:

* ``BART``, ``PEGASUS``, ``BRIO`` from RoSE's protocol set (with people's ACU scores there);
* ``GPT-3`` (text-davinci-002) from RoSE-LLM (with ACU scores);
* ``GPT-4`` and ``ChatGPT`` from SumLLM (no human scores);
* ``reference``: the CNN/DM reference summary RoSE gives for the article (what ROUGE is computed
  against, and what RoSE's ACUs were written from).

One context per article; ``system`` is the contestant's name; no human-score columns (people's
ACU scores, for the contestants that have them, are read from ``rose``/``rose_llm`` by the chapter).
"""

from __future__ import annotations

import os

import pandas as pd

from nlgjudge.data import rose, sumllm
from nlgjudge.data.base import DataNotFoundError, DatasetInfo, DataValidationError, ExpectedShape, FrameBuilder
from nlgjudge.data.loading import DatasetDefinition, load_frame
from nlgjudge.data.sources import Located
from nlgjudge.reader_names import DATASET_NAMES

#: Contestant -> (dataset, system in that dataset); "reference" is the article's reference summary.
CONTESTANTS: dict[str, tuple[str, str]] = {
    "BART": ("rose", "bart"),
    "PEGASUS": ("rose", "pegasus"),
    "BRIO": ("rose", "brio"),
    "GPT-4": ("sumllm", "gpt4"),
    "ChatGPT": ("sumllm", "chatgpt"),
    "GPT-3": ("rose_llm", "gpt3"),
    "reference": ("rose", "reference"),
}
REFERENCE = "reference"
N_ARTICLES = 99  # the articles of SumLLM that RoSE's protocol sets annotate

INFO = DatasetInfo(
    name="cnndm_contest",
    title="CNN/DM contest: six summarizers and the reference on 99 articles (Harang 2023's set-up)",
    aspects={},
    noun="summary",
    source_kind="passage",
    score_ranges={},
    has_references=True,
    citation=(
        # the labels the references page gives these two of the book's four Liu 2023 papers
        "Outputs from RoSE (Liu et al., 2023b: BART, PEGASUS, BRIO, GPT-3 and the references) and "
        "SumLLM (Liu et al., 2023c: GPT-4, ChatGPT) on the CNN/DM test articles both cover."
    ),
    notes=(
        "Contestants, each with the set it comes from and its name there: "
        + ", ".join(f"{name} ({DATASET_NAMES.get(dataset, dataset)}: {system})" for name, (dataset, system) in CONTESTANTS.items())
        + ". The reference contestant's text is the reference itself, so a reference-based judge (ROUGE) cannot "
        "judge its encounters. No human scores here: people's ACU scores are read from the two RoSE sets."
    ),
)


def _frames(data_dir: str | os.PathLike[str] | None) -> dict[str, pd.DataFrame]:
    frames = {}
    for name, definition in (("rose", rose.DEFINITION), ("rose_llm", rose.LLM_DEFINITION), ("sumllm", sumllm.DEFINITION)):
        try:
            frames[name] = load_frame(definition, data_dir)
        except DataNotFoundError as error:
            raise DataNotFoundError(f"dataset 'cnndm_contest' is built from '{name}', which was not found:\n{error}") from error
    return frames


def parse(located: Located, data_dir: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """One row per (article, contestant) on the articles where every contestant has a summary."""
    frames = _frames(data_dir)
    texts: dict[str, pd.Series] = {}
    for name, (dataset, system) in CONTESTANTS.items():
        frame = frames[dataset]
        if system == REFERENCE:
            firsts = frame.drop_duplicates("context_id").set_index("context_id")
            texts[name] = firsts["references"].map(lambda refs: refs[0] if len(refs) else None).dropna()
        else:
            rows = frame[frame["system"] == system].set_index("context_id")["text"]
            if rows.empty:
                raise DataValidationError(f"dataset {dataset!r} has no system {system!r} (contestant {name})")
            texts[name] = rows
    articles = frames["rose"].drop_duplicates("context_id").set_index("context_id")
    common = [cid for cid in articles.index if all(cid in t.index for t in texts.values())]
    if len(common) != N_ARTICLES:
        raise DataValidationError(f"expected {N_ARTICLES} articles with every contestant, found {len(common)}")
    builder = FrameBuilder(INFO)
    for context_id in common:
        reference = str(texts[REFERENCE][context_id])
        for name, (dataset, system) in CONTESTANTS.items():
            builder.add(
                context_id=str(context_id),
                source=str(articles.loc[context_id, "source"]),
                references=[reference],
                candidate_id=name,
                system=name,
                text=str(texts[name][context_id]),
                scores={},
                origin=f"{dataset} {system} ({context_id})",
            )
    return builder.frame()


DEFINITION = DatasetDefinition(
    info=INFO,
    location=sumllm.LOCATION,  # present when the mirror is; rose is read through its own definition
    expected=ExpectedShape(n_contexts=N_ARTICLES, candidates_per_context=len(CONTESTANTS)),
    parse=parse,
    cacheable=False,  # joins three datasets (each cached on its own)
)


def human_scores(data_dir: str | os.PathLike[str] | None = None, aspect: str = "ACU") -> pd.DataFrame:
    """People's ``aspect`` score (RoSE's ACU by default) of every contestant on every contest article:
    columns context_id, system (the contestant), ``aspect``; NaN for contestants RoSE did not annotate
    (GPT-4, ChatGPT, and the reference, whose ACUs are the units it was split into)."""
    frames = _frames(data_dir)
    articles = parse(None, data_dir)[["context_id", "system"]]  # type: ignore[arg-type] - parse ignores located
    values = []
    for context_id, name in zip(articles["context_id"], articles["system"], strict=True):
        dataset, system = CONTESTANTS[name]
        frame = frames[dataset] if dataset in ("rose", "rose_llm") and system != REFERENCE else None
        if frame is None:
            values.append(float("nan"))
            continue
        row = frame[(frame["context_id"] == context_id) & (frame["system"] == system)]
        values.append(float(row[aspect].iloc[0]) if len(row) else float("nan"))
    return articles.assign(**{aspect: values}).reset_index(drop=True)
