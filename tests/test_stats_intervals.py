"""The small-sample interval of a mean, and its paired version, against known answers."""

import math

import numpy as np
import pytest
from scipy import stats

from nlgjudge.stats.intervals import SMALL_N, mean_interval, paired_difference_interval


def test_the_t_interval_of_a_known_sample() -> None:
    values = [0.1, 0.4, 0.35, 0.8, -0.05, 0.5]
    got = mean_interval(values)
    mean, sd, n = np.mean(values), np.std(values, ddof=1), 6
    half = 2.5705818366147395 * sd / np.sqrt(n)  # t_{5, 0.975}
    assert got.mean == pytest.approx(mean) and got.low == pytest.approx(mean - half) and got.high == pytest.approx(mean + half)
    expected = stats.t.interval(0.95, df=n - 1, loc=mean, scale=stats.sem(values))
    assert (got.low, got.high) == pytest.approx(expected)
    assert got.n == 6 and not got.small


def test_small_and_degenerate_samples_say_so() -> None:
    assert mean_interval([0.3]).n == 1 and np.isnan(mean_interval([0.3]).low)
    constant = mean_interval([0.2, 0.2, 0.2])
    assert constant.low == constant.high == pytest.approx(0.2) and constant.small and SMALL_N == 5
    with pytest.raises(ValueError, match="NaN"):
        mean_interval([0.1, np.nan])
    with pytest.raises(ValueError, match="no values"):
        mean_interval([])


def test_the_paired_interval_sees_a_consistent_gap_that_unpaired_noise_hides() -> None:
    rng = np.random.default_rng(0)
    context_effect = rng.normal(0, 0.3, 8)  # contexts differ a lot, for both methods alike
    a = context_effect + 0.10 + rng.normal(0, 0.02, 8)
    b = context_effect + rng.normal(0, 0.02, 8)
    paired = paired_difference_interval(a, b)
    assert paired.excludes_zero and paired.low > 0
    unpaired_a, unpaired_b = mean_interval(a), mean_interval(b)
    assert unpaired_a.low < unpaired_b.high  # the separate intervals overlap
    with pytest.raises(ValueError, match="same units"):
        paired_difference_interval([1.0, 2.0], [1.0])


def test_the_bootstrap_se_interval_is_centred_on_the_estimate_with_a_t_quantile() -> None:
    from nlgjudge.stats.intervals import bootstrap_se_interval

    replicates = np.array([[1.0, 10.0], [3.0, np.nan], [5.0, 14.0]])  # sd 2 and 2*sqrt(2) (NaN left out)
    low, high = bootstrap_se_interval(np.array([0.5, 12.0]), replicates, n_units=4)
    t = stats.t.ppf(0.975, df=3)
    np.testing.assert_allclose(low, [0.5 - t * 2.0, 12.0 - t * np.sqrt(8.0)])
    np.testing.assert_allclose(high, [0.5 + t * 2.0, 12.0 + t * np.sqrt(8.0)])
    one_unit = bootstrap_se_interval(np.array([1.0]), np.ones((5, 1)), n_units=1)
    assert np.isnan(one_unit[0]).all() and np.isnan(one_unit[1]).all()
    too_few = bootstrap_se_interval(np.array([1.0]), np.array([[2.0], [np.nan]]), n_units=6)
    assert np.isnan(too_few[0]).all()
    with pytest.raises(ValueError, match="replicates must have shape"):
        bootstrap_se_interval(np.array([1.0, 2.0]), np.ones((5, 3)), n_units=3)


def test_a_bounded_quantitys_interval_stays_inside_its_range_without_being_cut_at_the_end() -> None:
    from nlgjudge.stats.intervals import BOUNDED_METHOD, METHOD, mean_interval

    values = [0.9, 1.0, 0.6, 1.0]  # per-context correlations near their ceiling
    plain = mean_interval(values)
    assert plain.high > 1.0  # the t interval overshoots the range
    bounded = mean_interval(values, bounds=(-1.0, 1.0))
    assert bounded.method == BOUNDED_METHOD and bounded.mean == plain.mean
    assert -1.0 < bounded.low < bounded.mean < bounded.high < 1.0  # asymmetric, not cut at 1.00
    assert bounded.high - bounded.mean < bounded.mean - bounded.low
    # Wilson's interval at the effective n, on [0, 1]: p = 0.9375, n_eff = p (1 - p) / se^2
    p, se = (0.875 + 1) / 2, np.std(values, ddof=1) / 2 / 2
    from scipy import stats
    q = stats.t.ppf(0.975, 3)
    z2 = q ** 2 * se ** 2 / (p * (1 - p))
    centre, half = (p + z2 / 2) / (1 + z2), np.sqrt(z2 * p * (1 - p) + z2 ** 2 / 4) / (1 + z2)
    assert bounded.low == pytest.approx(2 * (centre - half) - 1) and bounded.high == pytest.approx(2 * (centre + half) - 1)
    inside = mean_interval([0.2, 0.4, 0.3], bounds=(-1.0, 1.0))  # far from the ends: the t interval itself
    assert inside.method == METHOD and inside.low == mean_interval([0.2, 0.4, 0.3]).low
    with pytest.raises(ValueError, match="outside the bounds"):
        mean_interval([0.5, 1.5], bounds=(0.0, 1.0))
    with pytest.raises(ValueError, match="lower < upper"):
        mean_interval([0.5, 0.6], bounds=(1.0, 0.0))


def test_a_share_with_every_unit_at_zero_gets_the_exact_binomial_bound() -> None:
    from nlgjudge.stats.intervals import AT_BOUND_METHOD, share_interval

    got = share_interval(np.zeros(10))
    # Clopper-Pearson, 0 of 10: the upper end solves (1 - p)^10 = 0.025
    assert got.mean == 0.0 and got.low == 0.0 and got.high == pytest.approx(1 - 0.025 ** (1 / 10))
    assert got.method == AT_BOUND_METHOD
    ones = share_interval(np.ones(10))
    assert ones.high == 1.0 and ones.low == pytest.approx(0.025 ** (1 / 10))
    mixed = share_interval([0.0, 0.5, 1.0, 0.25])
    assert 0.0 <= mixed.low < mixed.mean < mixed.high <= 1.0 and mixed.method != AT_BOUND_METHOD


def test_a_share_near_an_end_reads_no_more_units_than_it_has() -> None:
    from nlgjudge.stats.intervals import BOUNDED_METHOD, mean_interval, share_interval

    values = np.array([0.0] * 7 + [0.02])  # 8 articles, one with a single win in 50
    plain = mean_interval(values, bounds=(0.0, 1.0))
    got = share_interval(values)
    assert got.method == BOUNDED_METHOD and got.mean == plain.mean
    # the effective n of the standard error is in the thousands; the share's is capped at its 8 units,
    # so the upper end is near a coin's 0 of 8 (Clopper-Pearson: 0.37), not the uncapped 0.02
    assert plain.high < 0.05 < 0.3 < got.high < 0.5
    from scipy import stats
    q, p = stats.t.ppf(0.975, 7), values.mean()
    z2 = q ** 2 / 8
    centre, half = (p + z2 / 2) / (1 + z2), np.sqrt(z2 * p * (1 - p) + z2 ** 2 / 4) / (1 + z2)
    assert got.low == pytest.approx(centre - half) and got.high == pytest.approx(centre + half)
    # correlations keep the standard error's own effective n: only shares are capped
    assert mean_interval([0.9, 1.0, 0.6, 1.0], bounds=(-1.0, 1.0)).high < 1.0


def test_the_ends_of_a_bootstrap_interval_carry_the_monte_carlo_error_of_its_standard_deviation() -> None:
    from nlgjudge.stats.intervals import bootstrap_end_error, bootstrap_se_interval

    assert bootstrap_end_error(0.3, 51) == pytest.approx(0.3 / 10)  # sqrt(2 x 50) = 10
    assert bootstrap_end_error(-0.3, 51) == pytest.approx(0.03)
    assert bootstrap_end_error(0.3, 1) == 0.0 and bootstrap_end_error(float("nan"), 100) == 0.0
    # the error it names is the spread of the end over independent sets of resamples
    rng = np.random.default_rng(0)
    ends = [float(bootstrap_se_interval(np.array(0.0), rng.normal(size=(201, 1))[:, 0], 20)[1]) for _ in range(400)]
    half = float(np.mean(ends))
    assert np.std(ends, ddof=1) == pytest.approx(bootstrap_end_error(half, 201), rel=0.15)


def test_the_same_share_in_every_unit_is_no_more_certain_than_as_many_coin_flips() -> None:
    """A judge whose every decision ties agrees 0.5 in each of 10 contexts: the score interval of 10
    units at 0.5, not the zero-width [0.5, 0.5] of a t interval over constant values."""
    from scipy import stats

    from nlgjudge.stats.intervals import share_interval

    interval = share_interval([0.5] * 10)
    q = stats.t.ppf(0.975, 9)
    z2 = q ** 2 / 10
    half = math.sqrt(z2 * 0.25 + z2 ** 2 / 4) / (1 + z2)  # Wilson at n = 10, p = 0.5
    assert interval.mean == 0.5 and (interval.low, interval.high) == pytest.approx((0.5 - half, 0.5 + half))
    assert interval.low < 0.25
