"""The page for teachers (``book/teachers.md``): which chapters fit which lesson, what a student needs
first, how long each takes to read and to rerun, and which exercises to assign.

The lessons are the book's course plan (authored once here); every time and count on the page is
computed from the built chapters: reading time from the words of each page (at
:data:`WORDS_PER_MINUTE`), rerun time from the chapter's last build (papermill's record), exercises
counted in its "Exercises" section. ``python -m nlgjudge.book build`` writes the page before the HTML.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

#: A careful reading pace for a methods text with tables and formulas.
WORDS_PER_MINUTE = 150


@dataclass(frozen=True)
class Lesson:
    title: str
    chapters: tuple[str, ...]
    teaches: str
    prerequisites: str


LESSONS = (
    Lesson("What a judge is measured against", ("datasets", "worked"),
           "contexts, candidates and aspects; rank correlation within a context; ties and ceilings",
           "Spearman's correlation; reading a box plot"),
    Lesson("Comparing versus scoring", ("comparative",),
           "a claim declared before its data; paired intervals over contexts; a family and Holm's correction; a fresh sample",
           "the paired t interval; what a p-value is"),
    Lesson("Position bias and its fix", ("bias", "subsets"),
           "a symmetric comparison set; one threshold that removes a lean; fewer comparisons at a fixed cost",
           "lesson 2"),
    Lesson("Equivalence: does the machine matter?", ("runtime",),
           "a difference tested as a difference; two one-sided tests against a margin",
           "lesson 2"),
    Lesson("Ratings of systems", ("elo",),
           "Elo as stochastic gradient ascent; Bradley-Terry with a bootstrap over articles; Cohen's kappa",
           "logistic regression; the bootstrap"),
    Lesson("Do evaluators favour themselves?", ("narcissism",),
           "likelihood-based evaluators; a claim about every evaluator; what one counterexample means",
           "lesson 2; log-likelihood of a text"),
    Lesson("Doing it yourself", ("rank", "register"),
           "ranking your own systems with intervals; reading an analysis plan before the data",
           "lessons 2, 3 and 5"),
    Lesson("Can a system game the judge?", ("gaming",),
           "attacks as extra systems; a defense read as a paired difference; texts under judgment as data",
           "lessons 2, 3 and 7"),
)

def _title(page: str) -> str:
    """A page's title as the book shows it: a chapter's, or the register page's."""
    from nlgjudge.chapters import CHAPTERS
    from nlgjudge.register import PAGE_TITLE

    return next((c.title for c in CHAPTERS if c.name == page), PAGE_TITLE)


def _markdown_words(text: str) -> int:
    text = re.sub(r"\{glue:text\}`[^`]*`", "N", text)  # a glued value reads as a word or two
    text = re.sub(r"\$[^$]*\$", "x", text)
    return len(re.findall(r"[A-Za-z0-9][\w'.-]*", text))


def page_facts(root: Path, chapter: str) -> tuple[int, str, int]:
    """(minutes to read, rerun time in words, exercises) of one built page; register is a Markdown page."""
    from nlgjudge.released import glued_values, previous_build_time

    if chapter == "register":
        text = (root / "book" / "register.md").read_text(encoding="utf-8")
        return max(1, math.ceil(_markdown_words(text) / WORDS_PER_MINUTE)), "none: no code", 0
    notebook = json.loads((root / "book" / f"{chapter}.ipynb").read_text(encoding="utf-8"))
    markdown = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown"]
    words = sum(_markdown_words(m) for m in markdown)
    exercises = 0
    for text in markdown:
        if "## Exercises" in text:
            exercises += len(re.findall(r"(?m)^\d+\. ", text.split("## Exercises", 1)[1]))
    # the rerun time the chapter's own page states (its glued value), so that the two pages never differ
    rerun = glued_values(notebook).get("previous_build_time") or previous_build_time(chapter, root)
    return max(1, math.ceil(words / WORDS_PER_MINUTE)), rerun, exercises


def page_markdown(root: Path) -> str:
    rows = []
    total_read = 0
    for number, lesson in enumerate(LESSONS, start=1):
        facts = [page_facts(root, c) for c in lesson.chapters]
        total_read += sum(f[0] for f in facts)
        chapters = "; ".join(f"{{doc}}`{_title(c)} <{c}>`" for c in lesson.chapters)
        read = "; ".join(f"{f[0]} min" for f in facts)
        rerun = "; ".join(f[1] for f in facts)
        assign = "; ".join(str(f[2]) if f[2] else "none" for f in facts)
        rows.append(f"| {number}. {lesson.title} | {chapters} | {lesson.teaches} | {lesson.prerequisites} | {read} | {rerun} | {assign} |")
    n_lessons = len(LESSONS)
    lines = [
        "# For teachers",
        "",
        ":::{admonition} The answer",
        ":class: tip",
        f"**Bottom line.** The book is a course of {n_lessons} lessons on judging generated text, about",
        f"{total_read} minutes of reading in all; every chapter reruns from the released outputs in the times",
        "below, and its exercises fold their solutions away until a student opens them.",
        "",
        "**How to use it.** Assign a lesson's chapters to read before class, and one of its exercises to rerun",
        "in class: each exercise gives the command, asks a question and folds its solution under it. Reading",
        f"times assume {WORDS_PER_MINUTE} words a minute; rerun times are the chapters' last builds on the book's",
        "machine, with the released outputs (a rerun that runs a model takes longer: `make bench` gives your",
        "machine's rate). The last column counts each chapter's exercises. Every rerun also reads the public",
        "datasets' human scores: the datasets chapter's section *Getting the data* says where to get them.",
        ":::",
        "",
        "| lesson | chapters | what it teaches | before it | to read | to rerun | ex. |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        "**Prerequisites for the whole course**: Python enough to run `make` and read a table; the glossary",
        "defines every statistical term where a chapter first uses it. Every chapter opens with its answer in",
        "plain words, so a lesson can start from the answer and work back to the evidence.",
        "",
        "**Pages outside the lessons**: {doc}`gpu` is for a reader who wants the papers' scale, on a GPU or",
        "behind an inference server; it fits after lesson 4, which asks whether the runtime that computes a",
        "chapter's numbers changes them, and it assigns nothing. The {doc}`glossary` and the {doc}`references`",
        "are for looking things up.",
        "",
    ]
    return "\n".join(lines)


def write_page(root: Path) -> bool:
    """Write ``book/teachers.md`` when it differs; True when it was written."""
    page = root / "book" / "teachers.md"
    text = page_markdown(root)
    if page.exists() and page.read_text(encoding="utf-8") == text:
        return False
    page.write_text(text, encoding="utf-8")
    return True
