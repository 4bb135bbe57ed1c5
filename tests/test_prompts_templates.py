"""The first paper's comparative and scoring templates: exact wording, shared prefixes, endings."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest

from nlgjudge.prompts.templates import (
    ANSWER_SUFFIX,
    ASPECTS,
    DIALOGUE_RESPONSE,
    SCORE_SUFFIX,
    SUMMARY,
    PromptEnding,
    Wording,
    comparative_ending,
    comparative_prompt,
    comparative_question,
    comparative_segments,
    scoring_ending,
    scoring_prompt,
    scoring_segments,
)

ARTICLE = "The council approved the new park on Monday."
S1 = "Council approves park."
S2 = "A park was rejected."
TRIPLES = "Alan_Bean | nationality | United_States"
WEBNLG = Wording("response", "passage")


def test_comparative_prompt_1_summeval_exact() -> None:
    assert comparative_prompt(1, ARTICLE, S1, S2, "COH") == (
        "The council approved the new park on Monday.\n\n"
        "Summary A: Council approves park.\n\n"
        "Summary B: A park was rejected.\n\n"
        "Which Summary is more coherent, Summary A or Summary B?"
    )


def test_comparative_prompt_2_summeval_exact() -> None:
    assert comparative_prompt(2, ARTICLE, S1, S2, "CON") == (
        "Passage:\nThe council approved the new park on Monday.\n\n"
        "Summary A: Council approves park.\n\n"
        "Summary B: A park was rejected.\n\n"
        "Which Summary is more consistent relative to the passage, Summary A or Summary B?"
    )


def test_topicalchat_uses_response_and_dialogue() -> None:
    prompt = comparative_prompt(2, "A: hi\nB: hello", "nice", "ok", "ENG", DIALOGUE_RESPONSE)
    assert prompt == (
        "Dialogue:\nA: hi\nB: hello\n\nResponse A: nice\n\nResponse B: ok\n\n"
        "Which Response is more engaging relative to the dialogue, Response A or Response B?"
    )
    # "is more good a continuation" reads "is better a continuation", as in the authors' code
    assert comparative_question(1, "CNT", DIALOGUE_RESPONSE) == (
        "Which Response is better a continuation, Response A or Response B?"
    )
    assert comparative_question(1, "NAT", DIALOGUE_RESPONSE) == "Which Response is more natural, Response A or Response B?"


def test_webnlg_semantics_has_its_own_questions_and_no_context_label() -> None:
    assert comparative_prompt(1, TRIPLES, "x", "y", "SEM", WEBNLG) == (
        "Alan_Bean | nationality | United_States\n\nResponse A: x\n\nResponse B: y\n\n"
        "Which Response best aligns with the given semantic triples, Response A or Response B?"
    )
    assert comparative_prompt(2, TRIPLES, "x", "y", "SEM", WEBNLG).endswith(
        "Which Response captures the most information from the semantic triples, Response A or Response B?"
    )
    assert comparative_prompt(2, TRIPLES, "x", "y", "SEM", WEBNLG).startswith(TRIPLES)
    assert comparative_question(1, "GRA", WEBNLG) == (
        "Which Response is more grammatically correct, Response A or Response B?"
    )


def test_scoring_prompts_exact() -> None:
    assert scoring_prompt(1, ARTICLE, S1, "CON") == (
        "The council approved the new park on Monday.\n\nSummary: Council approves park.\n\n"
        "Provide a score between 1 and 10 that measures the summary's consistency"
    )
    assert scoring_prompt(2, ARTICLE, S1, "REL") == (
        "Passage: The council approved the new park on Monday.\n\nSummary: Council approves park.\n\n"
        "Score the response between 1 and 10 based on how relevant the summary is"
    )
    assert scoring_prompt(2, "A: hi", "ok", "NAT", DIALOGUE_RESPONSE) == (
        "Dialogue: A: hi\n\nResponse: ok\n\nScore the response between 1 and 10 based on how natural the response is"
    )
    assert scoring_prompt(1, TRIPLES, "x", "SEM", WEBNLG).endswith(
        "Provide a score between 1 and 10 that measures how well the response captures the information "
        "of the semantic triples"
    )


@pytest.mark.parametrize("template", [1, 2])
def test_prompts_of_one_context_share_their_beginning(template: int) -> None:
    candidates = [S1, S2, "Parks are nice.", "Monday was busy."]
    aspects = ["COH", "CON", "FLU", "REL"]
    segments = {
        (a, b, aspect): comparative_segments(template, ARTICLE, a, b, aspect)
        for a, b in itertools.permutations(candidates, 2)
        for aspect in aspects
    }
    contexts = {s.context for s in segments.values()}
    assert len(contexts) == 1
    context = contexts.pop()
    for (a, b, aspect), seg in segments.items():
        prompt = comparative_prompt(template, ARTICLE, a, b, aspect)
        assert prompt == seg.text
        assert prompt.startswith(context + seg.candidate_a + seg.candidate_b)
        assert seg.candidate_a == f"Summary A: {a}\n\n" and seg.candidate_b == f"Summary B: {b}\n\n"
    # Same first candidate: same context + A; all aspects of one pair: same context + A + B.
    for a in candidates:
        starts = {s.context + s.candidate_a for (x, _, _), s in segments.items() if x == a}
        assert len(starts) == 1
    for a, b in itertools.permutations(candidates, 2):
        prefixes = {s.context + s.candidate_a + s.candidate_b for (x, y, _), s in segments.items() if (x, y) == (a, b)}
        assert len(prefixes) == 1


def test_scoring_segments_share_the_context() -> None:
    segs = {(c, asp): scoring_segments(1, ARTICLE, c, asp) for c in (S1, S2) for asp in ("COH", "FLU")}
    assert len({s.context for s in segs.values()}) == 1
    for (c, asp), seg in segs.items():
        assert seg.candidate_b == ""
        assert seg.text == scoring_prompt(1, ARTICLE, c, asp)
        assert seg.candidate_a == f"Summary: {c}\n\n"


def test_every_aspect_has_wording_in_both_templates() -> None:
    for aspect, template in itertools.product(ASPECTS, (1, 2)):
        question = comparative_question(template, aspect, WEBNLG)
        assert question.endswith("Response A or Response B?")
        assert "None" not in question


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: comparative_prompt(3, ARTICLE, S1, S2, "COH"), "templates 1 and 2"),
        (lambda: comparative_prompt(1, ARTICLE, S1, S2, "XYZ"), "unknown aspect 'XYZ'"),
        (lambda: comparative_prompt(1, "  ", S1, S2, "COH"), "source is empty"),
        (lambda: scoring_prompt(1, "", S1, "COH"), "source is empty"),
        (lambda: Wording("summary ", "passage"), "Wording.noun"),
    ],
)
def test_bad_input_is_a_clear_error(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        call()


def test_wording_from_dataset_info() -> None:
    @dataclass
    class Info:
        noun: str
        source_kind: str

    assert Wording.for_dataset(Info("summary", "passage")) == SUMMARY
    assert Wording.for_dataset(Info("response", "dialogue")) == DIALOGUE_RESPONSE
    assert Wording.for_dataset(Info("response", "triples")) == WEBNLG


def test_comparative_ending_is_explicit() -> None:
    ending = comparative_ending(SUMMARY)
    assert ending.labels == (" A", " B") and ending.decisions == ("A", "B")
    assert ending.full_labels == ("Summary A", "Summary B")
    assert ending.prompt_text("P") == "P\nSummary"
    assert ending.chat_messages("P") == [
        {"role": "user", "content": "P"},
        {"role": "assistant", "content": "Summary"},
    ]
    llama = comparative_ending(DIALOGUE_RESPONSE, user_suffix=ANSWER_SUFFIX)
    assert llama.prompt_text("P") == "P\n\nAnswer: Response"
    assert llama.full_labels == ("Response A", "Response B")
    assert "Answer:" in llama.describe() and "' A'" in llama.describe()


def test_scoring_ending_labels_are_whole_numbers() -> None:
    ending = scoring_ending()
    assert ending.labels == tuple(str(i) for i in range(1, 11))
    assert ending.chat_messages("P") == [{"role": "user", "content": "P"}]
    llama = scoring_ending(user_suffix=SCORE_SUFFIX, space_before=True)
    assert llama.prompt_text("P") == "P\n\nScore:"
    assert llama.labels[-1] == " 10" and llama.decisions[-1] == "10"
    assert scoring_ending(low=1, high=5).labels == ("1", "2", "3", "4", "5")
    with pytest.raises(ValueError, match="empty score range"):
        scoring_ending(low=5, high=5)
    with pytest.raises(ValueError, match="labels must differ"):
        PromptEnding("x", labels=(" A", " A"))


def test_an_empty_candidate_is_judged_as_it_is() -> None:
    # WebNLG 2017 has empty system outputs that annotators rated; they stay in the comparisons.
    prompt = comparative_prompt(1, ARTICLE, S1, "", "COH")
    assert "Summary B: \n\nWhich Summary" in prompt
    assert scoring_prompt(1, ARTICLE, "", "COH").count("Summary: \n\n") == 1


def test_every_prompt_gives_the_papers_four_prompts() -> None:
    from nlgjudge.prompts import every_prompt

    prompts = every_prompt("The article.", "First.", "Second.", "COH")
    assert list(prompts) == ["comparative prompt 1", "comparative prompt 2", "scoring prompt 1", "scoring prompt 2"]
    assert prompts["comparative prompt 2"].startswith("Passage:\nThe article.\n\nSummary A: First.")
    assert prompts["scoring prompt 1"].endswith("measures the summary's coherency")
    assert "Second." not in prompts["scoring prompt 2"]
