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


def test_clustered_bootstrap_resamples_whole_clusters() -> None:
    from nlgjudge.stats.bootstrap import bootstrap_clustered_correlation_ci

    rng = np.random.default_rng(3)
    x = rng.normal(size=60)
    y = x + rng.normal(size=60)
    # Three identical copies of every pair, one cluster per original pair: resampling clusters is
    # resampling the 60 pairs (Spearman is unchanged by copying every point alike), whereas treating
    # the 180 copies as independent pairs makes the interval too narrow, by about sqrt(3).
    xs, ys, docs = np.repeat(x, 3), np.repeat(y, 3), np.repeat(np.arange(60), 3)
    clustered = bootstrap_clustered_correlation_ci(xs, ys, docs, n_boot=2000, seed=0)
    plain = bootstrap_correlation_ci(x, y, n_boot=2000, seed=0)
    naive = bootstrap_correlation_ci(xs, ys, n_boot=2000, seed=0)
    assert clustered.estimate == pytest.approx(plain.estimate, abs=1e-12)
    assert clustered.high - clustered.low == pytest.approx(plain.high - plain.low, rel=0.15)
    assert (naive.high - naive.low) < 0.75 * (clustered.high - clustered.low)
    kendall = bootstrap_clustered_correlation_ci(xs, ys, docs, method="kendall", n_boot=200, seed=0)
    assert kendall.low < kendall.estimate < kendall.high


def test_clustered_bootstrap_refuses_bad_input() -> None:
    from nlgjudge.stats.bootstrap import bootstrap_clustered_correlation_ci

    with pytest.raises(ValueError, match="at least 3 clusters"):
        bootstrap_clustered_correlation_ci([1, 2, 3, 4], [1, 3, 2, 4], ["a", "a", "b", "b"])
    with pytest.raises(ValueError, match="same length|length"):
        bootstrap_clustered_correlation_ci([1, 2, 3, 4], [1, 3, 2, 4], ["a", "b", "c"])
    with pytest.raises(ValueError, match="undefined"):
        bootstrap_clustered_correlation_ci([1, 1, 1, 1], [1, 3, 2, 4], ["a", "b", "c", "d"])


def test_clustered_interval_is_centred_on_the_estimate_with_t_over_the_clusters() -> None:
    # A few clusters: the interval is estimate +- t(n_clusters - 1) x bootstrap SE, so it is symmetric
    # about the estimate and wider than a normal-quantile one would be.
    from nlgjudge.stats.bootstrap import bootstrap_clustered_correlation_ci

    rng = np.random.default_rng(5)
    docs = np.repeat(np.arange(5), 3)
    x = rng.normal(size=15)
    y = x + rng.normal(size=15)
    ci = bootstrap_clustered_correlation_ci(x, y, docs, n_boot=400, seed=0)
    assert ci.estimate - ci.low == pytest.approx(ci.high - ci.estimate, rel=1e-9)
