"""The Elo chapter's figures: ROUGE per contestant, Elo trajectories, final ratings, kappa, Fig. 5."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from nlgjudge.plotting.style import CORRELATION_CMAP, PALETTE, PANEL_HEIGHT, PANEL_WIDTH, model_colour, require_columns


#: The reference summary's colour (also :data:`nlgjudge.plotting.style.MODEL_COLOURS`' "reference").
REFERENCE_COLOUR = model_colour("reference")


from nlgjudge.prose import fixed  # noqa: E402


def _wrapped(title: str, width: int = 28) -> str:
    """A panel title on as many lines as it needs: a long judge name with its protocol
    ("qwen2.5-coder-1.5b-instruct (both orders, debiased)") ran into its neighbour's."""
    import textwrap

    return "\n".join(textwrap.wrap(title, width)) or title


def _colours(contestants: Sequence[str]) -> dict[str, str]:
    """One colour per contestant, the model's colour in every figure of the book
    (:func:`nlgjudge.plotting.style.model_colour`); the reference summary is drawn in dark grey."""
    return {name: model_colour(name) for name in contestants}


def rouge_bars(scores: pd.DataFrame, title: str | None = None) -> Figure:
    """Seed 004 Fig. 1: mean ROUGE F1 x100 per contestant and ROUGE variant (``scores``: contestant,
    metric, value)."""
    require_columns(scores, ["contestant", "metric", "value"])
    fig, ax = plt.subplots(figsize=(9.0, 3.6), layout="constrained")
    sns.barplot(data=scores, x="contestant", y="value", hue="metric", palette=PALETTE, errorbar=None, ax=ax)
    for container in ax.containers:
        ax.bar_label(container, fmt="%.1f", fontsize=10, padding=1)
    ax.set_xlabel("")
    ax.set_ylabel("F1 x100 against the reference")
    ax.set_ylim(0, float(scores["value"].max()) * 1.12)  # room for the value labels
    ax.legend(title="", frameon=False, fontsize="small", ncols=3, loc="upper center", bbox_to_anchor=(0.5, -0.1))
    if title:
        ax.set_title(title)
    return fig


def elo_trajectories(trajectories: Mapping[str, pd.DataFrame], contestants: Sequence[str], title: str | None = None) -> Figure:
    """Seed 004 Figs. 2, 6, 7: each contestant's Elo over the encounters, one panel per judge
    (``trajectories``: judge -> :func:`nlgjudge.analysis.elo.elo_trajectory` frame)."""
    if not trajectories:
        raise ValueError("elo_trajectories: no judge to draw")
    colours = _colours(contestants)
    n = len(trajectories)
    columns = min(n, 2)
    rows = int(np.ceil(n / columns))
    fig, axes = plt.subplots(rows, columns, figsize=(PANEL_WIDTH * 1.7 * columns, PANEL_HEIGHT * 1.2 * rows),
                             squeeze=False, sharey=True, layout="constrained")
    for ax, (judge, frame) in zip(axes.flat, trajectories.items()):
        require_columns(frame, ["update", "contestant", "elo"])
        for contestant in contestants:
            line = frame[frame["contestant"] == contestant]
            if len(line):
                ax.plot(line["update"], line["elo"], color=colours[contestant], linewidth=1.1, label=contestant)
        ax.axhline(1000, color="grey", linewidth=0.6, linestyle="--")
        ax.set_title(_wrapped(judge), fontsize="medium")
        ax.set_xlabel("encounters judged")
        ax.set_ylabel("Elo")
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right upper", frameon=False, fontsize="small")
    if title:
        fig.suptitle(title)
    return fig


def final_ratings(table: pd.DataFrame, title: str | None = None) -> Figure:
    """Seed 004 Figs. 3-4 beside Bradley-Terry: per judge (one panel each) and contestant, the final
    Elo of the paper's single order, the middle 95% of final Elo over random orders, and the
    Bradley-Terry strength with its bootstrap interval (``table``: judge, contestant, elo, order_low,
    order_high, strength, ci_low, ci_high)."""
    require_columns(table, ["judge", "contestant", "elo", "order_low", "order_high", "strength", "ci_low", "ci_high"])
    judges = list(dict.fromkeys(table["judge"]))
    # Two panels a row: one row of seven judges is unreadable at page width.
    columns = min(len(judges), 2)
    rows = int(np.ceil(len(judges) / columns))
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 2.9 * rows + 0.6),
                             squeeze=False, sharex=True, layout="constrained")
    blue, orange = sns.color_palette(PALETTE, 2)
    for ax in axes.flat[len(judges):]:
        ax.set_visible(False)
    for ax, judge in zip(axes.flat, judges):
        part = table[table["judge"] == judge].sort_values("strength")
        y = np.arange(len(part))
        # Intervals are drawn as lines of their own: a percentile interval need not contain the
        # point (the one seeded order's Elo can fall outside the middle 95% of random orders).
        ax.hlines(y + 0.15, part["ci_low"], part["ci_high"], color=blue, linewidth=1.2)
        ax.plot(part["strength"], y + 0.15, "o", color=blue, markersize=4, label="Bradley-Terry (95%, t x bootstrap SE)")
        ax.hlines(y - 0.15, part["order_low"], part["order_high"], color=orange, linewidth=1.2)
        ax.plot(part["elo"], y - 0.15, "s", color=orange, markersize=4, label="Elo (middle 95% over orders)")
        ax.set_yticks(y, part["contestant"])
        ax.axvline(1000, color="grey", linewidth=0.6, linestyle="--")
        ax.set_title(_wrapped(judge), fontsize="medium")
        ax.set_xlabel("rating (Elo scale)")
        ax.xaxis.set_tick_params(labelbottom=True)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=2, fontsize="small", frameon=False)
    if title:
        fig.suptitle(title)
    return fig


def kappa_heatmap(kappas: pd.DataFrame, title: str | None = None) -> Figure:
    """Cohen's kappa between every two judges (symmetric; the diagonal is 1 by definition), annotated
    with the value and, up to 6 judges, the bootstrap interval (``kappas``: judge_1, judge_2, kappa,
    ci_low, ci_high)."""
    require_columns(kappas, ["judge_1", "judge_2", "kappa", "ci_low", "ci_high"])
    judges = list(dict.fromkeys([*kappas["judge_1"], *kappas["judge_2"]]))
    matrix = pd.DataFrame(np.eye(len(judges)), index=judges, columns=judges)
    labels = pd.DataFrame("1", index=judges, columns=judges)
    # Beyond 6 judges the intervals no longer fit legibly in a cell: the cell shows kappa alone
    # (the table under the figure has every interval).
    with_interval = len(judges) <= 6
    for row in kappas.itertuples(index=False):
        matrix.loc[row.judge_1, row.judge_2] = matrix.loc[row.judge_2, row.judge_1] = row.kappa
        # numbers that round to zero have no sign ("0.00", never "-0.00")
        interval = f"\n[{fixed(row.ci_low, 2)}, {fixed(row.ci_high, 2)}]" if with_interval and np.isfinite(row.ci_low) else ""
        text = "n/a" if np.isnan(row.kappa) else f"{fixed(row.kappa, 2)}{interval}"
        labels.loc[row.judge_1, row.judge_2] = labels.loc[row.judge_2, row.judge_1] = text
    # Legible at page width with many judges: a bounded size, long names broken before their
    # protocol ("(one order)"), the interval on a second, smaller line.
    side = min(7.0, max(3.2, 0.85 * len(judges) + 1.4))
    names = [name.replace(" (", "\n(") for name in judges]
    fig, ax = plt.subplots(figsize=(side + 2.8, side), layout="constrained")
    sns.heatmap(matrix.astype(float), annot=labels.to_numpy(), fmt="", vmin=-1, vmax=1, center=0, cmap=CORRELATION_CMAP,
                square=False, linewidths=0.5, cbar_kws={"label": "Cohen's kappa", "shrink": 0.8}, ax=ax,
                annot_kws={"fontsize": 8 if 4 < len(judges) <= 6 else "medium" if not with_interval else "small"},
                xticklabels=names, yticklabels=names)
    ax.set_xticklabels(ax.get_xticklabels(), rotation=35, ha="right", rotation_mode="anchor")
    ax.tick_params(axis="y", rotation=0)
    if title:
        ax.set_title(title)
    return fig


def regression_panels(
    points: Mapping[str, pd.DataFrame], fits: pd.DataFrame, title: str | None = None, metric: str = "ROUGE-Lsum"
) -> Figure:
    """Seed 004 Fig. 5: per model pair, the proportion of encounters where the judge chose model 1
    in each bin of the ``metric`` difference (dot size = encounters) and the weighted line
    (``points``: "model_1 vs model_2" -> frame of bin_centre, proportion, count; ``fits``: the
    :func:`nlgjudge.analysis.elo.rouge_difference_regression` rows of those pairs)."""
    if not points:
        raise ValueError("regression_panels: no model pair to draw")
    n = len(points)
    columns = min(n, 3)
    rows = int(np.ceil(n / columns))
    fig, axes = plt.subplots(rows, columns, figsize=(PANEL_WIDTH * 1.1 * columns, PANEL_HEIGHT * 1.05 * rows + 0.4),
                             squeeze=False, sharey=True, layout="constrained")
    fitted = fits.assign(pair=fits["model_1"] + " vs " + fits["model_2"]).set_index("pair")
    for k, (ax, (pair, frame)) in enumerate(zip(axes.flat, points.items())):
        ax.scatter(frame["bin_centre"], frame["proportion"], s=8 + 4 * frame["count"], alpha=0.6)
        fit = fitted.loc[pair]
        xs = np.linspace(frame["bin_centre"].min(), frame["bin_centre"].max(), 20)
        ax.plot(xs, fit["intercept"] + fit["slope"] * xs, color="black", linewidth=1)
        ax.set_title(f"{pair}\nslope {fit['slope']:.2f}, r² {fit['r_squared']:.2f}", fontsize="small")
        # one short axis label, on the bottom panel of each column only: long labels collided
        last_in_column = k + columns >= n
        ax.set_xlabel(f"{metric}: model 2 - model 1" if last_in_column else "", fontsize="small")
        ax.set_ylabel("P(model 1 chosen)" if k % columns == 0 else "")
        ax.set_ylim(-0.05, 1.05)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title)
    return fig
