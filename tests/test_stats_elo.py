"""Elo by stochastic gradient ascent (seed 004 Annex), with the consistent logistic."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nlgjudge.stats.elo import (
    design_matrix,
    elo_expected_score,
    elo_from_pairs,
    elo_sga,
    logistic_as_printed,
    logistic_consistent,
    outcomes_from_codes,
    step_schedule,
)


def test_consistent_logistic_gives_odds_of_ten_per_b() -> None:
    assert logistic_consistent(1.0) / logistic_consistent(-1.0) == pytest.approx(10.0)
    assert logistic_consistent(1.0) / (1 - logistic_consistent(1.0)) == pytest.approx(10.0)


def test_printed_logistic_contradicts_the_papers_odds_statement() -> None:
    # Seed 004 §3.2 says sigma(1)/sigma(-1) = 10 for sigma(x) = 1/(1+10^x); it is 1/10.
    assert logistic_as_printed(1.0) / logistic_as_printed(-1.0) == pytest.approx(0.1)
    assert logistic_as_printed(1.0) < logistic_as_printed(-1.0)  # decreasing


def test_single_updates_known_answer() -> None:
    # Equal ratings, second member wins: predicted 0.5, beta 50 -> +-25.
    result = elo_from_pairs([0, 0], [1, 1], [1.0, 1.0], 2, schedule="constant")
    np.testing.assert_allclose(result.trajectory[1], [975.0, 1025.0])
    # Next: P(second wins) = 1 / (1 + 10^(-50/400)); delta = 50 (1 - that).
    predicted = 1 / (1 + 10 ** (-50 / 400))
    delta = 50 * (1 - predicted)
    np.testing.assert_allclose(result.trajectory[2], [975.0 - delta, 1025.0 + delta])
    assert result.trajectory.shape == (3, 2)


def test_explicit_steps_reproduce_an_independent_loop() -> None:
    rng = np.random.default_rng(9)
    first = rng.integers(0, 4, 50)
    second = (first + rng.integers(1, 4, 50)) % 4
    y = rng.integers(0, 2, 50).astype(float)
    steps = np.linspace(30, 2, 50)
    theta = np.full(4, 1000.0)
    for k in range(50):
        x = np.zeros(4)
        x[first[k]], x[second[k]] = -1.0, 1.0
        theta = theta + steps[k] * (y[k] - 1 / (1 + 10 ** (-(x @ theta) / 400))) * x  # Annex, consistent sigma
    result = elo_from_pairs(first, second, y, 4, steps=steps)
    np.testing.assert_allclose(result.ratings, theta)
    np.testing.assert_array_equal(result.steps, steps)
    with pytest.raises(ValueError, match="steps must hold 50"):
        elo_from_pairs(first, second, y, 4, steps=steps[:10])


def test_draw_between_equals_changes_nothing() -> None:
    result = elo_from_pairs([0], [1], outcomes_from_codes([0]), 2)
    np.testing.assert_allclose(result.ratings, [1000.0, 1000.0])


def test_design_matrix_input_equals_pair_input() -> None:
    first, second = np.array([0, 2, 1, 0]), np.array([1, 0, 2, 2])
    y = outcomes_from_codes([1, -1, 0, 1])
    design = design_matrix(first, second, 3)
    np.testing.assert_array_equal(design[1], [1, 0, -1])
    a = elo_sga(design, y, n_passes=2)
    b = elo_from_pairs(first, second, y, 3, n_passes=2)
    np.testing.assert_array_equal(a.trajectory, b.trajectory)


def test_outcome_codes() -> None:
    np.testing.assert_array_equal(outcomes_from_codes([-1, 1, 0]), [0.0, 1.0, 0.5])
    with pytest.raises(ValueError, match="-1"):
        outcomes_from_codes([2])


def test_step_schedules_run_from_50_to_1() -> None:
    for schedule in ("geometric", "linear"):
        steps = step_schedule(100, schedule=schedule)
        assert steps[0] == pytest.approx(50.0) and steps[-1] == pytest.approx(1.0)
        assert np.all(np.diff(steps) < 0)
    assert np.all(step_schedule(5, schedule="constant") == 50.0)
    with pytest.raises(ValueError, match="valid choices"):
        step_schedule(5, schedule="cosine")


def sample_bradley_terry(true: np.ndarray, n_encounters: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = true.size
    first = rng.integers(0, n, n_encounters)
    second = (first + rng.integers(1, n, n_encounters)) % n
    second_wins = rng.random(n_encounters) < elo_expected_score(true[first], true[second])
    return first, second, second_wins.astype(float)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 6))
def test_elo_on_bradley_terry_outcomes_converges_to_true_order(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    true = 1000 + rng.permutation(np.arange(n) * 150.0 - 75.0 * (n - 1))
    first, second, y = sample_bradley_terry(true, 3000, seed)
    result = elo_from_pairs(first, second, y, n, n_passes=3, seed=seed)
    np.testing.assert_array_equal(np.argsort(result.ratings), np.argsort(true))
    assert np.max(np.abs(result.ratings - true)) < 100
    # Zero-sum updates: the mean rating stays theta_0 along the whole trajectory.
    np.testing.assert_allclose(result.trajectory.mean(axis=1), 1000.0)


def test_printed_logistic_runs_away() -> None:
    true = np.array([850.0, 950.0, 1050.0, 1150.0])
    first, second, y = sample_bradley_terry(true, 3000, 0)
    consistent = elo_from_pairs(first, second, y, 4, n_passes=3, seed=0)
    printed = elo_from_pairs(first, second, y, 4, n_passes=3, seed=0, logistic="as-printed")
    spread = printed.trajectory.max(axis=1) - printed.trajectory.min(axis=1)
    assert np.ptp(consistent.ratings) < 600
    assert spread[-1] > 20 * 400  # far beyond any plausible rating gap
    checkpoints = spread[[1000, 3000, 6000, 9000]]
    assert np.all(np.diff(checkpoints) > 0)  # still growing: no fixed point is reached


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"logistic": "printed"}, "valid choices"),
        ({"b": 0.0}, "b must be positive"),
        ({"n_passes": 0}, "n_passes"),
    ],
)
def test_bad_settings_raise(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        elo_from_pairs([0], [1], [1.0], 2, **kwargs)


def test_bad_encounters_raise() -> None:
    with pytest.raises(ValueError, match="cannot meet itself"):
        elo_from_pairs([0], [0], [1.0], 2)
    with pytest.raises(ValueError, match="0..1"):
        elo_from_pairs([0], [2], [1.0], 2)
    with pytest.raises(ValueError, match="outcomes"):
        elo_from_pairs([0], [1], [2.0], 2)
    with pytest.raises(ValueError, match="exactly one -1"):
        elo_sga(np.array([[1.0, 1.0, 0.0]]), [1.0])


INF, NAN = float("inf"), float("nan")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"b": NAN}, "b must be positive and finite"),
        ({"b": INF}, "b must be positive and finite"),
        ({"b": -400.0}, "b must be positive and finite"),
        ({"theta0": NAN}, "theta0 must be a finite number"),
        ({"theta0": INF}, "theta0 must be a finite number"),
        ({"theta0": -INF}, "theta0 must be a finite number"),
        ({"step_start": INF}, "step sizes must be positive finite.*step_start=inf"),
        ({"step_start": NAN}, "step sizes must be positive finite.*step_start=nan"),
        ({"step_end": NAN}, "step sizes must be positive finite.*step_end=nan"),
        ({"step_end": 0.0}, "step sizes must be positive finite.*step_end=0.0"),
        ({"steps": [50.0, NAN]}, "steps must be positive finite.*first at update 1: nan"),
        ({"steps": [INF, 1.0]}, "steps must be positive finite.*first at update 0: inf"),
        ({"n_passes": 1.5}, "n_passes must be an integer"),
    ],
)
def test_non_finite_scale_start_or_schedule_is_rejected(kwargs: dict, message: str) -> None:
    # Before the checks, NaN or infinite b, theta0 or beta ran to the end and returned NaN ratings
    # (or ratings that never moved) without a word.
    design = design_matrix([0, 1], [1, 0], 2)
    for call in (
        lambda: elo_from_pairs([0, 1], [1, 0], [1.0, 0.0], 2, **kwargs),
        lambda: elo_sga(design, [1.0, 0.0], **kwargs),
    ):
        with pytest.raises((ValueError, TypeError), match=message):
            call()


def test_schedule_and_expected_score_reject_non_finite_settings() -> None:
    with pytest.raises(ValueError, match="start=inf"):
        step_schedule(5, start=INF)
    with pytest.raises(ValueError, match="end=nan"):
        step_schedule(5, end=NAN)
    with pytest.raises(TypeError, match="n_updates must be an integer"):
        step_schedule(5.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="b must be positive and finite"):
        elo_expected_score(1000.0, 1100.0, b=NAN)
    with pytest.raises(ValueError, match="integer number of models"):
        elo_from_pairs([0], [1], [1.0], 2.5)  # type: ignore[arg-type]
