"""Correlation with human scores: correlation, summary- and system-level, row-wise Spearman, length bias."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nlgjudge.stats.correlation import (
    centred_average_ranks,
    correlation,
    correlation_test,
    length_score_spearman,
    spearman_rows,
    summary_level_correlation,
    system_level_correlation,
)
from scipy import stats


def test_correlation_known_answers() -> None:
    x, y = [1, 2, 3, 4], [1, 3, 2, 4]
    assert correlation(x, y, "spearman") == pytest.approx(0.8)  # 1 - 6*2/(4*15)
    assert correlation(x, y, "kendall") == pytest.approx(4 / 6)  # 5 concordant, 1 discordant
    assert np.isnan(correlation([1, 1, 1], [1, 2, 3]))
    with pytest.raises(ValueError, match="valid choices"):
        correlation(x, y, "distance")


def test_correlation_test_gives_the_t_test_of_the_coefficient() -> None:
    rho, p = correlation_test([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])
    t = 0.8 * np.sqrt(3 / (1 - 0.8**2))  # 1 - 6*4/(5*24) = 0.8; t with n - 2 degrees of freedom
    assert rho == pytest.approx(0.8) and p == pytest.approx(2 * stats.t.sf(t, 3))
    assert p > 0.05  # a large coefficient on five points is not evidence of a relation
    assert correlation_test(range(22), range(22))[1] < 1e-6
    assert all(np.isnan(correlation_test([1, 1, 1], [1, 2, 3])))
    with pytest.raises(ValueError, match="x"):
        correlation_test([1, 2], [2, 1])


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 12))
def test_row_spearman_matches_scipy_with_ties(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, (6, n)).astype(float)
    b = rng.integers(0, 4, (6, n)).astype(float)
    rows = spearman_rows(a, b)
    np.testing.assert_allclose(centred_average_ranks(a), stats.rankdata(a, axis=-1) - (n + 1) / 2)
    for k in range(6):
        if np.ptp(a[k]) == 0 or np.ptp(b[k]) == 0:
            assert np.isnan(rows[k])
        else:
            assert rows[k] == pytest.approx(stats.spearmanr(a[k], b[k]).statistic)


def test_summary_level_spearman_known_answer_x100() -> None:
    pred = np.array([[1, 2, 3, 4], [4, 3, 2, 1.0]])
    gold = np.array([[1, 3, 2, 4], [8, 6, 4, 2.0]])
    result = summary_level_correlation(pred, gold)
    assert result.value_x100 == pytest.approx(90.0)  # mean of 0.8 and 1.0
    np.testing.assert_allclose(result.per_context, [0.8, 1.0])
    assert result.n_undefined == 0


def test_summary_level_handles_ragged_contexts_and_kendall() -> None:
    result = summary_level_correlation([[1, 2, 3], [1, 2, 3, 4]], [[1, 2, 3], [1, 3, 2, 4]], method="kendall")
    assert result.value_x100 == pytest.approx(100 * (1 + 4 / 6) / 2)


def test_summary_level_undefined_context_policies() -> None:
    pred = [[1, 2, 3], [1, 1, 1]]
    gold = [[1, 2, 3], [3, 2, 1]]
    assert summary_level_correlation(pred, gold).value_x100 == pytest.approx(100.0)
    assert summary_level_correlation(pred, gold).n_undefined == 1
    assert summary_level_correlation(pred, gold, undefined="zero").value_x100 == pytest.approx(50.0)
    with pytest.raises(ValueError, match="constant"):
        summary_level_correlation(pred, gold, undefined="raise")
    with pytest.raises(ValueError, match="candidates"):
        summary_level_correlation([[1, 2, 3]], [[1, 2]])


def test_system_level_known_answer() -> None:
    # Two contexts, systems a, b, c. Mean pred: a 1.5, b 2.5, c 2.0; mean gold: a 1, b 3.5, c 1.5.
    pred = [1, 2, 3, 2, 2, 2]
    gold = [1, 2, 3, 1, 4, 1]
    systems = ["a", "c", "b", "a", "b", "c"]
    assert system_level_correlation(pred, gold, systems) == pytest.approx(100.0)


def test_length_score_spearman() -> None:
    assert length_score_spearman([10, 20, 30, 40], [1, 2, 4, 3]) == pytest.approx(0.8)
    per_evaluator = length_score_spearman([10, 20, 30, 40], np.array([[1, 4], [2, 3], [4, 2], [3, 1.0]]))
    np.testing.assert_allclose(per_evaluator, [0.8, -1.0])


def test_a_string_is_not_a_list_of_system_names() -> None:
    # np.asarray("abab") is a 0-d array: without the check this failed with "len() of unsized object".
    with pytest.raises(TypeError, match="systems must be a sequence of system names.*not the single string"):
        system_level_correlation([1, 2, 3, 4], [1, 2, 3, 4], "abab")
    with pytest.raises(ValueError, match="systems must be 1-D"):
        system_level_correlation([1, 2, 3, 4], [1, 2, 3, 4], [["a", "b"], ["a", "b"]])
    assert system_level_correlation([1, 2, 3, 4], [1, 2, 3, 4], list("abab")) == pytest.approx(100.0)


def test_summary_level_rejects_strings_and_scalars() -> None:
    with pytest.raises(TypeError, match="pred must be an .*not the single string"):
        summary_level_correlation("123", [[1, 2, 3]])
    with pytest.raises(TypeError, match="gold must be"):
        summary_level_correlation([[1, 2, 3]], 3.0)
    with pytest.raises(ValueError, match="no contexts"):
        summary_level_correlation([], [])


def test_ranks_and_row_spearman_reject_bad_input() -> None:
    with pytest.raises(ValueError, match="NaN"):
        centred_average_ranks([1.0, np.nan, 2.0])
    with pytest.raises(ValueError, match=r"shape \(\.\.\., N\)"):
        centred_average_ranks(3.0)
    with pytest.raises(ValueError, match="same shape"):
        spearman_rows(np.zeros((2, 3)), np.zeros((2, 4)))
    with pytest.raises(ValueError, match="at least 2 values"):
        spearman_rows([1.0], [2.0])


def test_length_score_spearman_rejects_non_finite_scores() -> None:
    with pytest.raises(ValueError, match="scores contain 1 NaN"):
        length_score_spearman([10, 20, 30], np.array([[1, 2], [2, np.nan], [3, 1.0]]))
    with pytest.raises(ValueError, match="scores contains 1 NaN"):
        length_score_spearman([10, 20, 30], [1, np.nan, 3])


def test_within_strata_test_sees_through_a_contrast_between_strata() -> None:
    """Issue 41 item 7: three datasets, one both more biased and gaining more; inside each the gain
    is unrelated to the bias. Pooled, the correlation looks strong; within strata it is not."""
    from nlgjudge.stats.correlation import correlation_test, within_strata_correlation_test

    rng = np.random.default_rng(0)
    strata = np.repeat(["summeval", "topicalchat", "webnlg"], 8)
    shift = np.repeat([0.4, 0.1, 0.0], 8)
    bias = shift + rng.uniform(0, 0.05, 24)
    gain = 10 * shift + rng.normal(0, 1, 24)
    rho, p_pooled = correlation_test(bias, gain)
    assert rho > 0.5 and p_pooled < 0.01
    within = within_strata_correlation_test(bias, gain, strata, n_permutations=999)
    assert within.n == 24 and within.n_strata == 3 and within.p_value > 0.05
    # a real within-dataset relation is found
    related = within_strata_correlation_test(bias, 100 * bias + rng.normal(0, 0.1, 24), strata, n_permutations=999)
    assert related.statistic > 0.8 and related.p_value < 0.01
    # known answer for the statistic: the size-weighted mean of the strata's Spearman correlations
    from scipy.stats import spearmanr
    expected = np.mean([spearmanr(bias[strata == s], gain[strata == s]).statistic for s in ("summeval", "topicalchat", "webnlg")])
    assert within.statistic == pytest.approx(expected)
    empty = within_strata_correlation_test([1.0, 2.0], [1.0, 2.0], ["a", "b"])
    assert np.isnan(empty.statistic) and empty.n_strata == 0
