"""The Elo chapter's two protocols of one LLM judge read against each other: how much of its
disagreement with ROUGE is the position (one order against both orders debiased).

Input: the chapter's outcome frames (``encounter``, ``context_id``, ``y``: 1 when the first contestant
wins, 0 when the second does, anything else undecided), one per judge. The unit is the article, as for
every kappa of the chapter; the difference is read from one paired bootstrap (both protocols on the same
resampled articles), never from two intervals side by side.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from nlgjudge.stats.agreement import cohen_kappa, resampled_kappa_differences, unit_tables
from nlgjudge.stats.intervals import bootstrap_se_interval


@dataclass(frozen=True)
class KappaDifference:
    """Kappa with the comparator under protocol 1 minus under protocol 2, with its paired interval."""

    difference: float
    low: float
    high: float
    n_articles: int
    n_encounters: tuple[int, int]


def _decided(judge: pd.DataFrame, comparator: pd.DataFrame) -> pd.DataFrame:
    joined = judge[["encounter", "context_id", "y"]].merge(comparator[["encounter", "y"]], on="encounter",
                                                           suffixes=("_1", "_2"))
    return joined[joined["y_1"].isin((0.0, 1.0)) & joined["y_2"].isin((0.0, 1.0))]


def _tables(decided: pd.DataFrame, articles: list[str]) -> np.ndarray:
    position = {c: k for k, c in enumerate(articles)}
    return unit_tables(decided["context_id"].map(position), decided["y_1"], decided["y_2"], len(articles))


def kappa_difference(protocol_1: pd.DataFrame, protocol_2: pd.DataFrame, comparator: pd.DataFrame, *,
                     n_boot: int = 4000, seed: int = 0) -> KappaDifference:
    """Cohen's kappa of ``protocol_1`` with ``comparator`` minus that of ``protocol_2``, each on the
    encounters it and the comparator both decided, with difference +- t(articles - 1) x the paired
    bootstrap's standard error over articles."""
    one, two = _decided(protocol_1, comparator), _decided(protocol_2, comparator)
    if min(len(one), len(two)) < 2:
        raise ValueError("each protocol needs at least two encounters that it and the comparator both decided")
    articles = list(dict.fromkeys([*one["context_id"], *two["context_id"]]))
    difference = (cohen_kappa(one["y_1"].to_numpy(), one["y_2"].to_numpy())
                  - cohen_kappa(two["y_1"].to_numpy(), two["y_2"].to_numpy()))
    draws = resampled_kappa_differences(_tables(one, articles), _tables(two, articles), n_boot, np.random.default_rng(seed))
    low, high = bootstrap_se_interval(np.asarray(difference), draws, len(articles))
    return KappaDifference(float(difference), max(float(low), -2.0), min(float(high), 2.0), len(articles), (len(one), len(two)))
