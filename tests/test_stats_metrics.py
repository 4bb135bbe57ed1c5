"""Metrics: correlations (summary/system level), pairwise accuracy, self-consistency, kappa,
min-max normalisation, length bias, binned regression, bootstrap intervals."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nlgjudge.stats.decisions import hard_decisions
from nlgjudge.stats.metrics import (
    binned_regression,
    bootstrap_correlation_ci,
    bootstrap_mean_ci,
    centred_average_ranks,
    cohen_kappa,
    correlation,
    length_score_spearman,
    min_max_normalise,
    pairwise_accuracy,
    self_consistency,
    spearman_rows,
    summary_level_correlation,
    system_level_correlation,
)
from scipy import stats

NAN = np.nan


def test_correlation_known_answers() -> None:
    x, y = [1, 2, 3, 4], [1, 3, 2, 4]
    assert correlation(x, y, "spearman") == pytest.approx(0.8)  # 1 - 6*2/(4*15)
    assert correlation(x, y, "kendall") == pytest.approx(4 / 6)  # 5 concordant, 1 discordant
    assert np.isnan(correlation([1, 1, 1], [1, 2, 3]))
    with pytest.raises(ValueError, match="valid choices"):
        correlation(x, y, "distance")


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


def test_pairwise_accuracy_known_answer() -> None:
    decisions = np.array([[NAN, 1, 1], [1, NAN, 1], [0, 0, NAN]])
    gold = np.array([3.0, 2.0, 2.0])
    # Comparisons with different gold: (0,1) right, (0,2) right, (1,0) wrong, (2,0) right. (1,2), (2,1) skipped.
    result = pairwise_accuracy(decisions, gold)
    assert result.percent == pytest.approx(75.0) and result.n_comparisons == 4
    # Two contexts pooled (micro average) and fractional credit.
    second = np.array([[NAN, 0.5], [0.0, NAN]])
    pooled = pairwise_accuracy([decisions, second], [gold, np.array([1.0, 0.0])])
    assert pooled.percent == pytest.approx(100 * (3 + 0.5 + 1) / 6)
    np.testing.assert_allclose(pooled.per_context_percent, [75.0, 75.0])


def test_pairwise_accuracy_rejects_mismatch_and_empty() -> None:
    with pytest.raises(ValueError, match="gold has"):
        pairwise_accuracy(np.array([[NAN, 1], [0, NAN]]), np.array([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="undefined"):
        pairwise_accuracy(np.array([[NAN, 1], [0, NAN]]), np.array([1.0, 1.0]))


def test_self_consistency_known_answer_full_set() -> None:
    # Positional bias on pair (1, 2): both orders pick A, so the full ranking ties 1 and 2.
    decisions = np.array([[NAN, 1, 1], [0, NAN, 1], [0, 1, NAN]])
    result = self_consistency(decisions, np.array([3.0, 2.0, 1.0]), subset_sizes=[3], n_draws=2)
    assert result.final_percent[0] == pytest.approx(100.0)  # (0,1), (0,2) agree; tied pair skipped
    assert result.gold_percent[0] == pytest.approx(100 * 2.5 / 3)  # the tie earns half


def test_self_consistency_perfect_judge_is_perfect_at_every_size() -> None:
    rng = np.random.default_rng(0)
    gold = rng.normal(size=(5, 8))
    decisions = np.stack(
        [hard_decisions(np.where(np.eye(8, dtype=bool), NAN, (g[:, None] > g[None, :]).astype(float))) for g in gold]
    )
    result = self_consistency(decisions, gold, subset_sizes=[2, 4, 8], n_draws=5)
    np.testing.assert_allclose(result.final_percent, 100.0)
    np.testing.assert_allclose(result.gold_percent, 100.0)


def test_self_consistency_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError, match="subset_sizes"):
        self_consistency(np.array([[NAN, 1], [0, NAN]]), np.array([1.0, 0.0]), subset_sizes=[3])


def kappa_by_hand(table: np.ndarray) -> float:
    total = table.sum()
    observed = np.trace(table) / total
    expected = (table.sum(1) * table.sum(0)).sum() / total**2
    return (observed - expected) / (1 - expected)


def test_cohen_kappa_known_table() -> None:
    a = [1, 1, 1, 1, 0, 0, 0, 0, 1, 0]
    b = [1, 1, 1, 0, 0, 0, 0, 1, 1, 1]
    # n11=4, n10=1, n01=2, n00=3: po = 0.7, pe = 0.5 -> kappa 0.4
    assert cohen_kappa(a, b) == pytest.approx(0.4)


@settings(max_examples=40, deadline=None)
@given(cells=st.lists(st.integers(0, 30), min_size=4, max_size=4))
def test_cohen_kappa_matches_hand_computed_tables(cells: list[int]) -> None:
    table = np.array(cells).reshape(2, 2)
    a = np.repeat([0, 0, 1, 1], cells)
    b = np.repeat([0, 1, 0, 1], cells)
    if a.size == 0 or np.unique(np.concatenate([a, b])).size < 2:
        with pytest.raises(ValueError):
            cohen_kappa(a, b)
        return
    expected_agreement = (table.sum(1) * table.sum(0)).sum() / table.sum() ** 2
    if expected_agreement == 1:
        return
    assert cohen_kappa(a, b) == pytest.approx(kappa_by_hand(table))


def test_cohen_kappa_rejects_nan_and_mismatch() -> None:
    with pytest.raises(ValueError, match="length"):
        cohen_kappa([0, 1], [0, 1, 1])
    with pytest.raises(ValueError, match="NaN"):
        cohen_kappa([0.0, NAN], [0.0, 1.0])


def test_min_max_normalise_per_evaluator() -> None:
    scores = np.array([[1.0, 10.0], [3.0, 20.0], [2.0, 30.0]])
    np.testing.assert_allclose(min_max_normalise(scores), np.array([[0.0, 0.0], [1.0, 0.5], [0.5, 1.0]]))
    np.testing.assert_allclose(min_max_normalise(scores, alpha=100)[:, 1], [0, 50, 100])
    with pytest.raises(ValueError, match="same score"):
        min_max_normalise(np.array([[1.0, 2.0], [1.0, 3.0]]))


def test_length_score_spearman() -> None:
    assert length_score_spearman([10, 20, 30, 40], [1, 2, 4, 3]) == pytest.approx(0.8)
    per_evaluator = length_score_spearman([10, 20, 30, 40], np.array([[1, 4], [2, 3], [4, 2], [3, 1.0]]))
    np.testing.assert_allclose(per_evaluator, [0.8, -1.0])


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
