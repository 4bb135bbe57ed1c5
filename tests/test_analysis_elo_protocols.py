"""The paired kappa difference between two protocols of one judge (the Elo chapter's exercise 3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from nlgjudge.analysis.elo_protocols import kappa_difference
from nlgjudge.stats.agreement import resampled_kappa_differences


def _outcomes(y: list[float], articles: int) -> pd.DataFrame:
    return pd.DataFrame({"encounter": range(len(y)), "context_id": [f"c{k % articles}" for k in range(len(y))], "y": y})


def test_the_difference_is_the_two_kappas_difference_and_zero_for_one_protocol_twice() -> None:
    rng = np.random.default_rng(0)
    rouge = rng.integers(0, 2, 200).astype(float)
    one = np.where(rng.random(200) < 0.8, rouge, 1 - rouge)  # agrees with ROUGE 80% of the time
    two = np.where(rng.random(200) < 0.6, rouge, 1 - rouge)
    two[:10] = 0.5  # ties: left out of that protocol's kappa only
    found = kappa_difference(_outcomes(list(one), 10), _outcomes(list(two), 10), _outcomes(list(rouge), 10), n_boot=500)
    decided = two != 0.5
    expected = cohen_kappa_score(one, rouge) - cohen_kappa_score(two[decided], rouge[decided])
    assert found.difference == pytest.approx(expected) and found.low < expected < found.high
    assert found.n_articles == 10 and found.n_encounters == (200, 190)
    same = kappa_difference(_outcomes(list(one), 10), _outcomes(list(one), 10), _outcomes(list(rouge), 10), n_boot=200)
    assert same.difference == 0.0 and same.low == same.high == 0.0


def test_the_paired_bootstrap_draws_the_same_articles_for_both_protocols() -> None:
    tables = np.array([[[5.0, 1.0], [1.0, 5.0]], [[3.0, 2.0], [2.0, 3.0]], [[4.0, 0.0], [1.0, 4.0]]])
    draws = resampled_kappa_differences(tables, tables, 100, np.random.default_rng(1))
    assert np.allclose(draws, 0.0)  # the same resample on both sides: never a difference
    with pytest.raises(ValueError, match="share one shape"):
        resampled_kappa_differences(tables, tables[:2], 10, np.random.default_rng(1))
