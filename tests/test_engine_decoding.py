"""Seeded sampling: reproducible, independent of batching; greedy generation batched == alone."""

from __future__ import annotations

import pytest
from engine_utils import tiny_handle

from nlgjudge.engine import GenerateRequest, Judge, SampleRequest

PROMPTS = ["The cat sat", "Summary A : the council", "Which summary is more coherent ?", "Score the summary"]


@pytest.mark.parametrize("family", ["llama", "gpt2", "t5"])
def test_sampling_is_seeded_and_batch_independent(family):
    handle = tiny_handle(family)
    requests = [SampleRequest(prompt=p, n_samples=3, temperature=1.0, max_new_tokens=5, seed=i) for i, p in enumerate(PROMPTS)]
    together = Judge(handle, cache=False, progress=False).sample(requests)
    alone = [Judge(handle, cache=False, progress=False).sample([r])[0] for r in reversed(requests)][::-1]
    assert [r.texts for r in together] == [r.texts for r in alone]
    assert all(len(r.texts) == 3 for r in together)
    reseeded = Judge(handle, cache=False, progress=False).sample(
        [SampleRequest(prompt=PROMPTS[0], n_samples=3, temperature=1.0, max_new_tokens=5, seed=99)]
    )
    assert reseeded[0].texts != together[0].texts  # a different seed gives different samples


def test_sampling_rejects_bad_settings():
    judge = Judge(tiny_handle("gpt2"), cache=False, progress=False)
    with pytest.raises(ValueError, match="temperature"):
        judge.sample([SampleRequest(prompt="x", temperature=0.0)])


@pytest.mark.parametrize("family", ["qwen2", "bart"])
def test_greedy_generation_batched_equals_alone(family):
    handle = tiny_handle(family)
    requests = [GenerateRequest(prompt=p, max_new_tokens=6) for p in PROMPTS]
    together = Judge(handle, cache=False, progress=False).generate(requests)
    alone = [Judge(handle, cache=False, progress=False).generate([r])[0] for r in requests]
    assert [r.text for r in together] == [r.text for r in alone]


def test_greedy_generation_matches_transformers_generate():
    import torch

    handle = tiny_handle("llama")
    model, tok = handle.load()
    ours = Judge(handle, cache=False, progress=False).generate([GenerateRequest(prompt=PROMPTS[1], max_new_tokens=6)])[0]
    ids = torch.tensor([tok(PROMPTS[1]).input_ids])
    out = model.generate(ids, max_new_tokens=6, do_sample=False, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    assert ours.text == tok.decode(out[0, ids.shape[1]:], skip_special_tokens=True)
