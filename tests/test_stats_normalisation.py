"""Min-max normalisation per evaluator (seed 003 eq. 4)."""

import numpy as np
import pytest
from nlgjudge.stats.normalisation import min_max_normalise


def test_min_max_normalise_per_evaluator() -> None:
    scores = np.array([[1.0, 10.0], [3.0, 20.0], [2.0, 30.0]])
    np.testing.assert_allclose(min_max_normalise(scores), np.array([[0.0, 0.0], [1.0, 0.5], [0.5, 1.0]]))
    np.testing.assert_allclose(min_max_normalise(scores, alpha=100)[:, 1], [0, 50, 100])
    with pytest.raises(ValueError, match="same score"):
        min_max_normalise(np.array([[1.0, 2.0], [1.0, 3.0]]))


def test_min_max_normalise_rejects_bad_alpha_and_axis() -> None:
    scores = np.array([[1.0, 10.0], [3.0, 20.0]])
    for alpha in (0.0, -1.0):
        with pytest.raises(ValueError, match="alpha must be positive"):
            min_max_normalise(scores, alpha=alpha)
    with pytest.raises(ValueError, match="alpha must be finite"):
        min_max_normalise(scores, alpha=float("inf"))
    with pytest.raises(ValueError, match="axis 2 does not exist"):
        min_max_normalise(scores, axis=2)
    with pytest.raises(ValueError, match="NaN or infinite"):
        min_max_normalise(np.array([1.0, np.nan, 2.0]))
