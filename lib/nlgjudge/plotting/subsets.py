"""The subsets chapter's figures: Spearman against the number of comparisons, per strategy."""

from __future__ import annotations

import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from nlgjudge.analysis.subsets import STRATEGY_ORDER
from nlgjudge.plotting.style import PALETTE, PANEL_WIDTH, panel_grid


def _strategy_palette() -> dict[str, tuple[float, float, float]]:
    # Fixed colours per strategy (colour-blind palette entries far apart: blue, orange, green, purple, grey).
    colours = sns.color_palette(PALETTE, 10)
    return dict(zip(STRATEGY_ORDER, [colours[0], colours[1], colours[2], colours[4], colours[7]]))


def plot_subset_curves(
    curves: pd.DataFrame,
    panel: str = "strategy",
    title: str | None = None,
    x: str = "budget",
) -> Figure:
    """Spearman x100 against the number of comparisons with confidence bands.

    ``curves``: rows of :func:`subset_curve_frame` for ONE comparison set (or already averaged), i.e.
    unique (strategy, debiased, budget). ``panel="strategy"``: one panel per strategy, plain and
    debiased curves in each (seed 000 Fig. 4 split up); ``panel="debiased"``: two panels (plain,
    debiased) with one line per strategy, to compare strategies at equal R. ``x``: "budget" (R) or
    "fraction" (R / N(N-1)).
    """
    if panel not in ("strategy", "debiased"):
        raise ValueError(f"panel must be 'strategy' or 'debiased'; got {panel!r}")
    if x not in ("budget", "fraction"):
        raise ValueError(f"x must be 'budget' or 'fraction'; got {x!r}")
    if curves.duplicated(["strategy", "debiased", "budget"]).any():
        raise ValueError("plot_subset_curves draws one comparison set: filter the frame to one model, dataset, "
                         "template and aspect (or average it) first")
    strategies = [s for s in STRATEGY_ORDER if s in set(curves["strategy"])]
    palette = _strategy_palette()
    if panel == "strategy":
        panels = [(s, curves[curves["strategy"] == s]) for s in strategies]
    else:
        panels = [(("debiased" if flag else "plain (eq. 2)"), curves[curves["debiased"] == flag])
                  for flag in sorted(set(curves["debiased"]))]
    # three panels a row at most: five in one row were shrunk to unreadable text at page width
    fig, axes = panel_grid(len(panels), 3, PANEL_WIDTH, 3.0, sharey=True)
    for ax, (name, part) in zip(axes, panels, strict=True):
        if panel == "strategy":
            lines = [((("debiased" if flag else "plain")), part[part["debiased"] == flag],
                      "tab:orange" if flag else "tab:blue") for flag in sorted(set(part["debiased"]))]
        else:
            lines = [(s, part[part["strategy"] == s], palette[s]) for s in strategies]
        for label, line, colour in lines:
            line = line.sort_values("budget")
            ax.plot(line[x], line["spearman_x100"], color=colour, label=label, linewidth=1.4)
            ax.fill_between(line[x], line["ci_low_x100"], line["ci_high_x100"], color=colour, alpha=0.25, linewidth=0)
        ax.set_title(str(name), fontsize="medium")
        ax.set_xlabel("comparisons R" if x == "budget" else "fraction of all N(N-1) comparisons")
        ax.set_ylabel("Spearman x100")
        ax.tick_params(axis="y", labelleft=True)
    axes[-1].legend(loc="lower right", frameon=False)
    if title:
        fig.suptitle(title)
    return fig


def plot_curve_grid(curves: pd.DataFrame, debiased: bool = False, title: str | None = None) -> Figure:
    """Seed 000 Fig. 5 style: one panel per (dataset, aspect), one line per strategy, x = fraction of
    all comparisons (so datasets with different N share an axis). ``curves`` must hold one model;
    the templates are averaged (mean curve and mean band; the band is indicative)."""
    if curves["model"].nunique() != 1:
        raise ValueError("plot_curve_grid draws one model; filter the frame first")
    part = curves[curves["debiased"] == debiased]
    if part.empty:
        raise ValueError(f"no curves with debiased={debiased}")
    averaged = part.groupby(["dataset", "aspect", "strategy", "budget", "fraction"], sort=False)[
        ["spearman_x100", "ci_low_x100", "ci_high_x100"]].mean().reset_index()
    cells = list(dict.fromkeys(zip(averaged["dataset"], averaged["aspect"])))
    fig, axes = panel_grid(len(cells), 3, PANEL_WIDTH, 2.6)  # three a row: four were shrunk at page width
    palette = _strategy_palette()
    for ax, (dataset, aspect) in zip(axes, cells):
        cell = averaged[(averaged["dataset"] == dataset) & (averaged["aspect"] == aspect)]
        for strategy in [s for s in STRATEGY_ORDER if s in set(cell["strategy"])]:
            line = cell[cell["strategy"] == strategy].sort_values("budget")
            ax.plot(line["fraction"], line["spearman_x100"], color=palette[strategy], label=strategy, linewidth=1.2)
            ax.fill_between(line["fraction"], line["ci_low_x100"], line["ci_high_x100"], color=palette[strategy],
                            alpha=0.2, linewidth=0)
        ax.set_title(f"{dataset} {aspect}", fontsize="medium")
        ax.set_xlabel("fraction of N(N-1)")
        ax.set_ylabel("Spearman x100")
    axes[0].legend(frameon=False, loc="lower right")
    fig.suptitle(title or f"{curves['model'].iloc[0]}: {'debiased' if debiased else 'plain'} decisions, "
                 "mean over prompts")
    return fig
