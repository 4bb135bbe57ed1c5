"""SumLLM CNN/DM outputs (Liu et al., 2023, "On Learning to Summarize with Large Language Models as References").

100 CNN/DailyMail test articles, each summarized by five LLMs (Alpaca, ChatGPT, GPT-3
text-davinci-002/003, GPT-4) and seven BART/BRIO models (a BART baseline and BART/BRIO trained
with an LLM as teacher). There are no human scores: the frame has no aspect columns. Harang
(Elo vs ROUGE) ranks BART, BRIO and GPT-4 summaries of CNN/DM test articles against the
reference with ROUGE and LLM judges; this set supplies such outputs.

The files carry no references. The same articles form the RoSE protocol set, so each article is
joined to the ``rose_llm`` record with the same text (word-set Jaccard similarity >= 0.9; RoSE
drops the "(CNN)" prefix and some non-breaking spaces). One article (line 38) is not in RoSE and
gets no reference.

Local files: ``cnndm_llm_summaries_sumllm/test.source`` and ``outputs/{llm,system}/*.txt`` (one
item per line, line i of every file refers to article i). No online copy exists.
"""

from __future__ import annotations

import os
import re

import pandas as pd

from nlgjudge.data import rose
from nlgjudge.data.base import DataNotFoundError, DatasetInfo, DataValidationError, ExpectedShape, FrameBuilder
from nlgjudge.data.loading import DatasetDefinition, load_frame
from nlgjudge.data.sources import DatasetLocation, Located, LocalFiles, read_lines

N_ARTICLES = 100
SOURCE_FILE = "test.source"
LLM_SYSTEMS = ("alpaca", "chatgpt", "gpt3d2", "gpt3d3", "gpt4")
FINETUNED_SYSTEMS = ("bart", "bart.chatgpt", "bart.gpt3d3", "bart.gpt4", "brio.chatgpt", "brio.gpt3d3", "brio.gpt4")
#: System name -> file inside the folder.
SYSTEM_FILES = {name: f"outputs/llm/{name}.txt" for name in LLM_SYSTEMS} | {
    name: f"outputs/system/{name}.txt" for name in FINETUNED_SYSTEMS
}

#: Articles of test.source that have a RoSE reference (all but 0-based line 38).
EXPECTED_REFERENCE_MATCHES = 99
#: Word-set Jaccard similarity above which two article texts are the same article. Measured on
#: the mirror: same articles >= 0.997, different articles <= 0.27.
SAME_ARTICLE_JACCARD = 0.9

INFO = DatasetInfo(
    name="sumllm",
    title="SumLLM CNN/DM summaries by LLMs and BART/BRIO (no human scores)",
    aspects={},
    noun="summary",
    source_kind="passage",
    score_ranges={},
    has_references=True,
    citation=(
        "Liu, Shi, Benson, Yang, Li, Radev, Cohan (2023). On Learning to Summarize with Large "
        "Language Models as References. arXiv:2305.14239 (github.com/yixinL7/SumLLM)."
    ),
    notes=(
        "No human scores. The systems, as the data names them: the LLMs alpaca, chatgpt, gpt3d2, gpt3d3 and gpt4; "
        "bart (the BART baseline); and bart.X and brio.X (BART or BRIO trained with LLM X as teacher, not vanilla "
        "BRIO). Each article's reference is RoSE's, found by the article's text; one article, the 38th of the "
        "source file, has no match in RoSE and so no reference."
    ),
)

LOCATION = DatasetLocation(
    name=INFO.name,
    title=INFO.title,
    local=LocalFiles("cnndm_llm_summaries_sumllm", (SOURCE_FILE, *SYSTEM_FILES.values())),
    online=None,
    manual_source=(
        "github.com/yixinL7/SumLLM (cnndm/test.source, outputs/llm/*.txt, outputs/system/*.txt); "
        "see the mirror's cnndm_llm_summaries_sumllm/PROVENANCE.md"
    ),
)


def _words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[a-z0-9]+", text.lower()))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def match_references(articles: list[str], rose_frame: pd.DataFrame) -> list[tuple[str, str] | None]:
    """For each article, the (example_id, reference) of the RoSE record with the same text, or None."""
    first_rows = rose_frame.drop_duplicates("context_id")
    candidates = [
        (str(row.context_id), _words(str(row.source)), list(row.references))
        for row in first_rows.itertuples(index=False)
    ]
    matches: list[tuple[str, str] | None] = []
    for index, article in enumerate(articles):
        words = _words(article)
        # The files are (almost) in the same order: try the same position first.
        order = ([index] if index < len(candidates) else []) + list(range(len(candidates)))
        found = None
        for position in order:
            example_id, other, references = candidates[position]
            if _jaccard(words, other) >= SAME_ARTICLE_JACCARD:
                found = (example_id, references[0])
                break
        matches.append(found)
    return matches


def _rose_references(data_dir: str | os.PathLike[str] | None) -> pd.DataFrame:
    try:
        return load_frame(rose.LLM_DEFINITION, data_dir)
    except DataNotFoundError as error:
        raise DataNotFoundError(
            f"dataset 'sumllm' takes its references from dataset 'rose_llm', which was not found:\n{error}"
        ) from error


def parse(located: Located, data_dir: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """Tidy frame: one row per (article, system), references joined from RoSE."""
    assert located.paths is not None  # no online source
    source_path = located.paths[SOURCE_FILE]
    articles = read_lines(source_path)
    if len(articles) != N_ARTICLES:
        raise DataValidationError(f"{source_path}: expected {N_ARTICLES} articles (lines), found {len(articles)}")
    for number, article in enumerate(articles):
        if not article.strip():
            raise DataValidationError(f"{source_path}, line {number + 1}: empty article")
    outputs: dict[str, list[str]] = {}
    for system, relative in SYSTEM_FILES.items():
        path = located.paths[relative]
        lines = read_lines(path)
        if len(lines) != N_ARTICLES:
            raise DataValidationError(
                f"{path}: expected {N_ARTICLES} summaries (one per line, aligned with {SOURCE_FILE}), found {len(lines)}"
            )
        outputs[system] = lines

    matches = match_references(articles, _rose_references(data_dir))
    matched_ids = [match[0] for match in matches if match is not None]
    if len(matched_ids) != EXPECTED_REFERENCE_MATCHES or len(set(matched_ids)) != len(matched_ids):
        unmatched = [i for i, match in enumerate(matches) if match is None]
        raise DataValidationError(
            f"{source_path}: expected {EXPECTED_REFERENCE_MATCHES} articles to match a distinct RoSE "
            f"(rose_llm) article, matched {len(matched_ids)} ({len(set(matched_ids))} distinct); "
            f"unmatched lines (0-based): {unmatched[:10]}"
        )

    builder = FrameBuilder(INFO)
    for index, (article, match) in enumerate(zip(articles, matches, strict=True)):
        context_id, references = (match[0], [match[1]]) if match is not None else (f"line{index:03d}", [])
        for system, relative in SYSTEM_FILES.items():
            builder.add(
                context_id=context_id,
                source=article.strip(),
                references=references,
                candidate_id=system,
                system=system,
                text=outputs[system][index].strip(),
                scores={},
                origin=f"{located.paths[relative]}, line {index + 1} ({context_id})",
            )
    return builder.frame()


DEFINITION = DatasetDefinition(
    info=INFO,
    location=LOCATION,
    expected=ExpectedShape(n_contexts=N_ARTICLES, candidates_per_context=len(SYSTEM_FILES)),
    parse=parse,
    cacheable=False,  # reads rose_llm too; rose_llm itself is cached
)
