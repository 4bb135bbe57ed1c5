"""The judge screen (stats.degenerate) on judges with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from nlgjudge.stats.degenerate import MIN_CONTEXTS, NOT_SHOWN, PASSES, POSITION, TOO_FEW, degenerate_reason, order_agreement


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
    assert result.n_pairs == 10 * 28 and result.n_contexts == 10
    assert result.agreement == pytest.approx(0.5)  # every decision tied at tau: half agreement, as a coin's
    # half agreement in every context is what a coin gives: its interval is as wide as 10 coin flips'
    # (never zero-width), so it reaches chance and the run does not show that the judge reads the texts
    assert result.degenerate and result.outcome == NOT_SHOWN and "reaches chance" in degenerate_reason(result)
    assert result.low < 0.25 and result.high > 0.75


def test_a_judge_whose_two_orders_disagree_is_below_chance():
    # the pair's parity decides both orders alike: each pair's two answers name different candidates
    result = order_agreement(*_both_orders(10, 8, lambda s, i, j: 0.9 if (i + j) % 2 == 0 else 0.1))
    assert result.agreement < 0.25 and result.high <= 0.5
    assert result.outcome == POSITION and "at or below chance" in degenerate_reason(result)


def test_a_judge_that_always_ties_is_degenerate():
    result = order_agreement(*_both_orders(6, 6, lambda s, i, j: 0.5))
    assert result.agreement == pytest.approx(0.5) and result.degenerate


def test_a_position_judge_with_noise_unrelated_to_the_texts_rarely_passes():
    rng = np.random.default_rng(0)
    passed = 0
    for _ in range(200):
        result = order_agreement(*_both_orders(8, 6, lambda s, i, j: float(np.clip(0.9 + 0.05 * rng.standard_normal(), 0, 1))))
        assert 0.3 < result.agreement < 0.7
        passed += not result.degenerate
    assert passed / 200 <= 0.1  # the interval's lower end lies above chance for few such judges (about 2.5%)


def test_a_consistent_judge_passes_even_with_a_strong_pull_to_position_a():
    # P(A) = sigmoid(quality_i - quality_j + 2): most answers are "A", yet the texts decide the order
    quality = np.linspace(0, 3, 8)
    result = order_agreement(*_both_orders(8, 8, lambda s, i, j: float(1 / (1 + np.exp(-(quality[i] - quality[j] + 2))))))
    assert result.agreement > 0.9 and result.outcome == PASSES and degenerate_reason(result) is None
    # every context agreeing fully: the exact binomial bound over contexts, which five contexts cannot lift above chance
    few = order_agreement(*_both_orders(5, 8, lambda s, i, j: float(1 / (1 + np.exp(-(quality[i] - quality[j]))))))
    assert few.agreement == 1.0 and few.low == pytest.approx(0.025 ** (1 / 5)) and few.outcome == NOT_SHOWN
    assert "does not show that it reads the texts" in degenerate_reason(few)


def test_a_judge_preferring_the_worse_candidate_in_both_orders_is_not_degenerate():
    quality = np.linspace(0, 3, 8)  # reversed preferences are still consistent: the chapters' claims decide that
    result = order_agreement(*_both_orders(8, 8, lambda s, i, j: float(1 / (1 + np.exp(quality[i] - quality[j])))))
    assert not result.degenerate


def test_no_pair_in_both_orders_or_too_few_contexts_is_not_screened_with_its_own_reason_and_bad_input_is_refused():
    result = order_agreement([0, 0], [0, 1], [1, 2], [0.7, 0.2])
    assert result.n_pairs == 0 and result.degenerate and "no pair judged in both orders" in degenerate_reason(result)
    two = order_agreement(*_both_orders(MIN_CONTEXTS - 1, 4, lambda s, i, j: float(i < j)))
    assert two.outcome == TOO_FEW and f"on {MIN_CONTEXTS - 1} contexts, and the screen needs {MIN_CONTEXTS}" in degenerate_reason(two)
    with pytest.raises(ValueError, match="one value per comparison"):
        order_agreement([0], [0, 1], [1, 0], [0.5, 0.5])
    with pytest.raises(ValueError, match="probabilities"):
        order_agreement([0, 0], [0, 1], [1, 0], [0.5, float("nan")])


def test_the_unit_is_the_context_and_each_comparison_set_is_debiased_on_its_own():
    # two aspects per context: the sets are (context, aspect), the units the contexts
    quality = np.linspace(0, 2, 6)
    sets, first, second, p = _both_orders(16, 6, lambda s, i, j: float(1 / (1 + np.exp(-(quality[i] - quality[j] + (4 if s % 2 else 0))))))
    per_context = order_agreement(sets, first, second, p, [s // 2 for s in sets])
    assert per_context.n_contexts == 8 and per_context.n_pairs == 16 * 15 and per_context.outcome == PASSES
    # per-set thresholds read the texts even where one set leans to A far more than the other
    assert per_context.agreement > 0.9
    with pytest.raises(ValueError, match="context_ids"):
        order_agreement(sets, first, second, p, [0])


def test_the_interval_reaching_chance_is_not_shown_and_lying_at_or_below_it_is_position():
    # three contexts that read the texts, five whose judge answers by position
    quality = np.linspace(0, 3, 6)
    mixed = order_agreement(*_both_orders(8, 6, lambda s, i, j: 0.9 if s >= 3 else float(1 / (1 + np.exp(-(quality[i] - quality[j]))))))
    assert mixed.low <= 0.5 < mixed.high and mixed.outcome == NOT_SHOWN


def test_the_outcome_is_said_for_a_judge_that_passes_and_for_one_that_does_not():
    from nlgjudge.stats.degenerate import outcome_words

    quality = np.linspace(0, 3, 8)
    passes = order_agreement(*_both_orders(8, 8, lambda s, i, j: float(1 / (1 + np.exp(-(quality[i] - quality[j]))))))
    words = outcome_words(passes)
    assert words.startswith("passes the judge screen: its two orders agree on 100% [63%, 100%] of pairs per context")
    assert words.endswith("over 8 contexts, above chance, 51%")  # 8 candidates: K = 56, chance 56 / 110
    always_a = order_agreement(*_both_orders(10, 8, lambda s, i, j: 1.0))
    assert outcome_words(always_a) == "fails the judge screen: " + degenerate_reason(always_a).removeprefix("fails the judge screen: ")
    assert outcome_words(always_a).endswith("the interval reaches chance, so the run does not show that it reads the texts")


def test_p_text_is_the_one_way_a_p_value_is_printed() -> None:
    from nlgjudge.stats.degenerate import p_text

    assert p_text(0.0004) == "< 0.001" and p_text(0.0004, relation=False) == "< 0.001"
    assert p_text(0.0123) == "= 0.012" and p_text(0.0123, relation=False) == "0.012"
    assert p_text(float("nan")) == "–"


def test_the_per_context_shares_are_what_the_screen_averages():
    from nlgjudge.stats.degenerate import agreement_per_context

    # context 0 reads the texts (every pair agrees); context 1 answers by a coin-like rule that flips with the order
    sets, first, second, p = _both_orders(2, 4, lambda s, i, j: (0.9 if i < j else 0.1) if s == 0 else (0.9 if (i + j) % 2 else 0.1))
    shares = agreement_per_context(sets, first, second, p)
    assert shares[0].share == 1.0 and shares[0].pairs == 6
    assert shares[0].chance == pytest.approx(12 / (2 * 11))  # 4 candidates: K = 12 comparisons, half of them to A
    assert shares[1][1] == 6 and 0.0 <= shares[1][0] <= 1.0
    whole = order_agreement(sets, first, second, p)
    assert whole.n_pairs == 12 and whole.agreement == pytest.approx((1.0 + shares[1][0]) / 2)


def test_chance_is_what_a_judge_answering_at_random_reaches_not_one_half() -> None:
    """The threshold is fitted on the same comparisons, so half of a set's K decisions go to A and a pair's
    two orders agree with probability K / (2 (K - 1)); a judge whose answers are noise reaches it, and the
    screen passes such judges at about the interval's 2.5%, not the fifth of them a minimum of one half lets through."""
    from nlgjudge.stats.degenerate import set_chance

    assert set_chance(np.array([1.0] * 6 + [0.0] * 6)) == pytest.approx(12 / 22)
    assert set_chance(np.full(10, 0.5)) == pytest.approx(0.5)  # every decision tied: half agreement, the coin's
    rng = np.random.default_rng(1)
    shares, passed = [], 0
    for _ in range(300):
        result = order_agreement(*_both_orders(30, 4, lambda s, i, j: float(rng.random())))
        shares.append(result.agreement)
        passed += not result.degenerate
    assert np.mean(shares) == pytest.approx(12 / 22, abs=0.01)  # not 0.5
    assert result.chance == pytest.approx(12 / 22)
    assert passed / 300 <= 0.06
