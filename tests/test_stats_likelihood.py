"""Seed 003 eq. 2 on known token log-probabilities."""

import numpy as np
import pytest

from nlgjudge.stats.likelihood import weighted_loglikelihood


def test_equal_weights_give_the_mean_and_explicit_weights_the_dot_product() -> None:
    values = [-1.0, -2.0, -4.0]
    assert weighted_loglikelihood(values) == pytest.approx(-7 / 3)
    assert weighted_loglikelihood(values, [1, 1, 1]) == pytest.approx(-7.0)
    assert weighted_loglikelihood(np.array(values), [0.5, 0.5, 0]) == pytest.approx(-1.5)


def test_bad_shapes_are_errors() -> None:
    with pytest.raises(ValueError, match="shape"):
        weighted_loglikelihood([-1.0, -2.0, -4.0], [1, 1])
    with pytest.raises(ValueError, match="non-empty"):
        weighted_loglikelihood([])


def test_broken_log_probabilities_and_weights_are_errors() -> None:
    # -inf is a log-probability (p = 0); NaN and +inf are not, and would silently become the score.
    assert weighted_loglikelihood([-1.0, -np.inf]) == -np.inf
    with pytest.raises(ValueError, match="1 NaN or \\+inf value\\(s\\) \\(first at token 1\\)"):
        weighted_loglikelihood([-1.0, np.nan, -2.0])
    with pytest.raises(ValueError, match="NaN or \\+inf"):
        weighted_loglikelihood([-1.0, np.inf])
    with pytest.raises(ValueError, match="weights contain 1 NaN"):
        weighted_loglikelihood([-1.0, -2.0], [1.0, np.nan])
