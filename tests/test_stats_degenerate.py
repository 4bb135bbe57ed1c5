"""The one test of a degenerate pairwise judge (stats.degenerate) on judges with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from nlgjudge.stats.degenerate import degenerate_reason, order_agreement


def _both_orders(n_sets: int, n: int, p_of):
    sets, first, second, p = [], [], [], []
    for s in range(n_sets):
        for i in range(n):
            for j in range(n):
                if i != j:
                    sets.append(s), first.append(i), second.append(j), p.append(p_of(s, i, j))
    return sets, first, second, p


def test_a_judge_that_always_answers_a_is_degenerate():
    result = order_agreement(*_both_orders(10, 8, lambda s, i, j: 1.0))
    assert result.n_pairs == 10 * 28 and result.agreement == pytest.approx(0.5)  # every decision tied at tau
    assert result.degenerate and "no better than chance" in degenerate_reason(result)


def test_a_judge_that_always_ties_is_degenerate():
    result = order_agreement(*_both_orders(6, 6, lambda s, i, j: 0.5))
    assert result.agreement == pytest.approx(0.5) and result.degenerate


def test_a_position_judge_with_noise_unrelated_to_the_texts_is_degenerate_but_for_the_tests_alpha():
    rng = np.random.default_rng(0)
    passed = 0
    for _ in range(200):
        result = order_agreement(*_both_orders(5, 6, lambda s, i, j: float(np.clip(0.9 + 0.05 * rng.standard_normal(), 0, 1))))
        assert 0.3 < result.agreement < 0.7
        passed += not result.degenerate
    assert passed / 200 <= 0.1  # a level-0.05 test: about 5% of such judges pass by chance


def test_a_consistent_judge_passes_even_with_a_strong_pull_to_position_a():
    # P(A) = sigmoid(quality_i - quality_j + 2): most answers are "A", yet the texts decide the order
    quality = np.linspace(0, 3, 8)
    result = order_agreement(*_both_orders(5, 8, lambda s, i, j: float(1 / (1 + np.exp(-(quality[i] - quality[j] + 2))))))
    assert result.agreement > 0.9 and not result.degenerate and degenerate_reason(result) is None


def test_a_judge_preferring_the_worse_candidate_in_both_orders_is_not_degenerate():
    quality = np.linspace(0, 3, 8)  # reversed preferences are still consistent: the chapters' claims decide that
    result = order_agreement(*_both_orders(5, 8, lambda s, i, j: float(1 / (1 + np.exp(quality[i] - quality[j])))))
    assert not result.degenerate


def test_no_pair_in_both_orders_is_degenerate_with_its_own_reason_and_bad_input_is_refused():
    result = order_agreement([0, 0], [0, 1], [1, 2], [0.7, 0.2])
    assert result.n_pairs == 0 and result.degenerate and "no pair judged in both orders" in degenerate_reason(result)
    with pytest.raises(ValueError, match="one value per comparison"):
        order_agreement([0], [0, 1], [1, 0], [0.5, 0.5])
    with pytest.raises(ValueError, match="probabilities"):
        order_agreement([0, 0], [0, 1], [1, 0], [0.5, float("nan")])


def test_the_debiasing_scope_can_be_wider_than_the_comparison_set():
    # two contexts whose judge leans to A by different amounts: per-context thresholds read the texts,
    # one pooled threshold sends every comparison of the more biased context to A (the orders disagree)
    quality = np.linspace(0, 2, 6)
    sets, first, second, p = _both_orders(2, 6, lambda s, i, j: float(1 / (1 + np.exp(-(quality[i] - quality[j] + (4 if s else 0))))))
    per_set = order_agreement(sets, first, second, p)
    pooled = order_agreement(sets, first, second, p, scope_ids=[0] * len(p))
    assert per_set.agreement > 0.9 and pooled.agreement < per_set.agreement
    with pytest.raises(ValueError, match="scope_ids"):
        order_agreement(sets, first, second, p, scope_ids=[0])


def test_the_outcome_is_said_for_a_judge_that_passes_and_for_one_that_does_not():
    from nlgjudge.stats.degenerate import outcome_words

    quality = np.linspace(0, 3, 8)
    passes = order_agreement(*_both_orders(5, 8, lambda s, i, j: float(1 / (1 + np.exp(-(quality[i] - quality[j]))))))
    words = outcome_words(passes)
    assert words.startswith("passes the degenerate-judge test: its two orders agree on 100% of 140 pairs")
    assert words.endswith("(one-sided binomial p < 0.001)")
    always_a = order_agreement(*_both_orders(10, 8, lambda s, i, j: 1.0))
    assert outcome_words(always_a) == "fails the degenerate-judge test: " + degenerate_reason(always_a).removeprefix("degenerate judge: ")
    assert outcome_words(always_a).endswith("no better than chance (one-sided binomial p = 0.52)")


def test_p_text_is_the_one_way_a_p_value_is_printed() -> None:
    from nlgjudge.stats.degenerate import p_text

    assert p_text(0.0004) == "< 0.001" and p_text(0.0004, relation=False) == "< 0.001"
    assert p_text(0.0123) == "= 0.012" and p_text(0.0123, relation=False) == "0.012"
    assert p_text(float("nan")) == "–"
