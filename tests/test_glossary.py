"""book/glossary.md: one Sphinx glossary (an anchor per term, for {term} links), alphabetical, complete."""

from __future__ import annotations

import re

import pytest

from nlgjudge.config import REPO_ROOT

GLOSSARY = REPO_ROOT / "book" / "glossary.md"

# Terms the chapters use and link to (issue 47): the verdict words, the statistics and the jargon.
REQUIRED_TERMS = [
    "supported", "contradicted", "not resolved", "not tested", "verdict", "interval",
    "bootstrap standard error", "exact permutation test", "holm family", "holm's correction", "flag",
    "degenerate judge", "pooled correlation", "self-bias excess", "cohen's kappa",
    "length-controlled self-preference", "comparison probability", "kendall's tau", "spearman correlation", "summary-level spearman",
    "seed", "liusie, manakul and gales (2024)", "liu, moosavi and lin (2023)", "harang (2023)", "gguf", "de-quantise",
    "kv cache", "acu", "encounter", "landis and koch's scale", "elo", "bradley-terry",
]


def glossary_entries(text: str) -> list[tuple[list[str], str]]:
    """(terms, definition) per entry of the ```{glossary} block, in the page's order."""
    block = re.search(r"```\{glossary\}\n(.*?)\n```", text, re.S)
    assert block, "book/glossary.md has no {glossary} directive (terms would have no anchors)"
    entries: list[tuple[list[str], str]] = []
    terms: list[str] = []
    for line in block.group(1).splitlines():
        if line and not line[0].isspace():
            terms.append(line.strip())
        elif line.strip():
            if terms:
                entries.append((terms, ""))
                terms = []
            entries[-1] = (entries[-1][0], entries[-1][1] + " " + line.strip())
    assert not terms, f"terms without a definition: {terms}"
    return entries


@pytest.fixture(scope="module")
def entries() -> list[tuple[list[str], str]]:
    return glossary_entries(GLOSSARY.read_text(encoding="utf-8"))


def test_the_reader_can_find_each_required_term(entries) -> None:
    defined = {term.lower() for terms, _ in entries for term in terms}
    missing = [term for term in REQUIRED_TERMS if term not in defined]
    assert not missing, f"terms the chapters use but the glossary does not define: {missing}"


def test_entries_are_in_alphabetical_order_and_each_term_once(entries) -> None:
    first_terms = [terms[0].lower() for terms, _ in entries]
    assert first_terms == sorted(first_terms)
    every_term = [term.lower() for terms, _ in entries for term in terms]
    assert len(every_term) == len(set(every_term)), "a term defined twice would have two anchors"


def test_every_definition_is_a_sentence_or_more(entries) -> None:
    for terms, definition in entries:
        assert len(definition.split()) >= 8, f"{terms}: too short to define anything"


def definition_of(entries, term: str) -> str:
    return next(definition for terms, definition in entries if term in (t.lower() for t in terms))


def test_the_interval_entry_gives_one_method_per_kind_of_estimate(entries) -> None:
    interval = definition_of(entries, "interval")
    assert "Student t interval" in interval and "n - 1" in interval and "paired" in interval
    assert "t_{n-1}" in interval and "bootstrap standard error" in interval
    assert "exact permutation test" in interval and "no interval" in interval
    # the percentile bootstrap is named only to say why verdicts do not use it
    assert "percentile bootstrap" in interval and "is not used for verdicts" in interval


@pytest.mark.parametrize("term", ["pooled correlation", "self-bias excess"])
def test_recomputed_statistics_use_bootstrap_standard_errors(entries, term: str) -> None:
    definition = definition_of(entries, term)
    assert "t_{n-1}" in definition and "bootstrap standard errors" in definition
    assert "not a percentile bootstrap" in definition


def test_chapter_references_survive(entries) -> None:
    text = " ".join(definition for _, definition in entries)
    for chapter in ["comparative", "worked", "bias", "subsets", "elo", "rank", "narcissism", "runtime", "datasets"]:
        assert "{doc}`" + chapter + "`" in text, chapter


def test_a_parsed_block_of_two_terms_shares_one_definition() -> None:
    text = "```{glossary}\nA\nB\n  one definition of both terms in a short sentence here.\n\nC\n  another definition of a term in one sentence.\n```"
    assert glossary_entries(text) == [
        (["A", "B"], " one definition of both terms in a short sentence here."),
        (["C"], " another definition of a term in one sentence."),
    ]
