"""Figures of ``nlgjudge rank`` and the "Rank your own outputs" chapter: pairwise win rates, leaderboard."""

from __future__ import annotations

import os

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from nlgjudge.plotting.style import CORRELATION_CMAP, PALETTE, require_columns, set_style


def drawable(text: str) -> str:
    """``text`` with every character the figures' fonts cannot draw (an emoji in a system's name)
    written as its code point, ``<U+1F600>``: a legible label instead of a box, and no glyph warning;
    and every ``$`` escaped, so that a name such as ``$x^{$`` is drawn as written, never parsed as a
    formula (which would fail the run after the judging)."""
    from matplotlib import font_manager

    families = plt.rcParams["font.family"]
    charmaps = [font_manager.get_font(font_manager.findfont(font_manager.FontProperties(family=[family]))).get_charmap()
                for family in ([families] if isinstance(families, str) else families)]
    return "".join("\\$" if ch == "$" else ch if ch.isspace() or any(ord(ch) in charmap for charmap in charmaps)
                   else f"<U+{ord(ch):04X}>" for ch in text)


def win_matrix(win_rates: pd.DataFrame, order: list[str] | None = None, title: str | None = None) -> Figure:
    """Heatmap of pairwise win rates (row system beats column system, debiased), systems in ``order``
    (best first); blank where two systems were never compared."""
    order = list(win_rates.index) if order is None else list(order)
    matrix = win_rates.loc[order, order].astype(float)
    labels_of = [drawable(str(name)) for name in order]
    matrix = pd.DataFrame(matrix.to_numpy(), index=labels_of, columns=labels_of)
    labels = matrix.map(lambda v: "" if np.isnan(v) else f"{v:.2f}")
    side = max(3.4, 0.75 * len(order) + 2.0)
    fig, ax = plt.subplots(figsize=(side + 1.0, side), layout="constrained")
    sns.heatmap(matrix, annot=labels.to_numpy(), fmt="", vmin=0, vmax=1, center=0.5, cmap=CORRELATION_CMAP, square=True,
                linewidths=0.5, cbar_kws={"label": "share of comparisons won", "shrink": 0.8}, ax=ax,
                annot_kws={"fontsize": "small"})
    ax.set_xlabel("against")
    ax.set_ylabel("system (row) wins")
    ax.tick_params(axis="x", rotation=30)
    for label in ax.get_xticklabels():  # a slanted label ends at its column, not centred across its neighbours
        label.set_horizontalalignment("right")
        label.set_rotation_mode("anchor")
    ax.tick_params(axis="y", rotation=0)
    ax.set_title(drawable(title or "Pairwise win rates (debiased)"))
    return fig


def save_win_matrix(win_rates: pd.DataFrame, order: list[str], path: str | os.PathLike[str], title: str | None = None) -> None:
    """Draw :func:`win_matrix` in the book's style and save it as a PNG at ``path`` (for ``nlgjudge rank``)."""
    import warnings

    # the plotting libraries' own deprecation notices are theirs, not the user's: a run with warnings as
    # errors (PYTHONWARNINGS=error) must not lose its results to them
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        set_style()
        fig = win_matrix(win_rates, order, title)
        try:
            fig.savefig(path, format="png", dpi=150, bbox_inches="tight")  # long titles and labels are not clipped
        finally:
            plt.close(fig)


def leaderboard_intervals(leaderboard: pd.DataFrame, title: str | None = None, reference: pd.Series | None = None) -> Figure:
    """Bradley-Terry score per system with its interval (best at the top); ``reference`` (system ->
    rank by another judge, e.g. people) is written beside each name."""
    require_columns(leaderboard, ["system", "score", "ci_low", "ci_high"])
    board = leaderboard.dropna(subset=["score"]).sort_values("score")
    y = np.arange(len(board))
    blue = sns.color_palette(PALETTE, 1)[0]
    fig, ax = plt.subplots(figsize=(6.4, 0.45 * len(board) + 1.4), layout="constrained")
    ax.hlines(y, board["ci_low"], board["ci_high"], color=blue, linewidth=1.6)
    ax.plot(board["score"], y, "o", color=blue, markersize=5)
    names = [drawable(str(s)) for s in board["system"]]
    if reference is not None:
        names = [f"{n} (people: #{int(reference[s])})" if s in reference.index and np.isfinite(reference[s]) else n
                 for s, n in zip(board["system"], names, strict=True)]
    ax.set_yticks(y, names)
    ax.axvline(0, color="grey", linewidth=0.6, linestyle="--")
    ax.set_xlabel("Bradley-Terry score (log-strength, mean 0)")
    ax.set_title(drawable(title or "Leaderboard with intervals"))
    return fig
