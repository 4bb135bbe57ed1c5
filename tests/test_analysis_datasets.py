"""The datasets chapter's tables: how tied people's scores are and the ceiling that sets for a judge."""

from __future__ import annotations

import numpy as np
import pytest

from nlgjudge.analysis.datasets import tie_ceilings
from nlgjudge.data import JudgeDataset


def test_untied_scores_leave_a_perfect_judge_a_ceiling_of_one(tiny_dataset) -> None:
    table = tie_ceilings({"tiny": tiny_dataset(n_contexts=3, n_candidates=4)}).set_index("aspect")
    assert table.loc["COH", "tied_pairs"] == 0 and table.loc["COH", "ceiling"] == pytest.approx(1.0)
    assert table.loc["COH", "contexts"] == 3


def test_ties_lower_the_ceiling_whatever_way_they_are_broken(tiny_dataset) -> None:
    ds = tiny_dataset(n_contexts=1, n_candidates=4)
    frame = ds.frame.assign(COH=[5.0, 5.0, 5.0, 4.0], FLU=[2.0, 2.0, 2.0, 2.0])  # FLU: every score equal, no Spearman
    row = tie_ceilings({"t": JudgeDataset(frame, ds.info)}).set_index("aspect").loc["COH"]
    assert row["tied_pairs"] == pytest.approx(3 / 6)
    # people's mid-ranks (3, 3, 3, 1) against any strict order that keeps the 4 last, e.g. (2, 3, 4, 1)
    assert row["ceiling"] == pytest.approx(np.corrcoef([3, 3, 3, 1], [2, 3, 4, 1])[0, 1])
    assert row["ceiling"] == pytest.approx(np.corrcoef([3, 3, 3, 1], [4, 2, 3, 1])[0, 1])  # another tie-break: the same
    assert "FLU" not in set(tie_ceilings({"t": JudgeDataset(frame, ds.info)})["aspect"])
