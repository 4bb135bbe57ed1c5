"""The binned, count-weighted regression of seed 004 Fig. 5."""

import numpy as np
import pytest
from nlgjudge.stats.regression import binned_regression


def test_binned_regression_known_answer() -> None:
    # Points at the centres of 4 bins over [-1, 1]: counts 4, 2, 2, 4; proportions 1, .5, .5, 0.
    x = np.repeat([-0.75, -0.25, 0.25, 0.75], [4, 2, 2, 4])
    chose = np.array([1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0])
    result = binned_regression(x, chose, n_bins=4, value_range=(-1, 1))
    centres, props, weights = np.array([-0.75, -0.25, 0.25, 0.75]), np.array([1, 0.5, 0.5, 0]), np.array([4, 2, 2, 4.0])
    mean_x = np.average(centres, weights=weights)
    mean_y = np.average(props, weights=weights)
    slope = np.sum(weights * (centres - mean_x) * (props - mean_y)) / np.sum(weights * (centres - mean_x) ** 2)
    fitted = mean_y + slope * (centres - mean_x)
    r2 = 1 - np.sum(weights * (props - fitted) ** 2) / np.sum(weights * (props - mean_y) ** 2)
    assert result.slope == pytest.approx(slope) == pytest.approx(-3 / 4.75)
    assert result.intercept == pytest.approx(0.5)
    assert result.r_squared == pytest.approx(r2) == pytest.approx(1 - 0.105263157894 / 2)
    np.testing.assert_array_equal(result.counts, [4, 2, 2, 4])


def test_binned_regression_defaults_to_40_bins_over_the_data_range() -> None:
    rng = np.random.default_rng(0)
    diff = rng.uniform(-0.3, 0.3, 4000)
    chose = (rng.random(4000) < 0.5 - diff).astype(int)  # P(model 1) falls with the ROUGE difference
    result = binned_regression(diff, chose)
    assert result.counts.size == 40 and result.counts.sum() == 4000
    assert result.slope == pytest.approx(-1.0, abs=0.2) and result.r_squared > 0.5


def test_binned_regression_validates() -> None:
    with pytest.raises(ValueError, match="0/1"):
        binned_regression([0.1, 0.2], [0.5, 1])
    with pytest.raises(ValueError, match="outside"):
        binned_regression([0.1, 2.0], [0, 1], value_range=(-1, 1))


def test_binned_regression_rejects_bad_bins_and_range() -> None:
    x, chose = [0.1, 0.2, 0.3], [0, 1, 1]
    with pytest.raises(TypeError, match="n_bins must be an integer"):
        binned_regression(x, chose, n_bins=2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_bins must be at least 2"):
        binned_regression(x, chose, n_bins=1)
    with pytest.raises(ValueError, match="low < high"):
        binned_regression(x, chose, value_range=(1.0, -1.0))
    with pytest.raises(ValueError, match="value_range bound must be finite"):
        binned_regression(x, chose, value_range=(float("nan"), 1.0))
