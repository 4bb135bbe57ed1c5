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
    cells = [cell.strip() for cell in __import__("re").findall(r"<td>(.*?)</td>", html, flags=__import__("re").S)]
    assert cells == ["1.5", "1", "x", "0.0", MISSING, MISSING, MISSING, "2.0", "0.0", "3", "-0.0 [-1.0, 1.0]", "-1.0"]
    assert "NaN" not in html and "&lt;NA&gt;" not in html and "None" not in html


def test_a_styler_is_cleaned_the_same_way() -> None:
    styler = pd.DataFrame({"a": [np.nan, -0.01]}).style.format(precision=1)
    html = clean_table_html(styler.to_html())
    assert ">nan<" not in html and ">-0.0<" not in html and f">{MISSING}<" in html and ">0.0<" in html


def test_outside_a_kernel_nothing_is_registered() -> None:
    assert readable_tables() is False
