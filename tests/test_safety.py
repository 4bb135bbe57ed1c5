"""User-given strings shown to people: Markdown, terminal and path forms (``nlgjudge.safety``)."""

from __future__ import annotations

from pathlib import Path

from nlgjudge.safety import markdown_text, shown_path, terminal_text


def test_markdown_text_keeps_a_script_tag_as_characters_on_one_line() -> None:
    shown = markdown_text("<script>alert(1)</script>\n| a |")
    assert "<" not in shown and "\n" not in shown and "&lt;script&gt;" in shown and "\\|" in shown


def test_terminal_text_shows_an_escape_sequence_and_keeps_newlines() -> None:
    assert terminal_text("red\x1b[31m\nline") == "red\\x1b[31m\nline"


def test_a_path_with_a_newline_is_quoted_and_a_plain_one_is_not() -> None:
    assert shown_path(Path("outputs\nrm -rf.jsonl")) == repr("outputs\nrm -rf.jsonl")
    assert shown_path("outputs/run 1.jsonl") == "outputs/run 1.jsonl"
    assert shown_path("bidi\u202etxt.jsonl") == repr("bidi\u202etxt.jsonl")
