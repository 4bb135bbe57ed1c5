"""Encoder-decoder scoring: each distinct encoder input is encoded once, the decoder scores targets.

Encoder inputs are sorted by length and batched under a token budget (right padding with an
attention mask); every (encoder input, target) pair then runs through the decoder with the
encoder states selected by row, so labels or hypotheses sharing a source share its encoding.
Inputs are built on the CPU and moved to the model's device (CPU or GPU) once per pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from transformers.modeling_outputs import BaseModelOutput

from nlgjudge.engine.stats import ForwardStats


class Seq2SeqRunner:
    def __init__(self, model: Any, token_budget: int = 4096, progress: Callable[[int], None] | None = None) -> None:
        self.model = model
        self.device = next(model.parameters()).device
        self.encoder = model.get_encoder()
        self.start_id = model.config.decoder_start_token_id
        if self.start_id is None:
            raise ValueError("the model config has no decoder_start_token_id")
        self.pad_id = model.config.pad_token_id if model.config.pad_token_id is not None else 0
        self.token_budget = token_budget
        self.progress = progress
        self.stats = ForwardStats()

    def encoder_batches(self, sources: list[tuple[int, ...]]) -> list[list[int]]:
        """Indices into ``sources`` batched by length under the token budget."""
        order = sorted(range(len(sources)), key=lambda i: len(sources[i]))
        batches: list[list[int]] = []
        current: list[int] = []
        longest = 0
        for i in order:
            longest_next = max(longest, len(sources[i]))
            if current and (len(current) + 1) * longest_next > self.token_budget:
                batches.append(current)
                current, longest_next = [], len(sources[i])
            current.append(i)
            longest = longest_next
        if current:
            batches.append(current)
        return batches

    def encode(self, sources: list[tuple[int, ...]]) -> tuple[torch.Tensor, torch.Tensor]:
        width = max(len(s) for s in sources)
        ids = torch.full((len(sources), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(sources), width), dtype=torch.long)
        for row, source in enumerate(sources):
            ids[row, : len(source)] = torch.tensor(source)
            mask[row, : len(source)] = 1
        ids, mask = ids.to(self.device), mask.to(self.device)
        hidden = self.encoder(input_ids=ids, attention_mask=mask).last_hidden_state
        real = sum(len(s) for s in sources)
        self.stats.forward_calls += 1
        self.stats.tokens_computed += real
        self.stats.padded_tokens += ids.numel()
        if self.progress is not None:
            self.progress(real)
        return hidden, mask

    @torch.inference_mode()
    def score(self, items: Sequence[tuple[Sequence[int], Sequence[int]]]) -> list[list[float]]:
        """For each (encoder ids, target ids): log p(target[t] | target[:t], source) for every t."""
        sources = list(dict.fromkeys(tuple(src) for src, _ in items))
        source_index = {src: i for i, src in enumerate(sources)}
        by_source: dict[int, list[int]] = {}
        for item_index, (src, _) in enumerate(items):
            by_source.setdefault(source_index[tuple(src)], []).append(item_index)
        results: list[list[float]] = [[] for _ in items]
        for batch in self.encoder_batches(sources):
            hidden, mask = self.encode([sources[i] for i in batch])
            rows = [(pos, item) for pos, src in enumerate(batch) for item in by_source[src]]
            width = max(len(items[item][1]) for _, item in rows)
            per_chunk = max(1, self.token_budget // max(width, 1))
            for start in range(0, len(rows), per_chunk):
                chunk = rows[start : start + per_chunk]
                self._score_chunk(chunk, hidden, mask, items, results, width)
        return results

    def _score_chunk(
        self,
        chunk: list[tuple[int, int]],
        hidden: torch.Tensor,
        mask: torch.Tensor,
        items: Sequence[tuple[Sequence[int], Sequence[int]]],
        results: list[list[float]],
        width: int,
    ) -> None:
        select = torch.tensor([pos for pos, _ in chunk], device=self.device)
        dec_in = torch.full((len(chunk), width), self.pad_id, dtype=torch.long)
        dec_mask = torch.zeros((len(chunk), width), dtype=torch.long)
        for row, (_, item) in enumerate(chunk):
            target = list(items[item][1])
            inputs = [self.start_id, *target[:-1]]
            dec_in[row, : len(inputs)] = torch.tensor(inputs)
            dec_mask[row, : len(inputs)] = 1
        out = self.model(
            encoder_outputs=BaseModelOutput(last_hidden_state=hidden.index_select(0, select)),
            attention_mask=mask.index_select(0, select),
            decoder_input_ids=dec_in.to(self.device),
            decoder_attention_mask=dec_mask.to(self.device),
            use_cache=False,
        )
        logprobs = torch.log_softmax(out.logits.float(), dim=-1)
        self.stats.forward_calls += 1
        self.stats.tokens_computed += int(dec_mask.sum())
        self.stats.padded_tokens += dec_in.numel()
        self.stats.output_rows += int(dec_mask.sum())
        rows, steps, targets = [], [], []
        for row, (_, item) in enumerate(chunk):
            target = list(items[item][1])
            rows += [row] * len(target)
            steps += range(len(target))
            targets += target
        # One gather on the device and one copy back, instead of a transfer per value.
        picked = logprobs[torch.tensor(rows, device=self.device), torch.tensor(steps, device=self.device),
                          torch.tensor(targets, device=self.device)].tolist()
        start = 0
        for _, item in chunk:
            count = len(items[item][1])
            results[item] = picked[start : start + count]
            start += count
