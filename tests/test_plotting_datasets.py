"""nlgjudge.plotting.datasets (and the shared style): figures are built correctly, bad input is refused, nothing is left open."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import QuadMesh

from nlgjudge import plotting
from nlgjudge.plotting import datasets as figures


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture
def scores() -> pd.DataFrame:
    # means of three 1-5 ratings: steps of 1/3
    return pd.DataFrame(
        {
            "COH": [1.0, 1 + 1 / 3, 1 + 1 / 3, 2 + 2 / 3, 5.0, 5.0],
            "FLU": [5.0, 5.0, 5.0, 4 + 2 / 3, 3.0, np.nan],
            "other": list("abcdef"),
        }
    )


def test_score_distributions_one_panel_per_aspect_on_the_full_scale(scores: pd.DataFrame) -> None:
    fig = figures.score_distributions(scores, {"COH": "coherence", "FLU": "fluency"}, {"COH": (1, 5), "FLU": (1, 5)})
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 2
    assert "COH" in visible[0].get_title() and "coherence" in visible[0].get_title()
    low, high = visible[0].get_xlim()
    assert low < 1 and high > 5  # the whole 1-5 scale is shown, not just the observed spread
    # one bar per observed value: 1/3 steps are not merged into integer bins
    heights = sorted(p.get_height() for p in visible[0].patches)
    assert heights == [1, 1, 2, 2]
    # the unscored candidate is reported, not silently dropped
    assert any("1 unscored" in t.get_text() for t in visible[1].texts)


def test_four_aspects_are_laid_out_two_by_two(scores: pd.DataFrame) -> None:
    frame = scores.assign(CON=scores["COH"], REL=scores["COH"])
    fig = figures.score_distributions(frame, {"COH": "c", "FLU": "f", "CON": "n", "REL": "r"})
    assert fig.axes[0].get_subplotspec().get_gridspec().get_geometry() == (2, 2)


def test_score_distributions_refuses_unknown_columns_and_no_aspects(scores: pd.DataFrame) -> None:
    with pytest.raises(KeyError, match="REL"):
        figures.score_distributions(scores, {"REL": "relevance"})
    with pytest.raises(ValueError, match="at least one aspect"):
        figures.score_distributions(scores, {})


def test_correlation_heatmap_is_annotated_on_a_fixed_scale() -> None:
    matrix = pd.DataFrame([[1.0, 0.25], [0.25, 1.0]], index=["A", "B"], columns=["A", "B"])
    fig = figures.correlation_heatmap(matrix, title="t")
    ax = fig.axes[0]
    mesh = next(c for c in ax.collections if isinstance(c, QuadMesh))
    assert (mesh.norm.vmin, mesh.norm.vmax) == (-1.0, 1.0)  # colours comparable across datasets
    labels = sorted(t.get_text() for t in ax.texts)
    assert labels == ["0.25", "1.00", "1.00"]  # the upper triangle is masked


def test_correlation_heatmap_refuses_a_non_square_matrix() -> None:
    with pytest.raises(ValueError, match="square"):
        figures.correlation_heatmap(pd.DataFrame([[1.0, 0.5]], index=["A"], columns=["A", "B"]))


def test_show_closes_the_figure(scores: pd.DataFrame) -> None:
    plotting.set_style()
    fig = figures.score_distributions(scores, {"COH": "coherence"})
    number = fig.number
    plotting.show(fig)
    assert not plt.fignum_exists(number)


def test_finely_spaced_means_become_a_histogram_on_the_scale_grid() -> None:
    # means over three or four raters (thirds and quarters) on a 1-3 scale: too many thin bars
    values = [1.0, 1.25, 1 + 1 / 3, 1.5, 1 + 2 / 3, 1.75, 2.0, 2.25, 2 + 1 / 3, 2.5, 2 + 2 / 3, 2.75, 3.0]
    fig = figures.score_distributions(pd.DataFrame({"FLU": values}), {"FLU": "fluency"}, {"FLU": (1, 3)})
    bars = [p for p in fig.axes[0].patches if p.get_height() > 0]
    widths = {round(p.get_width(), 6) for p in bars}
    assert widths == {0.25}  # an eighth of the scale
    assert sum(p.get_height() for p in bars) == len(values)  # every score is counted once


def test_horizontal_boxplot_has_one_row_per_label_in_order() -> None:
    table = pd.DataFrame(
        {
            "label": ["b FLU"] * 3 + ["a COH"] * 3,
            "position": [0.1, 0.5, 0.9, 0.2, 0.3, 1.0],
            "dataset": ["b"] * 3 + ["a"] * 3,
        }
    )
    fig = figures.horizontal_boxplot(table, value="position", label="label", hue="dataset", xlim=(0, 1))
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["b FLU", "a COH"]
    assert ax.get_xlim() == (0.0, 1.0)
    with pytest.raises(KeyError, match="score"):
        figures.horizontal_boxplot(table, value="score", label="label")
