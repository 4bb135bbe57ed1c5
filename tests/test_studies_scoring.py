"""Scoring study: expected score over 1..10 (multi-token "10"), sampled scores with parse counts."""

from __future__ import annotations

import numpy as np
from engine_utils import tiny_handle

from nlgjudge.cache import OutputCache
from nlgjudge.engine import Judge
from nlgjudge.studies.scoring import expected_scores, sampled_scores


def test_expected_scores_are_a_distribution_over_1_to_10(tiny_dataset, tmp_path) -> None:
    ds = tiny_dataset(1, 3)
    judge = Judge(tiny_handle("llama"), cache=OutputCache(tmp_path / "c.sqlite"), progress=False)
    frame = expected_scores(judge, ds)
    assert len(frame) == 3 * 2 * 2
    probs = np.array(frame["probs"].tolist())
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-9)
    np.testing.assert_allclose(frame["expected"], probs @ np.arange(1, 11), atol=1e-9)
    assert frame["expected"].between(1, 10).all()


def test_sampled_scores_count_what_they_cannot_parse(tiny_dataset, tmp_path) -> None:
    ds = tiny_dataset(1, 2)
    judge = Judge(tiny_handle("gpt2"), cache=OutputCache(tmp_path / "c.sqlite"), progress=False)
    frame = sampled_scores(judge, ds, n_samples=3, templates=[1])
    assert (frame["n_parsed"] + frame["n_unparsed"] == 3).all()
    # A random model rarely writes a score: rows without one keep NaN, never a made-up value.
    assert frame.loc[frame["n_parsed"] == 0, "score"].isna().all()
    assert all(len(s) == 3 for s in frame["samples"])


def test_run_scoring_shares_prompts_and_matches_separate_calls(tiny_dataset, tmp_path) -> None:
    """The runner computes each prompt once for both readings; the results are those of separate calls."""
    from nlgjudge.bench.sharing import run_side
    from nlgjudge.studies.scoring import run_scoring

    ds = tiny_dataset(1, 2)
    handle = tiny_handle("qwen2")
    judge = Judge(handle, cache=OutputCache(tmp_path / "c.sqlite"), progress=False)
    parts = run_scoring(judge, ds, templates=[1], n_samples=3, geval=False)
    _, plain_tokens, expected, sampled = run_side(handle, ds, False, None, 3, templates=[1])
    _, shared_tokens, expected_shared, sampled_shared = run_side(handle, ds, True, None, 3, templates=[1])
    assert list(parts["sampled"]["samples"]) == list(sampled["samples"]) == list(sampled_shared["samples"])
    np.testing.assert_allclose(parts["expected"]["expected"], expected["expected"], atol=1e-9)
    np.testing.assert_allclose(expected_shared["expected"], expected["expected"], atol=1e-9)
    assert shared_tokens < plain_tokens
    assert sum(r.stats.tokens_computed for r in judge.reports) == shared_tokens
