"""Agreement: pairwise accuracy against gold, self-consistency on candidate subsets, Cohen's kappa."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nlgjudge.stats.agreement import cohen_kappa, kappa_from_tables, pairwise_accuracy, self_consistency, unit_tables
from nlgjudge.stats.decisions import hard_decisions

NAN = np.nan


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


@pytest.mark.parametrize(
    ("labels_a", "labels_b", "name"),
    [
        ("AB", ["A", "B"], "labels_a"),
        (["A", "B"], "AB", "labels_b"),
        (np.array("AB"), ["A", "B"], "labels_a"),
        (b"AB", ["A", "B"], "labels_a"),
    ],
)
def test_cohen_kappa_rejects_a_string_where_labels_are_expected(labels_a: object, labels_b: object, name: str) -> None:
    with pytest.raises(TypeError, match=f"{name} must be a sequence of labels.*not the single string"):
        cohen_kappa(labels_a, labels_b)  # type: ignore[arg-type]


def test_cohen_kappa_takes_string_labels_in_a_list() -> None:
    a = [1, 1, 1, 1, 0, 0, 0, 0, 1, 0]
    b = [1, 1, 1, 0, 0, 0, 0, 1, 1, 1]
    as_text = cohen_kappa(["AB"[v] for v in a], ["AB"[v] for v in b])
    assert as_text == pytest.approx(cohen_kappa(a, b)) == pytest.approx(0.4)


def test_cohen_kappa_rejects_missing_and_mixed_labels() -> None:
    with pytest.raises(ValueError, match="labels_b contains None"):
        cohen_kappa(["A", "B", "A"], ["A", None, "B"])
    with pytest.raises(TypeError, match="cannot be compared"):
        cohen_kappa(np.array([0, "A"], dtype=object), np.array([1, "B"], dtype=object))


def test_pairwise_accuracy_rejects_strings_and_scalars() -> None:
    decisions = np.array([[NAN, 1], [0, NAN]])
    with pytest.raises(TypeError, match="gold must be .*not the single string"):
        pairwise_accuracy(decisions, "12")
    with pytest.raises(ValueError, match="gold must be an \\(N,\\) score vector"):
        pairwise_accuracy(decisions, 1.0)
    with pytest.raises(TypeError, match="decisions must be"):
        pairwise_accuracy("10", np.array([1.0, 0.0]))


def test_self_consistency_rejects_non_integer_draws_and_sizes() -> None:
    decisions, gold = np.array([[NAN, 1], [0, NAN]]), np.array([1.0, 0.0])
    with pytest.raises(TypeError, match="n_draws must be an integer"):
        self_consistency(decisions, gold, subset_sizes=[2], n_draws=2.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_draws must be at least 1"):
        self_consistency(decisions, gold, subset_sizes=[2], n_draws=0)
    with pytest.raises(TypeError, match="subset_sizes must be a sequence"):
        self_consistency(decisions, gold, subset_sizes="2")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="whole numbers"):
        self_consistency(decisions, gold, subset_sizes=[2.5])  # type: ignore[list-item]
    whole = self_consistency(decisions, gold, subset_sizes=[2.0], n_draws=1)  # type: ignore[list-item]
    assert whole.subset_sizes.tolist() == [2]


def _tied_pair_judge() -> tuple[np.ndarray, np.ndarray]:
    """Four candidates ranked 0 > 1 > 3 > 2 by the full win ratio, whose pair (0, 1) answers "A" in
    both orders (a tie when the two are ranked alone), with probabilities that favour 0 in that pair."""
    decisions = np.array([
        [NAN, 1, 1, 1],
        [1, NAN, 1, 0],
        [0, 0, NAN, 0],
        [0, 1, 1, NAN],
    ], dtype=float)
    probs = np.where(np.isnan(decisions), NAN, 0.1 + 0.8 * np.nan_to_num(decisions))
    probs[0, 1], probs[1, 0] = 0.9, 0.6  # both "A"; summed, candidate 0 has 1.3 against 0.7
    return decisions, probs


def test_two_candidate_ties_are_counted_and_can_be_broken_by_the_probabilities() -> None:
    decisions, probs = _tied_pair_judge()
    gold = np.array([4.0, 3.0, 1.0, 2.0])
    half = self_consistency(decisions, gold, subset_sizes=[2, 4], n_draws=200, seed=0)
    assert half.final_tied_percent[0] > 0  # pair (0, 1) ties whenever it is drawn
    assert half.final_percent[0] < 100.0 and half.final_tied_percent[1] == 0.0
    broken = self_consistency(decisions, gold, subset_sizes=[2, 4], n_draws=200, seed=0, tie_break=probs)
    assert broken.final_percent[0] == pytest.approx(100.0)  # the tie goes to candidate 0, as in the full ranking
    assert broken.final_tied_percent[0] == half.final_tied_percent[0]  # the share is counted before the tie-break
    assert broken.final_percent[1] == pytest.approx(100.0)
    with pytest.raises(ValueError, match="tie_break must have"):
        self_consistency(decisions, gold, subset_sizes=[2], tie_break=probs[:3, :3])


def test_unit_tables_count_each_units_pairs_and_give_the_pooled_kappa() -> None:
    units = [0, 0, 1, 1, 1, 2]
    a = [1, 0, 1, 1, 0, 0]
    b = [1, 1, 1, 0, 0, 0]
    tables = unit_tables(units, a, b, 3)
    assert tables.shape == (3, 2, 2)
    assert tables[0].tolist() == [[0.0, 1.0], [0.0, 1.0]]
    assert tables[1].tolist() == [[1.0, 0.0], [1.0, 1.0]]
    assert tables[2].tolist() == [[1.0, 0.0], [0.0, 0.0]]
    assert float(kappa_from_tables(tables.sum(axis=0)[None])[0]) == pytest.approx(cohen_kappa(a, b))
    with pytest.raises(ValueError, match="one length"):
        unit_tables([0, 1], [1], [0, 1], 2)
