"""The runtime chapter's figures: P(A) under two runtimes, and the headline number under each."""

from __future__ import annotations

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from nlgjudge.plotting.style import PALETTE, panel_grid, require_columns


def probability_scatter(paired: pd.DataFrame, reference: str, other: str) -> Figure:
    """P(A) of every comparison under the reference runtime (x) and the other (y), one panel per
    dataset; comparisons whose eq. 2 decision differs between the runtimes are drawn in colour.

    ``paired`` is :func:`nlgjudge.analysis.runtime.decisions_frame`'s frame.
    """
    require_columns(paired, ["dataset", "p_reference", "p_other", "agree"])
    datasets = list(dict.fromkeys(paired["dataset"]))
    fig, axes = panel_grid(len(datasets), 2, 4.4, 4.2)
    same, flipped = sns.color_palette(PALETTE, 4)[0], sns.color_palette(PALETTE, 4)[3]
    for ax, dataset in zip(axes, datasets, strict=True):
        part = paired[paired["dataset"] == dataset]
        kept, moved = part[part["agree"]], part[~part["agree"]]
        ax.plot([0, 1], [0, 1], color="grey", linewidth=0.8, zorder=1)
        ax.axvline(0.5, color="grey", linestyle=":", linewidth=0.8)
        ax.axhline(0.5, color="grey", linestyle=":", linewidth=0.8)
        ax.scatter(kept["p_reference"], kept["p_other"], s=5, alpha=0.35, color=same, linewidth=0,
                   label=f"same decision ({len(kept):,})", zorder=2)
        ax.scatter(moved["p_reference"], moved["p_other"], s=14, color=flipped, edgecolor="black", linewidth=0.3,
                   label=f"decision flipped ({len(moved):,})", zorder=3)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        ax.set_title(dataset, fontsize="medium")
        ax.set_xlabel(f"P(A), {reference}")
        ax.set_ylabel(f"P(A), {other}")
        ax.legend(loc="upper left", fontsize="x-small", frameon=True, markerscale=1.5)
    return fig


def difference_intervals(table: pd.DataFrame, value_label: str) -> Figure:
    """One panel per dataset: the paired difference (other minus reference) per row label with its
    interval, and the line at 0. ``table`` has dataset, label, difference, difference_low and
    difference_high (e.g. :func:`nlgjudge.analysis.runtime.human_agreement_table` with ``label`` =
    aspect)."""
    require_columns(table, ["dataset", "label", "difference", "difference_low", "difference_high"])
    if table.empty:
        raise ValueError("difference_intervals: the table is empty")
    datasets = list(dict.fromkeys(table["dataset"]))
    height = max(2.0, 0.45 * table.groupby("dataset").size().max() + 1.0)
    fig, axes = panel_grid(len(datasets), 3, 3.6, height)
    colour = sns.color_palette(PALETTE, 1)[0]
    for ax, dataset in zip(axes, datasets, strict=True):
        part = table[table["dataset"] == dataset].reset_index(drop=True)
        y = np.arange(len(part))
        value = part["difference"].to_numpy(dtype=float)
        low = part["difference_low"].to_numpy(dtype=float)
        high = part["difference_high"].to_numpy(dtype=float)
        known = np.isfinite(low) & np.isfinite(high)
        ax.axvline(0, color="grey", linestyle="--", linewidth=1)
        ax.errorbar(value[known], y[known], xerr=[value[known] - low[known], high[known] - value[known]], fmt="o",
                    color=colour, markersize=5, capsize=3)
        ax.scatter(value[~known], y[~known], marker="x", color=colour, zorder=3)
        ax.set_yticks(y, part["label"].astype(str))
        ax.set_ylim(len(part) - 0.5, -0.5)
        ax.set_title(dataset, fontsize="medium")
        ax.set_xlabel(value_label)
    return fig


__all__ = ["difference_intervals", "probability_scatter"]
