"""Judge: label probabilities, likelihoods, cache behaviour and input errors on tiny models."""

from __future__ import annotations

import numpy as np
import pytest
from engine_utils import SENTENCES, reference_label_logprobs, tiny_handle, tiny_tokenizer

from nlgjudge.cache import OutputCache
from nlgjudge.engine import (
    ClassifyRequest,
    ContextTooLongError,
    EngineInputError,
    Judge,
    LoglikRequest,
    NumericalError,
    normalise,
)
from nlgjudge.engine.prompting import encode_labels, encode_prompt

FAMILIES = ["gpt2", "llama", "qwen2", "t5", "bart"]


def _requests() -> list[ClassifyRequest]:
    out = []
    for a in SENTENCES[:3]:
        for b in SENTENCES[:3]:
            if a == b:
                continue
            for aspect in ("coherent", "fluent"):
                out.append(
                    ClassifyRequest(
                        prompt=f"The article . Summary A : {a} Summary B : {b} Which summary is more {aspect} ? Answer : Summary",
                        labels=(" A", " B", " C"),
                        meta={"a": a[:5], "aspect": aspect},
                    )
                )
                out.append(
                    ClassifyRequest(
                        prompt=[{"role": "user", "content": f"{a} versus {b} : which is more {aspect} ?"}],
                        response_prefix="Answer : Summary",
                        labels=(" A", " B"),
                    )
                )
    return out


@pytest.fixture
def cache(tmp_path):
    with OutputCache(tmp_path / "outputs.sqlite") as c:
        yield c


@pytest.mark.parametrize("family", FAMILIES)
def test_label_probs_equal_one_at_a_time_and_sum_to_one(family, cache):
    handle = tiny_handle(family)
    judge = Judge(handle, cache=cache, progress=False, token_budget=48, state_budget=400, chunk_size=7)
    requests = _requests()
    results = judge.label_probs(requests)
    model, tok = handle.load()
    for request, result in zip(requests, results):
        want = reference_label_logprobs(
            model, encode_prompt(tok, request.prompt, request.response_prefix), encode_labels(tok, request.labels)
        )
        np.testing.assert_allclose(result.logprobs, want, atol=1e-5, rtol=0)
        assert result.probs.sum() == pytest.approx(1.0, abs=1e-12)
        assert not result.from_cache
    assert judge.last_run.computed == len(requests) and judge.last_run.from_cache == 0


def test_multi_token_labels_are_scored_as_whole_sequences(cache):
    handle = tiny_handle("llama")
    tok = tiny_tokenizer()
    # " B" is two tokens, " A" one; "Summary A"/"Summary B" share their first token.
    assert len(tok(" B", add_special_tokens=False).input_ids) == 2
    request = ClassifyRequest(prompt="Which is better ? Answer :", labels=(" Summary A", " Summary B", " 10"))
    result = Judge(handle, cache=cache, progress=False).label_probs([request])[0]
    model, _ = handle.load()
    want = reference_label_logprobs(model, encode_prompt(tok, request.prompt), encode_labels(tok, request.labels))
    np.testing.assert_allclose(result.logprobs, want, atol=1e-5, rtol=0)
    np.testing.assert_allclose(result.probs, normalise(np.array(want)), atol=1e-6)


def test_cache_hit_loads_no_model(tmp_path):
    from nlgjudge.models import ModelHandle

    first = tiny_handle("gpt2")
    with OutputCache(tmp_path / "c.sqlite") as cache:
        computed = Judge(first, cache=cache, study="demo", progress=False).label_probs(_requests())
    # A fresh handle with the same name and fingerprint whose loader would fail if called.
    lazy = ModelHandle(name=first.name, source="memory", location="memory", _fingerprint=first.fingerprint, _kind="causal")

    def refuse():
        raise AssertionError("model loaded despite a full cache")

    lazy._loader = refuse
    with OutputCache(tmp_path / "c.sqlite") as cache:
        judge = Judge(lazy, cache=cache, progress=False)
        again = judge.label_probs(_requests())
    assert lazy.load_count == 0 and not lazy.is_loaded
    assert judge.last_run.from_cache == len(again) and judge.last_run.computed == 0
    for a, b in zip(computed, again):
        np.testing.assert_array_equal(a.probs, b.probs)
        assert b.from_cache


def test_partial_cache_computes_only_missing(cache):
    handle = tiny_handle("qwen2")
    requests = _requests()
    judge = Judge(handle, cache=cache, progress=False)
    judge.label_probs(requests[:5])
    results = judge.label_probs(requests)
    assert judge.last_run.from_cache == 5 and judge.last_run.computed == len(requests) - 5
    assert [r.from_cache for r in results[:5]] == [True] * 5


def test_other_weights_do_not_hit_the_cache(cache):
    Judge(tiny_handle("gpt2", seed=0), cache=cache, progress=False).label_probs(_requests()[:3])
    other = tiny_handle("gpt2", seed=1)
    other.name = tiny_handle("gpt2", seed=0).name  # same name, different weights -> different fingerprint
    judge = Judge(other, cache=cache, progress=False)
    judge.label_probs(_requests()[:3])
    assert judge.last_run.computed == 3


def test_loglikelihood_matches_manual_computation(cache):
    import torch

    for family in ("gpt2", "bart"):
        handle = tiny_handle(family)
        model, tok = handle.load()
        condition, target = "The cat sat on the mat . TL;DR :", " the cat sat ."
        result = Judge(handle, cache=cache, progress=False).loglikelihood([LoglikRequest(condition, target)])[0]
        with torch.inference_mode():
            if family == "gpt2":
                cond = tok(condition).input_ids
                tgt = tok(target, add_special_tokens=False).input_ids
                lp = torch.log_softmax(model(torch.tensor([cond + tgt])).logits[0], -1)
                want = [float(lp[len(cond) + i - 1, t]) for i, t in enumerate(tgt)]
            else:
                tgt = tok(text_target=target).input_ids
                dec = [model.config.decoder_start_token_id, *tgt[:-1]]
                logits = model(input_ids=torch.tensor([tok(condition).input_ids]), decoder_input_ids=torch.tensor([dec])).logits[0]
                lp = torch.log_softmax(logits, -1)
                want = [float(lp[i, t]) for i, t in enumerate(tgt)]
        np.testing.assert_allclose(result.token_logprobs, want, atol=1e-5, rtol=0)
        assert result.score() == pytest.approx(float(np.mean(want)), abs=1e-5)
        assert len(result.tokens) == len(want)


def test_bad_input_errors(cache):
    judge = Judge(tiny_handle("gpt2"), cache=cache, progress=False, context_window=40)
    with pytest.raises(EngineInputError, match="empty prompt"):
        judge.label_probs([ClassifyRequest(prompt="  ", labels=(" A", " B"))])
    with pytest.raises(EngineInputError, match="at least two"):
        judge.label_probs([ClassifyRequest(prompt="x", labels=(" A",))])
    with pytest.raises(EngineInputError, match="token prefix"):
        judge.label_probs([ClassifyRequest(prompt="Score :", labels=("1", "10"))])
    with pytest.raises(EngineInputError, match="duplicate"):
        judge.label_probs([ClassifyRequest(prompt="Score :", labels=("A", "A"))])
    with pytest.raises(EngineInputError, match="empty condition"):
        judge.loglikelihood([LoglikRequest("", "x")])
    long_prompt = " ".join(SENTENCES)
    with pytest.raises(ContextTooLongError, match="truncate=True"):
        judge.label_probs([ClassifyRequest(prompt=long_prompt, labels=(" A", " B"))])


def test_label_end_makes_prefix_labels_exact(cache):
    judge = Judge(tiny_handle("llama"), cache=cache, progress=False)
    result = judge.label_probs([ClassifyRequest(prompt="Score :", labels=("1", "10"), label_end="</s>")])[0]
    assert result.probs.sum() == pytest.approx(1.0)


def test_truncation_only_when_asked_and_counted(cache):
    long_prompt = " ".join(SENTENCES)
    judge = Judge(tiny_handle("gpt2"), cache=cache, progress=False, context_window=40, truncate=True)
    result = judge.label_probs([ClassifyRequest(prompt=long_prompt, labels=(" A", " B"))])[0]
    assert result.truncated and judge.last_run.truncated == 1
    assert result.probs.sum() == pytest.approx(1.0)


def test_nan_probabilities_raise():
    with pytest.raises(NumericalError):
        normalise(np.array([np.nan, -1.0]))


def test_finished_chunks_are_in_the_cache_when_a_run_dies(tmp_path):
    handle = tiny_handle("gpt2")
    requests = _requests()
    with OutputCache(tmp_path / "c.sqlite") as cache:
        judge = Judge(handle, cache=cache, progress=False, chunk_size=4)
        original = judge._compute_label_probs
        calls = []

        def dies_on_third_chunk(chunk, *args):
            calls.append(len(chunk))
            if len(calls) == 3:
                raise KeyboardInterrupt
            return original(chunk, *args)

        judge._compute_label_probs = dies_on_third_chunk
        with pytest.raises(KeyboardInterrupt):
            judge.label_probs(requests)
        assert len(cache) == 8  # two finished chunks of four were written
        resumed = Judge(handle, cache=cache, progress=False, chunk_size=4)
        resumed.label_probs(requests)
        assert resumed.last_run.from_cache == 8 and resumed.last_run.computed == len(requests) - 8
        assert len(cache) == len(requests)
        assert resumed.cache_stats.computed == len(requests) - 8


def test_cached_mask_reports_cache_hits_without_loading(tmp_path) -> None:
    from engine_utils import tiny_handle

    from nlgjudge.cache import OutputCache
    from nlgjudge.engine import ClassifyRequest, Judge

    handle = tiny_handle("gpt2")
    judge = Judge(handle, cache=OutputCache(tmp_path / "c.sqlite"), progress=False)
    requests = [ClassifyRequest(prompt=f"The cat sat {k} .", labels=(" A", " B")) for k in range(3)]
    assert judge.cached_mask("label_probs", requests) == [False, False, False]
    judge.label_probs(requests[:2])
    loads = handle.load_count
    assert judge.cached_mask("label_probs", requests) == [True, True, False]
    assert handle.load_count == loads
    import pytest

    with pytest.raises(ValueError, match="unknown operation"):
        judge.cached_mask("nonsense", requests)
