"""The packed runner (a GPU's layout of the prefix tree) against plain passes and the level-by-level runner.

Both code paths run here on the CPU, so the GPU path's logic (layout, chunking, open-path past,
masks, kept states) is checked for agreement without a GPU.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from engine_utils import comparison_items, plain_continuation_logprobs, tiny_model, tiny_tokenizer

from nlgjudge.engine.decoding import decode_causal
from nlgjudge.engine.packed_tree import PackedRunner, layout_tree, visible_mask
from nlgjudge.engine.prefix_tree import CausalRunner, PrefixTree, score_continuations, score_continuations_keeping
from nlgjudge.engine.tree import DecodeJob
from nlgjudge.models.device import Placement, choose_torch_runner


def _items(vocab: int, seed: int = 0) -> list[tuple[list[int], int]]:
    return comparison_items(vocab, seed, second_root=True)


_reference = plain_continuation_logprobs


def _worst(got, want):
    return max(abs(g - w) for gs, ws in zip(got, want, strict=True) for g, w in zip(gs, ws, strict=True))


@pytest.mark.parametrize("family", ["gpt2", "llama", "qwen2"])
@pytest.mark.parametrize("chunk", [7, 64, 100000])
def test_packed_equals_plain_forward_and_the_level_runner(family, chunk):
    model = tiny_model(family)
    items = _items(model.config.vocab_size)
    packed = PackedRunner(model, chunk_tokens=chunk)
    got = score_continuations(packed, items)
    assert _worst(got, _reference(model, items)) < 1e-5
    levels = CausalRunner(model, token_budget=64, state_budget=4096)
    assert _worst(got, score_continuations(levels, items)) < 1e-5
    # Every distinct token once, no padding, one pass per chunk, output rows only where wanted.
    unique = levels.stats.tokens_computed
    assert packed.stats.tokens_computed == unique == packed.stats.padded_tokens
    assert packed.stats.forward_calls == math.ceil(unique / chunk)
    assert packed.stats.output_rows == levels.stats.output_rows
    assert packed.stats.attended_keys == levels.stats.attended_keys


def test_flex_attention_path_agrees_on_the_cpu():
    model = tiny_model("qwen2")
    items = _items(model.config.vocab_size)[:40]
    got = score_continuations(PackedRunner(model, chunk_tokens=50, attention="flex"), items)
    assert _worst(got, _reference(model, items)) < 1e-5
    assert model.config._attn_implementation != "nlgjudge_packed"  # restored after the pass


def test_visible_mask_is_the_ancestor_rule_on_a_hand_made_tree():
    tree = PrefixTree()
    tree.insert([1, 2, 3])  # root segment [1, 2] after the split, children [3] and [4, 5]
    tree.insert([1, 2, 4, 5])
    layout = layout_tree(tree)
    assert layout.tokens.tolist() == [1, 2, 3, 4, 5]
    assert layout.positions.tolist() == [0, 1, 2, 2, 3]
    assert layout.subtree_end.tolist() == [5, 5, 3, 5, 5]
    index = torch.arange(5)
    mask = visible_mask(index, index, torch.from_numpy(layout.subtree_end)).int().tolist()
    assert mask == [
        [1, 0, 0, 0, 0],
        [1, 1, 0, 0, 0],
        [1, 1, 1, 0, 0],  # token 3 sees its ancestors [1, 2]
        [1, 1, 0, 1, 0],  # token 4 does not see its sibling 3
        [1, 1, 0, 1, 1],
    ]


def test_kept_states_and_decoding_match_the_level_runner():
    model, tok = tiny_model("llama"), tiny_tokenizer()
    items = _items(model.config.vocab_size, seed=3)
    prompts = sorted({tuple(t[:f]) for t, f in items})[:5]
    results = {}
    for name, runner in (("levels", CausalRunner(model, token_budget=32, state_budget=4096)),
                         ("packed", PackedRunner(model, chunk_tokens=13))):
        scores, kept = score_continuations_keeping(runner, items, [list(p) for p in prompts])
        results[name] = (scores, kept)
    (s_levels, k_levels), (s_packed, k_packed) = results["levels"], results["packed"]
    assert _worst(s_packed, s_levels) < 1e-5
    for prompt in prompts:
        a, b = k_levels[prompt], k_packed[prompt]
        assert torch.allclose(a.last_logprobs, b.last_logprobs, atol=1e-5)
        assert len(a.state) == len(b.state)
        for (ka, va), (kb, vb) in zip(a.state, b.state, strict=True):
            assert ka.shape == kb.shape == (1, ka.shape[1], len(prompt), ka.shape[3])
            assert torch.allclose(ka, kb, atol=1e-5) and torch.allclose(va, vb, atol=1e-5)
    jobs = [DecodeJob(list(p), n_samples=2, temperature=0.0, max_new_tokens=6, seed=1) for p in prompts]
    greedy = {name: decode_causal(runner, tok, jobs) for name, runner in (
        ("levels", CausalRunner(model, token_budget=32, state_budget=4096)), ("packed", PackedRunner(model, chunk_tokens=13)))}
    assert greedy["levels"] == greedy["packed"]


def test_runner_choice_defaults_and_refusals(monkeypatch):
    monkeypatch.delenv("NLGJUDGE_TORCH_RUNNER", raising=False)
    cpu, gpu = Placement("cpu", "float32"), Placement("cuda", "bfloat16")
    assert choose_torch_runner(cpu).name == "levels"  # the CPU computes exactly as before
    assert choose_torch_runner(gpu).name == "packed"
    layout = choose_torch_runner(cpu, "packed:2048:flex")
    assert (layout.name, layout.chunk_tokens, layout.attention) == ("packed", 2048, "flex")
    monkeypatch.setenv("NLGJUDGE_TORCH_RUNNER", "levels")
    assert choose_torch_runner(gpu).name == "levels"
    for bad in ("fast", "packed:0", "packed:x", "packed:64:triton", "levels:64", "auto:5", "packed:1:sdpa:2"):
        with pytest.raises(ValueError, match="NLGJUDGE_TORCH_RUNNER|runner"):
            choose_torch_runner(cpu, bad)
    with pytest.raises(ValueError, match="attention"):
        PackedRunner(tiny_model("gpt2"), attention="triton")


def test_the_judge_through_the_packed_runner_gives_the_level_runners_outputs(monkeypatch):
    """All four operations (and shared prompts) through the judge, packed vs the CPU's default layout."""
    from engine_utils import tiny_handle

    from nlgjudge.engine import ClassifyRequest, GenerateRequest, Judge, LoglikRequest, SampleRequest

    prompts = ["The cat sat on the mat", "Summary A : the council approved", "Which summary is more coherent ?"]
    classify = [ClassifyRequest(prompt=p, labels=("1", "5", "10"), label_end="</s>") for p in prompts]
    sample = [SampleRequest(prompt=p, n_samples=3, temperature=1.0, max_new_tokens=5, seed=i) for i, p in enumerate(prompts)]
    generate = [GenerateRequest(prompt=p, max_new_tokens=6) for p in prompts]
    loglik = [LoglikRequest(condition=p, target=" the team won .") for p in prompts]
    handle = tiny_handle("qwen2")

    def everything(runner: str):
        monkeypatch.setenv("NLGJUDGE_TORCH_RUNNER", runner)
        judge = Judge(handle, cache=False, progress=False, backend="torch")
        with judge.sharing_prompts():
            probs = [r.probs for r in judge.label_probs(classify)]
            texts = [r.texts for r in judge.sample(sample)]
        runner = judge._causal_runner(handle.load()[0], judge.last_run)
        return probs, texts, [r.text for r in judge.generate(generate)], [r.token_logprobs for r in judge.loglikelihood(loglik)], runner

    levels, packed = everything("levels"), everything("packed:16")
    np.testing.assert_allclose(packed[0], levels[0], atol=1e-6)
    assert packed[1] == levels[1] and packed[2] == levels[2]
    for a, b in zip(packed[3], levels[3], strict=True):
        np.testing.assert_allclose(a, b, atol=1e-5)
    assert isinstance(packed[4], PackedRunner) and packed[4].chunk_tokens == 16
    assert type(levels[4]) is CausalRunner
