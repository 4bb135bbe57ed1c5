"""The Elo chapter's LLM judge: every ordered pair of contestants, the overall-quality question."""

from __future__ import annotations

import os

import numpy as np
import pytest
from engine_utils import tiny_handle

from nlgjudge.cache import OutputCache
from nlgjudge.engine import Judge
from nlgjudge.studies.elo import elo_requests, run_elo_judge
from nlgjudge.studies.registry import StudyOptions, get_study


def test_requests_cover_every_ordered_pair_once_with_the_better_question(tiny_dataset) -> None:
    ds = tiny_dataset(n_contexts=2, n_candidates=3)
    requests, frame = elo_requests(ds, style="chat")
    assert len(requests) == len(frame) == 2 * 3 * 2  # contexts x N(N-1), one template
    assert set(zip(frame["first"], frame["second"])) == {(a, b) for a in ("S0", "S1", "S2") for b in ("S0", "S1", "S2") if a != b}
    content = requests[0].prompt[0]["content"]
    assert content.startswith("The cat sat on the mat 0 .\n\nSummary A: the cat sat .\n\nSummary B: a storm")
    assert content.endswith("Which Summary is better, Summary A or Summary B?")
    assert requests[0].meta == {"context_id": "ctx0", "template": 1, "aspect": "OVR", "a": "S0", "b": "S1"}
    both, _ = elo_requests(ds, templates=[1, 2], style="chat")
    assert len(both) == 2 * len(requests)
    with pytest.raises(ValueError, match="templates"):
        elo_requests(ds, templates=[3])


def test_the_study_runs_context_by_context_and_reads_its_outputs_back(tiny_dataset, tmp_path) -> None:
    ds = tiny_dataset(n_contexts=2, n_candidates=3)
    cache = OutputCache(tmp_path / "c.sqlite")
    judge = Judge(tiny_handle("qwen2"), cache=cache, study="elo-tiny", progress=False)
    frame = run_elo_judge(judge, ds)
    assert frame["p_a"].between(0, 1).all() and not frame["from_cache"].any()
    assert list(frame.columns[:2]) == ["model", "dataset"]
    study = get_study("elo")
    again = study.run_context(judge, ds.only("ctx1"), StudyOptions())
    assert again["from_cache"].all()
    np.testing.assert_array_equal(again["p_a"].to_numpy(), frame.loc[frame["context_id"] == "ctx1", "p_a"].to_numpy())
    (operation, build), = study.checks(judge.handle, ds, StudyOptions())
    assert operation == "label_probs" and all(judge.cached_mask(operation, build(ds.only("ctx0"))))


def test_the_contest_has_seven_contestants_on_99_articles() -> None:
    if not os.environ.get("NLGJUDGE_DATA_DIR"):
        pytest.skip("needs the dataset mirror (NLGJUDGE_DATA_DIR)")
    from nlgjudge.data import load_dataset
    from nlgjudge.data.contest import CONTESTANTS

    ds = load_dataset("cnndm_contest")
    assert ds.n_contexts == 99 and len(ds.frame) == 99 * 7
    assert sorted(ds.frame["system"].unique()) == sorted(CONTESTANTS)
    one = ds.candidates(ds.context_ids()[0]).set_index("system")
    assert one.loc["reference", "text"] == one.loc["BART", "references"][0]  # the reference competes as itself
