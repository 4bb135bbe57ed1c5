"""The Elo chapter's figures draw what they are given, even a point outside its interval."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest

from nlgjudge.plotting.elo import final_ratings, kappa_heatmap


def test_final_ratings_accept_a_point_outside_its_order_range() -> None:
    table = pd.DataFrame({
        "judge": ["j", "j"], "contestant": ["A", "B"], "elo": [1100.0, 900.0],
        "order_low": [1010.0, 950.0], "order_high": [1050.0, 990.0],  # A's seeded order lies above its range
        "strength": [1040.0, 960.0], "ci_low": [1000.0, 920.0], "ci_high": [1080.0, 1000.0],
    })
    fig = final_ratings(table, title="t")
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["B", "A"]  # sorted by strength
    with pytest.raises(KeyError, match="order_low"):
        final_ratings(table.drop(columns="order_low"))


def test_kappa_heatmap_is_symmetric_with_intervals_in_the_cells() -> None:
    kappas = pd.DataFrame({"judge_1": ["a"], "judge_2": ["b"], "kappa": [0.32], "ci_low": [0.1], "ci_high": [0.5]})
    fig = kappa_heatmap(kappas)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts.count("0.32\n[0.10, 0.50]") == 2 and texts.count("1") == 2


def test_kappa_heatmap_with_many_judges_shows_kappa_alone_in_the_cells() -> None:
    names = [f"j{k}" for k in range(7)]
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    kappas = pd.DataFrame({"judge_1": [a for a, _ in pairs], "judge_2": [b for _, b in pairs], "kappa": 0.25,
                           "ci_low": 0.1, "ci_high": 0.4})
    texts = [t.get_text() for t in kappa_heatmap(kappas).axes[0].texts]
    assert texts.count("0.25") == 2 * len(pairs) and not any("[" in t for t in texts)


def test_every_contestant_has_its_own_clearly_different_colour() -> None:
    import numpy as np

    from nlgjudge.plotting.elo import _colours

    names = ["BART", "PEGASUS", "BRIO", "GPT-4", "ChatGPT", "GPT-3", "reference"]
    colours = _colours(names)
    from matplotlib.colors import to_rgb

    rgb = np.array([to_rgb(colours[n]) for n in names])
    distances = np.sqrt(((rgb[:, None, :] - rgb[None, :, :]) ** 2).sum(-1))[np.triu_indices(len(names), 1)]
    assert distances.min() > 0.25  # the old palette's PEGASUS and GPT-4 were 0.12 apart


def test_fig5_panels_label_the_x_axis_once_per_column() -> None:
    import numpy as np

    from nlgjudge.plotting.elo import regression_panels

    bins = pd.DataFrame({"bin_centre": [-0.1, 0.0, 0.1], "proportion": [0.6, 0.5, 0.4], "count": [3, 4, 3]})
    pairs = [f"A{k} vs B{k}" for k in range(5)]
    fits = pd.DataFrame({"model_1": [p.split(" vs ")[0] for p in pairs], "model_2": [p.split(" vs ")[1] for p in pairs],
                         "slope": -1.0, "intercept": 0.5, "r_squared": 0.9})
    fig = regression_panels(dict.fromkeys(pairs, bins), fits)
    labels = [ax.get_xlabel() for ax in fig.axes if ax.get_visible()]
    assert sum(bool(label) for label in labels) == 3 and all(label in ("", "ROUGE-Lsum: model 2 - model 1") for label in labels)
    assert np.isclose(len(fig.axes), 6)
