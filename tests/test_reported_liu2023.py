"""The transcription of seed 003 (data/reported/liu2023_*.csv) against the paper's text: Tables 1-3
(human-score distributions; Spearman and Kendall correlations with human scores) and Tables 4-6
(checkpoints and prompt prefixes/suffixes)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from nlgjudge.reported import (
    check_table_against_text,
    find_table_lines,
    list_tables,
    load_reported,
    reported_table,
    table_layout,
)

PAPER = "liu2023"
NUMERIC_TABLES = (1, 2, 3)
EVALUATORS = [
    "BART-Base", "BART-Large", "BART-Base-CNN", "BART-Large-CNN", "BART-Base-XSUM", "BART-Large-XSUM",
    "T5-Small", "T5-Base", "T5-Large", "T5-Small-CNN", "T5-Base-CNN", "T5-Small-XSUM", "T5-Large-XSUM",
    "GPT2", "GPT2-Medium", "GPT2-Large", "GPT3-Curie", "FLANT5-Base", "FLANT5-XL", "Cohere-Command",
]


@pytest.fixture(scope="module")
def paper_text(paper_text_of) -> str:
    return paper_text_of(table_layout(4, PAPER).source)


def test_tables_1_to_6_are_transcribed() -> None:
    assert list_tables(PAPER) == [1, 2, 3, 4, 5, 6]
    for table in (4, 5, 6):
        frame = load_reported(PAPER, table)
        assert len(frame) == 20
        assert frame["row"].is_unique
    # printed cells: 5 systems x 4 statistics; 20 evaluators x 2; 20 evaluators x 4 aspects x 2
    assert [len(load_reported(PAPER, t)) for t in NUMERIC_TABLES] == [20, 40, 160]


@pytest.mark.parametrize("table", [1, 2, 3, 4, 5, 6])
def test_every_cell_matches_the_paper_text(table: int, paper_text: str) -> None:
    assert check_table_against_text(load_reported(PAPER, table), paper_text, table_layout(table, PAPER)) == []


def test_every_printed_table_line_is_transcribed(paper_text: str) -> None:
    """Every tab-separated line of the text belongs to one of the transcribed tables."""
    in_tables = sum(len(find_table_lines(paper_text, table_layout(t, PAPER).caption_marker)) for t in list_tables(PAPER))
    assert in_tables == sum("\t" in line for line in paper_text.splitlines())


@pytest.mark.parametrize("table", [4, 5, 6])
def test_a_wrong_prefix_is_reported(table: int, paper_text: str) -> None:
    frame = load_reported(PAPER, table)
    bad = frame.copy()
    k = bad.index[bad["row"] == "T5-Base"][0]
    bad.loc[k, "prefix"] = "Summarise:"
    problems = check_table_against_text(bad, paper_text, table_layout(table, PAPER))
    assert len(problems) == 1 and "Summarise:" in problems[0]


def _corrupted(frame: pd.DataFrame, index: int, printed: str) -> pd.DataFrame:
    bad = frame.copy()
    bad.loc[index, "printed"] = printed
    return bad


@pytest.mark.parametrize("table", NUMERIC_TABLES)
@pytest.mark.parametrize("where", [0, 0.5, -1])
def test_a_single_wrong_value_is_reported(table: int, where: float, paper_text: str) -> None:
    frame = load_reported(PAPER, table)
    k = {0: 0, 0.5: len(frame) // 2, -1: len(frame) - 1}[where]
    original = frame.loc[k, "printed"]
    wrong = original[:-1] + str((int(original[-1]) + 1) % 10)
    problems = check_table_against_text(_corrupted(frame, k, wrong), paper_text, table_layout(table, PAPER))
    assert len(problems) == 1, problems
    assert original in problems[0] and wrong in problems[0] and f"table {table}" in problems[0]


def test_sign_and_trailing_zero_errors_are_reported(paper_text: str) -> None:
    frame = load_reported(PAPER, 3)
    negative = frame.index[frame["printed"] == "-0.028"][0]
    assert check_table_against_text(_corrupted(frame, negative, "0.028"), paper_text, table_layout(3, PAPER))
    t1 = load_reported(PAPER, 1)
    five = t1.index[t1["printed"] == "5.00"][0]
    assert check_table_against_text(_corrupted(t1, five, "5.0"), paper_text, table_layout(1, PAPER))


def test_swapped_spearman_and_kendall_are_reported(paper_text: str) -> None:
    frame = load_reported(PAPER, 2)
    swapped = frame.copy()
    swapped["column"] = swapped["column"].map({"Spearman": "Kendall", "Kendall": "Spearman"})
    # the header check sees the columns in the other order
    assert any("header" in p for p in check_table_against_text(swapped, paper_text, table_layout(2, PAPER)))


def test_a_missing_or_renamed_row_is_reported(paper_text: str) -> None:
    layout = table_layout(3, PAPER)
    frame = load_reported(PAPER, 3)
    missing = check_table_against_text(frame[frame["row"] != "Cohere-Command"].reset_index(drop=True), paper_text, layout)
    assert any("not transcribed" in p for p in missing)
    renamed = frame.copy()
    renamed.loc[renamed["row"] == "GPT2", "row"] = "GPT-2"
    assert len(check_table_against_text(renamed, paper_text, layout)) == 1
    aspects = frame.copy()
    aspects.loc[aspects["column_group"] == "Fluency", "column_group"] = "Fluent"
    assert any("header line 2" in p for p in check_table_against_text(aspects, paper_text, layout))


def test_title_and_label_header_are_checked(paper_text: str) -> None:
    frame = load_reported(PAPER, 2)
    layout = table_layout(2, PAPER)
    assert layout.title == "RoSE - Reference-based" and layout.label_header == "Evaluator"
    wrong_title = dataclasses.replace(layout, title="SummEval - Reference-free")
    assert any("title line" in p for p in check_table_against_text(frame, paper_text, wrong_title))
    wrong_label = dataclasses.replace(layout, label_header="Model")
    assert any("labels" in p for p in check_table_against_text(frame, paper_text, wrong_label))


def test_loader_shape_and_types() -> None:
    frame = pd.concat([load_reported(PAPER, t) for t in NUMERIC_TABLES], ignore_index=True)
    assert list(frame.columns) == [
        "paper", "table", "caption_short", "metric", "benchmark", "setting", "row_group", "row",
        "column_group", "column", "printed", "value", "note",
    ]
    assert frame["value"].dtype == np.float64 and not frame["value"].isna().any()
    assert np.allclose(frame["value"], frame["printed"].astype(float))
    assert not frame.duplicated(["table", "row_group", "row", "column_group", "column"]).any()
    assert set(frame["metric"]) == {"rose_acu", "summeval_expert_mean", "spearman", "kendall"}
    corr = frame[frame["table"] > 1]
    assert corr["value"].abs().le(1).all()
    assert set(zip(corr["table"], corr["benchmark"], corr["setting"])) == {
        (2, "RoSE", "reference_based"), (3, "SummEval", "reference_free"),
    }


def test_evaluators_are_those_of_tables_5_and_6() -> None:
    """Table 2 (reference-based) lists Table 6's evaluators, Table 3 (reference-free) Table 5's, same order."""
    for corr, config in ((2, 6), (3, 5)):
        rows = list(dict.fromkeys(load_reported(PAPER, corr)["row"]))
        assert rows == EVALUATORS == list(load_reported(PAPER, config)["row"])


def test_table1_statistics_are_coherent() -> None:
    t1 = reported_table(1, PAPER)
    assert list(t1.columns.get_level_values("column")) == ["Max", "Min", "Mean", "Median"]
    assert list(t1.index.get_level_values("row")) == [
        "RoSE-BART", "RoSE-GPT3", "SummEval-BART", "SummEval-T5", "SummEval-GPT2",
    ]
    t1.columns = t1.columns.get_level_values("column")
    assert (t1["Min"] <= t1["Mean"]).all() and (t1["Mean"] <= t1["Max"]).all()
    assert (t1["Min"] <= t1["Median"]).all() and (t1["Median"] <= t1["Max"]).all()
    rose = t1.index.get_level_values("row").str.startswith("RoSE")
    assert t1[rose].stack().between(0, 1).all()  # ACU is a fraction
    assert t1[~rose].stack().between(0, 5).all()  # SummEval's scale as the paper states it


def test_printed_shape() -> None:
    t6 = reported_table(6, PAPER)
    assert list(t6.columns) == ["checkpoint", "suffix", "prefix"]
    assert t6.loc["BART-Large", "suffix"] == "in other words:"
    assert t6.loc["T5-Large", "prefix"] == "Paraphrase:"
    t3 = reported_table(3, PAPER)
    assert t3.shape == (20, 8)
    assert list(dict.fromkeys(t3.columns.get_level_values("column_group"))) == [
        "Coherence", "Consistency", "Fluency", "Relevance",
    ]
    assert t3.loc[("", "FLANT5-XL"), ("Consistency", "Spearman")] == pytest.approx(0.550)
    assert reported_table(3, PAPER, printed=True).loc[("", "BART-Base"), ("Coherence", "Spearman")] == "-0.028"
    t2 = reported_table(2, PAPER)
    assert t2.shape == (20, 2)
    assert t2.loc[("", "BART-Base-CNN"), ("ACU", "Spearman")] == pytest.approx(0.488)


def test_strongest_evaluators_noted() -> None:
    """The captions' bold (lost in the text) is recorded in ``note`` on each column's largest value."""
    for table in (2, 3):
        frame = load_reported(PAPER, table)
        for _, part in frame.groupby(["column_group", "column"]):
            best = part.loc[part["value"].idxmax()]
            assert "largest" in best["note"], (table, best["row"], best["column_group"])
        assert frame["note"].str.contains("largest").sum() == (2 if table == 2 else 8)
