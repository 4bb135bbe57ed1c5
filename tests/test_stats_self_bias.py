"""Self-bias statistics: the eq. 4 excess and the length-controlled self-preference (known answers)."""

from __future__ import annotations

import numpy as np
import pytest

from nlgjudge.stats.self_bias import (
    self_bias_bootstrap,
    self_bias_difference_bootstrap,
    self_bias_excess,
    self_preference_bootstrap,
    self_preference_regression,
)

# scores[0, e, g]: evaluator e's score of generator g (one document)
HAND = np.array([[[3.0, 1.0, 2.0], [1.0, 3.0, 2.0], [2.0, 1.0, 3.0]]])


def test_excess_by_hand() -> None:
    # eq. 4 per evaluator: e0 [1, 0, .5], e1 [0, 1, .5], e2 [.5, 0, 1]
    # e0: 1 - mean(0, .5) = .75; e1: 1 - mean(0, 0) = 1; e2: 1 - mean(.5, .5) = .5
    np.testing.assert_allclose(self_bias_excess(HAND, [0, 1, 2]), [0.75, 1.0, 0.5])
    # an evaluator without a generator gets NaN; the others are unchanged
    out = self_bias_excess(HAND, [0, -1, 2])
    assert np.isnan(out[1]) and out[0] == pytest.approx(0.75)


def test_excess_bootstrap_interval_holds_the_estimate_and_counts_documents() -> None:
    rng = np.random.default_rng(1)
    scores = HAND + rng.normal(0, 0.3, size=(40, 3, 3))
    result = self_bias_bootstrap(scores, [0, 1, 2], n_boot=200, seed=3)
    assert result.n_documents == 40 and result.n_boot == 200 and result.n_failed == 0
    assert (result.low <= result.estimate).all() and (result.estimate <= result.high).all()
    again = self_bias_bootstrap(scores, [0, 1, 2], n_boot=200, seed=3)
    np.testing.assert_array_equal(result.low, again.low)  # seeded


def test_regression_recovers_planted_self_preference_and_length_slopes() -> None:
    rng = np.random.default_rng(0)
    n_docs, n_eval, n_gen = 30, 3, 4
    own = np.array([0, 1, -1])
    lengths = rng.uniform(10, 60, size=(n_docs, n_gen))
    lengths[:, 0] += 40  # generator 0 writes long summaries: length and self are confounded for e0
    gamma = np.array([0.0, 0.8, 0.0])  # e0 only likes length; e1 likes its own summaries
    beta = np.array([0.05, -0.01, 0.02])
    doc_level = rng.normal(size=(n_docs, n_eval, 1))
    scores = doc_level + beta[None, :, None] * lengths[:, None, :]
    for e, g in enumerate(own):
        if g >= 0:
            scores[:, e, g] += gamma[e]
    sd = scores.transpose(1, 0, 2).reshape(n_eval, -1).std(axis=1)
    estimate = self_preference_regression(scores, lengths, own)
    np.testing.assert_allclose(estimate[:2] * sd[:2], gamma[:2], atol=1e-9)  # in each evaluator's own SDs
    assert np.isnan(estimate[2])
    # the eq. 4 excess, which ignores length, reports a self-bias for e0 that is only length
    assert self_bias_excess(scores, own)[0] > 0.3
    boot = self_preference_bootstrap(scores, lengths, own, n_boot=50, seed=0)
    np.testing.assert_allclose(boot.estimate, estimate, equal_nan=True)
    assert boot.low[0] <= 1e-9 and boot.high[0] >= -1e-9  # noise-free: every draw is the planted value


@pytest.mark.parametrize(
    ("scores", "own", "message"),
    [
        (np.zeros((2, 3)), [0, 1], "documents, evaluators, generators"),
        (np.full((1, 2, 2), np.nan), [0, 1], "NaN"),
        (np.ones((1, 2, 2)), [0, 5], r"\[-1, 1\]"),
        (np.ones((1, 2, 2)), [0], "one integer generator index"),
    ],
)
def test_bad_input_is_refused_with_the_reason(scores, own, message) -> None:
    with pytest.raises(ValueError, match=message):
        self_bias_excess(scores, own)


def test_a_constant_evaluator_cannot_be_normalised() -> None:
    scores = np.array([[[1.0, 1.0], [1.0, 2.0]]])
    with pytest.raises(ValueError, match="same score to every generator"):
        self_bias_excess(scores, [0, 1])


def test_paired_difference_is_zero_for_the_same_cube_and_finds_a_planted_setting_effect() -> None:
    rng = np.random.default_rng(2)
    base = rng.normal(0, 1.0, size=(50, 3, 3))
    same = self_bias_difference_bootstrap(base, base, [0, 1, 2], n_boot=100, seed=0)
    np.testing.assert_array_equal(same.estimate, 0.0)
    np.testing.assert_array_equal(same.low, 0.0)  # every paired draw is exactly 0
    np.testing.assert_array_equal(same.high, 0.0)
    base[:, 1, 1] -= 10.0  # evaluator 1 rates its own summaries lowest in both conditions ...
    boosted = base.copy()
    boosted[:, 1, 1] += 20.0  # ... except in the first, where it rates them highest
    diff = self_bias_difference_bootstrap(boosted, base, [0, 1, 2], n_boot=200, seed=0)
    plain = self_bias_excess(boosted, [0, 1, 2]) - self_bias_excess(base, [0, 1, 2])
    np.testing.assert_allclose(diff.estimate, plain)
    # e1's own column goes from 0 to 1 on the eq. 4 scale; the others' view of it does not change
    np.testing.assert_allclose([diff.estimate[1], diff.low[1], diff.high[1]], 1.0)
    # the pairing: the noise both cubes share cancels, so the paired interval is narrower than the
    # two excesses' own intervals together
    first = self_bias_bootstrap(boosted, [0, 1, 2], n_boot=200, seed=0)
    second = self_bias_bootstrap(base, [0, 1, 2], n_boot=200, seed=0)
    assert (diff.high[0] - diff.low[0]) < (first.high[0] - first.low[0]) + (second.high[0] - second.low[0])


def test_paired_difference_rejects_cubes_that_are_not_aligned() -> None:
    with pytest.raises(ValueError, match="aligned"):
        self_bias_difference_bootstrap(np.ones((5, 3, 3)) + np.eye(3), np.ones((4, 3, 3)) + np.eye(3), [0, 1, 2], n_boot=10)


def test_intervals_are_the_estimate_plus_or_minus_t_bootstrap_standard_errors() -> None:
    # The book's interval for a statistic recomputed on each resample (glossary, "Interval"): centred on
    # the estimate, half-width t(n_documents - 1) x the SD of the same resamples, drawn here by hand.
    from scipy import stats

    rng = np.random.default_rng(0)
    cube = rng.normal(size=(6, 3, 3))
    cube[:, 0, 0] += 2  # the first evaluator favours its own generator: an excess near the range's end
    result = self_bias_bootstrap(cube, [0, 1, 2], n_boot=200, seed=7)
    draw_rng = np.random.default_rng(7)
    draws = np.array([self_bias_excess(cube[draw_rng.integers(0, 6, 6)], [0, 1, 2]) for _ in range(200)])
    half = stats.t.ppf(0.975, df=5) * draws.std(axis=0, ddof=1)
    # ... where that stays inside the excess's range [-1, 1] (alpha = 1); elsewhere the score interval
    # at the same standard error, inside the range and not cut at its end
    from nlgjudge.stats.intervals import score_interval

    inside = (result.estimate - half >= -1) & (result.estimate + half <= 1)
    assert inside.any() and (~inside).any()  # this cube has both kinds of evaluator
    np.testing.assert_allclose(result.low[inside], (result.estimate - half)[inside])
    np.testing.assert_allclose(result.high[inside], (result.estimate + half)[inside])
    low, high = score_interval(result.estimate, half / stats.t.ppf(0.975, df=5), stats.t.ppf(0.975, df=5), 6, -1.0, 1.0)
    np.testing.assert_allclose(result.low[~inside], low[~inside])
    np.testing.assert_allclose(result.high[~inside], high[~inside])
    assert (result.low > -1).all() and (result.high < 1).all()
