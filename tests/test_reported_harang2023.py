"""The transcription of seed 004 (Harang, data/reported/harang2023_*.csv) against the paper's text.

The paper numbers none of its tables: they are printed under Figures 1, 3, 4 and 5, and one (Cohen's
kappa between judges) has no caption at all. Their keys are "fig1", "fig3", "fig4", "kappa", "fig5".
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from nlgjudge.reported import (
    PAPERS,
    UnknownTableError,
    check_table_against_text,
    find_table_lines,
    list_tables,
    load_reported,
    reported_table,
    table_layout,
)

PAPER = "harang2023"
TABLES = ["fig1", "fig3", "fig4", "kappa", "fig5"]
SUMMARISERS = ["BART", "DistilBART", "PEGASUS", "BRIO", "GPT-4"]


@pytest.fixture(scope="module")
def paper_text(paper_text_of) -> str:
    return paper_text_of(table_layout("fig1", PAPER).source)


def _flat(table: str, printed: bool = False) -> pd.DataFrame:
    """The printed shape with plain column names (every table has one header line)."""
    wide = reported_table(table, PAPER, printed=printed)
    wide.columns = wide.columns.get_level_values("column")
    return wide


def test_paper_is_registered_and_all_tables_transcribed() -> None:
    assert PAPER in PAPERS
    assert list_tables(PAPER) == TABLES  # printed order
    # printed cells: 5 models x 3 ROUGE; 5 x (3 ROUGE + Elo); 6 contestants x 3; 3 judge pairs; 9 pairs x 2
    assert [len(load_reported(PAPER, t)) for t in TABLES] == [15, 20, 18, 3, 18]


@pytest.mark.parametrize("table", TABLES)
def test_every_cell_matches_the_paper_text(table: str, paper_text: str) -> None:
    assert check_table_against_text(load_reported(PAPER, table), paper_text, table_layout(table, PAPER)) == []


def test_every_printed_table_line_is_transcribed(paper_text: str) -> None:
    """No other table in the text: every tab-separated line belongs to a transcribed table."""
    in_tables = sum(len(find_table_lines(paper_text, table_layout(t, PAPER).caption_marker)) for t in TABLES)
    assert in_tables == sum("\t" in line for line in paper_text.splitlines()) == 33


def _corrupted(frame: pd.DataFrame, index: int, printed: str) -> pd.DataFrame:
    bad = frame.copy()
    bad.loc[index, "printed"] = printed
    return bad


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_a_single_wrong_value_is_reported(table: str, where: str, paper_text: str) -> None:
    frame = load_reported(PAPER, table)
    k = {"first": 0, "middle": len(frame) // 2, "last": len(frame) - 1}[where]
    original = frame.loc[k, "printed"]
    wrong = "1.0" if original == "-" else original[:-1] + str((int(original[-1]) + 1) % 10)
    problems = check_table_against_text(_corrupted(frame, k, wrong), paper_text, table_layout(table, PAPER))
    assert len(problems) == 1, problems
    assert original in problems[0] and wrong in problems[0] and f"table {table}" in problems[0]


def test_sign_dash_and_precision_errors_are_reported(paper_text: str) -> None:
    kappa = load_reported(PAPER, "kappa")
    assert check_table_against_text(_corrupted(kappa, 0, "0.021"), paper_text, table_layout("kappa", PAPER))
    assert check_table_against_text(_corrupted(kappa, 1, "0.320"), paper_text, table_layout("kappa", PAPER))
    fig4 = load_reported(PAPER, "fig4")
    dash = fig4.index[fig4["printed"] == "-"][0]
    assert check_table_against_text(_corrupted(fig4, dash, "1.000"), paper_text, table_layout("fig4", PAPER))
    fig5 = load_reported(PAPER, "fig5")
    positive = fig5.index[fig5["printed"] == "0.67"][0]
    assert check_table_against_text(_corrupted(fig5, positive, "-0.67"), paper_text, table_layout("fig5", PAPER))


def test_swapped_pair_labels_are_reported(paper_text: str) -> None:
    """Method 1 / Method 2 (and model 1 / model 2) are printed on every line; their order matters."""
    for table, pair in (("kappa", ("GPT-3", "GPT-4")), ("fig5", ("DistilBART", "BART"))):
        frame = load_reported(PAPER, table)
        bad = frame.copy()
        at = (bad["row_group"] == pair[0]) & (bad["row"] == pair[1])
        bad.loc[at, ["row_group", "row"]] = [pair[1], pair[0]]
        problems = check_table_against_text(bad, paper_text, table_layout(table, PAPER))
        assert len(problems) == 1 and pair[0] in problems[0], problems


def test_missing_rows_and_wrong_headers_are_reported(paper_text: str) -> None:
    fig4 = load_reported(PAPER, "fig4")
    layout = table_layout("fig4", PAPER)
    without_baseline = fig4[fig4["row"] != "Baseline"].reset_index(drop=True)
    assert check_table_against_text(without_baseline, paper_text, layout)
    renamed = fig4.copy()
    renamed.loc[renamed["column"] == "ELO-3", "column"] = "ELO-GPT3"
    assert any("header" in p for p in check_table_against_text(renamed, paper_text, layout))
    wrong_label = dataclasses.replace(table_layout("kappa", PAPER), label_header="Judge 1|Judge 2")
    problems = check_table_against_text(load_reported(PAPER, "kappa"), paper_text, wrong_label)
    assert len(problems) == 1 and "labels" in problems[0]


def test_loader_shape_and_types() -> None:
    frame = load_reported(PAPER)
    assert list(frame.columns) == [
        "paper", "table", "caption_short", "metric", "judge", "row_group", "row", "column_group", "column",
        "printed", "value", "note",
    ]
    assert list(dict.fromkeys(frame["table"])) == TABLES
    assert frame["value"].dtype == np.float64
    dashes = frame["printed"] == "-"
    assert list(frame.loc[dashes, "row"]) == ["Baseline"] and frame.loc[dashes, "value"].isna().all()
    numbers = frame[~dashes]
    assert np.allclose(numbers["value"], numbers["printed"].astype(float))
    assert not frame.duplicated(["table", "row_group", "row", "column_group", "column"]).any()
    assert set(frame["metric"]) == {
        "rouge_1", "rouge_2", "rouge_l", "elo", "cohen_kappa", "regression_slope", "r_squared",
    }
    elo = frame[frame["metric"] == "elo"]
    assert set(zip(elo["table"], elo["column"], elo["judge"])) == {
        ("fig3", "ELO", "ROUGE-1"), ("fig4", "ELO-4", "GPT-4"), ("fig4", "ELO-3", "GPT-3"),
    }
    assert set(frame.loc[frame["table"] == "fig5", "judge"]) == {"GPT-4"}
    assert frame.loc[frame["metric"].str.startswith("rouge"), "judge"].eq("").all()
    assert frame.loc[frame["metric"].str.startswith("rouge"), "value"].dropna().between(0, 1).all()


def test_rouge_agrees_across_figures_1_3_and_4() -> None:
    fig1, fig3, fig4 = _flat("fig1", printed=True), _flat("fig3", printed=True), _flat("fig4", printed=True)
    assert list(fig1.index.get_level_values("row")) == SUMMARISERS
    assert fig3[["R-1", "R-2", "R-L"]].equals(fig1)
    rl4 = fig4["R-L"].droplevel("row_group").drop("Baseline")
    assert rl4.to_dict() == fig1["R-L"].droplevel("row_group").to_dict()


def test_elo_sums_stay_near_1000_per_contestant() -> None:
    """The Annex update adds +d to one contestant and -d to the other, so the Elo values sum to
    1000 per contestant; the printed (rounded) values come within a few points of it."""
    fig3, fig4 = _flat("fig3"), _flat("fig4")
    assert fig3["ELO"].sum() == 5003
    assert (fig4["ELO-4"].sum(), fig4["ELO-3"].sum()) == (5997, 5998)
    for total, n in ((fig3["ELO"].sum(), 5), (fig4["ELO-4"].sum(), 6), (fig4["ELO-3"].sum(), 6)):
        assert abs(total - 1000 * n) <= 5


def test_the_texts_claims_about_figure_4() -> None:
    fig4 = _flat("fig4").droplevel("row_group")
    assert list(fig4.index) == ["GPT-4", "BART", "BRIO", "Baseline", "PEGASUS", "DistilBART"]
    assert fig4["ELO-4"].is_monotonic_decreasing  # rows printed by ELO-4
    assert fig4["ELO-4"].idxmax() == fig4["ELO-3"].idxmax() == "GPT-4"  # "GPT-4 is preferred"
    # "an offset of around 600 between GPT-4 and BART" (printed: 580); "only 200" with GPT-3 (printed: 180)
    assert fig4.loc["GPT-4", "ELO-4"] - fig4.loc["BART", "ELO-4"] == 580
    assert fig4.loc["GPT-4", "ELO-3"] - fig4.loc["BART", "ELO-3"] == 180


def test_figure_5_slopes_and_fit() -> None:
    fig5 = _flat("fig5")
    assert len(fig5) == 9
    assert fig5["r^2"].is_monotonic_decreasing  # rows printed by r^2
    assert fig5["r^2"].between(0, 1).all()
    positive = fig5[fig5["slope"] > 0]
    assert list(positive.index) == [("DistilBART", "BART")]  # the outlier of §4.5, lowest r^2
    assert positive["r^2"].iloc[0] == fig5["r^2"].min()
    labels = set(fig5.index.get_level_values("row_group")) | set(fig5.index.get_level_values("row"))
    assert "GPT-4" not in labels and "baseline" in labels


def test_kappa_values() -> None:
    kappa = _flat("kappa")["Cohen Kappa"]
    assert list(kappa.index) == [("GPT-3", "ROUGE"), ("GPT-3", "GPT-4"), ("GPT-4", "ROUGE")]
    assert (kappa.drop(("GPT-3", "GPT-4")) < 0).all()  # "slightly negative" against ROUGE
    assert kappa[("GPT-3", "GPT-4")] == pytest.approx(0.32)


def test_unknown_table_names_the_available_ones() -> None:
    with pytest.raises(UnknownTableError, match=r"table 'fig2' .*available tables: \['fig1', 'fig3'"):
        load_reported(PAPER, "fig2")
