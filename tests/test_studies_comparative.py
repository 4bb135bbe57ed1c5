"""Comparative study: request layout, P(A) frame, matrices, caching (tiny random model)."""

from __future__ import annotations

import numpy as np
import pytest
from engine_utils import tiny_handle

from nlgjudge.cache import OutputCache
from nlgjudge.engine import Judge
from nlgjudge.analysis.frames import comparison_matrices
from nlgjudge.studies.comparative import comparative_requests, run_comparative


def test_requests_cover_every_ordered_pair_template_and_aspect(tiny_dataset) -> None:
    ds = tiny_dataset(n_contexts=2, n_candidates=3)
    requests, frame = comparative_requests(ds, style="chat")
    assert len(requests) == len(frame) == 2 * 2 * 3 * 2 * 2  # contexts x templates x N(N-1) x aspects
    assert not frame.duplicated(["context_id", "template", "aspect", "i", "j"]).any()
    first = requests[0]
    assert first.labels == (" A", " B") and first.response_prefix == "Summary"
    content = first.prompt[0]["content"]
    assert content.startswith("The cat sat on the mat 0 .\n\nSummary A: ")
    assert content.endswith("Which Summary is more coherent, Summary A or Summary B?")


def test_plain_and_seq2seq_styles_write_the_ending_out(tiny_dataset) -> None:
    ds = tiny_dataset(1, 2)
    plain, _ = comparative_requests(ds, style="plain", answer_suffix=True)
    assert plain[0].prompt.endswith("Summary B?\n\nAnswer: Summary") and plain[0].labels == (" A", " B")
    seq, _ = comparative_requests(ds, style="seq2seq")
    assert seq[0].labels == ("Summary A", "Summary B")


def test_bad_aspect_template_and_style_are_errors(tiny_dataset) -> None:
    ds = tiny_dataset(1, 2)
    with pytest.raises(ValueError, match="unknown aspect"):
        comparative_requests(ds, aspects=["XYZ"])
    with pytest.raises(ValueError, match="templates"):
        comparative_requests(ds, templates=[3])
    with pytest.raises(ValueError, match="prompt style"):
        comparative_requests(ds, style="fancy")


def test_run_gives_probabilities_matrices_and_is_cached(tiny_dataset, tmp_path) -> None:
    ds = tiny_dataset(n_contexts=2, n_candidates=3)
    handle = tiny_handle("qwen2")
    cache = OutputCache(tmp_path / "c.sqlite")
    done: list[str] = []
    frame = run_comparative(Judge(handle, cache=cache, study="t", progress=False), ds, on_context_done=done.append)
    assert done == ["ctx0", "ctx1"]
    assert frame["p_a"].between(0, 1).all() and not frame["from_cache"].any()
    matrices = comparison_matrices(frame)
    assert len(matrices) == 2 * 2 * 2
    m = matrices[("ctx0", 1, "COH")]
    assert m.shape == (3, 3) and np.isnan(np.diag(m)).all() and not np.isnan(m[~np.eye(3, dtype=bool)]).any()
    again = run_comparative(Judge(handle, cache=cache, study="t", progress=False), ds)
    assert again["from_cache"].all()
    np.testing.assert_array_equal(again["p_a"].to_numpy(), frame["p_a"].to_numpy())
