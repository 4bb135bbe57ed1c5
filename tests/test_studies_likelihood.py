"""The narcissism chapter's evaluators: eq. 2 on every generator's summary, both settings."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from engine_utils import tiny_handle

from nlgjudge.cache import OutputCache
from nlgjudge.data import JudgeDataset
from nlgjudge.engine import Judge
from nlgjudge.studies.likelihood import REFERENCE, hypotheses, likelihood_requests, run_likelihood, settings_for


def _with_references(ds: JudgeDataset) -> JudgeDataset:
    frame = ds.frame.copy()
    frame["references"] = [[f"reference of {c}"] for c in frame["context_id"]]
    return JudgeDataset(frame, dataclasses.replace(ds.info, name="rose", has_references=True))


def _generations(ds: JudgeDataset, empty_one: bool = False) -> pd.DataFrame:
    rows = []
    for c in ds.context_ids():
        for g in ("gen-a", "gen-b"):
            text = "" if (empty_one and (c, g) == ("ctx0", "gen-b")) else f"{g} says the cat sat ."
            rows.append({"generator": g, "context_id": c, "summary": text, "empty": text == ""})
    return pd.DataFrame(rows)


def test_reference_based_only_with_references_and_never_the_reference_against_itself(tiny_dataset) -> None:
    plain = tiny_dataset(n_contexts=2, n_candidates=2)
    assert settings_for(plain) == ("reference_free",)
    ds = _with_references(plain)
    hyps = hypotheses(ds, _generations(ds))
    assert sorted(hyps["generator"].unique()) == ["gen-a", "gen-b", REFERENCE]
    requests, frame = likelihood_requests(ds, hyps, "GPT2")
    free, based = frame[frame["setting"] == "reference_free"], frame[frame["setting"] == "reference_based"]
    assert len(free) == 2 * 3 and len(based) == 2 * 2 and REFERENCE not in set(based["generator"])
    first_free = requests[int(free["request"].iloc[0])]
    assert first_free.condition == "The cat sat on the mat 0 . TL;DR:" and first_free.target == "gen-a says the cat sat ."
    first_based = requests[int(based["request"].iloc[0])]
    assert first_based.condition == "reference of ctx0 Paraphrase the sentence:"  # Table 6, GPT-2 row


def test_an_empty_summary_is_kept_as_a_row_without_a_score(tiny_dataset, tmp_path) -> None:
    ds = tiny_dataset(n_contexts=2, n_candidates=2)
    judge = Judge(tiny_handle("qwen2"), cache=OutputCache(tmp_path / "c.sqlite"), study="likelihood-tiny", progress=False)
    out = run_likelihood(judge, ds, generations=_generations(ds, empty_one=True))
    assert len(out) == 4 and int(out["empty"].sum()) == 1
    empty = out[out["empty"]].iloc[0]
    assert np.isnan(empty["loglik_mean"]) and empty["n_tokens"] == 0
    full = out[~out["empty"]]
    assert (full["loglik_mean"] < 0).all() and (full["n_tokens"] > 0).all()
    np.testing.assert_allclose(full["loglik_sum"], full["loglik_mean"] * full["n_tokens"], rtol=1e-9)
    again = run_likelihood(judge, ds, generations=_generations(ds, empty_one=True))
    assert again.loc[~again["empty"], "from_cache"].all()
    np.testing.assert_array_equal(again["loglik_mean"].to_numpy(), out["loglik_mean"].to_numpy())


def test_a_benchmark_scores_its_own_selected_systems_in_the_papers_setting(tiny_dataset, monkeypatch) -> None:
    import nlgjudge.studies.likelihood as likelihood

    plain = tiny_dataset(n_contexts=2, n_candidates=3)
    ds = _with_references(plain)
    ds = JudgeDataset(ds.frame, dataclasses.replace(ds.info, name="rose_llm"))
    assert settings_for(ds) == likelihood.BENCHMARKS["rose_llm"].settings == ("reference_based",)
    selected = likelihood.Benchmark({"S0": "BART", "S2": "GPT-3"}, ("reference_based",), ("COH",), 2)
    monkeypatch.setitem(likelihood.BENCHMARKS, "rose_llm", selected)
    hyps = hypotheses(ds, None)
    assert sorted(set(hyps["generator"])) == ["S0", "S2"] and len(hyps) == 4
    requests, frame = likelihood_requests(ds, hyps, "GPT2")
    assert set(frame["setting"]) == {"reference_based"} and len(requests) == 4
    assert requests[0].condition == "reference of ctx0 Paraphrase the sentence:" and requests[0].target == "the cat sat ."
    with pytest.raises(ValueError, match="its own systems are the generators"):
        hypotheses(ds, _generations(ds))
    monkeypatch.setitem(likelihood.BENCHMARKS, "rose_llm", likelihood.Benchmark({"S0": "BART", "S9": "T5"}, ("reference_based",), ("COH",), 2))
    with pytest.raises(ValueError, match=r"systems \['S9'\] are not in the data"):
        hypotheses(ds, None)
    with pytest.raises(ValueError, match="generated summaries are needed"):
        hypotheses(plain, None)
