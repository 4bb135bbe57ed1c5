"""The claims register: the book's analysis plan, and the only place a chapter's verdict rules come from."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nlgjudge import register as reg
from nlgjudge.chapters import CHAPTERS
from nlgjudge.released import glued_values

ROOT = Path(__file__).resolve().parents[1]
VERDICT_WORDS = re.compile(r"\b(not resolved|not tested|supported|contradicted)\b")


def test_every_chapter_either_registers_its_claims_or_says_it_draws_none() -> None:
    book = reg.register()
    chapters = {c.name for c in CHAPTERS}
    with_claims = {c.chapter for c in book.claims.values()}
    assert with_claims <= chapters, f"claims of unknown chapters: {with_claims - chapters}"
    assert chapters == with_claims | (set(book.no_claims) - set(reg.STATIC_PAGE_TITLES)), \
        f"chapters with no entry: {chapters - with_claims - set(book.no_claims)}"
    assert set(book.no_claims) <= chapters | set(reg.STATIC_PAGE_TITLES), "a page the book does not have draws no claim"
    for spec in book.claims.values():
        assert spec.family in book.families
        assert spec.minimal_effect > 0 and spec.effect_reason and spec.reported_how
        if spec.kind == "equivalence":
            assert spec.direction == "within" and spec.margin and spec.margin > 0


@pytest.mark.parametrize("chapter", [c.name for c in CHAPTERS])
def test_a_built_chapter_states_verdicts_only_for_registered_claims(chapter: str) -> None:
    """Every glued value that carries a verdict word belongs to a claim the register holds for this
    chapter, and every glued value the register names is glued by the built chapter."""
    notebook = json.loads((ROOT / "book" / f"{chapter}.ipynb").read_text(encoding="utf-8"))
    values = glued_values(notebook)
    registered = {name for spec in reg.register().of_chapter(chapter) for name in spec.verdict_glue}
    stating = {name for name, text in values.items() if VERDICT_WORDS.search(text)}
    unregistered = sorted(stating - registered)
    assert not unregistered, (f"{chapter} states a verdict in {unregistered}, which no claim of the register "
                              "holds: declare the claim in lib/nlgjudge/register.toml (verdict_glue)")
    stale = sorted(registered - set(values))
    assert not stale, f"the register names glued values {stale} that the built {chapter} chapter does not glue"


def test_each_claim_links_to_the_section_of_its_chapter_where_its_verdict_is_read() -> None:
    """The register names, for every claim, a heading its chapter has; the page links to that section's
    id (docutils' rule, as the built HTML gives it), and a claim naming a heading its chapter lacks fails."""
    for spec in reg.register().claims.values():
        notebook = json.loads((ROOT / "notebooks" / f"{spec.chapter}.ipynb").read_text(encoding="utf-8"))
        headings = {line.lstrip("#").strip() for cell in notebook["cells"] if cell["cell_type"] == "markdown"
                    for line in "".join(cell["source"]).splitlines() if re.match(r"#{2,4} ", line)}
        assert spec.section in headings, f"{spec.id}: its chapter has no section {spec.section!r}"
        assert f'href="{spec.chapter}.html#{reg.section_anchor(spec.section)}"' in reg.page_markdown({spec.chapter: spec.chapter})
    assert reg.section_anchor("5. Does the paper's claim hold under both runtimes?") == \
        "does-the-paper-s-claim-hold-under-both-runtimes"  # the id the built runtime page gives it


def test_the_register_page_is_current() -> None:
    page = ROOT / "book" / "register.md"
    titles = {c.name: c.title for c in CHAPTERS}
    assert page.read_text(encoding="utf-8") == reg.page_markdown(titles), "run `make book` (it writes book/register.md)"
    import html

    text = page.read_text(encoding="utf-8")
    for spec in reg.register().claims.values():
        assert html.escape(spec.words, quote=False) in text
    assert "book/register" in (ROOT / "_toc.yml").read_text(encoding="utf-8")


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "register.toml"
    path.write_text(body, encoding="utf-8")
    return path


_GOOD = """
[families]
none = "no correction"
[no_claims]
[[claim]]
id = "elo.x"
chapter = "elo"
paper = "p"
words = "w"
estimand = "e"
unit = "u"
kind = "directional"
test = "t"
direction = "above"
threshold = 0.0
minimal_effect = 1.0
effect_reason = "r"
family = "none"
comparator = "c"
min_units = 3
reported = "v"
reported_how = "none"
verdict_glue = ["g"]
section = "s"
"""


@pytest.mark.parametrize("change, message", [
    (('family = "none"', 'family = "nowhere"'), "not declared in [families]"),
    (('kind = "directional"', 'kind = "vague"'), "has kind 'vague'"),
    (('minimal_effect = 1.0', 'minimal_effect = 0.0'), "minimal_effect must be a positive number"),
    (('direction = "above"', 'direction = "within"'), "a margin goes with direction 'within'"),
    (('id = "elo.x"', 'id = "bias.x"'), "must start with its chapter's name"),
    (('verdict_glue = ["g"]', 'verdict_glue = []'), "names no glued value"),
    (('unit = "u"\n', ''), "lacks unit"),
    (('unit = "u"', 'unit = "u"\nspin = 1'), "unknown field(s) spin"),
])
def test_a_register_that_breaks_its_rules_is_refused_with_the_reason(tmp_path: Path, change, message) -> None:
    assert reg.load_register(_write(tmp_path, _GOOD)).claims["elo.x"].min_units == 3
    with pytest.raises(reg.RegisterError, match=re.escape(message)):
        reg.load_register(_write(tmp_path, _GOOD.replace(*change)))
    twice = _GOOD + _GOOD[_GOOD.index("[[claim]]"):]
    with pytest.raises(reg.RegisterError, match="declared twice"):
        reg.load_register(_write(tmp_path, twice))


def test_an_unregistered_claim_is_an_error() -> None:
    with pytest.raises(KeyError, match="not in the register"):
        reg.verdict("elo.nothing", 1.0, 0.5, 1.5, 10)


def test_the_chapters_take_their_rules_from_the_register(monkeypatch) -> None:
    """Change a claim's threshold in the register and the chapter's verdict follows: the chapter sets no rule."""
    from nlgjudge.analysis import elo, subsets

    assert elo.NEAR_ZERO_KAPPA == reg.claim("elo.kappa").margin
    assert elo.MIN_ARTICLES_FOR_A_CLAIM == reg.claim("elo.kappa").min_units
    band = subsets.STRATEGY_CLAIMS["no_repeat_minus_symmetric_equal_r"]
    spec = reg.claim("subsets.no_repeat_minus_symmetric_equal_r")
    assert (band.threshold, band.direction, band.margin) == (spec.threshold, spec.direction, spec.margin)

    book = reg.register()
    moved = dataclasses.replace(book.claims["bias.debiasing_gain"], threshold=100.0)
    monkeypatch.setattr(reg, "register", lambda: dataclasses.replace(book, claims={**book.claims, moved.id: moved}))
    from nlgjudge.analysis.bias import debiasing_claims

    gains = pd.DataFrame({"model": "m", "dataset": "d", "template": 1, "aspect": "COH",
                          "context_id": [f"c{i}" for i in range(8)], "gain": np.linspace(4.0, 6.0, 8)})
    row = debiasing_claims(gains).iloc[0]
    assert row["verdict"] == "contradicted" and row["reason"] == "interval below 100"


def test_contexts_needed_come_from_the_minimal_effect_not_the_observed_one() -> None:
    """Two runs with the same spread need the same number of contexts, whatever their observed gap."""
    spec = reg.claim("comparative.above_scoring")
    needed = reg.contexts_needed_for(spec.id, 20.0)
    from nlgjudge.stats.claims import contexts_needed

    assert needed == contexts_needed(spec.minimal_effect, 20.0)
    assert reg.contexts_needed_for(spec.id, 40.0) > needed  # a wider spread needs more
    assert reg.claim("elo.kappa").effect_target() == pytest.approx(0.2)
    assert reg.claim("elo.tau_reversed").effect_target() == pytest.approx(-0.5)  # "below": the effect lies under 0


def test_an_end_within_the_draws_monte_carlo_error_of_the_threshold_is_borderline_never_decided() -> None:
    claim_id = "subsets.no_repeat_minus_random"  # directional, above 0
    assert reg.verdict(claim_id, 0.5, 0.2, 0.8, 30).verdict == "supported"
    near = reg.verdict(claim_id, 0.5, 0.2, 0.8, 30, monte_carlo_se=0.1)  # 0.2 is within 3 x 0.1 of 0
    assert near.verdict == "not resolved" and "Monte Carlo error (3 x 0.1) of 0" in near.reason
    assert reg.verdict(claim_id, 0.5, 0.2, 0.8, 30, monte_carlo_se=0.06).verdict == "supported"  # 0.2 > 0.18
    with pytest.raises(ValueError, match="monte_carlo_se"):
        reg.verdict(claim_id, 0.5, 0.2, 0.8, 30, monte_carlo_se=float("nan"))


def test_the_register_table_stacks_labelled_fields_in_a_narrow_window() -> None:
    page = reg.page_markdown({"comparative": "Comparative"})
    cells = re.findall(r'<td data-label="([^"]+)">', page)
    assert cells and set(cells) == set(reg._REGISTER_COLUMNS)  # every cell names its column
    assert "<script" not in page.lower()
    css = (ROOT / "book" / "_ext" / "static" / "outputs.css").read_text()
    narrow = css[css.index("@media (max-width: 1099.98px)"):]
    assert "table.nlg-register thead" in narrow and "content: attr(data-label)" in narrow


def test_a_needed_cell_says_none_more_when_the_run_already_has_the_design_size() -> None:
    from nlgjudge.register import needed_cell

    assert needed_cell(3, 12) == ("design size met (3 would do; this run has 12): still open, but an effect as large as "
                                  "the smallest that matters would likely have been found, so any effect left is smaller")
    assert needed_cell(40, 12) == "40"
    assert needed_cell(40, 12, equivalence=True) == "40 for a value at the band's centre; more near an edge, none outside it"
    assert needed_cell(None, 12) == needed_cell(float("nan"), 12) == "out of reach"


def test_a_directional_verdict_smaller_than_the_smallest_effect_that_matters_says_so() -> None:
    spec = reg.claim("comparative.above_scoring")  # directional: above 0, the smallest effect 5 points
    small = spec.minimal_effect / 4
    said = reg.verdict(spec.id, spec.threshold + 2 * small, spec.threshold + small, spec.threshold + 3 * small, 30)
    assert said.verdict == "supported" and "smaller than the smallest effect that matters" in said.reason
    large = reg.verdict(spec.id, spec.threshold + 3 * spec.minimal_effect, spec.threshold + 2 * spec.minimal_effect,
                        spec.threshold + 4 * spec.minimal_effect, 30)
    assert large.verdict == "supported" and "smallest effect" not in large.reason


def test_the_judge_screen_is_declared_in_the_register_with_its_history() -> None:
    from nlgjudge.stats.degenerate import MIN_CONTEXTS

    screen = reg.register().screen
    assert screen["min_units"] == MIN_CONTEXTS  # the code's minimum is the plan's
    assert any("Verdicts it changed" in entry for entry in screen["history"])  # an amendment names what it moved
    page = reg.page_markdown({"narcissism": "Narcissistic evaluators"})
    assert "*Amended 2026-11-30, after the data were read:*" in page and "K / (2 (K - 1))" in page
    assert "Choices every chapter shares" in page and "eight teams" in page  # the WebNLG candidate set is declared


def test_an_open_row_whose_interval_excludes_the_effect_that_matters_says_so_and_needs_no_more_units() -> None:
    spec = reg.claim("comparative.above_scoring")  # directional: above 0, the smallest effect 5 points
    tight = reg.verdict(spec.id, 0.0, -1.0, 1.0, 8)
    assert tight.verdict == "not resolved" and "already excludes the smallest effect that matters" in tight.reason
    assert reg.units_needed_for(spec.id, -1.0, 1.0, 8) == 8  # design size met: needed_cell says any effect left is smaller
    assert "design size met" in reg.needed_cell(reg.units_needed_for(spec.id, -1.0, 1.0, 8), 8)
    wide = reg.verdict(spec.id, 0.0, -10.0, 10.0, 8)
    assert "already excludes" not in wide.reason and reg.units_needed_for(spec.id, -10.0, 10.0, 8) > 8


def test_a_chapter_says_which_of_its_claims_were_amended_after_their_data() -> None:
    plan = reg.register()
    late = [c for c in plan.claims.values() if c.amended_after_data]
    assert late and not plan.claims["gaming.reference"].amended_after_data  # declared late, but before its data
    chapter = late[0].chapter
    n_late = sum(c.amended_after_data for c in plan.of_chapter(chapter))
    note = reg.amended_note(chapter)
    assert f"the rule for {n_late} of this chapter's {len(plan.of_chapter(chapter))} claims" in note
    clean = dataclasses.replace(plan, claims={k: dataclasses.replace(c, history="") for k, c in plan.claims.items()},
                                screen={**plan.screen, "history": []})
    assert reg.amended_note(chapter, clean).endswith("marked in its row. No rule was changed later")
    undated = dataclasses.replace(clean, first_release={})
    assert reg.amended_note(chapter, undated) == "No rule of this chapter's claims was changed after its results were seen"
    assert "Amended after its data were read:" in reg.page_markdown({chapter: "T"}, plan)


def test_a_claim_amended_after_its_data_reads_as_a_lead_and_no_other() -> None:
    plan = reg.register()
    amended = [c for c in plan.claims.values() if c.amended_after_data]
    written = [c for c in plan.claims.values() if not c.amended_after_data and plan.written_after_data(c)]
    declared = [c for c in plan.claims.values() if not c.amended_after_data and not plan.written_after_data(c)]
    assert amended and written and declared
    assert all(reg.lead_words(c.id) == reg.LEAD_WORDS for c in amended)
    assert all(reg.lead_words(c.id) == reg.WRITTEN_LEAD_WORDS for c in written)
    assert all(reg.lead_words(c.id) == "" for c in declared)
    # a chapter released before the plan: every claim of it is a lead; the gaming chapter's, declared first, none
    assert {c.chapter for c in written + amended} >= {"comparative", "bias", "subsets", "elo", "narcissism", "rank", "runtime"}
    assert {c.chapter for c in declared} == {"gaming"} and all(c.after_data is False for c in declared)
    assert reg.lead_note("bias.debiasing_gain", "webnlg") == " (a lead: claim written and its candidate set chosen after the data)"
    # the Elo kappa's switch to two one-sided tests, made after its first verdict was seen, is on the record
    kappa = reg.claim("elo.kappa")
    assert kappa.amended_after_data and "from contradicted to supported" in kappa.history


def test_a_row_read_on_a_dataset_whose_candidates_were_chosen_after_the_data_is_a_lead() -> None:
    """WebNLG's candidate set is a shared choice declared after the data ([choices]): every verdict read on
    it carries the lead's words (checked here on a subsets cell; the comparative and bias tables add the same
    words), and the answer boxes' note on amendments names it; other datasets none."""
    from types import SimpleNamespace

    from nlgjudge.analysis.subsets import _dataset_cell

    assert reg.choice_lead_words("webnlg") == reg.CHOICE_LEAD_WORDS and reg.choice_lead_words("summeval") == ""
    row = dict(comparison="no_repeat_minus_random", estimate=0.4, low=0.2, high=0.6, verdict="supported", reason="", n=16)
    assert _dataset_cell(SimpleNamespace(**row, dataset="webnlg"), "supported").endswith(reg.CHOICE_LEAD_WORDS)
    assert reg.CHOICE_LEAD_WORDS not in _dataset_cell(SimpleNamespace(**row, dataset="summeval"), "supported")
    assert reg.amended_note("subsets", datasets=["summeval", "webnlg"]).endswith("WebNLG's candidate set, so its rows are leads too")
    assert "candidate set" not in reg.amended_note("subsets", datasets=["summeval"])


def test_the_plan_dates_every_chapter_that_holds_claims(tmp_path) -> None:
    """[plan.first_release] must date every chapter with a claim: a chapter left out would silently read as
    declared before its data."""
    text = reg.REGISTER_PATH.read_text(encoding="utf-8").replace('rank = "2026-11-24"\n', "")
    path = tmp_path / "register.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(reg.RegisterError, match="lacks the chapter"):
        reg.load_register(path)
    page = reg.page_markdown({"comparative": "Comparative", "gaming": "Gaming"}, reg.register())
    assert "after the first releases of one chapters" not in page and "Comparative on 2026-11-22" in page
