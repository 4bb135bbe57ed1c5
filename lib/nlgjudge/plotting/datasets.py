"""The datasets chapter's figures: score distributions, aspect correlations, scales side by side."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from nlgjudge.plotting.style import (
    CORRELATION_CMAP,
    HISTOGRAM_BINS_PER_SCALE,
    MAX_DISCRETE_VALUES,
    MIN_BARS_PER_SCALE,
    PALETTE,
    PANEL_HEIGHT,
    PANEL_WIDTH,
    require_columns,
)


def _draw_distribution(ax: plt.Axes, values: np.ndarray, colour: object, scale: tuple[float, float] | None) -> None:
    """One bar per observed value when the values sit on a coarse grid (means of three integer
    ratings: 1, 1.33, 1.67, ...); otherwise a histogram whose bins are centred on a grid of an
    eighth of the scale (means over varying numbers of raters, or continuous scores).

    seaborn's ``discrete=True`` assumes integer steps and would merge 1/3-steps into one bar.
    """
    distinct, counts = np.unique(np.round(values, 6), return_counts=True)
    low, high = scale if scale is not None else (float(np.min(values, initial=0.0)), float(np.max(values, initial=1.0)))
    span = high - low if high > low else 1.0
    min_gap = float(np.min(np.diff(distinct))) if len(distinct) > 1 else span
    if len(distinct) <= MAX_DISCRETE_VALUES and min_gap >= span / MIN_BARS_PER_SCALE:
        ax.bar(distinct, counts, width=0.8 * min_gap, color=colour)
    else:
        width = span / HISTOGRAM_BINS_PER_SCALE
        sns.histplot(x=values, ax=ax, binwidth=width, binrange=(low - width / 2, high + width / 2), color=colour)


def score_distributions(
    frame: pd.DataFrame,
    aspects: Mapping[str, str],
    score_ranges: Mapping[str, tuple[float, float]] | None = None,
    title: str | None = None,
    max_columns: int = 3,
) -> Figure:
    """One panel per aspect showing the distribution of the human scores in ``frame``.

    ``aspects`` maps column names to the labels shown (e.g. ``{"COH": "coherence"}``);
    ``score_ranges`` (same keys) fixes each x-axis to the scale's full range so that a reader
    sees where on the scale the scores fall, not just their spread.
    """
    if not aspects:
        raise ValueError("score_distributions needs at least one aspect")
    columns = list(aspects)
    require_columns(frame, columns)
    # four panels read better as 2 x 2 than as 3 + 1
    n_columns = 2 if len(columns) == 4 and max_columns >= 2 else min(max_columns, len(columns))
    n_rows = int(np.ceil(len(columns) / n_columns))
    fig, axes = plt.subplots(
        n_rows,
        n_columns,
        figsize=(PANEL_WIDTH * n_columns, PANEL_HEIGHT * n_rows),
        squeeze=False,
        layout="constrained",
    )
    colours = sns.color_palette(PALETTE, len(columns))
    for index, column in enumerate(columns):
        ax = axes.flat[index]
        values = frame[column].dropna().to_numpy(dtype=float)
        scale = score_ranges.get(column) if score_ranges is not None else None
        _draw_distribution(ax, values, colours[index], scale)
        label = f"{column} ({aspects[column]})" if aspects[column] != column else column
        ax.set_title(textwrap.fill(label, 34), fontsize="medium")
        ax.set_xlabel("score")
        ax.set_ylabel("candidates" if index % n_columns == 0 else "")
        if score_ranges is not None and column in score_ranges:
            low, high = score_ranges[column]
            pad = 0.05 * (high - low) if high > low else 0.5
            ax.set_xlim(low - pad, high + pad)
        missing = int(frame[column].isna().sum())
        if missing:
            ax.text(0.98, 0.95, f"{missing} unscored", transform=ax.transAxes, ha="right", va="top", fontsize="small")
    for ax in list(axes.flat)[len(columns):]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title)
    return fig


def correlation_heatmap(
    correlations: pd.DataFrame,
    title: str | None = None,
    value_label: str = "Spearman",
    fmt: str = ".2f",
) -> Figure:
    """An annotated heatmap of a square correlation matrix (colour scale fixed to [-1, 1]).

    The upper triangle repeats the lower one, so it is masked; the diagonal is kept as a
    visual anchor (it is 1 by definition).
    """
    if correlations.shape[0] != correlations.shape[1] or list(correlations.index) != list(correlations.columns):
        raise ValueError(
            "correlation_heatmap needs a square matrix with the same labels on both axes, got "
            f"index {list(correlations.index)} and columns {list(correlations.columns)}"
        )
    size = len(correlations)
    mask = np.triu(np.ones((size, size), dtype=bool), k=1)
    side = max(2.6, 0.55 * size + 1.4)
    fig, ax = plt.subplots(figsize=(side + 0.9, side), layout="constrained")
    sns.heatmap(
        correlations,
        mask=mask,
        vmin=-1.0,
        vmax=1.0,
        center=0.0,
        cmap=CORRELATION_CMAP,
        annot=True,
        fmt=fmt,
        square=True,
        linewidths=0.5,
        cbar_kws={"label": value_label, "shrink": 0.8},
        ax=ax,
    )
    ax.tick_params(axis="x", rotation=0)
    ax.tick_params(axis="y", rotation=0)
    ax.grid(False)
    if title:
        ax.set_title(title)
    return fig



def horizontal_boxplot(
    table: pd.DataFrame,
    value: str,
    label: str,
    hue: str | None = None,
    title: str | None = None,
    xlabel: str | None = None,
    xlim: tuple[float, float] | None = None,
    row_height: float = 0.26,
) -> Figure:
    """One horizontal box per ``label`` (in order of first appearance), coloured by ``hue``.

    Suited to comparing many distributions on a common axis, e.g. every aspect of every
    dataset rescaled to its scale's [0, 1].
    """
    require_columns(table, [value, label] + ([hue] if hue else []))
    order = list(dict.fromkeys(table[label]))
    height = max(2.0, row_height * len(order) + 1.0)
    fig, ax = plt.subplots(figsize=(7.0, height), layout="constrained")
    sns.boxplot(
        data=table,
        x=value,
        y=label,
        hue=hue,
        order=order,
        orient="h",
        palette=PALETTE if hue else None,
        color=None if hue else sns.color_palette(PALETTE)[0],
        fliersize=1.5,
        linewidth=0.8,
        width=0.7,
        dodge=False,
        ax=ax,
    )
    if xlim is not None:
        ax.set_xlim(*xlim)
    ax.set_xlabel(xlabel or value)
    ax.set_ylabel("")
    if hue and ax.get_legend() is not None:
        ax.legend(title=hue, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    if title:
        ax.set_title(title)
    return fig
