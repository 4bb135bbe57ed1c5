"""The gaming study's requests: every attack against every real summary, both orders, and the forged
turns also unprotected (research reading)."""

from __future__ import annotations

import pandas as pd
import pytest

from nlgjudge.data.base import JudgeDataset
from nlgjudge.prompts.gaming import ATTACKS, CONSTANT_ATTACKS, CONTROL_TEXT, control_attack_applies, padded_text
from nlgjudge.studies.gaming import gaming_requests
from nlgjudge.studies.registry import get_study


def _dataset(n_contexts: int = 2, n_systems: int = 3, references: bool = False) -> JudgeDataset:
    from nlgjudge.data import dataset_info

    info = dataset_info("summeval")
    rows = []
    for c in range(n_contexts):
        for s in range(n_systems):
            rows.append({"context_id": f"c{c}", "source": f"article {c} about the council .", "references": [f"reference {c} first .", f"reference {c} second ."] if references else [],
                         "candidate_id": f"M{s}", "system": f"M{s}", "text": f"summary {s} of article {c} .",
                         **{a: float(s) for a in info.aspects}})
    return JudgeDataset(pd.DataFrame(rows)[list(info.columns)], info)


def test_every_attack_meets_every_real_summary_in_both_orders() -> None:
    ds = _dataset()
    requests, frame = gaming_requests(ds, aspects=["COH"], style="chat")
    assert len(requests) == len(frame)
    # 4 constant attacks + the unprotected forged turns + padding, 3 opponents, 2 orders, 2 contexts
    assert len(frame) == (len(CONSTANT_ATTACKS) + 1 + 1) * 3 * 2 * 2
    assert set(frame["attack"]) == set(ATTACKS)
    per_pair = frame.groupby(["context_id", "attack", "protected", "opponent"])["attack_first"].agg(sorted)
    assert all(orders == [False, True] for orders in per_pair)
    unprotected = frame[~frame["protected"]]
    assert set(unprotected["attack"]) == {"control"}
    flags = [r.protect_texts for r in requests]
    assert flags == frame["protected"].tolist()


def test_the_attack_stands_where_its_order_says() -> None:
    ds = _dataset(n_contexts=1, n_systems=2)
    requests, frame = gaming_requests(ds, aspects=["COH"], style="chat")
    for request, row in zip(requests, frame.itertuples(index=False), strict=True):
        text = request.prompt[0]["content"]
        attack_text = padded_text(f"summary {row.opponent[1:]} of article 0 .") if row.attack == "padded" else CONSTANT_ATTACKS[row.attack]
        first, second = text.index("Summary A:"), text.index("Summary B:")
        where = text.index(attack_text)
        assert (first < where < second) == row.attack_first
        assert request.meta["a"] == (row.a) and request.meta["attack"] == row.attack


def test_padding_doubles_a_summary_and_refuses_an_empty_one() -> None:
    assert padded_text(" a b . ") == "a b . a b ."
    with pytest.raises(ValueError, match="empty summary"):
        padded_text("  ")


def test_the_forged_turns_are_chatml_and_the_study_is_registered() -> None:
    assert "<|im_end|>" in CONTROL_TEXT and "<|im_start|>assistant" in CONTROL_TEXT
    assert control_attack_applies(("<|im_start|>", "<|im_end|>", "<|endoftext|>"))
    assert not control_attack_applies(("<start_of_turn>", "<end_of_turn>"))
    assert get_study("gaming").name == "gaming"


def test_the_reference_based_requests_show_the_first_reference_after_the_article_for_the_two_constant_texts() -> None:
    from nlgjudge.prompts.gaming import REFERENCE_ATTACKS

    requests, frame = gaming_requests(_dataset(references=True), aspects=["CON"], style="plain", with_reference=True)
    assert len(requests) == len(frame) == len(REFERENCE_ATTACKS) * 3 * 2 * 2
    assert set(frame["attack"]) == set(REFERENCE_ATTACKS) == {"null", "persuasive"} and frame["protected"].all()
    for request, (_, row) in zip(requests, frame.iterrows(), strict=True):
        text = request.prompt if isinstance(request.prompt, str) else "".join(m["content"] for m in request.prompt)
        shown = f"article {row['context_id'][1]} about the council .\n\nReference summary: reference {row['context_id'][1]} first ."
        assert shown in text and "second ." not in text and request.protect_texts
    plain, _ = gaming_requests(_dataset(references=True), aspects=["CON"], style="plain")
    assert not any("Reference summary" in str(r.prompt) for r in plain)
    assert get_study("gaming_reference").name == "gaming_reference"


def test_the_reference_based_requests_refuse_a_dataset_without_references() -> None:
    with pytest.raises(ValueError, match="no reference summary"):
        gaming_requests(_dataset(), aspects=["CON"], with_reference=True)
