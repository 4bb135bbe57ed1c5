"""The comparative chapter's figure: the paper's correlations beside ours, one panel per aspect."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from nlgjudge.plotting.style import PALETTE, model_style, require_columns


def paper_vs_ours_bars(
    frame: pd.DataFrame, aspects: Sequence[str], groups: Sequence[str], title: str | None = None
) -> Figure:
    """Bars of Spearman x100 per method group, one colour per system ("reported: ..." first), one
    panel per aspect, two panels a row (legible at page width). ``frame`` is
    :func:`nlgjudge.analysis.comparative.figure_frame`'s output; ``groups`` fixes the order of the
    bar groups. Our bars carry their 95% interval over contexts (``ci_low``/``ci_high``, when the
    frame has them); the paper's have none (it reports none). A missing bar is an undefined correlation."""
    require_columns(frame, ["aspect", "group", "who", "source", "spearman"])
    panels = [a for a in aspects if a in set(frame["aspect"])]
    order = [g for g in groups if g in set(frame["group"])]
    if not panels or not order:
        raise ValueError("paper_vs_ours_bars: nothing to draw (no aspect or method group in the frame)")
    who = list(dict.fromkeys(frame.sort_values("source", ascending=False, kind="stable")["who"]))  # reported first
    # each system in its book-wide colour; the paper's bars hatched, ours plain
    reported = set(frame.loc[frame["source"].astype(str).str.startswith("reported"), "who"])
    styles = {name: model_style(name, paper=name in reported) for name in who}
    columns = min(len(panels), 2)
    rows = int(np.ceil(len(panels) / columns))
    fig, axes = plt.subplots(rows, columns, figsize=(max(3.6, 0.9 * len(order) + 1.2) * columns, 3.0 * rows + 0.9),
                             sharey=True, squeeze=False, layout="constrained")
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    width = 0.8 / len(who)
    for ax, aspect in zip(axes.flat, panels):
        part = frame[frame["aspect"] == aspect].set_index(["group", "who"])
        for k, name in enumerate(who):
            xs, ys, lows, highs = [], [], [], []
            for g, group in enumerate(order):
                if (group, name) not in part.index:
                    continue
                row = part.loc[(group, name)]
                row = row.iloc[0] if isinstance(row, pd.DataFrame) else row
                xs.append(g - 0.4 + width * (k + 0.5))
                ys.append(float(row["spearman"]))
                low, high = (float(row.get("ci_low", np.nan)), float(row.get("ci_high", np.nan)))
                lows.append(ys[-1] - low if np.isfinite(low) else 0.0)
                highs.append(high - ys[-1] if np.isfinite(high) else 0.0)
            if not xs:
                continue
            ax.bar(xs, ys, width=width, color=styles[name]["color"], hatch=styles[name]["hatch"], edgecolor="white",
                   linewidth=0, label=name)
            if any(lows) or any(highs):
                ax.errorbar(xs, ys, yerr=[lows, highs], fmt="none", ecolor="black", elinewidth=0.7, capsize=1.5)
        ax.axhline(0, color="black", linewidth=0.6)
        ax.set_title(aspect)
        ax.set_xticks(range(len(order)), order)
        ax.tick_params(axis="x", rotation=20)
        for label in ax.get_xticklabels():
            label.set_horizontalalignment("right")
        ax.set_ylabel("Spearman x100")
    handles = [plt.Rectangle((0, 0), 1, 1, facecolor=styles[name]["color"], hatch=styles[name]["hatch"], edgecolor="white")
               for name in who]
    fig.legend(handles, who, loc="outside lower center", ncols=2, frameon=False)
    if title:
        fig.suptitle(title)
    return fig


def method_diagram() -> Figure:
    """A drawn version of seed 000's Figure 1: prompt scoring asks for one candidate's score,
    comparative assessment asks which of two candidates is better, and win ratios rank them."""
    fig, axes = plt.subplots(1, 2, figsize=(7.0, 2.8), layout="constrained")
    box = dict(boxstyle="round,pad=0.4", linewidth=0.8)
    blue, orange, green = sns.color_palette(PALETTE, 3)
    panels = (
        ("Prompt scoring", [("context + candidate $x_i$", 0.78, blue), ("LLM", 0.5, "lightgrey"),
                            ("score $s_i \\in \\{1..10\\}$\n(one per candidate)", 0.2, green)]),
        ("Comparative assessment", [("context + $x_i$ (A) + $x_j$ (B)", 0.78, orange), ("LLM", 0.5, "lightgrey"),
                                    ("$p_{ij} = P(A)$ for every ordered pair\n-> win ratio per candidate", 0.2, green)]),
    )
    for ax, (title, steps) in zip(axes, panels, strict=True):
        ax.set_axis_off()
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_title(title, fontsize="medium")
        for k, (text, y, colour) in enumerate(steps):
            ax.text(0.5, y, text, ha="center", va="center", fontsize="small",
                    bbox={**box, "facecolor": colour, "alpha": 0.35 if colour != "lightgrey" else 1.0})
            if k < len(steps) - 1:
                ax.annotate("", xy=(0.5, steps[k + 1][1] + 0.09), xytext=(0.5, y - 0.09),
                            arrowprops={"arrowstyle": "->", "linewidth": 0.9})
    return fig
