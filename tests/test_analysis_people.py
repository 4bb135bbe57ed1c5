"""The book's one people ranking (mean ACU) and its rank correlations (descriptions below 5 systems)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nlgjudge.analysis.people import PEOPLE_RANKING, people_ranking, ranking_correlation


def _people(rows: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame([{"context_id": f"a{k}", "system": s, "ACU": v} for s, values in rows.items()
                         for k, v in enumerate(values)])


def test_the_people_ranking_is_the_mean_acu_not_the_pairwise_wins() -> None:
    # B wins 2 of 3 articles against A by a hair, and loses the third by a lot: wins say B > A, the mean A > B.
    people = _people({"A": [0.50, 0.50, 0.90], "B": [0.51, 0.51, 0.10], "C": [0.0, 0.0, 0.0]})
    table = people_ranking(people, ["A", "B", "C", "D"])
    assert table["system"].tolist() == ["A", "B", "C", "D"]
    assert table.set_index("system").loc["A", "people_mean"] == pytest.approx(1.9 / 3)
    assert table["people_rank"].tolist()[:3] == [1, 2, 3] and pd.isna(table["people_rank"].iloc[3])  # D not annotated
    assert PEOPLE_RANKING == "people ranking (mean ACU)"


def test_the_people_ranking_averages_over_the_articles_every_system_shares() -> None:
    people = _people({"A": [0.2, 0.2, 0.9], "B": [0.3, 0.3, np.nan]})  # B not annotated on the easy article
    table = people_ranking(people).set_index("system")
    assert table.loc["A", "people_mean"] == pytest.approx(0.2) and table.loc["B", "people_mean"] == pytest.approx(0.3)
    assert (table["people_articles"] == 2).all()


def test_a_correlation_over_four_systems_is_a_description_not_a_verdict() -> None:
    people = pd.Series({"A": 4.0, "B": 3.0, "C": 2.0, "D": 1.0})
    four = ranking_correlation(pd.Series({"A": 9.0, "B": 7.0, "C": 5.0, "D": 1.0}), people)
    assert four["spearman"] == pytest.approx(1.0) and four["n"] == 4
    assert four["verdict"] == "not tested" and "description only" in four["reading"]
    five = ranking_correlation(pd.Series({"A": 9.0, "B": 7.0, "C": 5.0, "D": 1.0, "E": 0.0}), pd.concat([people, pd.Series({"E": 0.0})]))
    assert five["n"] == 5 and "description only" not in five["reading"]


def test_the_smallest_tau_an_exact_test_over_few_systems_can_resolve() -> None:
    """Over 6 distinct ranks the two-sided exact test reaches 0.05 only at |S| >= 13 of 15 pairs (p = 12/720),
    not at 11 (p = 40/720): tau 13/15; over 4 ranks no tau can (the smallest p is 2/24)."""
    import math

    from nlgjudge.analysis.people import smallest_detectable_tau

    assert math.isclose(smallest_detectable_tau(6), 13 / 15)
    assert math.isnan(smallest_detectable_tau(4))
    assert smallest_detectable_tau(10) < smallest_detectable_tau(6)
