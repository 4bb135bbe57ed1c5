"""nlgjudge.plotting.gaming: the win-rate figure is built legibly and refuses a frame without its columns."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from nlgjudge.plotting.gaming import win_rates
from nlgjudge.plotting.style import fit_to_page, legibility_problems


def _table() -> pd.DataFrame:
    rows = []
    for judge in ("j1", "j2"):
        for attack, value in (("null", 0.1), ("format", 0.6)):
            rows.append({"judge": judge, "attack": attack, "first": value + 0.2, "second": value - 0.1, "both": value,
                         "both_low": value - 0.1, "both_high": value + 0.1})
    return pd.DataFrame(rows)


def test_one_panel_per_judge_legible_at_page_width() -> None:
    fig = win_rates(_table(), {"j1": "Judge one", "j2": "Judge two"}, {"null": "irrelevant text"}, "Win rates")
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == ["Judge one", "Judge two"]
    assert "irrelevant text" in [t.get_text() for t in visible[0].get_yticklabels()]
    assert legibility_problems(fit_to_page(fig)) == []
    plt.close(fig)


def test_a_table_without_intervals_is_refused() -> None:
    with pytest.raises((KeyError, ValueError)):
        win_rates(_table().drop(columns=["both_low"]), {}, {}, "x")
