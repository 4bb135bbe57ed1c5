"""Prefix sharing for a GPU: the whole radix tree packed into one token stream, a few wide passes.

:class:`~nlgjudge.engine.prefix_tree.CausalRunner` computes the tree level by level, siblings
packed into padded batch rows on top of copies of their parent's key/values. On a CPU that is
the fastest layout (rows stay short, nothing is computed twice). On a GPU it is overhead-bound:
many passes, parents' key/values copied and padded into every row, attention masks built token by
token in Python (issue 49 measured it at a third of a plain batched forward pass).

:class:`PackedRunner` lays the tree out once, depth first: every node's tokens follow its
parent's, each token carries its own position (``node.start + offset``), and a token's *subtree
end* is where its node's subtree ends in the layout. In that order a key token ``k`` is visible to
a query token ``q`` exactly when ``k <= q < subtree_end[k]``: ``k``'s node is an ancestor of
``q``'s (or the same node, causally). The layout is cut into consecutive chunks of at most
``chunk_tokens`` tokens, one forward pass each, batch size 1 and no padding. A chunk's past is the
*open path*: the tokens before the chunk whose subtree reaches into it (the ancestors of the
chunk's first token), gathered from the previous pass's key/values; nothing is computed twice.
The attention mask of a chunk is built on the device from three index vectors, never in Python.
Only the rows whose next-token distribution is wanted go through the output layer.

Same tokens, positions and attended keys as a plain forward pass over each sequence: the results
equal :class:`CausalRunner`'s up to floating-point reassociation (tested on the CPU, both paths).

Attention: ``"sdpa"`` (the default) gives each chunk a dense boolean mask; the block structure of
the tree is not exploited inside a chunk, which is why chunks stay at a few thousand tokens.
``"flex"`` gives PyTorch's FlexAttention a block mask from the same rule (blocks no query sees are
skipped), compiled on a GPU and eager (slow, for tests) on the CPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from nlgjudge.engine.prefix_tree import CausalRunner
from nlgjudge.engine.tree import PrefixTree, TreeNode

__all__ = ["ATTENTIONS", "Layout", "PackedRunner", "layout_tree", "visible_mask"]

ATTENTIONS = ("sdpa", "flex")
#: The attention function registered with transformers for the flex path (dispatches on the mask type).
_FLEX_IMPLEMENTATION = "nlgjudge_packed"


@dataclass
class Layout:
    """The tree's tokens in depth-first order, with what each pass needs to know about them."""

    tokens: np.ndarray  # [T] token ids
    positions: np.ndarray  # [T] absolute position in the token's own sequence
    subtree_end: np.ndarray  # [T] end (exclusive) of the token's node's subtree in the layout
    # (layout index, node, offset in node) of every row whose log-probabilities are wanted;
    # offset -1 marks a kept node's last token (full distribution and key/values kept)
    outputs: list[tuple[int, TreeNode, int]]
    attended_keys: int  # sum over tokens of the keys each attends (the attention work)

    def __len__(self) -> int:
        return len(self.tokens)


def layout_tree(tree: PrefixTree) -> Layout:
    """The depth-first layout of ``tree`` (root excluded)."""
    spans: list[tuple[TreeNode, int]] = []  # (node, layout start) in pre-order
    ends: list[int] = []
    total = 0

    def visit(node: TreeNode) -> int:
        nonlocal total
        slot = len(spans)
        spans.append((node, total))
        ends.append(0)
        total += len(node.tokens)
        for child in node.children.values():
            visit(child)
        ends[slot] = total
        return total

    import sys

    # Deep trees (long shared chains split by many insertions) must not hit Python's recursion limit.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for child in tree.root.children.values():
            visit(child)
    finally:
        sys.setrecursionlimit(limit)
    tokens = np.empty(total, dtype=np.int64)
    positions = np.empty(total, dtype=np.int64)
    subtree_end = np.empty(total, dtype=np.int64)
    outputs: list[tuple[int, TreeNode, int]] = []
    attended = 0
    for (node, start), end in zip(spans, ends, strict=True):
        n = len(node.tokens)
        tokens[start : start + n] = node.tokens
        positions[start : start + n] = np.arange(node.start, node.start + n)
        subtree_end[start : start + n] = end
        attended += n * node.start + n * (n + 1) // 2
        outputs.extend((start + offset, node, offset) for offset in sorted(node.wanted))
        if node.keep_state:
            outputs.append((start + n - 1, node, -1))
    return Layout(tokens, positions, subtree_end, outputs, attended)


def visible_mask(query_index: torch.Tensor, key_index: torch.Tensor, key_subtree_end: torch.Tensor) -> torch.Tensor:
    """``[queries, keys]`` booleans: key ``k`` is visible to query ``q`` iff ``k <= q < subtree_end[k]``
    (layout indices): ``k``'s node is an ancestor of ``q``'s, or the same node and not later."""
    q = query_index[:, None]
    return (key_index[None, :] <= q) & (q < key_subtree_end[None, :])


class PackedRunner(CausalRunner):
    """Runs a :class:`PrefixTree` as consecutive chunks of its depth-first layout (see the module docstring).

    ``chunk_tokens``: new tokens per forward pass. ``attention``: "sdpa" or "flex". The other
    arguments are :class:`CausalRunner`'s (its ``state_budget`` bounds the decoding batches).
    """

    def __init__(
        self,
        model: Any,
        chunk_tokens: int = 4096,
        attention: str = "sdpa",
        token_budget: int = 1024,
        state_budget: int = 24576,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        super().__init__(model, token_budget=token_budget, state_budget=state_budget, progress=progress)
        if attention not in ATTENTIONS:
            raise ValueError(f"attention={attention!r}; choose one of {', '.join(ATTENTIONS)}")
        if chunk_tokens < 1:
            raise ValueError(f"chunk_tokens must be at least 1, got {chunk_tokens}")
        self.chunk_tokens = int(chunk_tokens)
        self.attention = attention
        self.stack = model.base_model  # inputs are built on the device already

    @torch.inference_mode()
    def run(self, tree: PrefixTree) -> None:
        if self.sliding_window is not None and any(len(s) > self.sliding_window for s in tree.sequences):
            self._run_unshared(tree)  # the window counts key slots: one sequence at a time, as the CPU path
            return
        layout = layout_tree(tree)
        if len(layout) == 0:
            return
        device = self.device
        tokens = torch.from_numpy(layout.tokens).to(device)
        positions = torch.from_numpy(layout.positions).to(device)
        subtree_end = torch.from_numpy(layout.subtree_end).to(device)
        # outputs sorted by layout index, so each chunk takes a contiguous slice of them
        outputs = sorted(layout.outputs, key=lambda o: o[0])
        output_index = np.array([o[0] for o in outputs], dtype=np.int64)
        path = torch.empty(0, dtype=torch.long, device=device)  # layout indices of the past's tokens
        past: list[tuple[torch.Tensor, torch.Tensor]] | None = None
        self.stats.attended_keys += layout.attended_keys
        for start in range(0, len(layout), self.chunk_tokens):
            stop = min(start + self.chunk_tokens, len(layout))
            fresh = torch.arange(start, stop, device=device)
            key_index = torch.cat([path, fresh])
            hidden, layers = self._forward_chunk(
                tokens[start:stop], positions[start:stop], fresh, key_index, subtree_end[key_index], past
            )
            lo, hi = np.searchsorted(output_index, [start, stop])
            if hi > lo:
                self._outputs(outputs[lo:hi], hidden, layers, start, key_index, subtree_end)
            # The next chunk's past: every key whose subtree reaches past this chunk (its open path).
            keep = subtree_end[key_index] > stop
            path = key_index[keep]
            if stop < len(layout):
                where = keep.nonzero().squeeze(1)
                past = [(k.index_select(2, where), v.index_select(2, where)) for k, v in layers]
            self.stats.forward_calls += 1
            self.stats.tokens_computed += stop - start
            self.stats.padded_tokens += stop - start
            if self.progress is not None:
                self.progress(stop - start)

    def _forward_chunk(
        self,
        tokens: torch.Tensor,
        positions: torch.Tensor,
        query_index: torch.Tensor,
        key_index: torch.Tensor,
        key_subtree_end: torch.Tensor,
        past: list[tuple[torch.Tensor, torch.Tensor]] | None,
    ) -> tuple[torch.Tensor, list[tuple[torch.Tensor, torch.Tensor]]]:
        from transformers import DynamicCache

        cache = DynamicCache(ddp_cache_data=past) if past else DynamicCache()
        if self.attention == "sdpa":
            mask = visible_mask(query_index, key_index, key_subtree_end)[None, None]
            out = self.stack(
                input_ids=tokens[None], attention_mask=mask, position_ids=positions[None],
                past_key_values=cache, use_cache=True,
            )
        else:
            mask = _block_mask(query_index, key_index, key_subtree_end)
            with _flex_attention(self.model):
                out = self.stack(
                    input_ids=tokens[None], attention_mask=mask, position_ids=positions[None],
                    past_key_values=cache, use_cache=True,
                )
        layers = [(layer.keys, layer.values) for layer in out.past_key_values.layers]
        return out.last_hidden_state[0], layers

    def _outputs(
        self,
        outputs: list[tuple[int, TreeNode, int]],
        hidden: torch.Tensor,
        layers: list[tuple[torch.Tensor, torch.Tensor]],
        start: int,
        key_index: torch.Tensor,
        subtree_end: torch.Tensor,
    ) -> None:
        rows = torch.tensor([index - start for index, _, _ in outputs], device=self.device)
        logprobs = torch.log_softmax(self._device_logits(hidden.index_select(0, rows)), dim=-1)
        self.stats.output_rows += len(outputs)
        pairs = [(i, target) for i, (_, node, offset) in enumerate(outputs) if offset != -1 for target in sorted(node.wanted[offset])]
        values = iter(_pick_on_device(logprobs, pairs))
        for i, (index, node, offset) in enumerate(outputs):
            if offset != -1:
                for target in sorted(node.wanted[offset]):
                    node.logprobs[(offset, target)] = next(values)
                continue
            node.last_logprobs = logprobs[i].cpu().clone()
            # The kept node's key/values: the keys its last token sees, in position order (its
            # ancestors' tokens, then its own), as [1, heads, length, dim] per layer like the CPU path.
            query = torch.tensor([index], device=self.device)
            seen = visible_mask(query, key_index, subtree_end[key_index])[0].nonzero().squeeze(1)
            node.state = [(k.index_select(2, seen).clone(), v.index_select(2, seen).clone()) for k, v in layers]


def _pick_on_device(logprobs: torch.Tensor, pairs: list[tuple[int, int]]) -> list[float]:
    if not pairs:
        return []
    index = torch.tensor(pairs, device=logprobs.device)
    return logprobs[index[:, 0], index[:, 1]].tolist()


# ---- FlexAttention -------------------------------------------------------------------------------
_compiled: dict[str, Any] = {}


def _block_mask(query_index: torch.Tensor, key_index: torch.Tensor, key_subtree_end: torch.Tensor) -> Any:
    from torch.nn.attention.flex_attention import create_block_mask

    first = query_index[0]

    def mask_mod(b: Any, h: Any, q_idx: torch.Tensor, kv_idx: torch.Tensor) -> torch.Tensor:
        q = q_idx + first
        return (key_index[kv_idx] <= q) & (q < key_subtree_end[kv_idx])

    return create_block_mask(mask_mod, None, None, len(query_index), len(key_index), device=query_index.device)


def _flex_forward(module: Any, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                  attention_mask: Any, scaling: float | None = None, softcap: float | None = None,
                  **kwargs: Any) -> tuple[torch.Tensor, None]:
    """An attention function for transformers: FlexAttention with the packed layout's block mask."""
    from torch.nn.attention.flex_attention import BlockMask, flex_attention

    if not isinstance(attention_mask, BlockMask):  # any other caller of the model while we hold it
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(module, query, key, value, attention_mask, scaling=scaling, **kwargs)
    score_mod = None
    if softcap:
        def score_mod(score: torch.Tensor, b: Any, h: Any, q: Any, kv: Any) -> torch.Tensor:
            return softcap * torch.tanh(score / softcap)
    gqa = query.shape[1] != key.shape[1]
    arguments = {"score_mod": score_mod, "block_mask": attention_mask, "scale": scaling, "enable_gqa": gqa}
    if query.device.type == "cuda":
        function = _compiled.get("flex") or _compiled.setdefault("flex", torch.compile(flex_attention))
        out = function(query, key, value, **arguments)
    else:  # eager (the full score matrix): for tests of the path on a CPU, said once here not per call
        import warnings

        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="flex_attention called without torch.compile")
            out = flex_attention(query, key, value, **arguments)
    return out.transpose(1, 2).contiguous(), None


class _flex_attention:
    """Within the block the model's attention layers call :func:`_flex_forward` (restored after)."""

    def __init__(self, model: Any) -> None:
        self.config = model.config

    def __enter__(self) -> None:
        from transformers import AttentionInterface

        if _FLEX_IMPLEMENTATION not in AttentionInterface._global_mapping:
            AttentionInterface.register(_FLEX_IMPLEMENTATION, _flex_forward)
        self.previous = self.config._attn_implementation_internal
        self.config._attn_implementation_internal = _FLEX_IMPLEMENTATION

    def __exit__(self, *exc: Any) -> None:
        self.config._attn_implementation_internal = self.previous
