"""The narcissism chapter's heatmaps: legible grids, own cells outlined, bad layouts refused."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from nlgjudge.plotting.narcissism import HEATMAP_SCALE_LABEL, heatmap_panels, interval_dots

MODELS = ["qwen2.5-coder-1.5b-instruct", "gemma-3-270m"]


def _panel() -> tuple[pd.DataFrame, pd.Series]:
    table = pd.DataFrame([[1.0, 0.0], [0.25, 1.0]], index=MODELS, columns=MODELS)
    return table, pd.Series({MODELS[0]: 70.4, MODELS[1]: 24.6})


@pytest.mark.parametrize(("n", "visible", "shape"), [(1, 1, (1, 1)), (2, 2, (1, 2)), (3, 3, (2, 2))])
def test_panels_wrap_at_two_a_row_and_hide_the_empty_slot(n: int, visible: int, shape: tuple[int, int]) -> None:
    table, words = _panel()
    names = [f"d{k}" for k in range(n)]
    fig = heatmap_panels({k: table for k in names}, {k: words for k in names}, title="t")
    heatmaps = [ax for ax in fig.axes if ax.get_title() in names]
    assert len(heatmaps) == visible and all(ax.get_visible() for ax in heatmaps)
    grid = heatmaps[0].get_subplotspec().get_gridspec()
    assert (grid.nrows, grid.ncols) == shape
    assert len([ax for ax in fig.axes if not ax.get_visible()]) == shape[0] * shape[1] - n
    # the own-model cells (both evaluators wrote summaries) are outlined, and lengths are in the labels
    assert len(heatmaps[0].patches) == 2
    assert [t.get_text() for t in heatmaps[0].get_xticklabels()][1].endswith("(25)")
    # one colour bar for all panels, saying that each row (evaluator) is rescaled on its own
    bars = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
    assert len(bars) == 1 and "per evaluator" in bars[0].get_xlabel() and "per evaluator" in HEATMAP_SCALE_LABEL
    plt.close(fig)


def test_an_empty_figure_or_a_bad_layout_is_refused() -> None:
    table, words = _panel()
    with pytest.raises(ValueError, match="no heatmap"):
        heatmap_panels({}, {})
    with pytest.raises(ValueError, match="max_columns"):
        heatmap_panels({"d": table}, {"d": words}, max_columns=0)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 6])
def test_interval_panels_wrap_and_list_the_first_row_on_top(n: int) -> None:
    table = pd.DataFrame({"v": [0.5, -0.2], "lo": [0.1, -0.4], "hi": [0.9, 0.0]}, index=["first", "second"])
    fig = interval_dots({f"p{k}": table for k in range(n)}, "v", "lo", "hi", "x")
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == n
    grid = panels[0].get_subplotspec().get_gridspec()
    assert grid.ncols == min(n, 3) and grid.nrows == -(-n // 3)
    for ax in panels:  # whatever the number of panels, the first row is drawn on top
        low, high = ax.get_ylim()
        assert low > high
    with pytest.raises(ValueError, match="max_columns"):
        interval_dots({"p": table}, "v", "lo", "hi", "x", max_columns=0)
    plt.close(fig)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_the_four_models_tick_labels_do_not_run_together_in_any_panel_under_the_book_style(n: int) -> None:
    """A colour bar beside one panel made it narrower: "Gemma 3" ran into "SmolLM2" there. The book's
    style (larger tick labels) is set here, as in the book and the full suite, and undone after."""
    import numpy as np

    from nlgjudge.plotting.style import fit_to_page, legibility_problems, set_style

    models = ["qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-0.5b-instruct", "smollm2-135m-instruct", "gemma-3-270m-it"]
    table = pd.DataFrame(np.linspace(0, 1, 16).reshape(4, 4), index=models, columns=models)
    words = pd.Series(dict(zip(models, [70.0, 74.0, 171.0, 69.0], strict=True)))
    names = [f"d{k}" for k in range(n)]
    with plt.rc_context():
        set_style()
        fig = fit_to_page(heatmap_panels({k: table for k in names}, {k: words for k in names}))
        assert legibility_problems(fig) == []
        assert len([ax for ax in fig.axes if ax.get_label() == "<colorbar>"]) == 1
        plt.close(fig)
