"""Every chapter's answer box opens with a plain bottom line, generated from its computed verdicts."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest

from nlgjudge.analysis import bottom_lines as lines
from nlgjudge.chapters import CHAPTERS
from nlgjudge.released import glued_values

ROOT = Path(__file__).resolve().parents[1]
VERDICTS = ["supported", "contradicted", "not resolved", "not tested"]
LONG_NAME = "/home/someone/models/my_fine_tuned (v2) judge [final] checkpoint"


def _all_lines() -> list[str]:
    """Each generator at the ends of its range: no rows, every verdict alone, all four mixed, long names."""
    out = [lines.datasets_line(0, 0, 0), lines.datasets_line(12, 1_234_567, 10)]
    for judge in ("Qwen2.5-Coder-1.5B-Instruct", LONG_NAME):
        out += [lines.worked_line(judge, 16, -0.02), lines.worked_line(judge, 2, float("nan")),
                lines.worked_line(judge, 16, -0.02, (0.291, 123))]
        for verdicts in ([], *([v] * 30 for v in VERDICTS), VERDICTS * 40):
            out += [lines.comparative_line(judge, verdicts), lines.bias_line(judge, 0.3, verdicts),
                    lines.bias_line(judge, float("nan"), verdicts), lines.runtime_line(judge, verdicts, 5.0), lines.runtime_line(judge, verdicts, 5.0, (1_000, 100_000)),
                    lines.subsets_line(judge, {"no_repeat_minus_random": verdicts, "debias_gain_small_budgets": verdicts,
                                               "debias_gain_tiny_budgets": verdicts})]
            out += [lines.bias_line(judge, 0.7, verdicts, (999, 999, 1998)),
                    lines.subsets_line(judge, {"no_repeat_minus_random": verdicts, "debias_gain_small_budgets": verdicts,
                                               "debias_gain_tiny_budgets": verdicts},
                                       {"no_repeat_minus_random": 1.0, "debias_gain_small_budgets": 2.5}),
                    lines.gaming_line(verdicts, verdicts, verdicts, [("self-praise", judge, 0.66)]),
                    lines.gaming_line(verdicts, verdicts, verdicts, [("forged chat turns", judge, 0.66)],
                                      untested_why="their judge was not shown to read the texts", tries="small-judge")]
        for a, b in itertools.product(VERDICTS + ["unknown"], repeat=2):
            out += [lines.elo_line(judge, 99, a, b), lines.narcissism_line(a, b),
                    lines.elo_line(judge, 99, a, b, kappa_below_zero=True, above_reference="12 of 13", above_point="13 of 13"),
                    lines.narcissism_line(a, b, a), lines.narcissism_line(a, b, a, excess_rows=(11, 12)), lines.rank_line(judge, LONG_NAME, "BART", 0, 6, a),
                    lines.rank_line(judge, LONG_NAME, "BART", 0, 6, a, picks_with_people=False),
                    lines.rank_line(judge, LONG_NAME, "BART", 0, 6, a, picks_with_people=True)]
    return out


def test_the_readings_added_for_readers_follow_their_inputs() -> None:
    # the bias line counts the sets leaning each way instead of a mean that hides the other way
    assert ("leans towards the candidate shown first in 15 of its 22 prompt-and-aspect settings, and towards the one shown second in 4"
            in lines.bias_line("J", 0.7, ["supported"], (15, 4, 22)))
    assert "shown second" not in lines.bias_line("J", 0.7, ["supported"], (15, 0, 22))
    # a fix no dataset resolves is said as such, not as "raised agreement in 0"
    assert "these data cannot tell on any of the 3 datasets" in lines.bias_line("J", 0.7, ["not resolved"] * 3, (15, 4, 22))
    # a finding supported only by less than its minimal effect says so; without the size it does not
    small = lines.subsets_line("J", {"no_repeat_minus_random": ["supported", "supported", "contradicted"]}, {"no_repeat_minus_random": 1.0})
    assert "asking pairs once or at random ranks alike" in small
    assert "alike" not in lines.subsets_line("J", {"no_repeat_minus_random": ["supported", "supported", "contradicted"]})
    # Elo: the side of chance and the count above the reference, only with a verdict that allows them
    said = lines.elo_line("J", 99, "supported", "supported", kappa_below_zero=True, above_reference="6 of 6")
    assert "if slightly less often" in said and "6 of 6 systems' summaries clearly above" in said
    assert "6 of 6" not in lines.elo_line("J", 99, "supported", "not resolved", above_reference="6 of 6")
    # the narcissism caveat comes with a claim that holds, and the gaming line names an open row above one half
    assert "Part of it is built in" in lines.narcissism_line("not resolved", "contradicted", "supported")
    assert "built in" not in lines.narcissism_line("not resolved", "contradicted", "not resolved")
    gaming = lines.gaming_line(["contradicted", "not resolved"], ["supported"], ["not resolved"], [("self-praise", "Q", 0.66)])
    assert "The self-praising text wins 66% under Q, too few articles to tell." in gaming
    # a try is one attack against one judge: "8 small judges' tries" read as eight judges
    assert "tries, each one attack against one small judge" in lines.gaming_line(["contradicted"], [], [], tries="small-judge")
    assert "in 0 of 8 tries on 2 small judges:" in lines.gaming_line(["contradicted"] * 8, [], [], tries="small-judge", judges=2)
    untested = lines.gaming_line(["not tested"] * 4 + ["contradicted"] * 3 + ["not resolved"], ["supported"], ["not resolved"],
                                 [("self-praise", "Qwen2.5-Coder-0.5B-Instruct", 0.66)], untested_why="their judge not shown to read the texts",
                                 tries="small-judge", judges=2)
    assert "4 untested, their judge not shown to read the texts" in untested and "The self-praising text wins 66%" in untested
    # Elo: by point estimate first, then how many clearly
    both = lines.elo_line("J", 99, "supported", "supported", above_reference="5 of 6", above_point="6 of 6")
    assert "It rates all 6 systems' summaries above the human reference by point estimate, 5 of them clearly." in both
    assert "each of them clearly" in lines.elo_line("J", 99, "supported", "supported", above_reference="4 of 6", above_point="4 of 6")
    # narcissism: an open claim about every evaluator says how many rows hold, never a bare "cannot tell"
    rows = lines.narcissism_line("not resolved", "contradicted", "supported", excess_rows=(10, 12))
    assert "The paper's measure, ignoring length, shows it clearly in 10 of 12 evaluator-dataset pairs." in rows and "built in" in rows
    assert "only" not in rows   # two measures, never set against each other
    assert "leaves it open on these data" in lines.narcissism_line("not resolved", "contradicted", "supported", excess_rows=(0, 12))


def test_every_bottom_line_is_plain_at_the_ends_of_its_range() -> None:
    for text in _all_lines():
        assert lines.words_shown(text) <= lines.MAX_WORDS, text  # counted with the box's "Bottom line." label
        assert not re.search(r"[()\[\]{}<>`_]", text), text


def test_bottom_lines_follow_the_verdicts_they_are_made_from() -> None:
    assert "in 2 of 3 benchmark aspects" in lines.comparative_line("J", ["supported", "supported", "not resolved"])
    assert "these data cannot tell in 1" in lines.comparative_line("J", ["supported", "supported", "not resolved"])
    assert "scoring was better in 3" in lines.comparative_line("J", ["contradicted"] * 3)
    assert "on average the second candidate" in lines.bias_line("J", 0.2, ["supported"])
    assert "on average the first candidate" in lines.bias_line("J", 0.8, ["supported"])
    assert "10 of 12 carry people's scores" in lines.datasets_line(12, 1_234_567, 10)
    # one article is said beside the judge's mean over the released articles: one draw is not its level
    assert "-0.02 to people's ranking; over 6 articles it averages +0.29." in lines.worked_line("J", 16, -0.02, (0.291, 6))
    assert "averages" not in lines.worked_line("J", 16, -0.02, (0.291, 1))
    assert "all of them carry" in lines.datasets_line(3, 10, 3)
    assert "no better than chance" in lines.elo_line("J", 99, "supported", "supported")
    assert "cannot tell" in lines.elo_line("J", 99, "not resolved", "supported")
    assert "At least one evaluator tested does not score its own summaries higher" in lines.narcissism_line("contradicted", "supported")
    said = lines.rank_line("J", "A", "B", 0, 6, "not tested")
    assert "settle only 0 of 6 neighbouring places; the order of the others stays open" in said and "ties" not in said
    # the judge's single picks against people's, said where the order itself cannot be tested against theirs
    assert said.endswith("Too few systems to test its agreement with people.")
    picks = lines.rank_line("J", "A", "B", 0, 6, "not tested", picks_with_people=False)
    assert picks.endswith("Its picks are not shown to match people's beyond chance.")
    assert "more often than chance" in lines.rank_line("J", "A", "B", 0, 6, "not tested", picks_with_people=True)
    assert lines.rank_line("J", "A", "B", 0, 6, "supported", picks_with_people=False).endswith("Its order agrees with people's.")
    # the runtimes are glossed for a student who knows neither program, where the line has room
    assert "two programs that run the same model" in lines.runtime_line("J", ["supported"] * 11, 5.0)
    assert lines.runtime_line("J", ["not resolved"] * 11, 5.0).startswith("These data cannot tell whether running J")
    assert "in all 11 benchmark aspects" in lines.runtime_line("J", ["supported"] * 11, 5.0)
    # an under-powered design is said as such: how few contexts the rows rest on
    few = lines.runtime_line("J", ["not resolved"] * 11, 5.0, (6, 10))
    assert few.endswith("6 to 10 contexts per dataset are too few in all 11 benchmark aspects.")
    assert "6 contexts per dataset" in lines.runtime_line("J", ["not resolved"] * 3, 5.0, (6, 6))
    assert "contexts per dataset" not in lines.runtime_line("J", ["supported"] * 11, 5.0, (6, 10))
    assert "in 2 of 3 benchmark aspects; it moves it more in 1" in lines.runtime_line("J", ["supported", "supported", "contradicted"], 5.0)
    subsets = lines.subsets_line("J", {"no_repeat_minus_random": ["not resolved"] * 3,
                                       "debias_gain_small_budgets": ["supported", "not resolved", "not resolved"]})
    assert "no dataset of 3 shows that asking each pair once beats random pairs" in subsets
    assert "Correcting for position helped on 1 of 3 datasets." in subsets
    # a finding against the paper is part of the bottom line: debiasing that hurts at the smallest budgets
    hurts = lines.subsets_line("J", {"no_repeat_minus_random": ["supported", "supported", "contradicted"],
                                     "debias_gain_small_budgets": ["supported", "not resolved", "not resolved"],
                                     "debias_gain_tiny_budgets": ["supported", "contradicted", "contradicted"]})
    assert "helped on 1 of 3 datasets and, at the smallest budgets, hurt on 2." in hurts
    assert lines.words_shown(hurts) <= lines.MAX_WORDS
    # the size qualifier, the paper's second finding where a dataset goes against it (by name) and the harm fit together
    three = lines.subsets_line("Qwen2.5-Coder-1.5B-Instruct", {"no_repeat_minus_random": ["supported", "supported", "contradicted"],
                                                              "debias_gain_small_budgets": ["supported", "not resolved", "not resolved"],
                                                              "debias_gain_tiny_budgets": ["supported", "contradicted", "contradicted"]},
                               {"no_repeat_minus_random": 1.0}, {"better": ["SummEval"], "worse": [], "n": 3})
    assert three.startswith("At equal cost, asking pairs once or at random ranks alike; on SummEval, half the pairs in both "
                            "orders ranked better, unlike the paper.")
    assert "hurt on 2" in three and lines.words_shown(three) <= lines.MAX_WORDS
    # where everything cannot fit, finding 2 gives way before the harm at the smallest budgets
    crowded = lines.subsets_line("J", {"no_repeat_minus_random": ["supported", "supported", "contradicted"],
                                       "debias_gain_small_budgets": ["supported"] * 3,
                                       "debias_gain_tiny_budgets": ["contradicted"] * 3},
                                 None, {"better": ["SummEval", "WebNLG"], "worse": ["TopicalChat"], "n": 3})
    assert "hurt on 3" in crowded and lines.words_shown(crowded) <= lines.MAX_WORDS
    assert "half the pairs" not in lines.subsets_line("J", {"no_repeat_minus_random": ["supported"]}, None,
                                                      {"better": [], "worse": [], "n": 3})


def test_a_line_that_is_not_plain_is_refused() -> None:
    with pytest.raises(ValueError, match="brackets or code names"):
        lines.plain("the gap (x100) is large")
    with pytest.raises(ValueError, match="brackets or code names"):
        lines.plain("read claim_n_supported")
    with pytest.raises(ValueError, match="at most 45 words"):
        lines.plain("word " * 46)


@pytest.mark.parametrize("chapter", [c.name for c in CHAPTERS])
def test_each_built_answer_box_opens_with_its_bottom_line(chapter: str) -> None:
    notebook = json.loads((ROOT / "book" / f"{chapter}.ipynb").read_text(encoding="utf-8"))
    box = "".join(notebook["cells"][0]["source"])
    opening = box.split(":class: tip\n", 1)[1].lstrip()
    assert opening.startswith("**Bottom line.** {glue:text}`bottom_line`"), f"{chapter}'s answer box opens with {opening[:60]!r}"
    assert box.index("**Bottom line.**") < box.index("**Question.**")
    line = glued_values(notebook)["bottom_line"]
    assert lines.plain(line) == line


def test_the_introduction_pastes_every_chapters_bottom_line_in_its_order() -> None:
    """The intro's "Results at a glance" pastes each chapter's glued line (never a typed copy), in the
    table of contents' order, so a chapter added or renamed without it fails here."""
    intro = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    section = intro.split("## Results at a glance", 1)[1].split("\n## ", 1)[0]
    pasted = re.findall(r"\{doc\}`(\w+)` \| \{glue:text\}`(\w+)\.ipynb::bottom_line:s`", section)
    assert all(doc == source for doc, source in pasted), pasted
    toc = re.findall(r"file: book/(\w+)", (ROOT / "_toc.yml").read_text(encoding="utf-8"))
    chapters = {c.name for c in CHAPTERS}
    assert [doc for doc, _ in pasted] == [name for name in toc if name in chapters]


def test_the_gaming_line_counts_each_claim_and_stays_plain() -> None:
    line = lines.gaming_line(["supported", "contradicted"] * 4, ["supported"] * 5 + ["not resolved"] * 3,
                             ["supported", "not resolved"], judges=2)
    assert line.startswith("One fixed text beats real summaries in 4 of 8 tries on 2 judges: 4 lose.")
    assert "in 5 of 8" in line and "for 1 of 2 judges; these data cannot tell in 1" in line
    assert lines.plain(line) == line
    # a judge that fails the screen is set aside in words, and the count is over the judge that reads the texts
    screened = lines.gaming_line(["not tested"] * 4 + ["contradicted"] * 3 + ["not resolved"], ["supported"], ["not resolved"],
                                 [("self-praise", "Q", 0.66)], untested_why="their judge not shown to read the texts",
                                 tries="small-judge", judges=2, screened_out=1)
    assert screened == ("Under the one small judge shown to read the texts, a fixed text beat real summaries in 0 of 4 tries: "
                        "it lost 3, and self-praise, winning 66%, stayed undecided; the other judge, not shown to read the "
                        "texts, could not be tested.")
    named = lines.gaming_line(["not tested"] * 4 + ["contradicted"] * 3 + ["not resolved"], ["supported"], ["not resolved"],
                              [("self-praise", "Q", 0.66)], judges=2, screened_out=1, read_names=["Qwen2.5-Coder-0.5B-Instruct"],
                              out_names=["SmolLM2-135M-Instruct"])
    assert named.startswith("Under Qwen2.5-Coder-0.5B-Instruct, a fixed text beat real summaries in 0 of 4 tries")
    assert named.endswith("; SmolLM2-135M-Instruct, not shown to read the texts, could not be tested.")
    # every win said under the judge it was won from
    each = lines.gaming_line(["not tested"] * 4 + ["contradicted"] * 3 + ["not resolved"] + ["supported"] * 2, ["supported"] * 4,
                             [], judges=3, screened_out=1, out_names=["SmolLM2-135M-Instruct"],
                             per_judge=[("Qwen2.5-Coder-1.5B-Instruct", [("irrelevant text", "contradicted"),
                                                                        ("self-praise", "supported"),
                                                                        ("imitated answer", "supported"),
                                                                        ("forged chat turns", "contradicted")]),
                                        ("Qwen2.5-Coder-0.5B-Instruct", [("irrelevant text", "contradicted"),
                                                                        ("self-praise", "not resolved"),
                                                                        ("imitated answer", "contradicted"),
                                                                        ("forged chat turns", "contradicted")])])
    assert each.startswith("Fixed texts beat real summaries under Qwen2.5-Coder-1.5B-Instruct in 2 of 4: self-praise and the "
                           "imitated answer; under Qwen2.5-Coder-0.5B-Instruct in 0 of 4, with self-praise undecided. "
                           "SmolLM2-135M-Instruct, not shown to read the texts, was not tested.")
    assert lines.plain(each) == each
    two = lines.gaming_line(["not tested"] * 8 + ["supported", "not resolved"] * 4, [], [], [("self-praise", LONG_NAME, 0.9)],
                            judges=4, screened_out=2)
    assert two.startswith("Under the 2 judges shown to read the texts, a fixed text beat real summaries in 4 of 8 tries")
    assert "the other 2 judges, not shown to read the texts, could not be tested" in two and lines.plain(two) == two
    crowded = lines.gaming_line(["supported", "contradicted", "not resolved", "not tested"] * 2, ["supported"] * 8, ["supported"] * 2)
    assert len(crowded.split()) <= lines.MAX_WORDS  # the least important sentence gives way


def test_the_elo_line_says_how_the_judges_picks_agree_with_people_within_its_words() -> None:
    args = ("J", 99, "supported", "supported")
    kwargs = {"kappa_below_zero": True, "above_reference": "5 of 6", "above_point": "6 of 6"}
    chance = lines.elo_line(*args, **kwargs, with_people=False)
    assert chance.endswith("Its picks are not shown to match people's beyond chance.") and lines.words_shown(chance) <= lines.MAX_WORDS
    assert lines.elo_line(*args, **kwargs, with_people=True).endswith("more often than chance.")
    assert "people" not in lines.elo_line(*args, **kwargs)
    # a kappa given as a number is said as one, beside chance's 0, with no test's words (no claim is registered on it)
    number = lines.elo_line(*args, **kwargs, with_people=0.034)
    assert number.endswith("Its picks match people's at kappa 0.03; chance is 0.") and "beyond" not in number
    assert lines.rank_line("J", "A", "B", 0, 6, "not tested", picks_with_people=-0.1).endswith("at kappa -0.10; chance is 0.")


def test_a_verdict_whose_rule_changed_after_the_data_is_said_as_such_in_the_bottom_line() -> None:
    said = lines.narcissism_line("supported", "not resolved", "supported", excess_rows=(10, 12), excess_lead=True)
    assert "The paper's measure, ignoring length, shows it by a rule chosen after the data." in said
    assert "Part of it is built in" in said  # the caveat still fits
    first = lines.narcissism_line("supported", "not resolved", "supported", excess_rows=(10, 12), excess_lead=True,
                                  excess_first="not resolved")
    assert ("The paper's measure, ignoring length, cannot tell by the rule declared first, and shows it only by a rule "
            "chosen after the data." in first)
    assert "for every evaluator" not in said.split("The paper's measure")[1]
    elo = lines.elo_line("J", 99, "supported", "supported", above_reference="5 of 6", kappa_lead=True, with_people=False)
    assert "about as often as chance, by a rule chosen after the data" in elo and "as the paper found" not in elo
    # below chance, the plan's first test (declared before the data) is said first, against the paper
    below = lines.elo_line("Qwen2.5-Coder-1.5B-Instruct", 99, "supported", "supported", kappa_below_zero=True,
                           above_reference="5 of 6", above_point="6 of 6", kappa_lead=True, with_people=0.03)
    assert ("agrees with ROUGE slightly less often than chance: unlike the paper by the test declared first, like it only "
            "by a band chosen after the data." in below)
    assert lines.words_shown(below) <= lines.MAX_WORDS
    assert "Its picks are not shown to match people's beyond chance." in elo
    # where the line is full, the picks against people's give way before the kappa's two readings
    assert "people" not in below and "5 of 6 systems' summaries clearly above" in below


def test_the_comparative_line_says_its_count_is_a_lead_when_the_claims_rule_changed_after_the_data() -> None:
    verdicts = ["supported"] * 5 + ["not resolved"] * 6
    assert "by a rule chosen after the data" in lines.comparative_line("J", verdicts, lead=True)
    assert "after the data" not in lines.comparative_line("J", verdicts)
