"""Prose helpers: formatting, and glue names that myst-nb accepts."""

import numpy as np
import pytest

from nlgjudge.prose import glue_all, interval_text, listing, number, short_id


def test_numbers_and_listings_read_as_prose() -> None:
    assert number(0.8234, 2) == "0.82" and number(3.0, 1, signed=True) == "+3.0" and number(float("nan")) == "n/a"
    assert listing([]) == "none" and listing(["a"]) == "a" and listing(["a", "b", "c"]) == "a, b and c"


def test_an_interval_reads_value_then_bounds_and_says_when_it_is_undefined() -> None:
    assert interval_text(0.5, 0.25, 0.75) == "0.50 [0.25, 0.75]"
    assert interval_text(np.float64(-1.234), -2.0, -0.5, 1) == "-1.2 [-2.0, -0.5]"
    assert interval_text(0.5, np.nan, np.nan) == "0.50 [n < 2]"
    assert interval_text(np.nan, np.nan, np.nan) == "–"


def test_glue_refuses_names_markdown_cannot_cite() -> None:
    with pytest.raises(ValueError, match="glue names"):
        glue_all({"p(A) max": 1})


def test_glued_text_is_pasted_exactly_as_computed(monkeypatch) -> None:
    # What the book shows: {glue:text} pastes format_plain_text(text/plain, ""), which
    # literal-evaluates it (a bare "+0.2" would lose its sign, "-0.40" its last zero).
    import myst_nb
    from myst_nb.core.variables import format_plain_text

    seen = {}
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display: seen.update({name: repr(value)}))
    values = {"judge": "qwen", "n": 3, "gain": "+0.2", "rho": "-0.40", "tau": "1.00", "suffix": '"TL;DR:"',
              "quotes": "it's \"x\"", "verdict": "on the rank correlation, it moved both ways"}
    glue_all(values)
    assert {name: format_plain_text(text, "") for name, text in seen.items()} == {k: str(v) for k, v in values.items()}


def test_numbers_that_round_to_zero_print_without_a_sign():
    from nlgjudge.prose import interval_text, number

    # an interval's end keeps its side of 0, which a reader reads it against: the decimals that show its sign
    assert interval_text(13.8, -0.043, 27.6, 1) == "13.8 [-0.04, 27.6]" and interval_text(13.8, 0.0, 27.6, 1) == "13.8 [0.0, 27.6]"
    # ... and its side of a claim's band: one decimal more within a rounding unit of the band's edge
    assert interval_text(-0.12, -0.196, -0.04, 2, edges=(-0.2, 0.2)) == "-0.12 [-0.196, -0.04]"
    assert interval_text(-0.12, -0.18, -0.04, 2, edges=(-0.2, 0.2)) == "-0.12 [-0.18, -0.04]"
    # ... but a share's bound at 0 is no line to read it against: the end keeps the estimate's decimals
    assert interval_text(0.0026, 0.00002, 0.29, 2) == "0.00 [0.00002, 0.29]"
    assert interval_text(0.0026, 0.00002, 0.29, 2, bounded_at_zero=True) == "0.00 [0.00, 0.29]"
    assert number(-0.04, 1) == "0.0" and number(-0.04, 1, signed=True) == "0.0" and number(0.04, 1, signed=True) == "0.0"
    assert number(-0.06, 1) == "-0.1" and number(0.06, 1, signed=True) == "+0.1"


def test_short_id_cuts_only_long_hex_runs() -> None:
    assert short_id("dm-test-8764fb95bfad8ee849274873a92fb8d6b400eee2") == "dm-test-8764fb95\u2026"
    assert short_id("032bd00214629a8af90f1817d1d611224bd6d3ed") == "032bd002\u2026"
    assert short_id("webnlg-1234") == "webnlg-1234"  # short or non-hex ids stay whole
    assert short_id("dialogue-0123456789a") == "dialogue-0123456789a"  # 11 hex digits: kept


def test_a_small_frame_becomes_a_markdown_table_with_its_pipes_escaped() -> None:
    import pandas as pd

    from nlgjudge.prose import markdown_table

    frame = pd.DataFrame({"judge A": ["0.15, contradicted", "a|b"]}, index=pd.Index(["x", "y"], name="attack"))
    assert markdown_table(frame).splitlines() == ["| attack | judge A |", "|---|---|", "| x | 0.15, contradicted |",
                                                  "| y | a\\|b |"]
