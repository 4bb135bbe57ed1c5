"""Which candidates a chapter ranks: a placeholder output is left out in its own context, a team in all."""

from __future__ import annotations

import pandas as pd

from nlgjudge.analysis.candidate_sets import (
    drop_candidates,
    placeholder_outputs,
    placeholder_team_candidates,
    restrict_runs,
    without_candidates,
)
from nlgjudge.data import JudgeDataset


def _named_like_webnlg(tiny_dataset, synthetic_comparisons):
    """A tiny dataset whose candidate ids are the teams' names (as WebNLG's are) and team S1 printed
    "null" in one context only, with its comparisons."""
    ds = tiny_dataset(n_contexts=4, n_candidates=5)
    frame = ds.frame.copy()
    frame["candidate_id"] = frame["system"]
    frame.loc[(frame["context_id"] == "ctx0") & (frame["system"] == "S1"), "text"] = "null"
    ds = JudgeDataset(frame, ds.info)
    comparisons = synthetic_comparisons(ds, pull=0.0)
    ids = {c: ds.candidates(c)["candidate_id"].tolist() for c in ds.context_ids()}
    comparisons["candidate_a"] = [ids[c][i] for c, i in zip(comparisons["context_id"], comparisons["i"])]
    comparisons["candidate_b"] = [ids[c][j] for c, j in zip(comparisons["context_id"], comparisons["j"])]
    return ds, comparisons


def test_a_placeholder_output_is_left_out_in_its_own_context_only(tiny_dataset, synthetic_comparisons) -> None:
    ds, comparisons = _named_like_webnlg(tiny_dataset, synthetic_comparisons)
    outputs = placeholder_outputs(ds)
    assert outputs == {("ctx0", "S1")}
    kept = drop_candidates(comparisons, outputs)
    in_ctx0 = kept[kept["context_id"] == "ctx0"]
    assert not (in_ctx0["candidate_a"] == "S1").any() and in_ctx0["i"].max() == 3  # renumbered over 4 candidates
    elsewhere = kept[kept["context_id"] != "ctx0"]
    assert (elsewhere["candidate_a"] == "S1").any()  # the team's real outputs stay
    assert len(without_candidates(ds, outputs).frame) == len(ds.frame) - 1
    scores = {("tiny", "m"): {"sampled": ds.frame[["context_id", "candidate_id"]].assign(score=1.0)}}
    _, kept_scores = restrict_runs({("tiny", "m"): comparisons}, scores, "tiny", outputs)
    assert len(kept_scores[("tiny", "m")]["sampled"]) == len(ds.frame) - 1


def test_a_team_with_a_placeholder_is_left_out_in_every_context(tiny_dataset, synthetic_comparisons) -> None:
    ds, comparisons = _named_like_webnlg(tiny_dataset, synthetic_comparisons)
    team = placeholder_team_candidates(ds)
    assert team == {"S1"} and int(ds.frame["candidate_id"].isin(team).sum()) == 4  # its outputs in 4 contexts
    kept = drop_candidates(comparisons, team)
    assert not (kept["candidate_a"] == "S1").any() and set(kept["context_id"]) == set(ds.context_ids())
    assert isinstance(kept, pd.DataFrame)
