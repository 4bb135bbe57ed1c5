"""The prompt of `nlgjudge rank`: the book's comparative prompt 1 by default, an adjective, or the user's file."""

from __future__ import annotations

from pathlib import Path

import pytest

from nlgjudge.prompts import SUMMARY, comparative_prompt
from nlgjudge.prompts.ranking import PromptFileError, RankPrompt, prompt_from_file


def test_the_default_is_the_elo_chapters_prompt() -> None:
    prompt = RankPrompt()
    assert prompt.text("Article.", "one", "two") == comparative_prompt(1, "Article.", "one", "two", "OVR", SUMMARY)
    assert prompt.question == "Which Summary is better, Summary A or Summary B?"
    assert prompt.ending.answer_prefix == "Summary" and prompt.ending.labels == (" A", " B")


def test_abbreviations_adjectives_and_nouns() -> None:
    assert RankPrompt(aspect="COH").question == "Which Summary is more coherent, Summary A or Summary B?"
    concise = RankPrompt(aspect="concise", noun="response")
    assert concise.question == "Which Response is more concise, Response A or Response B?"
    assert concise.text("Q?", "a", "b") == "Q?\n\nResponse A: a\n\nResponse B: b\n\n" + concise.question
    with pytest.raises(ValueError, match="aspect must be"):
        RankPrompt(aspect="two\nlines")
    with pytest.raises(ValueError, match="noun"):
        RankPrompt(noun=" ")


def test_the_reference_follows_the_context() -> None:
    prompt = RankPrompt(with_reference=True)
    assert prompt.text("Article.", "a", "b", "Gold.").startswith("Article.\n\nReference summary: Gold.\n\nSummary A: a")
    with pytest.raises(ValueError, match="reference="):
        prompt.text("Article.", "a", "b")


def test_a_prompt_file_with_its_fields(tmp_path: Path) -> None:
    path = tmp_path / "p.txt"
    path.write_text("Text: {source}\nSummary A: {output_a}\nSummary B: {output_b}\nWhich is {{better}}?\n")
    prompt = prompt_from_file(path)
    assert prompt.text("S", "x", "y") == "Text: S\nSummary A: x\nSummary B: y\nWhich is {better}?"
    assert "p.txt" in prompt.describe()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{output_a} only", r"must contain \{output_b\}"),
        ("{output_a} {output_b} {score}", r"unknown field \{score\}"),
        ("{output_a} {output_b} {", "literal braces"),
        ("{output_a} {output_b} {reference}", "--with-reference"),
        ("  \n", "has no text"),
    ],
)
def test_bad_prompt_files_are_refused(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "p.txt"
    path.write_text(text)
    with pytest.raises(PromptFileError, match=message):
        prompt_from_file(path)


def test_a_missing_prompt_file(tmp_path: Path) -> None:
    with pytest.raises(PromptFileError, match="no such prompt file"):
        prompt_from_file(tmp_path / "none.txt")
