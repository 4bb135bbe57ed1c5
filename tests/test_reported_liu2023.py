"""The transcription of seed 003's Tables 4-6 (checkpoints and prompt prefixes/suffixes)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nlgjudge.config import REPO_ROOT
from nlgjudge.reported import check_table_against_text, list_tables, load_reported, reported_table, table_layout

PAPER = "liu2023"


@pytest.fixture(scope="module")
def paper_text() -> str:
    papers = Path(os.environ.get("NLGJUDGE_PAPERS_DIR") or REPO_ROOT.parent / "shared" / "papers")
    path = papers / table_layout(4, PAPER).source
    if not path.is_file():
        if os.environ.get("CI") == "true":
            pytest.fail(f"paper text {path} is missing (set NLGJUDGE_PAPERS_DIR)")
        pytest.skip(f"paper text {path} not available; set NLGJUDGE_PAPERS_DIR")
    return path.read_text(encoding="utf-8")


def test_tables_4_to_6_are_transcribed() -> None:
    assert list_tables(PAPER) == [4, 5, 6]
    for table in (4, 5, 6):
        frame = load_reported(PAPER, table)
        assert len(frame) == 20
        assert frame["row"].is_unique


@pytest.mark.parametrize("table", [4, 5, 6])
def test_every_cell_matches_the_paper_text(table: int, paper_text: str) -> None:
    assert check_table_against_text(load_reported(PAPER, table), paper_text, table_layout(table, PAPER)) == []


@pytest.mark.parametrize("table", [4, 5, 6])
def test_a_wrong_prefix_is_reported(table: int, paper_text: str) -> None:
    frame = load_reported(PAPER, table)
    bad = frame.copy()
    k = bad.index[bad["row"] == "T5-Base"][0]
    bad.loc[k, "prefix"] = "Summarise:"
    problems = check_table_against_text(bad, paper_text, table_layout(table, PAPER))
    assert len(problems) == 1 and "Summarise:" in problems[0]


def test_printed_shape() -> None:
    t6 = reported_table(6, PAPER)
    assert list(t6.columns) == ["checkpoint", "suffix", "prefix"]
    assert t6.loc["BART-Large", "suffix"] == "in other words:"
    assert t6.loc["T5-Large", "prefix"] == "Paraphrase:"
