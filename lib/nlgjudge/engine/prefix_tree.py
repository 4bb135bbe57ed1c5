"""Prefix sharing for decoder-only models: a radix tree over token sequences, computed level by level.

Every sequence of a batch of requests is inserted into a token radix tree. Each tree node is one
segment of tokens; its key/value states are computed once, on top of its parent's, and reused by
all of its children. Siblings are packed side by side into one batch row on top of one copy of
their parent's key/values, with a 4-d attention mask that lets each sibling see the parent's keys
and (causally) its own tokens only, and position ids that restart at the parent's length for
each sibling. Rows with different parents are batched together: the parents' key/values are
right-padded to the longest and the gaps masked out. After the forward pass each node's
key/values are cut back to its true keys (the parent's plus its own). Only the hidden states at
the positions whose next-token distribution is wanted go through the output layer.

This reproduces a plain forward pass over each whole sequence (the same tokens, positions and
attended keys); differences are floating-point reassociation only (tested below 1e-5).

The runner computes on the model's device (CPU or GPU): inputs are built on the CPU and moved
once per pass, and only the wanted log-probabilities (and the kept prompts' last distributions,
which sampling draws from with CPU generators) come back to the CPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from nlgjudge.engine.stats import ForwardStats
from nlgjudge.engine.tree import PrefixTree, TreeNode, score_continuations, score_continuations_keeping

__all__ = ["CausalRunner", "Pack", "PrefixTree", "TreeNode", "score_continuations", "score_continuations_keeping"]


State = list[tuple[torch.Tensor, torch.Tensor]]  # per layer (keys, values), [1, heads, length, dim]


@dataclass
class Pack:
    """Sibling nodes computed in one batch row on top of their common parent's key/values."""

    state: State | None
    nodes: list[TreeNode]

    @property
    def past(self) -> int:
        return self.nodes[0].start

    @property
    def width(self) -> int:
        return sum(len(node.tokens) for node in self.nodes)


class CausalRunner:
    """Runs a :class:`PrefixTree` through a decoder-only Hugging Face model."""

    def __init__(
        self,
        model: Any,
        token_budget: int = 1024,
        state_budget: int = 24576,
        pack_tokens: int = 384,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        self.model = model
        parameter = next(model.parameters())
        self.device = parameter.device
        # decoder stack without the output layer (GPT-2, Llama, Qwen, ...); on a GPU a thin wrapper
        # moves the CPU-built inputs of every caller (the decoding loop too) to the model's device
        self.base = model.base_model if self.device.type == "cpu" else _OnDevice(model.base_model, self.device)
        self.head = model.get_output_embeddings()
        self.softcap = getattr(model.config, "final_logit_softcapping", None)
        self.token_budget = token_budget  # new tokens per forward pass (rows x padded segment)
        self.state_budget = state_budget  # rows x (padded past + segment): bounds key/value memory
        self.pack_tokens = pack_tokens  # siblings packed into one row up to this many tokens
        self.progress = progress
        self.stats = ForwardStats()
        # Models with sliding-window layers (Gemma 3) count the window in key/value slots; padded
        # gaps would shift it, so sequences longer than the window run one at a time instead.
        cfg = model.config
        layer_types = getattr(cfg, "layer_types", None) or []
        sliding = getattr(cfg, "sliding_window", None) if (
            "sliding_attention" in layer_types or getattr(cfg, "use_sliding_window", False)
        ) else None
        self.sliding_window: int | None = int(sliding) if sliding else None

    def logits_from_hidden(self, hidden: torch.Tensor) -> torch.Tensor:
        """fp32 logits on the CPU (the decoding loop draws from them with CPU generators)."""
        return self._device_logits(hidden).cpu()

    def _device_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        logits = self.head(hidden).float()
        if self.softcap:  # Gemma-style final logit soft-capping, as the model's own forward does
            logits = torch.tanh(logits / self.softcap) * self.softcap
        return logits

    @torch.inference_mode()
    def run(self, tree: PrefixTree) -> None:
        if self.sliding_window is not None and any(len(s) > self.sliding_window for s in tree.sequences):
            self._run_unshared(tree)
            return
        roots = [(child, None) for child in tree.root.children.values()]
        self._run_level(roots)

    def _packs(self, items: list[tuple[TreeNode, State | None]]) -> list[Pack]:
        """Siblings (same parent state) share one batch row: the parent's key/values are copied once."""
        groups: dict[int, tuple[State | None, list[TreeNode]]] = {}
        for node, state in items:
            groups.setdefault(id(state), (state, []))[1].append(node)
        packs: list[Pack] = []
        for state, nodes in groups.values():
            nodes.sort(key=lambda n: len(n.tokens))
            current: list[TreeNode] = []
            size = 0
            for node in nodes:
                if current and size + len(node.tokens) > self.pack_tokens:
                    packs.append(Pack(state, current))
                    current, size = [], 0
                current.append(node)
                size += len(node.tokens)
            packs.append(Pack(state, current))
        return packs

    def _batches(self, packs: list[Pack]) -> list[list[Pack]]:
        # Dynamic batching by length: similar past and row lengths go together (little padding).
        packs = sorted(packs, key=lambda p: (p.past, p.width))
        batches: list[list[Pack]] = []
        current: list[Pack] = []
        max_past = max_seg = 0
        for pack in packs:
            past, seg = max(max_past, pack.past), max(max_seg, pack.width)
            rows = len(current) + 1
            if current and (rows * seg > self.token_budget or rows * (past + seg) > self.state_budget):
                batches.append(current)
                current, past, seg = [], pack.past, pack.width
            current.append(pack)
            max_past, max_seg = past, seg
        if current:
            batches.append(current)
        return batches

    def _run_level(self, items: list[tuple[TreeNode, State | None]]) -> None:
        for batch in self._batches(self._packs(items)):
            states = self._forward(batch)
            # Depth first over batches keeps at most one batch of key/values per tree level alive.
            children = [
                (child, states[id(node)])
                for pack in batch
                for node in pack.nodes
                for child in node.children.values()
            ]
            if children:
                self._run_level(children)

    def _forward(self, batch: list[Pack]) -> dict[int, State]:
        from transformers import DynamicCache

        rows = len(batch)
        past_max = max(pack.past for pack in batch)
        seg_max = max(pack.width for pack in batch)
        input_ids = torch.zeros((rows, seg_max), dtype=torch.long)
        positions = torch.zeros((rows, seg_max), dtype=torch.long)
        # allowed[row, query, key]: the parent's true keys, then causal inside the query's own node.
        allowed = torch.zeros((rows, seg_max, past_max + seg_max), dtype=torch.bool)
        offsets: dict[int, tuple[int, int]] = {}  # id(node) -> (row, offset in row)
        for row, pack in enumerate(batch):
            offset = 0
            for node in pack.nodes:
                n = len(node.tokens)
                input_ids[row, offset : offset + n] = torch.tensor(node.tokens)
                positions[row, offset : offset + n] = node.start + torch.arange(n)
                allowed[row, offset : offset + n, : pack.past] = True
                allowed[row, offset : offset + n, past_max + offset : past_max + offset + n] = torch.ones(n, n, dtype=torch.bool).tril()
                offsets[id(node)] = (row, offset)
                offset += n
            for q in range(offset, seg_max):  # padding queries see themselves only (no empty softmax rows)
                allowed[row, q, past_max + q] = True
        dtype = next(self.model.parameters()).dtype
        mask = torch.zeros(allowed.shape, dtype=dtype).masked_fill_(~allowed, torch.finfo(dtype).min)[:, None]
        input_ids, positions, mask = (t.to(self.device) for t in (input_ids, positions, mask))
        if past_max > 0:
            layers = []
            n_layers = len(next(pack.state for pack in batch if pack.state is not None))
            for layer in range(n_layers):
                keys, values = [], []
                for pack in batch:
                    k, v = pack.state[layer]  # type: ignore[index]
                    pad = past_max - k.shape[2]
                    keys.append(torch.nn.functional.pad(k, (0, 0, 0, pad)) if pad else k)
                    values.append(torch.nn.functional.pad(v, (0, 0, 0, pad)) if pad else v)
                layers.append((torch.cat(keys), torch.cat(values)))
            cache = DynamicCache(ddp_cache_data=layers)
        else:
            cache = DynamicCache()
        out = self.base(
            input_ids=input_ids,
            attention_mask=mask,
            position_ids=positions,
            past_key_values=cache,
            use_cache=True,
        )
        hidden = out.last_hidden_state
        self._gather_logprobs(batch, hidden, offsets)

        real = sum(pack.width for pack in batch)
        self.stats.forward_calls += 1
        self.stats.tokens_computed += real
        self.stats.padded_tokens += rows * seg_max
        self.stats.attended_keys += sum(
            len(node.tokens) * node.start + len(node.tokens) * (len(node.tokens) + 1) // 2
            for pack in batch
            for node in pack.nodes
        )
        # Each node's own key/values (parent's true keys + its own segment), for its children.
        states: dict[int, State] = {}
        layer_kv = [(layer.keys, layer.values) for layer in out.past_key_values.layers]
        for row, pack in enumerate(batch):
            for node in pack.nodes:
                if not node.children and not node.keep_state:
                    continue
                _, offset = offsets[id(node)]
                lo, hi = past_max + offset, past_max + offset + len(node.tokens)
                own = [
                    (
                        torch.cat([k[row : row + 1, :, : pack.past], k[row : row + 1, :, lo:hi]], dim=2),
                        torch.cat([v[row : row + 1, :, : pack.past], v[row : row + 1, :, lo:hi]], dim=2),
                    )
                    for k, v in layer_kv
                ]
                if node.keep_state:
                    node.state = own
                states[id(node)] = own
        if self.progress is not None:
            self.progress(real)
        return states

    def _run_unshared(self, tree: PrefixTree) -> None:
        """One plain forward pass per distinct sequence (no prefix sharing)."""
        for seq, path in tree.distinct_paths():
            out = self.base(input_ids=torch.tensor([seq], device=self.device), use_cache=any(n.keep_state for n in path))
            hidden = out.last_hidden_state[0]
            self.stats.forward_calls += 1
            self.stats.tokens_computed += len(seq)
            self.stats.padded_tokens += len(seq)
            self.stats.attended_keys += len(seq) * (len(seq) + 1) // 2
            for n in path:
                wanted = sorted(n.wanted)
                rows = [n.start + off for off in wanted]
                if n.keep_state:
                    rows.append(n.end - 1)
                if not rows:
                    continue
                logprobs = torch.log_softmax(self._device_logits(hidden[torch.tensor(rows, device=self.device)]), dim=-1)
                self.stats.output_rows += len(rows)
                pairs = [(i, target) for i, off in enumerate(wanted) for target in n.wanted[off]]
                values = _pick(logprobs, pairs)
                for (i, target), value in zip(pairs, values, strict=True):
                    n.logprobs[(wanted[i], target)] = value
                if n.keep_state:
                    n.last_logprobs = logprobs[-1].cpu().clone()
                    if n.end == len(seq):
                        # Keep the model's own cache object (its sliding layers hold only the window).
                        n.state = out.past_key_values  # type: ignore[assignment]
                    else:  # pragma: no cover - kept nodes end their sequence
                        raise RuntimeError("kept node does not end its sequence")
            if self.progress is not None:
                self.progress(len(seq))

    def _gather_logprobs(self, batch: list[Pack], hidden: torch.Tensor, offsets: dict[int, tuple[int, int]]) -> None:
        rows_idx, cols_idx, owners = [], [], []
        for pack in batch:
            for node in pack.nodes:
                row, base = offsets[id(node)]
                for offset in sorted(node.wanted):
                    rows_idx.append(row)
                    cols_idx.append(base + offset)
                    owners.append((node, offset))
                if node.keep_state:
                    rows_idx.append(row)
                    cols_idx.append(base + len(node.tokens) - 1)
                    owners.append((node, -1))
        if not rows_idx:
            return
        picked = hidden[torch.tensor(rows_idx, device=self.device), torch.tensor(cols_idx, device=self.device)]
        logprobs = torch.log_softmax(self._device_logits(picked), dim=-1)
        self.stats.output_rows += len(owners)
        pairs = [(i, target) for i, (node, offset) in enumerate(owners) if offset != -1 for target in node.wanted[offset]]
        values = iter(_pick(logprobs, pairs))
        for i, (node, offset) in enumerate(owners):
            if offset == -1:
                node.last_logprobs = logprobs[i].cpu().clone()
                continue
            for target in node.wanted[offset]:
                node.logprobs[(offset, target)] = next(values)


def _pick(logprobs: torch.Tensor, pairs: list[tuple[int, int]]) -> list[float]:
    """``logprobs[row, target]`` for each (row, target), gathered on the device and copied once."""
    if not pairs:
        return []
    index = torch.tensor(pairs, device=logprobs.device)
    return logprobs[index[:, 0], index[:, 1]].tolist()


class _OnDevice:
    """A model stack whose tensor arguments are moved to its device first (CPU-built inputs)."""

    def __init__(self, module: Any, device: torch.device) -> None:
        self.module = module
        self.device = device

    def __call__(self, **kwargs: Any) -> Any:
        return self.module(**{k: v.to(self.device) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()})

    def __getattr__(self, name: str) -> Any:
        return getattr(self.module, name)
