"""Prefix sharing must reproduce plain one-at-a-time forward passes."""

from __future__ import annotations

import pytest
import torch
from engine_utils import comparison_items, plain_continuation_logprobs, tiny_model

from nlgjudge.engine.prefix_tree import CausalRunner, PrefixTree, score_continuations


def _items(vocab: int, seed: int = 0) -> list[tuple[list[int], int]]:
    return comparison_items(vocab, seed)


_reference = plain_continuation_logprobs


@pytest.mark.parametrize("family", ["gpt2", "llama", "qwen2"])
@pytest.mark.parametrize("budgets", [(16, 128), (4096, 100000)])
def test_prefix_shared_equals_plain_forward(family, budgets):
    model = tiny_model(family)
    items = _items(model.config.vocab_size)
    runner = CausalRunner(model, token_budget=budgets[0], state_budget=budgets[1])
    got = score_continuations(runner, items)
    want = _reference(model, items)
    worst = max(abs(g - w) for gs, ws in zip(got, want) for g, w in zip(gs, ws))
    assert worst < 1e-5
    # Sharing really happened: far fewer tokens than the sequences hold.
    assert runner.stats.tokens_computed < 0.3 * sum(len(t) - 1 for t, _ in items)
    # Output layer only where a label token is predicted (never whole prompts).
    assert runner.stats.output_rows <= sum(len(t) - f for t, f in items)


def test_radix_tree_splits_and_counts_unique_tokens():
    tree = PrefixTree()
    tree.insert([1, 2, 3, 4])
    tree.insert([1, 2, 5])
    tree.insert([1, 2, 3, 4])  # duplicates share everything
    tree.insert([7])
    assert tree.unique_tokens() == 6  # 1 2 | 3 4 | 5 | 7
    node, offset = tree.locate(1, 2)
    assert node.tokens == [5] and offset == 0 and node.start == 2


def test_wanted_positions_survive_later_splits():
    tree = PrefixTree()
    a = tree.insert([1, 2, 3, 4])
    tree.want(a, 3, 9)
    b = tree.insert([1, 2, 8])  # splits the node holding the wanted position
    node, offset = tree.locate(a, 3)
    assert node.wanted[offset] == {9}
    assert b == 1


def test_sliding_window_models_fall_back_to_unshared_passes():
    model = tiny_model("llama")
    model.config.layer_types = ["sliding_attention", "full_attention"]
    model.config.sliding_window = 8
    runner = CausalRunner(model)
    assert runner.sliding_window == 8
    items = _items(model.config.vocab_size)[:6]
    got = score_continuations(runner, items)
    model.config.layer_types = None
    want = _reference(model, items)
    assert max(abs(g - w) for gs, ws in zip(got, want) for g, w in zip(gs, ws)) < 1e-5
