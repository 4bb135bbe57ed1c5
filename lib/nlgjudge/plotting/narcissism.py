"""Figures of the narcissism chapter (seed 003): evaluator x generator heatmaps, length, self-bias."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from nlgjudge.plotting.style import CORRELATION_CMAP, PANEL_WIDTH, model_colour, panel_grid, require_columns

#: Sequential map for eq. 4's [0, 1] scores: darker = the evaluator rates the generator higher (as the paper).
HEATMAP_CMAP = "Blues"
#: The colour bar's words: eq. 4 rescales each row (evaluator) on its own, so a shade is a place in that row's order.
HEATMAP_SCALE_LABEL = "score rescaled per evaluator (row):\n0 = its least liked, 1 = its favourite"


def figure_name(name: str) -> str:
    """Model names broken before their size, so that tick labels stay short (at 10 pt a heatmap
    cell holds about ten characters: "Qwen2.5-Coder" ran into its neighbour, so the Qwen coder models read
    "Qwen"), written as the models' titles write them ("SmolLM2 135M"); any other name as given."""
    families = {"qwen2.5-coder-": "Qwen\n", "smollm2-": "SmolLM2\n", "gemma-3-": "Gemma\n3 "}  # "Gemma-3" ran into "SmolLM2"
    base = name.removesuffix("-instruct").removesuffix("-it")
    for prefix, family in families.items():  # the packaged models: family, then the size as their titles write it
        if base.startswith(prefix):
            return family + base[len(prefix):].upper()
    return base


def heatmap_panels(
    tables: Mapping[str, pd.DataFrame], lengths: Mapping[str, pd.Series], title: str | None = None,
    max_columns: int = 2,
) -> Figure:
    """One eq. 4 heatmap per panel (rows: evaluators, columns: generators with their average length in
    words in brackets, as seed 003 Figs. 2, 3, 4 and 6), each row rescaled on its own (the colour bar says
    so); the own-model cells are outlined. At most
    ``max_columns`` panels a row, so that the cells stay legible at page width. All panels share one
    colour bar below them: a bar beside one panel made that panel narrower than its neighbours, and
    its generator names ran together."""
    if not tables:
        raise ValueError("no heatmap to draw")
    n = len(tables)
    fig, panels = panel_grid(n, max_columns, 4.7, 4.4 + 0.6 / -(-n // max(1, max_columns)))  # room for the bar
    ncols = min(n, max_columns)
    for k, (ax, (name, table)) in enumerate(zip(panels, tables.items(), strict=True)):
        words = lengths[name].reindex(table.columns)
        columns = [f"{figure_name(g)}\n({w:.0f})" for g, w in zip(table.columns, words, strict=True)]
        sns.heatmap(table.astype(float), annot=True, fmt=".2f", vmin=0, vmax=1, cmap=HEATMAP_CMAP, linewidths=0.5,
                    cbar=False, ax=ax,
                    xticklabels=columns, yticklabels=[figure_name(e) for e in table.index], annot_kws={"fontsize": 11})
        for i, evaluator in enumerate(table.index):
            if evaluator in table.columns:
                j = list(table.columns).index(evaluator)
                ax.add_patch(plt.Rectangle((j, i), 1, 1, fill=False, edgecolor="#d55e00", linewidth=2.2))
        ax.set_title(name, fontsize=12)
        ax.set_xlabel("generator (mean words)")
        ax.set_ylabel("evaluator" if k % ncols == 0 else "")
        # upright, one word a line (family, size, mean words): slanted, "SmolLM2" ran into its neighbours
        ax.tick_params(axis="x", rotation=0, labelsize=9)
        plt.setp(ax.get_xticklabels(), ha="center")
        ax.tick_params(axis="y", rotation=0, labelsize=10)
    bar = fig.colorbar(panels[0].collections[0], ax=panels, location="bottom", shrink=0.7, aspect=30)
    bar.set_label(HEATMAP_SCALE_LABEL if ncols == 1 else HEATMAP_SCALE_LABEL.replace(":\n", ": "))
    if title:
        fig.suptitle(title)
    return fig


def interval_dots(
    tables: Mapping[str, pd.DataFrame], value: str, low: str, high: str, xlabel: str, title: str | None = None,
    reference: float = 0.0, max_columns: int = 3,
) -> Figure:
    """Per panel, one dot per row with its interval as a horizontal bar, and a line at ``reference``
    (Fig. 5's length correlations, the self-bias estimates). At most ``max_columns`` panels a row;
    every panel lists its rows top-down in the table's order."""
    if not tables:
        raise ValueError("nothing to draw")
    rows = max(len(t) for t in tables.values())
    fig, panels = panel_grid(len(tables), max_columns, 3.1, 0.55 * rows + 1.4, sharey=True)
    for ax, (name, table) in zip(panels, tables.items(), strict=True):
        require_columns(table, [value, low, high])
        y = np.arange(len(table))
        for k, (label, row) in enumerate(table.iterrows()):  # rows are models: each in its book-wide colour
            ax.errorbar(row[value], y[k], xerr=[[row[value] - row[low]], [row[high] - row[value]]], fmt="o",
                        color=model_colour(str(label)), capsize=3, label=str(label))
        ax.axvline(reference, color="0.4", linewidth=1, linestyle="--")
        ax.set_yticks(y, [figure_name(str(i)).replace("\n", " ") for i in table.index])
        ax.tick_params(axis="y", labelleft=True)
        ax.set_title(name, fontsize=12)
        ax.set_xlabel(xlabel)
    panels[0].invert_yaxis()  # the y axis is shared: inverting it once puts the first row on top everywhere
    if title:
        fig.suptitle(title)
    return fig


def length_scatter(points: pd.DataFrame, evaluators: Sequence[str], title: str | None = None) -> Figure:
    """Score against summary length, one panel per evaluator (``points``: evaluator, n_words, score, generator)."""
    require_columns(points, ["evaluator", "n_words", "score", "generator"])
    fig, panels = panel_grid(len(evaluators), 3, PANEL_WIDTH, 2.9)
    for ax, evaluator in zip(panels, evaluators, strict=True):
        rows = points[points["evaluator"] == evaluator]
        for generator, part in rows.groupby("generator", sort=False):
            ax.scatter(part["n_words"], part["score"], s=8, alpha=0.5, color=model_colour(str(generator)),
                       label=figure_name(str(generator)).replace("\n", " "))
        ax.set_title(figure_name(evaluator).replace("\n", " "), fontsize=12)
        ax.set_xlabel("summary length (words)")
        ax.tick_params(axis="y", labelleft=True)
    panels[0].set_ylabel("score (mean log-prob.)")
    handles, labels = panels[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(4, len(labels)), markerscale=2)
    if title:
        fig.suptitle(title)
    return fig


__all__ = ["CORRELATION_CMAP", "heatmap_panels", "interval_dots", "length_scatter"]
