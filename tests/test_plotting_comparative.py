"""The comparative chapter's figure: paper beside ours, gaps where a correlation is undefined."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest

from nlgjudge.analysis.comparative import FIGURE_GROUPS, OURS, REPORTED, figure_frame
from nlgjudge.plotting.comparative import paper_vs_ours_bars


def _long() -> pd.DataFrame:
    rows = [
        ("Comparative Assessment (§3)", REPORTED, "FlanT5-3B", "FlanT5-3B", "", "COH", 50.0),
        ("Comparative Assessment (§3)", OURS, "m", "m", "comparative", "COH", 30.0),
        ("Prompt Scoring (§4.3.2)", OURS, "m (sampled)", "m", "prompt scoring (sampled)", "COH", np.nan),
        ("Prompt Scoring (§4.3.2)", OURS, "m (expected score)", "m", "prompt scoring (expected)", "COH", 10.0),
        ("Baselines (§4.3)", OURS, "ROUGE-L (rouge-score)", "rouge-score", "ROUGE-L", "COH", 20.0),
        ("Comparative Assessment (§3)", REPORTED, "Llama2-chat-13B", "Llama2-chat-13B", "", "COH", 40.0),
    ]
    return pd.DataFrame(rows, columns=["section", "source", "row", "system", "method", "aspect", "spearman"])


def test_figure_frame_keeps_llm_methods_and_the_papers_nearest_models_only() -> None:
    frame = figure_frame(_long())
    assert sorted(frame["who"]) == ["ours: m", "ours: m", "reported: FlanT5-3B"]
    assert set(frame["group"]) == {"comparative", "expected score (ours only)"}  # NaN sampled left out


def test_bars_leave_undefined_correlations_as_gaps_and_refuse_empty_input() -> None:
    frame = figure_frame(_long())
    fig = paper_vs_ours_bars(frame, ["COH"], [*FIGURE_GROUPS.values(), "expected score (ours only)"], title="t")
    heights = sorted(p.get_height() for p in fig.axes[0].patches if p.get_height() and not np.isnan(p.get_height()))
    assert heights == [10.0, 30.0, 50.0]
    with pytest.raises(ValueError, match="nothing to draw"):
        paper_vs_ours_bars(frame, ["FLU"], ["comparative"])
    with pytest.raises(KeyError, match="group"):
        paper_vs_ours_bars(frame.drop(columns="group"), ["COH"], ["comparative"])
