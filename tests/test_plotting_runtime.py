"""The runtime chapter's figures: one panel per dataset, flipped decisions drawn apart."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from nlgjudge.plotting.runtime import difference_intervals, probability_scatter


def test_scatter_has_a_panel_per_dataset_and_counts_the_flips() -> None:
    frame = pd.DataFrame({
        "dataset": ["a", "a", "a", "b"],
        "p_reference": [0.2, 0.6, 0.51, 0.9],
        "p_other": [0.25, 0.62, 0.49, 0.88],
        "agree": [True, True, False, True],
    })
    fig = probability_scatter(frame, "torch", "llama.cpp")
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == ["a", "b"]
    labels = [t.get_text() for t in visible[0].get_legend().get_texts()]
    assert labels == ["same decision (2)", "decision flipped (1)"]
    assert visible[0].get_xlabel() == "P(A), torch" and visible[0].get_ylabel() == "P(A), llama.cpp"
    plt.close(fig)


def test_intervals_mark_rows_without_an_interval_and_refuse_an_empty_table() -> None:
    table = pd.DataFrame({
        "dataset": ["a", "a"], "label": ["COH", "FLU"],
        "difference": [1.0, -2.0], "difference_low": [0.0, np.nan], "difference_high": [2.0, np.nan],
    })
    fig = difference_intervals(table, "Spearman x100")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["COH", "FLU"]
    assert ax.get_ylim()[0] > ax.get_ylim()[1]  # first row on top
    plt.close(fig)
    with pytest.raises(ValueError, match="empty"):
        difference_intervals(table.iloc[:0], "x")
    with pytest.raises(KeyError, match="label"):
        difference_intervals(table.drop(columns=["label"]), "x")
