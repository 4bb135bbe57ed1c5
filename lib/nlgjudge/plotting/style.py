"""The book's one plotting style: palette, colour maps, panel sizes, theme, and inline display.

Every figure helper in :mod:`nlgjudge.plotting` builds and returns a
:class:`matplotlib.figure.Figure` without saving it anywhere; a notebook shows it inline with
:func:`show` (which displays, then closes it, so nothing is drawn twice and no figure state leaks
into the next cell). Call :func:`set_style` once per notebook.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

#: Colour-blind-safe qualitative palette shared by all chapters.
PALETTE = "colorblind"
#: Diverging colour map for correlations (centred on 0).
CORRELATION_CMAP = "vlag"
#: Width of one small-multiple panel, in inches.
PANEL_WIDTH = 3.2
PANEL_HEIGHT = 2.6
#: Score columns with at most this many distinct values, spaced at least 1/MIN_BARS_PER_SCALE of
#: the scale apart, are drawn as one bar per value; others as a histogram.
MAX_DISCRETE_VALUES = 25
MIN_BARS_PER_SCALE = 15
HISTOGRAM_BINS_PER_SCALE = 8


def set_style(font_scale: float = 0.9) -> None:
    """Apply the book's seaborn theme and figure defaults."""
    sns.set_theme(context="notebook", style="whitegrid", palette=PALETTE, font_scale=font_scale)
    plt.rcParams.update(
        {
            "figure.dpi": 100,
            "figure.autolayout": False,
            "axes.titleweight": "bold",
            "axes.spines.top": False,
            "axes.spines.right": False,
        }
    )


def show(fig: Figure) -> None:
    """Display ``fig`` inline (as the cell's output) and close it."""
    from IPython.display import display  # imported late: plotting is usable without IPython

    display(fig)
    plt.close(fig)


def panel_grid(
    n: int, max_columns: int, panel_width: float, panel_height: float, max_width: float = 12.0, **subplots: object,
) -> tuple[Figure, list[plt.Axes]]:
    """A figure of ``n`` panels, at most ``max_columns`` a row (legible at page width), and its ``n``
    axes in reading order; the grid's unused slots are hidden."""
    if n < 1:
        raise ValueError("nothing to draw")
    if max_columns < 1:
        raise ValueError(f"max_columns must be at least 1; got {max_columns}")
    columns = min(n, max_columns)
    rows = -(-n // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(min(max_width, panel_width * columns), panel_height * rows),
                             layout="constrained", squeeze=False, **subplots)
    flat = list(axes.flat)
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def require_columns(frame: pd.DataFrame, columns: Sequence[str]) -> None:
    """Raise a KeyError naming the columns a figure needs that ``frame`` lacks."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise KeyError(
            f"columns {missing} are not in the frame (it has {list(frame.columns)}); "
            "pass aspect names that are column names"
        )
