"""Holm's correction (stats.multiplicity) on textbook p-values."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from nlgjudge.stats.multiplicity import corrected_count, count_words, holm_rejections, paired_t_p_value


def test_holm_on_the_textbook_example():
    # Holm (1979) style example: sorted p 0.005, 0.01, 0.03, 0.04 against 0.05/4, 0.05/3, 0.05/2, 0.05/1:
    # 0.005 < 0.0125 and 0.01 < 0.0167 are rejected; 0.03 > 0.025 stops the procedure.
    assert holm_rejections([0.01, 0.04, 0.03, 0.005]).tolist() == [True, False, False, True]
    # a single test is its own family; NaN rows (not tested) are left out of the family
    assert holm_rejections([0.04]).tolist() == [True]
    assert holm_rejections([0.04, np.nan]).tolist() == [True, False]
    with pytest.raises(ValueError):
        holm_rejections([1.2])


def test_counts_after_correction_and_their_words():
    verdicts = ["supported", "supported", "not resolved", "supported"]
    assert corrected_count(verdicts, [0.001, 0.03, 0.5, 0.002], "supported") == (2, 3)
    assert count_words(2, 3) == "2 (3 before Holm's correction)" and count_words(3, 3) == "3"


def test_paired_t_p_value_matches_the_interval_rule():
    values = [1.0, 2.0, 0.5, 1.5, 3.0]
    assert paired_t_p_value(values) < 0.05
    assert paired_t_p_value([1.0, -1.0, 0.5, -0.4]) > 0.05
    assert np.isnan(paired_t_p_value([1.0]))


def test_p_within_error_brackets_the_p_of_every_draw_within_the_band() -> None:
    from nlgjudge.stats.multiplicity import p_from_interval, p_within_error

    largest, smallest = p_within_error(1.0, 0.0, 2.0, 20, 0.0, estimate_error=0.1, se_error=0.02, z=3.0)
    own = p_from_interval(1.0, 0.0, 2.0, 20)
    assert smallest < own < largest
    rng = np.random.default_rng(1)
    for _ in range(200):  # any estimate and spread within the band reads a p between the two
        moved, widen = rng.uniform(-0.3, 0.3), rng.uniform(-0.06, 0.06)
        q = stats.t.ppf(0.975, 19)
        half = q * (1.0 / q + widen)  # the SE (1 / q here) moved by up to 3 x 0.02
        p = p_from_interval(1.0 + moved, 1.0 + moved - half, 1.0 + moved + half, 20)
        assert smallest - 1e-12 <= p <= largest + 1e-12
    assert p_within_error(1.0, 0.0, 2.0, 20, 0.0, 0.0, 0.0, 3.0) == pytest.approx((own, own))
    assert p_within_error(0.1, 0.0, 0.2, 20, 0.0, 0.5, 0.0, 3.0)[0] == 1.0  # moved onto the threshold, never past it
    assert all(np.isnan(p_within_error(1.0, float("nan"), 2.0, 20, 0.0, 0.1, 0.0, 3.0)))
    with pytest.raises(ValueError, match="distances"):
        p_within_error(1.0, 0.0, 2.0, 20, 0.0, -0.1, 0.0, 3.0)
