"""The worked example's figures: one context's comparison matrix, and each pair in both orders."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from nlgjudge.plotting.style import CORRELATION_CMAP, PALETTE


def probability_heatmap(probs: np.ndarray, labels: Sequence[str], title: str | None = None) -> Figure:
    """``P[i, j]`` = P(A) with candidate i in position A and j in B, annotated; the diagonal is empty."""
    matrix = np.asarray(probs, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] != len(labels):
        raise ValueError(f"probs must be an (N, N) matrix with N labels; got {matrix.shape} and {len(labels)} labels")
    side = max(4.0, 0.42 * len(labels) + 2.0)
    fig, ax = plt.subplots(figsize=(side + 1.2, side), layout="constrained")
    sns.heatmap(pd.DataFrame(matrix, index=labels, columns=labels), annot=True, fmt=".2f", vmin=0, vmax=1, center=0.5,
                cmap=CORRELATION_CMAP, square=True, linewidths=0.4, cbar_kws={"label": "P(A)", "shrink": 0.8},
                annot_kws={"fontsize": 7}, ax=ax)
    ax.set_xlabel("candidate j (in position B)")
    ax.set_ylabel("candidate i (in position A)")
    ax.tick_params(axis="x", rotation=90)
    ax.tick_params(axis="y", rotation=0)
    if title:
        ax.set_title(title)
    return fig


def both_orders(matrices: Mapping[str, np.ndarray], title: str | None = None) -> Figure:
    """Each unordered pair once: P(i wins | i in A) = p_ij against P(i wins | i in B) = 1 - p_ji, one
    panel per judge. An order-blind judge puts every point on the diagonal; a judge that always
    answers A puts them in the top-left corner (i wins when first, loses when second)."""
    fig, axes = plt.subplots(1, len(matrices), figsize=(3.6 * len(matrices) + 0.4, 3.6), squeeze=False,
                             layout="constrained")
    colour = sns.color_palette(PALETTE, 1)[0]
    for ax, (name, probs) in zip(axes.flat, matrices.items(), strict=True):
        p = np.asarray(probs, dtype=float)
        upper = np.triu_indices_from(p, k=1)
        ax.scatter(p[upper], 1.0 - p.T[upper], s=14, alpha=0.7, color=colour)
        ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=0.8)
        ax.set_xlim(-0.02, 1.02)
        ax.set_ylim(-0.02, 1.02)
        ax.set_aspect("equal")
        ax.set_xlabel("$p_{ij}$: i wins when shown first")
        ax.set_ylabel("$1 - p_{ji}$: i wins when shown second")
        ax.set_title(name, fontsize="medium")
    if title:
        fig.suptitle(title)
    return fig
