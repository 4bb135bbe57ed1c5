"""The gaming chapter's figure: each attack's win rate per judge, in one order and over both."""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from nlgjudge.plotting.style import PALETTE, panel_grid, require_columns


def win_rates(table: pd.DataFrame, titles: dict[str, str], attack_titles: dict[str, str], title: str) -> Figure:
    """One panel per judge (``titles``: judge -> reader name): per attack, the win rate over both
    orders with its 95% interval (dot and line) and the win rates standing first and second
    (open markers), against one half (dashed)."""
    require_columns(table, ["judge", "attack", "first", "second", "both", "both_low", "both_high"])
    judges = list(dict.fromkeys(table["judge"]))
    # one panel a row: the attacks' names are long, and the figure must read at 800 px without shrinking
    fig, axes = panel_grid(len(judges), 1, 5.6, 0.9 + 0.42 * table["attack"].nunique(), sharex=True)
    blue, orange, green = sns.color_palette(PALETTE, 3)
    for ax, judge in zip(axes, judges, strict=True):
        part = table[table["judge"] == judge]
        order = {a: k for k, a in enumerate(attack_titles)}  # the chapter's order, top down
        part = part.sort_values("attack", key=lambda c: c.map(lambda a: order.get(a, len(order))), kind="stable").iloc[::-1]
        y = np.arange(len(part))
        ax.hlines(y, part["both_low"], part["both_high"], color=blue, linewidth=2)
        ax.plot(part["both"], y, "o", color=blue, markersize=6, label="both orders (95% interval)")
        ax.plot(part["first"], y, ">", color=orange, markersize=6, fillstyle="none", label="attack first")
        ax.plot(part["second"], y, "<", color=green, markersize=6, fillstyle="none", label="attack second")
        ax.axvline(0.5, color="grey", linewidth=0.8, linestyle="--")
        ax.set_yticks(y, [attack_titles.get(a, a) for a in part["attack"]])
        ax.set_xlim(-0.02, 1.02)
        ax.set_xlabel("win rate against the real summaries")
        ax.set_title(titles.get(judge, judge))
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=2, frameon=False)
    fig.suptitle(title)
    return fig
