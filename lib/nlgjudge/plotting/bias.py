"""The bias chapter's figure: P(A) per model, prompt and aspect, the paper's beside ours."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from nlgjudge.plotting.style import CONTENT_WIDTH, model_colour


def bias_figure(ours: pd.DataFrame, reported: pd.DataFrame | None = None, title: str | None = None) -> Figure:
    """P(A) of every model, prompt and aspect, one panel per dataset (seed 002 Fig. 3-4 style).

    ``ours`` is :func:`bias_table`'s frame; ``reported`` (optional) has the same columns (model,
    dataset, template, aspect, p_a) for the paper's systems and is drawn in its own row of panels
    above ours, so the two are never mixed. Colour is the model, the same in every figure of the book
    (:func:`nlgjudge.plotting.style.model_colour`); the paper's models are hollow, ours filled; the
    marker's shape is the prompt template; the dashed line at 0.5 is an order-blind judge.
    """
    for name, frame in (("ours", ours), ("reported", reported)):
        if frame is not None:
            missing = [c for c in ("model", "dataset", "template", "aspect", "p_a") if c not in frame.columns]
            if missing:
                raise ValueError(f"bias_figure: the {name} frame lacks columns {missing}")
    if ours.empty:
        raise ValueError("bias_figure: our bias table is empty")
    rows = [("ours", ours)]
    if reported is not None and not reported.empty:
        rows.insert(0, ("paper (Table 9)", reported))
    datasets = list(dict.fromkeys(ours["dataset"]))
    fig, axes = plt.subplots(
        len(rows), len(datasets), figsize=(min(CONTENT_WIDTH, 2.5 * len(datasets) + 2.4), 3.0 * len(rows)),
        squeeze=False, sharey=True, layout="constrained",
    )
    markers = ["o", "s", "^", "D"]
    for r, (label, frame) in enumerate(rows):
        models = list(dict.fromkeys(frame["model"]))
        paper = label != "ours"
        colours = {model: model_colour(str(model)) for model in models}
        templates = sorted({str(t) for t in frame["template"]})
        width = 0.7 / max(len(models), 1)
        for c, dataset in enumerate(datasets):
            ax = axes[r, c]
            ax.axhline(0.5, color="grey", linestyle="--", linewidth=1)
            part = frame[frame["dataset"] == dataset]
            aspects = list(dict.fromkeys(ours.loc[ours["dataset"] == dataset, "aspect"]))
            aspects += [a for a in dict.fromkeys(part["aspect"]) if a not in aspects]
            for m, model in enumerate(models):
                for t, template in enumerate(templates):
                    cells = part[(part["model"] == model) & (part["template"].astype(str) == template)]
                    x = [aspects.index(a) - 0.35 + width * (m + 0.5) for a in cells["aspect"]]
                    ax.scatter(x, cells["p_a"], marker=markers[t % len(markers)], s=40, zorder=3,
                               facecolor="none" if paper else colours[model],
                               edgecolor=colours[model] if paper else "black", linewidth=1.4 if paper else 0.4)
            if part.empty:
                ax.text(0.5, 0.5, "not in this table", ha="center", va="center", transform=ax.transAxes, color="grey")
            ax.set_xticks(range(len(aspects)), aspects)
            ax.set_xlim(-0.5, len(aspects) - 0.5)
            ax.set_ylim(0, 1)
            ax.set_title(f"{label}:\n{dataset}", fontsize=11)
            ax.set_ylabel("P(A)" if c == 0 else "")
        handles = [plt.Line2D([], [], color=colours[m], marker="o", linestyle="", label=m,
                              fillstyle="none" if paper else "full", markeredgewidth=1.4 if paper else 0.4) for m in models]
        handles += [plt.Line2D([], [], color="black", marker=markers[t % len(markers)], linestyle="", label=f"prompt {p}")
                    for t, p in enumerate(templates)]
        axes[r, -1].legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    if title:
        fig.suptitle(title)
    return fig
