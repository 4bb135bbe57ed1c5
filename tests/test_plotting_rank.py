"""The rank tool's figure file: nothing of a long title or label is clipped off the PNG."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.image as mpimg
import numpy as np
import pandas as pd

from nlgjudge.plotting.rank import save_win_matrix


def test_the_saved_win_matrix_keeps_a_long_title_and_long_names(tmp_path) -> None:
    names = ["a system with a long descriptive name", "B", "C"]
    rates = pd.DataFrame(np.full((3, 3), 0.5), index=names, columns=names)
    short, long = tmp_path / "short.png", tmp_path / "long.png"
    save_win_matrix(rates, names, short, title="Win rates")
    save_win_matrix(rates, names, long, title="Pairwise win rates of " + "many systems on every context " * 4)
    # the saved canvas grows to hold the title instead of cutting it at the figure's edge
    assert mpimg.imread(long).shape[1] > mpimg.imread(short).shape[1]
