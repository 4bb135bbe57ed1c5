"""The page for teachers and the exercises it assigns: every chapter in a lesson, every exercise solved."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from nlgjudge import teaching
from nlgjudge.chapters import CHAPTERS

ROOT = Path(__file__).resolve().parents[1]


def test_every_chapter_belongs_to_exactly_one_lesson() -> None:
    taught = [c for lesson in teaching.LESSONS for c in lesson.chapters]
    assert sorted(set(taught)) == sorted({c.name for c in CHAPTERS} | {"register"})
    assert len(taught) == len(set(taught)), "a chapter is in two lessons"


def test_every_page_of_the_book_has_its_place_in_the_course() -> None:
    """A page in the table of contents is in a lesson or named among the pages outside them."""
    toc = re.findall(r"file: book/(\w+)", (ROOT / "_toc.yml").read_text(encoding="utf-8"))
    taught = {c for lesson in teaching.LESSONS for c in lesson.chapters}
    outside = teaching.page_markdown(ROOT).split("**Pages outside the lessons**", 1)[1]
    placed = taught | set(re.findall(r"\{doc\}`(\w+)`", outside)) | {"teachers"}
    assert set(toc) <= placed, sorted(set(toc) - placed)


def test_the_teachers_page_is_current_and_in_the_book() -> None:
    page = (ROOT / "book" / "teachers.md").read_text(encoding="utf-8")
    assert page == teaching.page_markdown(ROOT), "run `make book` (it writes book/teachers.md)"
    assert "book/teachers" in (ROOT / "_toc.yml").read_text(encoding="utf-8")
    assert "**Bottom line.**" in page.split("**How to use it.**")[0]


@pytest.mark.parametrize("chapter", [c.name for c in CHAPTERS])
def test_every_exercise_has_a_folded_solution(chapter: str) -> None:
    notebook = json.loads((ROOT / "notebooks" / f"{chapter}.ipynb").read_text(encoding="utf-8"))
    text = "".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown")
    assert "## Exercises" in text, f"{chapter} has no exercises"
    items = re.split(r"(?m)^(?=\d+\. )", text.split("## Exercises", 1)[1])[1:]
    assert items, f"{chapter}'s exercises section lists no exercise"
    for item in items:
        assert ":::{admonition} Solution\n   :class: dropdown" in item, f"{chapter}: no folded solution in {item[:80]!r}"
    assert teaching.page_facts(ROOT, chapter)[2] == len(items)


def test_reading_time_counts_words_not_markup() -> None:
    assert teaching._markdown_words("The gap is {glue:text}`claim_gap` points, $\\rho = 0.5$.") == 6


@pytest.mark.parametrize("chapter", [c.name for c in CHAPTERS])
def test_the_teachers_rerun_time_is_the_one_the_chapter_states(chapter: str) -> None:
    from nlgjudge.released import glued_values

    notebook = json.loads((ROOT / "book" / f"{chapter}.ipynb").read_text(encoding="utf-8"))
    stated = glued_values(notebook).get("previous_build_time")
    assert stated and teaching.page_facts(ROOT, chapter)[1] == stated


def test_every_lesson_assigns_an_exercise_its_chapters_have() -> None:
    for lesson in teaching.LESSONS:
        chapter, number = lesson.exercise
        assert chapter in lesson.chapters and set(lesson.optional) <= set(lesson.chapters)
        assert 1 <= number <= teaching.page_facts(ROOT, chapter)[2], (lesson.title, chapter, number)


def test_reading_time_counts_the_tables_a_page_shows_but_not_folded_or_removed_ones() -> None:
    table = {"data": {"text/html": "<style>td {x: y}</style><table><tr><td>four words in cells</td></tr></table>"}}
    assert teaching._shown_words({"metadata": {"tags": ["hide-input"]}, "outputs": [table]}) == 4
    assert teaching._shown_words({"metadata": {"tags": ["hide-output"]}, "outputs": [table]}) == 0
    assert teaching._shown_words({"metadata": {"tags": ["remove-cell"]}, "outputs": [table]}) == 0


def test_the_cost_of_an_exercise_that_runs_a_model_is_read_from_the_committed_benchmark(tmp_path) -> None:
    said = teaching.model_run_paragraph(ROOT)
    assert "about 0.83 comparisons a second" in said and "about 20 minutes" in said  # 1000 / 0.835 s = 19.96 min
    bench = tmp_path / teaching.RUNTIME_BENCH
    bench.parent.mkdir(parents=True)
    bench.write_text("runtime  time s  comparisons/s\nllama.cpp in-process (GGUF)   100.0   2.000\n", encoding="utf-8")
    assert "about 2.00 comparisons a second, so a thousand comparisons take about 9 minutes" in teaching.model_run_paragraph(tmp_path)
    assert "under one comparison a second" in teaching.model_run_paragraph(tmp_path / "elsewhere")  # no benchmark: no number


def test_every_exercise_gives_a_command_or_says_it_reads_the_page() -> None:
    """The teachers' page says which assigned exercise reruns in class: every exercise of every built
    chapter either gives a command or opens with the reading mark, never neither (nor both)."""
    for path in sorted((ROOT / "book").glob("*.ipynb")):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        text = "\n".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown")
        if "## Exercises" not in text:
            continue
        count = len(re.findall(r"(?m)^\d+\. ", text.split("## Exercises", 1)[1]))
        for item in range(1, count + 1):
            teaching.exercise_reruns(ROOT, path.stem, item)  # raises when it says neither
    with pytest.raises(ValueError, match="has no exercise 99"):
        teaching.exercise_reruns(ROOT, "bias", 99)


def test_a_long_chapters_core_reading_time_counts_its_named_sections() -> None:
    """The lesson table's core time: the answer box and the sections READ_FIRST names, all found, and less
    than the whole page; none for a chapter without such a list."""
    for chapter in teaching.READ_FIRST:
        core = teaching.core_minutes(ROOT, chapter)
        assert core is not None, f"a section READ_FIRST names for {chapter} is not a heading of its page"
        assert 1 <= core < teaching.page_facts(ROOT, chapter)[0]
    assert teaching.core_minutes(ROOT, "worked") is None
