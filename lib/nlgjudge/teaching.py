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
    outcome: str  # what a student can do after it
    exercise: tuple[str, int]  # the exercise to assign: (chapter, its number)
    optional: tuple[str, ...] = ()  # chapters a shorter course can leave out


LESSONS = (
    Lesson("What a judge is measured against", ("datasets", "worked"),
           "contexts, candidates and aspects; rank correlation within a context; ties and ceilings",
           "Spearman's correlation; reading a box plot",
           "compute a judge's rank correlation with people on one context, and say why one context settles nothing",
           ("worked", 1)),
    Lesson("Comparing versus scoring", ("comparative",),
           "what declaring a claim before its data buys, and what this book could not do (its plan came after this "
           "chapter's first results, and some rules changed later still); "
           "paired intervals over contexts; a family and Holm's correction; a fresh sample",
           "the paired t interval; what a p-value is",
           "read a claims table (a paired interval and its verdict after Holm's correction), and find the verdicts that "
           "rest on a design choice, such as averaging two prompts",
           ("comparative", 2)),
    Lesson("Position bias and its fix", ("bias",),
           "a symmetric comparison set; one threshold that removes a lean",
           "lesson 2",
           "measure a judge's lean towards one position, and say what a threshold fitted per context removes that one "
           "pooled threshold cannot",
           ("bias", 2)),
    Lesson("Fewer comparisons at a fixed cost", ("subsets",),
           "comparing two designs at equal cost; Monte Carlo error of a simulation",
           "lesson 3",
           "compare two ways of choosing comparisons at the same cost, with an interval over contexts",
           ("subsets", 2), optional=("subsets",)),
    Lesson("Equivalence: does the machine matter?", ("runtime",),
           "a difference tested as a difference; two one-sided tests against a margin",
           "lesson 2",
           "test that two numbers are the same within a margin, and tell that apart from failing to find a difference",
           ("runtime", 3), optional=("runtime",)),
    Lesson("Ratings of systems", ("elo",),
           "Elo as stochastic gradient ascent; Bradley-Terry with a bootstrap over articles; Cohen's kappa",
           "logistic regression; the bootstrap",
           "measure two judges' agreement beyond chance, and read how much of it is position as one paired difference",
           ("elo", 3)),
    Lesson("Do evaluators favour themselves?", ("narcissism",),
           "likelihood-based evaluators; a claim about every evaluator; what one counterexample means",
           "lesson 2; log-likelihood of a text",
           "read an evaluator's self-bias against the other evaluators, and see it move when the panel of evaluators changes",
           ("narcissism", 2)),
    Lesson("Doing it yourself", ("rank", "register"),
           "ranking your own systems with intervals; writing a claim's plan before its data (the comparative chapter's rows as the model)",
           "lessons 2, 3 and 6",
           "rank their own systems with intervals, and write a claim's row of the analysis plan before its data",
           ("rank", 5)),
    Lesson("Can a system game the judge?", ("gaming",),
           "attacks as extra systems; a defense read as a paired difference; texts under judgment as data",
           "lessons 2, 3 and 8",
           "test an attack on a judge as an extra system, and read the warnings a ranking gives about it",
           ("gaming", 3)),
)

#: For the long chapters: the sections to read for the lesson, the rest to skim or leave for later.
READ_FIRST = {
    "comparative": ("the answer box, *SummEval (the paper's Table 1)*, *Does comparing beat scoring, model by model?* "
                    "and *The articles added for this claim*", "the prompts, TopicalChat, WebNLG and the sampled scores"),
    "bias": ("the answer box, *How biased are the judges?*, *The debiasing threshold and weight* and *Does debiasing "
             "raise the Spearman?*", "the two ways to fit the threshold and the pairwise accuracies"),
    "elo": ("the answer box, *The printed logistic runs away*, *Final ratings* and *Do the judges agree? Cohen's kappa*",
            "the ROUGE tables, the trajectories and the regression on ROUGE"),
    "narcissism": ("the answer box, *Who likes whose summaries?*, *Self-bias as a number* and *Beyond the paper*",
                   "the generators' summaries, the Table 1 check and the benchmarks people rated"),
    "subsets": ("the answer box, *Spearman against the number of comparisons* and *The paper's three findings*",
                "every dataset and aspect, self-consistency and Table 11"),
}

#: The analysis plan is read in class as an excerpt: the rows of this chapter (lesson 2's).
REGISTER_EXCERPT = "comparative"

def _title(page: str) -> str:
    """A page's title as the book shows it: a chapter's, or the register page's."""
    from nlgjudge.chapters import CHAPTERS
    from nlgjudge.register import PAGE_TITLE

    return next((c.title for c in CHAPTERS if c.name == page), PAGE_TITLE)


#: The words an exercise that reads the built page, with no command to rerun, opens with (the chapters' convention).
READING_EXERCISE = "*Reads this page, no rerun.*"


def exercise_reruns(root: Path, chapter: str, item: int) -> bool:
    """Whether exercise ``item`` of a built chapter gives a command to rerun (else it opens with
    :data:`READING_EXERCISE`; a :class:`ValueError` when it is missing or says neither)."""
    notebook = json.loads((root / "book" / f"{chapter}.ipynb").read_text(encoding="utf-8"))
    text = "\n".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown")
    body = text.split("## Exercises", 1)[1] if "## Exercises" in text else ""
    found = re.search(rf"(?ms)^{item}\. (.*?)(?=^\d+\. |\Z)", body)
    if found is None:
        raise ValueError(f"{chapter} has no exercise {item}: the teachers' page assigns it")
    question = found[1].split(":::", 1)[0]
    reruns = bool(re.search(r"make chapter|nlgjudge rank|python -m ", question))
    if reruns == question.startswith(READING_EXERCISE):
        raise ValueError(f"exercise {item} of {chapter} must either give a command or open with {READING_EXERCISE!r}")
    return reruns


def _markdown_words(text: str) -> int:
    text = re.sub(r"\{glue:text\}`[^`]*`", "N", text)  # a glued value reads as a word or two
    text = re.sub(r"\$[^$]*\$", "x", text)
    return len(re.findall(r"[A-Za-z0-9][\w'.-]*", text))


def _shown_words(cell: dict) -> int:
    """Words of what a code cell shows a reader (its tables and Markdown), not its code: a cell whose
    output is removed or folded shows nothing until opened."""
    tags = set(cell.get("metadata", {}).get("tags", []))
    if tags & {"remove-cell", "remove-output", "hide-output"}:
        return 0
    words = 0
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        for kind in ("text/markdown", "text/html"):
            text = data.get(kind)
            if text is None:
                continue
            text = "".join(text) if isinstance(text, list) else str(text)
            text = re.sub(r"(?s)<style.*?</style>|<[^>]+>", " ", text)
            words += _markdown_words(text)
            break
    return words


def page_facts(root: Path, chapter: str) -> tuple[int, str, int]:
    """(minutes to read, rerun time in words, exercises) of one built page: its prose and the tables it
    shows; the register is read as an excerpt, the rows of :data:`REGISTER_EXCERPT`."""
    from nlgjudge.released import glued_values, previous_build_time

    if chapter == "register":
        from nlgjudge.register import register

        rows = register().of_chapter(REGISTER_EXCERPT)
        words = sum(_markdown_words(" ".join(str(v) for v in vars(c).values())) for c in rows)
        return max(1, math.ceil(words / WORDS_PER_MINUTE)), "none: no code", 0
    notebook = json.loads((root / "book" / f"{chapter}.ipynb").read_text(encoding="utf-8"))
    markdown = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown"]
    words = sum(_markdown_words(m) for m in markdown) + sum(_shown_words(c) for c in notebook["cells"]
                                                            if c["cell_type"] == "code")
    exercises = 0
    for text in markdown:
        if "## Exercises" in text:
            exercises += len(re.findall(r"(?m)^\d+\. ", text.split("## Exercises", 1)[1]))
    # the rerun time the chapter's own page states (its glued value), so that the two pages never differ
    rerun = glued_values(notebook).get("previous_build_time") or previous_build_time(chapter, root)
    return max(1, math.ceil(words / WORDS_PER_MINUTE)), rerun, exercises


def core_minutes(root: Path, chapter: str) -> int | None:
    """Minutes to read a long chapter's core (:data:`READ_FIRST`): its opening cell (the answer box) and the
    sections named there in italics, each from its heading to the next heading of its level or above; None
    for a chapter without such a list, or when a named section is not found (the list must name real ones)."""
    if chapter not in READ_FIRST:
        return None
    notebook = json.loads((root / "book" / f"{chapter}.ipynb").read_text(encoding="utf-8"))
    cells = notebook["cells"]
    wanted = [name for name in re.findall(r"\*([^*]+)\*", READ_FIRST[chapter][0])]
    units: list[tuple[re.Match[str] | None, int]] = []  # (heading, words): a Markdown cell split at its headings
    for cell in cells[1:]:
        if cell["cell_type"] != "markdown":
            units.append((None, _shown_words(cell)))
            continue
        for block in re.split(r"(?m)^(?=#+ )", "".join(cell["source"])):
            units.append((re.match(r"(#+) (.+)", block), _markdown_words(block)))
    total, found = _markdown_words("".join(cells[0]["source"])), set()
    reading, level = False, 0
    for heading, count in units:
        if heading:
            depth, title = len(heading[1]), heading[2].strip()
            if reading and depth <= level:
                reading = False
            named = next((w for w in wanted if title.startswith(w)), None)  # a heading may go on after the name
            if named is not None:
                found.add(named)
                if not reading:
                    reading, level = True, depth
        if reading:
            total += count
    return max(1, math.ceil(total / WORDS_PER_MINUTE)) if found == set(wanted) else None


#: The benchmark of the runtimes on the book's machine (``make bench``'s served-judge comparison, committed).
RUNTIME_BENCH = Path("data/bench/vllm-cpu-server-qwen1.5b-2026-11-28.txt")


def main_judge_rate(root: Path) -> float | None:
    """The main judge's comparisons a second on the book's machine (llama.cpp in-process, the runtime the
    chapters use), from the committed benchmark; None without it."""
    path = root / RUNTIME_BENCH
    found = re.search(r"(?m)^llama\.cpp in-process \(GGUF\)\s+[\d.]+\s+([\d.]+)\s*$",
                      path.read_text(encoding="utf-8")) if path.is_file() else None
    return float(found[1]) if found else None


def model_run_paragraph(root: Path) -> str:
    """What an exercise that runs a model costs, from the committed benchmark of the main judge on the
    book's machine (:func:`main_judge_rate`): a thousand comparisons' time."""
    found = main_judge_rate(root)
    rate = f"about {found:.2f} comparisons a second, so a thousand comparisons take about " \
           f"{math.ceil(1000 / found / 60)} minutes" if found else "under one comparison a second"
    return ("**Exercises that run a model** (their commands say `-p released_only False`, or call `nlgjudge rank`): "
            f"on the book's 2-core machine the main judge made {rate} (the runtime benchmark of {{doc}}`gpu`); "
            "multiply by the comparisons an exercise makes (most say how many). Run them before class, or give them as "
            "homework. "
            "As a planning guide, not a measurement: allow a student about 15 minutes for an exercise that reruns a "
            "chapter and reads its answer, and about 30 for one that asks them to write something first (an input "
            "file, a plan row).")


def page_markdown(root: Path) -> str:
    from nlgjudge.prose import listing

    rows, outcomes = [], []
    total_read = 0
    for number, lesson in enumerate(LESSONS, start=1):
        facts = [page_facts(root, c) for c in lesson.chapters]
        total_read += sum(f[0] for f in facts)
        chapters = "; ".join(f"{{doc}}`{_title(c)} <{c}>`" for c in lesson.chapters)
        core = [core_minutes(root, c) for c in lesson.chapters]
        read = "; ".join(f"{f[0]} min" + (f" (core {k} min)" if k else "") for f, k in zip(facts, core, strict=True))
        rerun = "; ".join(f[1] for f in facts)
        assign = "; ".join(str(f[2]) if f[2] else "none" for f in facts)
        optional = ("" if not lesson.optional else " (optional: for a group that wants more statistics)"
                    if set(lesson.optional) == set(lesson.chapters)
                    else f" (optional: {listing([_title(c) for c in lesson.optional])})")
        rows.append(f"| {number}. {lesson.title} | {chapters}{optional} | {lesson.teaches} | {lesson.prerequisites} | {read} | {rerun} | {assign} |")
        where, item = lesson.exercise
        how = "a rerun in class" if exercise_reruns(root, where, item) else "a reading of the page, no rerun"
        outcomes.append(f"{number}. *{lesson.title}*: a student can {lesson.outcome}. Assign exercise {item} of "
                        f"{{doc}}`{_title(where)} <{where}>`, {how}.")
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
        "**How to use it.** Assign a lesson's chapters to read before class, and one of its exercises for class:",
        "each asks a question and folds its solution under it; most give the command that reruns the chapter,",
        "and those that read the built page open with *Reads this page, no rerun* (the list below says which). Reading",
        f"times count the prose and the tables a page shows at {WORDS_PER_MINUTE} words a minute (the analysis plan: the",
        "rows of the comparative chapter, an excerpt); rerun times are the chapters' last builds on the book's",
        "machine, with the released outputs (a rerun that runs a model takes longer: `make bench` gives your",
        "machine's rate). The last column counts each chapter's exercises. Every rerun also reads the public",
        "datasets' human scores: the datasets chapter's section *Getting the data* says where to get them.",
        ":::",
        "",
        "| lesson | chapters | what it teaches | before it | to read | to rerun | ex. |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        "**What each lesson teaches a student to do, and the exercise to assign** (each exercise's solution",
        "gives this build's numbers):",
        "",
        *outcomes,
        "",
        model_run_paragraph(root),
        "",
        "**Reading the long chapters in one lesson.** Read first, then skim or leave for later (the lesson table's",
        "*core* time is the first list's, with the answer box):",
        "",
        *[f"- {{doc}}`{_title(chapter)} <{chapter}>`: read {first}; skim {rest}." for chapter, (first, rest) in READ_FIRST.items()],
        "",
        "**Reading the analysis plan.** {doc}`The analysis plan <register>` runs to about 8,000 words: no one",
        "reads it whole for a lesson. Have students read its opening rules (the answer box and the kinds of",
        "claim, each with its test), then only the rows of the chapter being taught. The "
        f"{page_facts(root, 'register')[0]} min the lesson",
        "table gives it are for an excerpt, not the whole page: the comparative chapter's rows, the model",
        "lesson 8 uses; allow more for the opening rules and for another chapter's rows.",
        "",
        "**Before lesson 1**: a session to set up, with the README's two commands (one builds the book, one runs",
        "the tests) and the public data the datasets chapter's *Getting the data* names. Plan for:",
        "",
        "- **Data to download by hand.** A dataset with an online copy (SummEval, RoSE, the podcast summaries)",
        "  is read from it on a machine with internet. Four are \"by hand only\" in that section's table and must",
        "  be downloaded from the source it names, each into its folder of the data directory: TopicalChat with",
        "  USR's annotations (`topicalchat_usr/`), the WebNLG 2017 human evaluation (`webnlg2017_human_eval/`),",
        "  the QAGS files for CNN/DM and XSum (`qags_cnndm_xsum/`) and the SumLLM summaries",
        "  (`cnndm_llm_summaries_sumllm/`).",
        "- **Time.** On a fresh clone, `make book` created the virtual environment and built the book in about",
        "  2 minutes, when no chapter needed re-executing; a full re-execution of every chapter took about 22",
        "  minutes. `make install-backend` builds llama.cpp, the runtime that computes model outputs, in about",
        "  6 minutes on a 2-core machine; `make test` runs it first.",
        "- **Disk.** Measured with `du -sh` on the book's machine: 4.2G for the virtual environment (`.venv`,",
        "  with the packaged models and llama.cpp) and 14M for the data folder (every dataset but the podcast",
        "  summaries). `make test` also installs vLLM's CPU build in `.venv-vllm`, about 3.5 GB by the",
        "  Makefile's note.",
        "",
        "**Sharing the book.** The book's source (the notebooks, the `nlgjudge` library and its data: the",
        "released model outputs and the papers' numbers) is in the repository the book was built from, and",
        "each page's download button (top right) gives the page's notebook. An offline copy shared without",
        "its `_sources` folder loses those downloads, so share the whole built `_build/html` folder.",
        "",
        "**Prerequisites for the whole course**: Python enough to run `make` and read a table; the glossary",
        "defines every statistical term where a chapter first uses it. Every chapter opens with its answer in",
        "plain words, so a lesson can start from the answer and work back to the evidence.",
        "",
        "**Pages outside the lessons**: {doc}`gpu` is for a reader who wants the papers' scale, on a GPU or",
        "behind an inference server; it fits after the lesson on equivalence, which asks whether the runtime that computes a",
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
