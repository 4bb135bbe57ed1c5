"""The narcissism chapter's generators: one greedy summary per document, worded per prompt style."""

from __future__ import annotations

import dataclasses

import pytest
from engine_utils import tiny_handle

from nlgjudge.cache import OutputCache
from nlgjudge.data import JudgeDataset
from nlgjudge.engine import Judge
from nlgjudge.prompts.narcissism import SUMMARY_BUDGETS, summary_budget
from nlgjudge.studies.generation import clean_generation, generation_requests, read_generations, run_generation
from nlgjudge.studies.registry import StudyOptions, get_study


def _as(ds: JudgeDataset, name: str) -> JudgeDataset:
    return JudgeDataset(ds.frame.copy(), dataclasses.replace(ds.info, name=name))


def test_requests_state_the_budget_for_chat_models_and_use_table_4_for_base_models(tiny_dataset) -> None:
    ds = _as(tiny_dataset(n_contexts=2, n_candidates=2), "qags_xsum")
    chat = generation_requests(ds, "chat")
    assert len(chat) == 2  # one per document, not per candidate
    assert chat[0].prompt == [
        {"role": "user", "content": "Summarize the following news article in one sentence.\n\nArticle: The cat sat on the mat 0 ."}
    ]
    assert chat[0].max_new_tokens == SUMMARY_BUDGETS["xsum"].max_new_tokens
    assert chat[1].meta == {"context_id": "ctx1", "dataset": "qags_xsum", "budget": "xsum"}
    plain = generation_requests(_as(ds, "qags_cnndm"), "plain")
    assert plain[0].prompt == "The cat sat on the mat 0 . TL;DR:"  # seed 003 Table 4, GPT-2 row
    assert plain[0].max_new_tokens == SUMMARY_BUDGETS["cnndm"].max_new_tokens
    with pytest.raises(ValueError, match="decoder-only"):
        generation_requests(ds, "seq2seq")


def test_a_dataset_without_a_budget_is_refused_by_name(tiny_dataset) -> None:
    with pytest.raises(KeyError, match="no summary length budget for dataset 'tiny'.*DATASET_BUDGETS"):
        generation_requests(tiny_dataset(), "chat")
    assert summary_budget("rose").kind == "cnndm"


def test_cleaning_keeps_the_first_line_of_a_base_model_only() -> None:
    assert clean_generation("  A storm hit.\nQ: next article", "plain") == "A storm hit."
    assert clean_generation("  A storm hit.\nIt rained.  ", "chat") == "A storm hit.\nIt rained."
    assert clean_generation("\n\n", "plain") == ""


def test_the_study_generates_once_and_reads_back_without_a_model(tiny_dataset, tmp_path) -> None:
    ds = _as(tiny_dataset(n_contexts=2, n_candidates=2), "qags_xsum")
    cache = OutputCache(tmp_path / "c.sqlite")
    judge = Judge(tiny_handle("qwen2"), cache=cache, study="generation-qags_xsum", progress=False)
    frame = run_generation(judge, ds)
    assert list(frame["context_id"]) == ["ctx0", "ctx1"] and not frame["from_cache"].any()
    assert (frame["n_words"] == frame["summary"].str.split().str.len()).all()
    assert (frame["empty"] == (frame["summary"] == "")).all()  # counted, never dropped
    study = get_study("generation")
    again = study.run_context(judge, ds.only("ctx1"), StudyOptions())
    assert again["from_cache"].all() and again["raw_text"].iloc[0] == frame["raw_text"].iloc[1]
    (operation, build), = study.checks(judge.handle, ds, StudyOptions())
    assert operation == "generate" and all(judge.cached_mask(operation, build(ds.only("ctx0"))))


def test_reading_summaries_that_were_never_generated_says_how_to_make_them(tiny_dataset, tmp_path) -> None:
    ds = _as(tiny_dataset(n_contexts=2, n_candidates=2), "qags_xsum")
    with pytest.raises(LookupError, match="2 of 2 summaries of smollm2-135m-instruct on qags_xsum.*nlgjudge studies generation"):
        read_generations(["smollm2-135m-instruct"], ds, cache=OutputCache(tmp_path / "c.sqlite"))
