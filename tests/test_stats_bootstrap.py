"""Percentile bootstrap intervals for a correlation and for a mean."""

import numpy as np
import pytest
from nlgjudge.stats.bootstrap import bootstrap_correlation_ci, bootstrap_mean_ci


def test_bootstrap_correlation_interval() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    y = x + rng.normal(size=200)
    for method in ("spearman", "pearson", "kendall"):
        ci = bootstrap_correlation_ci(x, y, method=method, n_boot=300, seed=1)
        assert ci.low < ci.estimate < ci.high
        assert ci.high - ci.low < 0.3
    again = bootstrap_correlation_ci(x, y, n_boot=300, seed=1)
    assert again == bootstrap_correlation_ci(x, y, n_boot=300, seed=1)


def test_bootstrap_mean_interval_over_contexts() -> None:
    values = np.array([0.2, 0.4, 0.5, 0.3, 0.6, 0.45])
    ci = bootstrap_mean_ci(values, n_boot=500, seed=0)
    assert ci.low < values.mean() < ci.high and ci.estimate == pytest.approx(values.mean())
    with pytest.raises(ValueError, match="undefined"):
        bootstrap_correlation_ci([1, 1, 1, 1], [1, 2, 3, 4])


def test_bootstrap_settings_are_checked_before_resampling() -> None:
    values = np.array([0.2, 0.4, 0.5, 0.3])
    with pytest.raises(TypeError, match="n_boot must be an integer"):
        bootstrap_mean_ci(values, n_boot=100.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_boot must be at least 10"):
        bootstrap_mean_ci(values, n_boot=5)
    with pytest.raises(ValueError, match="confidence must be finite"):
        bootstrap_mean_ci(values, confidence=float("nan"))
    with pytest.raises(ValueError, match=r"confidence must lie in \(0, 1\)"):
        bootstrap_correlation_ci([1, 2, 3, 4], [1, 3, 2, 4], confidence=95)
    with pytest.raises(ValueError, match="valid choices"):
        bootstrap_correlation_ci([1, 2, 3, 4], [1, 3, 2, 4], method="distance")
