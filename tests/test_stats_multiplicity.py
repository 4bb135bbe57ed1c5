"""Holm's correction (stats.multiplicity) on textbook p-values."""

from __future__ import annotations

import numpy as np
import pytest

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
