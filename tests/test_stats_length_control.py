"""The length-controlled win rate (stats.length_control) against an independent fit and known cases."""

from __future__ import annotations

import numpy as np
import pytest

from nlgjudge.stats.length_control import length_control, length_feature


def _comparisons(seed: int = 0, units: int = 12, per_unit: int = 20, length_effect: float = 2.0, base: float = 0.0):
    rng = np.random.default_rng(seed)
    unit = np.repeat(np.arange(units), per_unit)
    d = rng.normal(300.0, 200.0, unit.size)  # the attack mostly longer than its opponents
    p = 1 / (1 + np.exp(-(base + length_effect * np.tanh(d / np.std(d, ddof=1)))))
    y = (rng.random(unit.size) < p).astype(float)
    return y, d, unit


def test_the_controlled_rate_is_the_fit_at_no_length_difference_as_an_independent_fit_finds_it() -> None:
    from sklearn.linear_model import LogisticRegression

    y, d, unit = _comparisons()
    result = length_control(y, d, unit)
    feature = length_feature(d).reshape(-1, 1)
    other = LogisticRegression(C=np.inf, tol=1e-10, max_iter=10_000).fit(feature, y)
    assert result.controlled == pytest.approx(1 / (1 + np.exp(-other.intercept_[0])), abs=1e-4)
    assert result.slope == pytest.approx(other.coef_[0, 0], abs=1e-3)
    assert result.raw == pytest.approx(y.mean()) and result.difference == pytest.approx(result.raw - result.controlled)
    # a judge that prefers the longer text wins less once length is controlled, and the interval says so
    assert result.difference > 0 and result.low > 0 and result.n_units == 12


def test_without_a_length_preference_control_takes_nothing_away_within_its_interval() -> None:
    y, d, unit = _comparisons(seed=1, length_effect=0.0, base=0.5)
    result = length_control(y, d, unit)
    assert result.low < 0 < result.high


def test_the_interval_is_over_units_not_comparisons() -> None:
    y, d, unit = _comparisons(seed=2)
    many_units = length_control(y, d, np.arange(y.size))
    few_units = length_control(y, d, unit)
    assert few_units.n_units == 12 and many_units.n_units == y.size
    assert few_units.difference == pytest.approx(many_units.difference)  # the same fit, another unit of inference


def test_what_cannot_be_controlled_says_why_and_bad_input_is_refused() -> None:
    same = length_control(np.ones(10), np.arange(10.0), np.arange(10) // 2)
    assert same.difference == 0 and np.isnan(same.low) and "the same in every comparison" in same.reason
    flat = length_control(np.array([0, 1.0] * 5), np.full(10, 40.0), np.arange(10) // 2)
    assert np.isnan(flat.low) and "do not vary" in flat.reason
    separated = length_control(np.array([0.0] * 5 + [1.0] * 5), np.arange(10.0), np.arange(10) // 2)
    assert np.isnan(separated.low) and "separates" in separated.reason
    with pytest.raises(ValueError, match="one value per comparison"):
        length_control(np.ones(3), np.ones(4), np.ones(3))
    with pytest.raises(ValueError, match="shares in"):
        length_control(np.array([0.0, 2.0]), np.array([1.0, 2.0]), np.array([0, 1]))
