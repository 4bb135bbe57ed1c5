"""Sampling and greedy generation with one random generator per request.

Every request draws from its own ``torch.Generator`` seeded with the request's seed, in a fixed
order (step by step, its samples in order), so a request's samples do not depend on which other
requests share its batch. Prompts of decoder-only models go through the prefix tree first (shared
prefixes computed once); their key/values are then padded into one decoding batch.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from transformers import DynamicCache
from transformers.modeling_outputs import BaseModelOutput

from nlgjudge.engine.prefix_tree import CausalRunner, PrefixTree
from nlgjudge.engine.seq2seq import Seq2SeqRunner
from nlgjudge.engine.tree import DecodeJob

__all__ = ["DecodeJob", "PromptState", "decode_causal", "decode_seq2seq"]


def _draw(logprobs: torch.Tensor, temperature: float, generator: torch.Generator) -> int:
    if temperature == 0:
        return int(torch.argmax(logprobs))
    # softmax(log p / T) = softmax(logits / T): the normaliser of log p cancels.
    probs = torch.softmax(logprobs.double() / temperature, dim=-1)
    return int(torch.multinomial(probs, 1, generator=generator))


def _stop_ids(model: Any, tokenizer: Any) -> set[int]:
    ids: set[int] = set()
    for source in (getattr(model, "generation_config", None), model.config, tokenizer):
        value = getattr(source, "eos_token_id", None) if source is not None else None
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, (list, tuple)):
            ids.update(int(v) for v in value)
    return ids


@dataclass
class PromptState:
    """Key/values and next-token log-probs at the end of a prompt, computed earlier (never modified)."""

    state: Any
    last_logprobs: torch.Tensor


def decode_causal(
    runner: CausalRunner, tokenizer: Any, jobs: Sequence[DecodeJob], known: Mapping[tuple[int, ...], PromptState] | None = None
) -> list[list[list[int]]]:
    """Generated token ids: one list per job, one entry per sample (stop token excluded).

    ``known``: prompt states already computed (by a label-probability call on the same prompts);
    those prompts are not run again.
    """
    if not jobs:
        return []
    stop = _stop_ids(runner.model, tokenizer)
    tree = PrefixTree()
    known = known or {}
    reused = {j: known[tuple(job.prompt_ids)] for j, job in enumerate(jobs) if tuple(job.prompt_ids) in known}
    indices = {j: tree.insert(job.prompt_ids) for j, job in enumerate(jobs) if j not in reused}
    kept = {j: tree.keep(index) for j, index in indices.items()}
    if kept:
        runner.run(tree)
    # Stand-ins for reused prompts: fresh objects over the shared tensors, which decoding only reads.
    ends: list[Any] = [
        PromptState(reused[j].state, reused[j].last_logprobs) if j in reused else kept[j] for j in range(len(jobs))
    ]
    results: list[list[list[int]]] = [[] for _ in jobs]
    # Group jobs so that rows x (longest prompt + new tokens) stays within the state budget.
    order = sorted(range(len(jobs)), key=lambda j: len(jobs[j].prompt_ids))
    group: list[int] = []
    for j in order + [-1]:
        if j >= 0 and not isinstance(ends[j].state, list):
            # Unshared run (sliding-window model): this job decodes alone from the model's own cache.
            with torch.inference_mode():
                results[j] = _decode_causal_group(runner, [jobs[j]], [ends[j]], stop)[0]
            continue
        if j >= 0:
            rows = sum(jobs[g].n_samples for g in group) + jobs[j].n_samples
            width = len(jobs[j].prompt_ids) + max(jobs[g].max_new_tokens for g in [*group, j])
            if not group or rows * width <= runner.state_budget:
                group.append(j)
                continue
        if group:
            with torch.inference_mode():
                outputs = _decode_causal_group(runner, [jobs[g] for g in group], [ends[g] for g in group], stop)
            for g, out in zip(group, outputs, strict=True):
                results[g] = out
        if j < 0:
            break
        group = [j]
    for node in ends:
        node.state = None
        node.last_logprobs = None
    return results


def _decode_causal_group(runner: CausalRunner, jobs: list[DecodeJob], ends: list[Any], stop: set[int]) -> list[list[list[int]]]:
    generators = [torch.Generator().manual_seed(job.seed) for job in jobs]
    owner = [j for j, job in enumerate(jobs) for _ in range(job.n_samples)]
    lengths = [len(jobs[j].prompt_ids) for j in owner]
    past_max = max(lengths)
    if not isinstance(ends[0].state, list):
        cache = copy.deepcopy(ends[0].state)
        cache.batch_repeat_interleave(len(owner))
        mask = torch.ones((len(owner), past_max), dtype=torch.long)
        return _sample_loop(runner, jobs, owner, lengths, cache, mask, [ends[0].last_logprobs] * len(owner), generators, stop)
    n_layers = len(ends[0].state)
    layers = []
    for layer in range(n_layers):
        keys, values = [], []
        for j in owner:
            k, v = ends[j].state[layer]
            pad = past_max - k.shape[2]
            keys.append(torch.nn.functional.pad(k, (0, 0, 0, pad)) if pad else k)
            values.append(torch.nn.functional.pad(v, (0, 0, 0, pad)) if pad else v)
        layers.append((torch.cat(keys), torch.cat(values)))
    cache = DynamicCache(ddp_cache_data=layers)
    mask = torch.zeros((len(owner), past_max), dtype=torch.long)
    for row, length in enumerate(lengths):
        mask[row, :length] = 1
    return _sample_loop(runner, jobs, owner, lengths, cache, mask, [ends[j].last_logprobs for j in owner], generators, stop)


def _sample_loop(
    runner: CausalRunner,
    jobs: list[DecodeJob],
    owner: list[int],
    lengths: list[int],
    cache: Any,
    mask: torch.Tensor,
    first: list[torch.Tensor],
    generators: list[torch.Generator],
    stop: set[int],
) -> list[list[list[int]]]:
    current = torch.stack(first)
    generated: list[list[int]] = [[] for _ in owner]
    done = [False] * len(owner)
    steps = max(job.max_new_tokens for job in jobs)
    for step in range(steps):
        next_ids = []
        for row, j in enumerate(owner):
            if done[row] or step >= jobs[j].max_new_tokens:
                done[row] = True
                next_ids.append(0)
                continue
            token = _draw(current[row], jobs[j].temperature, generators[j])
            if token in stop:
                done[row] = True
            else:
                generated[row].append(token)
            next_ids.append(token)
        if all(done):
            break
        mask = torch.cat([mask, torch.ones((len(owner), 1), dtype=torch.long)], dim=1)
        positions = torch.tensor([[length + step] for length in lengths])
        out = runner.base(
            input_ids=torch.tensor(next_ids).unsqueeze(1),
            attention_mask=mask,
            position_ids=positions,
            past_key_values=cache,
            use_cache=True,
        )
        cache = out.past_key_values
        current = torch.log_softmax(runner.logits_from_hidden(out.last_hidden_state[:, -1]), dim=-1)
        runner.stats.forward_calls += 1
        runner.stats.tokens_computed += sum(not d for d in done)
        runner.stats.padded_tokens += len(owner)
    outputs: list[list[list[int]]] = [[] for _ in jobs]
    for row, j in enumerate(owner):
        outputs[j].append(generated[row])
    return outputs


def decode_seq2seq(runner: Seq2SeqRunner, tokenizer: Any, jobs: Sequence[DecodeJob]) -> list[list[list[int]]]:
    stop = _stop_ids(runner.model, tokenizer)
    results: list[list[list[int]]] = [[] for _ in jobs]
    sources = [tuple(job.prompt_ids) for job in jobs]
    for batch in runner.encoder_batches(sources):
        with torch.inference_mode():
            hidden, mask = runner.encode([sources[j] for j in batch])
            outputs = _decode_seq2seq_group(runner, [jobs[j] for j in batch], hidden, mask, stop)
        for j, out in zip(batch, outputs, strict=True):
            results[j] = out
    return results


def _decode_seq2seq_group(
    runner: Seq2SeqRunner, jobs: list[DecodeJob], hidden: torch.Tensor, mask: torch.Tensor, stop: set[int]
) -> list[list[list[int]]]:
    generators = [torch.Generator().manual_seed(job.seed) for job in jobs]
    owner = [j for j, job in enumerate(jobs) for _ in range(job.n_samples)]
    select = torch.tensor(owner)
    encoder_outputs = BaseModelOutput(last_hidden_state=hidden.index_select(0, select))
    enc_mask = mask.index_select(0, select)
    tokens = torch.full((len(owner), 1), runner.start_id, dtype=torch.long)
    cache = None
    generated: list[list[int]] = [[] for _ in owner]
    done = [False] * len(owner)
    for step in range(max(job.max_new_tokens for job in jobs)):
        out = runner.model(
            encoder_outputs=encoder_outputs,
            attention_mask=enc_mask,
            decoder_input_ids=tokens,
            past_key_values=cache,
            use_cache=True,
        )
        cache = out.past_key_values
        current = torch.log_softmax(out.logits[:, -1].float(), dim=-1)
        runner.stats.forward_calls += 1
        runner.stats.tokens_computed += sum(not d for d in done)
        next_ids = []
        for row, j in enumerate(owner):
            if done[row] or step >= jobs[j].max_new_tokens:
                done[row] = True
                next_ids.append(runner.pad_id)
                continue
            token = _draw(current[row], jobs[j].temperature, generators[j])
            if token in stop:
                done[row] = True
            else:
                generated[row].append(token)
            next_ids.append(token)
        if all(done):
            break
        tokens = torch.tensor(next_ids).unsqueeze(1)
    outputs: list[list[list[int]]] = [[] for _ in jobs]
    for row, j in enumerate(owner):
        outputs[j].append(generated[row])
    return outputs
