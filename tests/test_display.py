"""The page form of a chapter's tables: "–" for a missing value, no signed zero (nlgjudge.display)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from nlgjudge.display import MISSING, clean_table_html, readable_tables


def test_missing_values_of_every_type_read_as_a_dash_and_zeros_lose_their_sign() -> None:
    frame = pd.DataFrame({
        "float": [1.5, np.nan, -0.0],
        "integer": pd.array([1, None, 3], dtype="Int64"),
        "text": ["x", None, "-0.0 [-1.0, 1.0]"],
        "rounded": [round(-0.04, 1), 2.0, -1.0],  # -0.0 after rounding, as .round(1) leaves it
    })
    with pd.option_context("display.precision", 1):
        html = clean_table_html(frame._repr_html_())
    cells = [cell.strip() for cell in __import__("re").findall(r"<td[^>]*>(.*?)</td>", html, flags=__import__("re").S)]
    assert cells == ["1.5", "1", "x", "0.0", MISSING, MISSING, MISSING, "2.0", "0.0", "3", "-0.0 [-1.0, 1.0]", "-1.0"]
    assert "NaN" not in html and "&lt;NA&gt;" not in html and "None" not in html


def test_a_styler_is_cleaned_the_same_way() -> None:
    styler = pd.DataFrame({"a": [np.nan, -0.01]}).style.format(precision=1)
    html = clean_table_html(styler.to_html())
    assert ">nan<" not in html and ">-0.0<" not in html and f">{MISSING}<" in html and ">0.0<" in html


def test_outside_a_kernel_nothing_is_registered() -> None:
    assert readable_tables() is False


def test_code_names_of_columns_and_index_levels_are_headed_in_words() -> None:
    import re

    frame = pd.DataFrame({"mean_prob_a": [0.9], "n_contexts": [30], "qags_cnndm": [1.0]}).set_index(pd.Index(["x"], name="p_value"))
    html = clean_table_html(frame._repr_html_())
    headings = [h.strip() for h in re.findall(r"<th[^>]*>(.*?)</th>", html, flags=re.S)]
    assert "mean p(A)" in headings and "contexts" in headings and "p-value" in headings
    assert "mean_prob_a" not in html and "n_contexts" not in html
    assert "QAGS-CNNDM" in headings  # a data name (a dataset) is not a code name: shown by its name
    styled = clean_table_html(frame.style.to_html())
    assert "mean p(A)" in styled and "mean_prob_a" not in styled


def test_a_body_cell_holding_a_code_name_is_data_and_left_alone() -> None:
    html = clean_table_html(pd.DataFrame({"what": ["p_a"]})._repr_html_())
    assert "<td>p_a</td>" in html


def test_truth_values_read_as_yes_and_no() -> None:
    html = clean_table_html(pd.DataFrame({"same top system": [True, False]})._repr_html_())
    assert "<td>yes</td>" in html and "<td>no</td>" in html and "True" not in html


def test_a_rerun_shows_the_released_verdict_beside_each_changed_row(monkeypatch) -> None:
    import json

    from nlgjudge import display, prose

    glued = {}
    monkeypatch.setattr("myst_nb.glue", lambda name, value, display=True: glued.__setitem__(name, repr(value)))
    table = pd.DataFrame({"verdict": ["supported", "not resolved", "supported"], "gap": [1.0, 2.0, 3.0]},
                         index=pd.Index(["COH", "FLU", "REL"], name="aspect"))
    try:
        prose.set_previous_values(None)  # the released build itself: no column, the verdicts glued
        assert display.with_released_verdicts(table, "claims").equals(table)
        released = json.loads(eval(glued["rows_claims"]))
        assert released == {"COH": "supported", "FLU": "not resolved", "REL": "supported"}
        prose.set_previous_values({"rows_claims": json.dumps({"COH": "not resolved", "FLU": "not resolved"})})
        shown = display.with_released_verdicts(table, "claims")
        assert list(shown.columns) == ["verdict", display.WAS_COLUMN, "gap"]
        assert list(shown[display.WAS_COLUMN]) == ["was: not resolved", "same", "new row"]
        prose.set_previous_values({"rows_claims": json.dumps({"COH": "supported", "CON": "contradicted"})})
        shown = display.with_released_verdicts(table, "claims")  # CON is gone from this run: shown, marked
        assert list(shown.index) == ["COH", "FLU", "REL", "CON"]
        assert list(shown[display.WAS_COLUMN]) == ["same", "new row", "new row", "dropped (was: contradicted)"]
    finally:
        prose.set_previous_values(None)


def test_claims_tables_name_missing_columns() -> None:
    import pytest

    from nlgjudge import display

    with pytest.raises(KeyError, match="no column"):
        display.with_released_verdicts(pd.DataFrame({"x": [1]}), "t")


def test_a_download_is_written_only_where_the_build_says(tmp_path, monkeypatch) -> None:
    from nlgjudge import display

    frame = pd.DataFrame({"context": ["a", "b"], "gap": [0.5, -0.25]})
    monkeypatch.delenv(display.DOWNLOADS_ENV, raising=False)
    assert "make book" in display.download_link(frame, "bias", "gains", "per-context gains").data
    monkeypatch.setenv(display.DOWNLOADS_ENV, str(tmp_path))
    html = display.download_link(frame, "bias", "gains", "per-context gains").data
    assert 'href="downloads/bias/gains.csv"' in html and "2 rows" in html
    assert pd.read_csv(tmp_path / "gains.csv").equals(frame)


def test_per_unit_values_unfold_a_column_of_per_context_values() -> None:
    from nlgjudge.display import per_unit_values

    claims = pd.DataFrame({"aspect": ["COH", "FLU"], "per_context_gap": [{"c1": 1.0, "c2": 2.0}, {"c1": -1.0}]})
    got = per_unit_values(claims, "per_context_gap", ["aspect"], "context", "gap")
    assert got.values.tolist() == [["COH", "c1", 1.0], ["COH", "c2", 2.0], ["FLU", "c1", -1.0]]


def test_an_estimate_with_its_interval_stays_on_one_line() -> None:
    html = clean_table_html(pd.DataFrame({"gap [95%]": ["-13.9 [-25.5, -2.3]", "note"]})._repr_html_())
    assert '<td style="white-space: nowrap">-13.9 [-25.5, -2.3]</td>' in html and "<td>note</td>" in html


def test_a_wide_frame_is_shown_as_several_tables_that_never_mix_a_two_level_headers_groups() -> None:
    from nlgjudge.display import MAX_TABLE_COLUMNS, _frame_html, column_blocks

    columns = pd.MultiIndex.from_tuples([("reported", f"m{i}", t) for i in range(4) for t in (1, 2)]
                                        + [("ours", f"q{i}", t) for i in range(3) for t in (1, 2)])
    blocks = column_blocks(columns, 6)
    assert [len(b) for b in blocks] == [4, 4, 6] and all(len({columns[i][0] for i in b}) == 1 for b in blocks)
    assert column_blocks(pd.Index(range(9)), 8) == [[0, 1, 2, 3, 4], [5, 6, 7, 8]]  # even widths
    frame = pd.DataFrame(np.arange(28).reshape(2, 14), columns=columns, index=pd.Index(["a", "b"], name="row"))
    html = _frame_html(frame)
    assert html.count("<table") == 2 and html.count(">row<") == 2  # reported | ours, each with the row labels
    narrow = pd.DataFrame(np.zeros((2, MAX_TABLE_COLUMNS - 1)))
    assert _frame_html(narrow).count("<table") == 1


def test_bookkeeping_lines_are_folded_and_a_downloads_columns_are_explained() -> None:
    from nlgjudge.display import column_legend, folded_lines

    folded = folded_lines(["SummEval: 30 of 30 planned contexts", "", "<b>x</b>"], "Which contexts")
    assert folded.data.startswith("<details><summary>Which contexts</summary>") and "&lt;b&gt;" in folded.data
    legend = column_legend(pd.DataFrame(columns=["context_id", "first", "p_a", "mystery"]), "rank")
    assert "the system in position A" in legend and "probability that the output in position A" in legend
    assert "<code>mystery</code>: as named" in legend
    assert "standing first" in column_legend(pd.DataFrame(columns=["first"]), "gaming")


def test_bookkeeping_lines_name_the_study_and_the_runtime_in_words() -> None:
    from nlgjudge.display import folded_lines

    folded = folded_lines(["selfpref, qags_cnndm, judge (llamacpp): 30 of 100 planned contexts have every output",
                           "comparative, summeval, judge (torch): 6 of 6"]).data
    assert "pairwise self-preference, qags_cnndm, judge (llama.cpp): 30 of 100" in folded
    assert "comparisons, summeval, judge (PyTorch)" in folded and "selfpref" not in folded and "llamacpp" not in folded


def test_a_named_index_is_shown_in_the_header_rows_corner_not_on_a_row_of_its_own() -> None:
    from nlgjudge.display import _frame_html

    named = pd.DataFrame({"a": [1, 2], "b": [3, 4]}, index=pd.Index(["x", "y"], name="system"))
    html = _frame_html(named)
    assert html is not None and html.count("<tr") == 3 and "<th>system</th>" in html  # one header row, two rows
    unnamed = _frame_html(named.rename_axis(None))
    assert unnamed is not None and unnamed.count("<tr") == 3 and "system" not in unnamed
    both = named.rename_axis(columns="measure")  # a named column axis keeps pandas's own layout
    assert _frame_html(both) is not None and "measure" in _frame_html(both)
