"""The transcription of seed 000's Tables 1-11 (data/reported/liusie2024_*.csv) against the paper's text."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from nlgjudge.reported import (
    ReportedDataError,
    UnknownTableError,
    check_table_against_text,
    find_table_lines,
    list_tables,
    load_reported,
    reported_table,
    table_layout,
)

PAPER = "liusie2024"
SECOND_EXTRACTION = "001_7bdebfea858d7909.txt"  # the same paper, another text extraction


@pytest.fixture(scope="module")
def paper_text(paper_text_of) -> str:
    return paper_text_of(table_layout(1, PAPER).source)


def test_all_eleven_tables_are_transcribed() -> None:
    assert list_tables(PAPER) == list(range(1, 12))


@pytest.mark.parametrize("table", range(1, 12))
def test_every_value_matches_the_paper_text(table: int, paper_text: str) -> None:
    frame = load_reported(PAPER, table)
    assert check_table_against_text(frame, paper_text, table_layout(table, PAPER)) == []


def _corrupted(frame: pd.DataFrame, index: int, printed: str) -> pd.DataFrame:
    bad = frame.copy()
    bad.loc[index, "printed"] = printed
    return bad


@pytest.mark.parametrize("table", range(1, 12))
def test_a_single_wrong_value_is_reported(table: int, paper_text: str) -> None:
    frame = load_reported(PAPER, table)
    layout = table_layout(table, PAPER)
    # Corrupt the middle cell: change its last digit (or a dash into a number).
    k = len(frame) // 2
    original = frame.loc[k, "printed"]
    wrong = "1.0" if original == "-" else original[:-1] + str((int(original[-1]) + 1) % 10)
    problems = check_table_against_text(_corrupted(frame, k, wrong), paper_text, layout)
    assert len(problems) == 1, problems
    assert original in problems[0] and wrong in problems[0]
    assert f"table {table}" in problems[0]


def test_sign_and_dash_errors_are_reported(paper_text: str) -> None:
    frame = load_reported(PAPER, 1)
    minus_zero = frame.index[frame["printed"] == "-0.0"][0]
    assert check_table_against_text(_corrupted(frame, minus_zero, "0.0"), paper_text, table_layout(1, PAPER))
    frame3 = load_reported(PAPER, 3)
    dash = frame3.index[frame3["printed"] == "-"][0]
    assert check_table_against_text(_corrupted(frame3, dash, "0.0"), paper_text, table_layout(3, PAPER))


def test_missing_swapped_and_mislabelled_rows_are_reported(paper_text: str) -> None:
    layout = table_layout(6, PAPER)
    frame = load_reported(PAPER, 6)
    last_row = frame["row_group"].eq("Llama2-chat-13B") & frame["row"].eq("✓")
    missing = check_table_against_text(frame[~last_row].reset_index(drop=True), paper_text, layout)
    assert any("not transcribed" in p for p in missing)

    swapped = frame.copy()
    swapped["row"] = swapped["row"].map({"✗": "✓", "✓": "✗"})
    assert check_table_against_text(swapped, paper_text, layout)

    renamed = frame.copy()
    renamed.loc[renamed["row_group"] == "FlanT5-11B", "row_group"] = "FlanT5-3B-x"
    assert check_table_against_text(renamed, paper_text, layout)


def test_wrong_column_names_are_reported(paper_text: str) -> None:
    frame = load_reported(PAPER, 9)
    bad = frame.copy()
    bad.loc[bad["column"] == "CNT", "column"] = "CON"
    problems = check_table_against_text(bad, paper_text, table_layout(9, PAPER))
    assert any("header" in p for p in problems)


def test_paired_rows_of_table10_are_read_in_their_printed_order(paper_text: str) -> None:
    frame = load_reported(PAPER, 10)
    bad = frame.copy()
    # Exchange the debiased and plain accuracy of one cell: each alone is a value the line holds.
    both = bad[(bad["row_group"] == "FlanT5 11B") & (bad["column"] == "CON") & (bad["column_group"] == "SummEval")]
    i, j = both.index
    bad.loc[i, "printed"], bad.loc[j, "printed"] = bad.loc[j, "printed"], bad.loc[i, "printed"]
    assert check_table_against_text(bad, paper_text, table_layout(10, PAPER))


def _numeric_tokens(text: str) -> list[str]:
    return [t for t in text.split() if re.fullmatch(r"-?\d+(\.\d+)?|-", t)]


@pytest.mark.parametrize("table", range(1, 11))  # seed 001's text stops before Table 11
def test_the_second_text_extraction_agrees(table: int, paper_text_of) -> None:
    """Seed 001 prints the same tables flattened into one line; the values must appear in the
    same order (as a subsequence of the numbers before the caption, after the previous caption)."""
    text = paper_text_of(SECOND_EXTRACTION)
    at = text.index(f"Table {table}:")
    previous = max((m.end() for m in re.finditer(r"Table \d+:", text[:at])), default=0)
    tokens = _numeric_tokens(text[previous:at])
    frame = load_reported(PAPER, table)
    values = list(frame["printed"])  # row by row; 001 prints Table 10's two debias rows one after the other
    it = iter(tokens)
    missing = [v for v in values if not any(v == t for t in it)]
    assert missing == [], f"table {table}: values not found in order in {SECOND_EXTRACTION}: {missing[:5]}"


def test_loader_shape_and_types() -> None:
    frame = load_reported(PAPER)
    assert list(frame.columns) == [
        "paper", "table", "caption_short", "metric", "row_group", "row", "column_group", "column",
        "printed", "value", "note",
    ]
    assert sorted(frame["table"].unique()) == list(range(1, 12))
    assert frame["value"].dtype == np.float64
    assert not frame.duplicated(["table", "row_group", "row", "column_group", "column"]).any()
    dashes = frame["printed"] == "-"
    assert frame.loc[dashes, "value"].isna().all()
    numbers = frame.loc[~dashes]
    assert np.allclose(numbers["value"], numbers["printed"].astype(float))
    assert set(frame["metric"]) == {"spearman_x100", "fraction_first_position", "accuracy_pct"}
    assert (frame.loc[frame["metric"] == "fraction_first_position", "value"].dropna().between(0, 1)).all()


def test_pivot_restores_the_printed_shape() -> None:
    t1 = reported_table(1)
    assert t1.shape == (27, 4)
    assert list(t1.columns.get_level_values("column")) == ["COH", "CON", "FLU", "REL"]
    assert list(t1.index.get_level_values("row_group").unique()) == [
        "Baselines (§4.3)", "Prompt Scoring (§4.3.2)", "G-Eval (§4.3.2)", "Comparative Assessment (§3)",
    ]
    assert t1.loc[("Comparative Assessment (§3)", "FlanT5-3B"), ("SummEval", "COH")] == pytest.approx(51.2)
    assert reported_table(1, printed=True).loc[("Prompt Scoring (§4.3.2)", "FlanT5-770M"), ("SummEval", "REL")] == "-0.0"
    t6 = reported_table(6)
    assert t6.shape == (8, 11)
    assert list(t6.columns)[-1] == ("Avg.", "Avg.")
    assert list(t6.index)[:2] == [("FlanT5-3B", "✗"), ("FlanT5-3B", "✓")]
    t3 = reported_table(3)
    assert math.isnan(t3.loc[("Baselines (§4.3)", "UniEval (continual)"), ("TopicalChat", "CNT")])
    assert reported_table(8).shape == (2, 7)
    assert reported_table(9).shape == (8, 12)


def test_unknown_table_and_paper_give_clear_errors() -> None:
    with pytest.raises(UnknownTableError, match=r"table 12 .*available tables: \[1, 2"):
        load_reported(PAPER, 12)
    with pytest.raises(UnknownTableError, match="unknown paper 'nobody2020'"):
        load_reported("nobody2020")


def test_missing_transcription_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ReportedDataError, match="liusie2024_index.csv is missing"):
        load_reported(PAPER, 1, data_dir=tmp_path)


def test_find_table_lines_needs_its_caption() -> None:
    with pytest.raises(ReportedDataError, match="exactly one caption"):
        find_table_lines("no tables here\n", "Table 3:")
    lines = find_table_lines("text\nA\tB\n1\t2\n\nTable 3: caption\n", "Table 3:")
    assert lines == ["A\tB", "1\t2"]
