"""Parsers from sampled text to decisions and scores: realistic outputs, echoes, counting."""

from __future__ import annotations

import itertools

import pytest

from nlgjudge.prompts.parsers import ParseReport, fraction_first, parse_all, parse_comparative, parse_score
from nlgjudge.prompts.templates import (
    ASPECTS,
    DIALOGUE_RESPONSE,
    SUMMARY,
    Wording,
    comparative_question,
    scoring_question,
)

COMPARATIVE_CASES = [
    # plain answers
    ("Summary A", "A"),
    ("Summary B", "B"),
    ("summary b", "B"),
    ("A", "A"),
    ("B.", "B"),
    (" B\n", "B"),
    ("(B)", "B"),
    ("Option A", "A"),
    ("**Summary A**", "A"),
    ("Answer: B", "B"),
    ("The answer is Summary A.", "A"),
    ("I think Summary B", "B"),
    ("I prefer Summary B.", "B"),
    ("Summary A is the more coherent summary", "A"),
    ("The more coherent summary is Summary B", "B"),
    ("B\n\nSummary B is more coherent because it", "B"),
    # both labels, with a decisive phrase
    ("Summary A is more coherent than Summary B.", "A"),
    ("Summary B is better because Summary A contains errors", "B"),
    ("Summary A is less coherent than Summary B", "B"),
    ("Summary B is not as good; Summary A is better.", "A"),
    # echoes of the prompt's own wording
    ("Summary A or Summary B?", None),
    ("Which Summary is more coherent, Summary A or Summary B?", None),
    ("A or B", None),
    ("Summary A: The council approved the park", None),
    ("Summary A: The article ... Summary B: The report ...", None),
    # ties, refusals, contradictions, nothing
    ("Both summaries are equally coherent.", None),
    ("Neither", None),
    ("Summary A is better. Actually Summary B is better.", None),
    ("", None),
    ("   ", None),
    ("10", None),
    ("A good summary should be concise", None),  # the article "A" is no label
    ("It is a tough call", None),
    ("a", None),
]


@pytest.mark.parametrize(("text", "expected"), COMPARATIVE_CASES)
def test_parse_comparative(text: str, expected: str | None) -> None:
    assert parse_comparative(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [(" A", "A"), (" B is more coherent", "B"), (" A or Summary B?", None), (" A: The council", None), ("", None)],
)
def test_parse_comparative_after_the_answer_prefix(text: str, expected: str | None) -> None:
    assert parse_comparative(text, answer_prefix="Summary") == expected


def test_parse_comparative_with_response_noun() -> None:
    assert parse_comparative(" B", noun="response", answer_prefix="Response") == "B"
    assert parse_comparative("Response A is more engaging", noun="response") == "A"
    assert parse_comparative("Response A or Response B", noun="response") is None


@pytest.mark.parametrize(
    ("template", "aspect", "wording"),
    list(itertools.product((1, 2), ASPECTS, (SUMMARY, DIALOGUE_RESPONSE, Wording("response", "passage")))),
)
def test_the_prompt_question_itself_is_never_a_decision(template: int, aspect: str, wording: Wording) -> None:
    question = comparative_question(template, aspect, wording)
    assert parse_comparative(question, noun=wording.noun) is None
    assert parse_comparative(question, noun=wording.noun, answer_prefix=wording.Noun) is None


SCORE_CASES = [
    ("7", 7),
    ("10", 10),
    ("1.", 1),
    (" 8/10", 8),
    ("Score: 10/10", 10),
    ("8 out of 10", 8),
    ("Score: 6", 6),
    ("The score is 4.", 4),
    ("I would give it a 9.", 9),
    ("seven", 7),
    ("7.5", 7.5),
    ("\n\n5\n\n", 5),
    ("8. The summary covers 3 points", 8),
    ("The summary deserves 6", 6),
    ("7 7", 7),
    # echoes, ranges, several numbers
    ("between 1 and 10", None),
    ("Score the response between 1 and 10", None),
    ("1 to 10", None),
    ("7-8", None),
    ("7 or 8", None),
    ("I'd say 3 or maybe 4", None),
    ("4/5", None),  # another scale than the one asked for
    # out of range or no number
    ("0", None),
    ("11", None),
    ("100", None),
    ("-3", None),
    ("", None),
    ("The summary", None),
]


@pytest.mark.parametrize(("text", "expected"), SCORE_CASES)
def test_parse_score(text: str, expected: float | None) -> None:
    assert parse_score(text) == expected


def test_parse_score_on_another_range() -> None:
    assert parse_score("4", low=1, high=5) == 4
    assert parse_score("7", low=1, high=5) is None
    assert parse_score("3/5", low=1, high=5) == 3
    with pytest.raises(ValueError, match="empty score range"):
        parse_score("3", low=5, high=1)


@pytest.mark.parametrize(
    ("template", "aspect", "wording"),
    list(itertools.product((1, 2), ASPECTS, (SUMMARY, DIALOGUE_RESPONSE))),
)
def test_the_scoring_instruction_itself_is_never_a_score(template: int, aspect: str, wording: Wording) -> None:
    assert parse_score(scoring_question(template, aspect, wording)) is None


def test_non_text_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        parse_comparative(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        parse_score(7)  # type: ignore[arg-type]


def test_parse_all_counts_unparseable_outputs() -> None:
    samples = ["Summary A", "B", "Summary A or Summary B?", "A", "", "Both are fine"]
    results, report = parse_all(samples, parse_comparative)
    assert results == ["A", "B", None, "A", None, None]
    assert isinstance(report, ParseReport)
    assert (report.total, report.parsed, report.unparseable) == (6, 3, 3)
    assert report.counts == {"A": 2, "B": 1}
    assert report.unparseable_examples == ("Summary A or Summary B?", "", "Both are fine")
    assert report.fraction_unparseable == pytest.approx(0.5)
    assert "3/6 samples parsed, 3 unparseable (50.0%)" in str(report)


def test_parse_all_scores_and_examples_cap() -> None:
    results, report = parse_all(["7", "x", "y", "8/10", "z"], parse_score, max_examples=2)
    assert results == [7, None, None, 8, None]
    assert report.counts == {"7": 1, "8": 1}
    assert report.unparseable == 3 and report.unparseable_examples == ("x", "y")
    empty_results, empty = parse_all([], parse_score)
    assert empty_results == [] and empty.fraction_unparseable == 0.0


def test_fraction_first_ignores_unparsed_but_says_how_many_counted() -> None:
    assert fraction_first(["A", "B", None, "A"]) == (pytest.approx(2 / 3), 3)
    assert fraction_first([None, None]) == (None, 0)
