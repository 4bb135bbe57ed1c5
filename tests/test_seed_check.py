"""The check that a chapter's verdicts do not move with its resample seed (nlgjudge.seed_check)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from nlgjudge import seed_check
from nlgjudge.chapters import CHAPTERS
from nlgjudge.config import REPO_ROOT
from nlgjudge.register import register, seed_check_lines


def test_a_glued_value_is_read_as_its_verdict_words_without_its_numbers() -> None:
    assert seed_check.verdict_words("kappa = -0.12 [-0.195, -0.04], supported (a lead: rule changed after the data)") == "supported"
    assert seed_check.verdict_words("supported in 5 of 11 (7 before), not resolved in 6") == "supported / not resolved"
    assert seed_check.verdict_words("supported (a lead: declared after related data were shown) in 1 of 2 rows, not resolved in 1") == "supported / not resolved"
    assert seed_check.verdict_words("0.52 [0.37, 0.67]") == "no verdict word"
    # a rerun's mark of the released build's words is not this run's verdict
    assert seed_check.verdict_words("supported (a lead: rule changed after the data) (was: supported)") == "supported"
    assert seed_check.verdict_words("not resolved in 3 (was: supported, not resolved)") == "not resolved"


def test_the_committed_check_covers_every_verdict_of_every_resampling_chapter_and_none_moved() -> None:
    table = pd.read_csv(REPO_ROOT / seed_check.TABLE)
    reg = register()
    wanted = {(c.name, name) for c in CHAPTERS if "resample_seed" in c.defaults
              for spec in reg.of_chapter(c.name) for name in spec.verdict_glue}
    assert set(zip(table["chapter"], table["glued value"])) == wanted
    assert [c for c in table.columns if c.startswith("seed ")] == [f"seed {s}" for s in (0, *seed_check.SEEDS)]
    assert table["same"].astype(bool).all(), table[~table["same"].astype(bool)].to_string()
    # seed 0 is the released build as committed: a build whose verdict words changed since needs the check again
    for chapter, part in table.groupby("chapter"):
        released = seed_check.released_words(chapter, list(part["glued value"]))
        assert list(part["seed 0"]) == [released[name] for name in part["glued value"]], chapter


def test_the_plan_page_says_what_the_check_found(tmp_path: Path) -> None:
    (tmp_path / seed_check.TABLE).parent.mkdir(parents=True)
    rows = pd.DataFrame({"chapter": ["elo", "elo"], "claims": ["elo.kappa", "elo.tau_reversed"], "glued value": ["a", "b"],
                         "seed 0": ["supported", "not resolved"], "seed 1": ["supported", "not resolved"],
                         "seed 2": ["supported", "supported"], "same": [True, False]})
    rows.to_csv(tmp_path / seed_check.TABLE, index=False)
    titles = {c.name: c.title for c in CHAPTERS}
    said = " ".join(seed_check_lines(titles, tmp_path))
    assert "1 give other verdict words at some seed" in said and "Elo vs ROUGE, 1 of 2" in said
    rows.assign(same=True).to_csv(tmp_path / seed_check.TABLE, index=False)
    assert "every one gives the same verdict words at all 3 seeds" in " ".join(seed_check_lines(titles, tmp_path))
    assert seed_check_lines(titles, tmp_path / "nowhere") == []
