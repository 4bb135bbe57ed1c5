"""Counters of what the engine actually computed (no torch import: cheap to use anywhere)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ForwardStats:
    """What the tree runner actually computed (for the benchmark and progress bars)."""

    forward_calls: int = 0
    tokens_computed: int = 0  # real tokens through the transformer (padding excluded)
    padded_tokens: int = 0  # rows x padded segment length (what the matmuls actually saw)
    attended_keys: int = 0  # sum over real query tokens of the keys they attend (attention cost)
    output_rows: int = 0  # positions that went through the output layer
    reused_tokens: int = 0  # prompt tokens whose key/values an earlier run left (llama.cpp prompt cache)
    restarted_groups: int = 0  # llama.cpp decoding groups computed again on an empty cache (no room)
    dropped_trunks: int = 0  # llama.cpp trunk prefixes computed again from cell 0 (free cells lay below them)
    grouped_leaves: int = 0  # llama.cpp short sibling leaves computed side by side (sequential scheme)
