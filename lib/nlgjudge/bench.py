"""Benchmark of the judge engine against the naive loop of the comparative-assessment code.

On one SummEval article (16 summaries, 240 ordered pairs, 4 aspects = 960 comparisons), in one
process and with the same prompts and the same loaded model:

(a) the naive loop: one full prompt per comparison and aspect, batch size 1, logits over the whole
    vocabulary at every position, P(A) from the last position's " A"/" B" logits; timed on a fixed
    random sample of the comparisons when the whole article would take too long (said so);
(b) the engine: every comparison of the article in one ``Judge.label_probs`` call (prefix sharing,
    batching, only the needed logits), against a temporary output cache.

Prints comparisons per second for both, the tokens each side actually computed, the achieved
FLOP/s against a matrix-multiply peak measured in the same run, and last, exactly:
``speedup=<ratio> max_abs_diff=<largest |P(A) difference| on the shared comparisons>``.

Run: ``python -m nlgjudge.bench`` (Qwen2.5-Coder-1.5B-Instruct) or ``--quick`` (SmolLM2-135M).
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

QUESTION = "Which summary is better in terms of {aspect}, Summary A or Summary B?"
RESPONSE_PREFIX = "Answer: Summary"
LABELS = (" A", " B")


@dataclass(frozen=True)
class Comparison:
    first: int
    second: int
    aspect: str


def comparative_messages(source: str, summary_a: str, summary_b: str, aspect: str) -> list[dict[str, str]]:
    """A simple comparative prompt: context, both summaries, the aspect's question."""
    content = f"{source}\n\nSummary A: {summary_a}\n\nSummary B: {summary_b}\n\n" + QUESTION.format(aspect=aspect)
    return [{"role": "user", "content": content}]


def matmul_peak_flops(size: int = 2048, repeats: int = 5) -> float:
    """Best fp32 matrix-multiply FLOP/s of this machine right now (same threads as the model)."""
    import torch

    a, b = torch.randn(size, size), torch.randn(size, size)
    torch.matmul(a, b)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        torch.matmul(a, b)
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best


def model_flops(model: Any, tokens: int, attended_keys: int, output_rows: int) -> float:
    """Forward FLOPs: 2 x (transformer weights) per token, attention scores and sums per attended
    key, 2 x d x V per output-layer row."""
    cfg = model.config
    embed = model.get_input_embeddings().weight.numel()
    head = model.get_output_embeddings().weight
    tied = head.data_ptr() == model.get_input_embeddings().weight.data_ptr()
    body = sum(p.numel() for p in model.parameters()) - embed - (0 if tied else head.numel())
    heads_dim = cfg.num_attention_heads * getattr(cfg, "head_dim", cfg.hidden_size // cfg.num_attention_heads)
    attention = 4 * cfg.num_hidden_layers * heads_dim * attended_keys
    return 2.0 * body * tokens + attention + 2.0 * head.numel() * output_rows


def naive_p_a(model: Any, tokenizer: Any, messages: list[dict[str, str]], label_ids: tuple[int, int]) -> tuple[float, int]:
    """The naive loop's step: the whole prompt, batch size 1, full logits; P(A) over the two labels."""
    import torch

    from nlgjudge.engine.prompting import encode_prompt

    ids = encode_prompt(tokenizer, messages, RESPONSE_PREFIX)
    with torch.inference_mode():
        logits = model(input_ids=torch.tensor([ids])).logits[0]  # [length, vocabulary]: every position
    pair = torch.log_softmax(logits[-1].double(), dim=-1)[list(label_ids)]
    probs = torch.softmax(pair, dim=-1)
    return float(probs[0]), len(ids)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nlgjudge.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="SmolLM2-135M instead of Qwen2.5-Coder-1.5B")
    parser.add_argument("--model", default=None, help="any model name resolve_model accepts")
    parser.add_argument("--context", type=int, default=0, help="index of the SummEval article")
    parser.add_argument("--naive-sample", type=int, default=None, help="comparisons timed in the naive loop")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import torch

    from nlgjudge.cache import OutputCache
    from nlgjudge.data import load_dataset
    from nlgjudge.engine import ClassifyRequest, Judge
    from nlgjudge.engine.prompting import encode_labels
    from nlgjudge.models import resolve_model

    name = args.model or ("smollm2-135m-instruct" if args.quick else "qwen2.5-coder-1.5b-instruct")
    naive_sample = args.naive_sample or (120 if args.quick else 24)
    dataset = load_dataset("summeval")
    context_id = dataset.context_ids()[args.context]
    candidates = dataset.candidates(context_id).reset_index(drop=True)
    source = str(candidates["source"].iloc[0])
    texts = [str(t) for t in candidates["text"]]
    aspects = list(dataset.info.aspects.values())
    comparisons = [
        Comparison(i, j, aspect)
        for i in range(len(texts))
        for j in range(len(texts))
        if i != j
        for aspect in aspects
    ]
    print(f"model {name}; SummEval article {context_id}: {len(texts)} summaries, "
          f"{len(texts) * (len(texts) - 1)} ordered pairs, {len(aspects)} aspects = {len(comparisons)} comparisons")
    print(f"threads {torch.get_num_threads()} (cpu_count {os.cpu_count()}); fp32")

    handle = resolve_model(name)
    start = time.perf_counter()
    model, tokenizer = handle.load()
    print(f"model loaded in {time.perf_counter() - start:.1f} s")
    label_ids = tuple(ids[0] for ids in encode_labels(tokenizer, LABELS))
    peak = matmul_peak_flops()
    print(f"matmul peak (2048^3 fp32, best of 5): {peak / 1e9:.1f} GFLOP/s")

    # (a) naive loop on a fixed random sample of the comparisons.
    rng = random.Random(args.seed)
    sample = sorted(rng.sample(range(len(comparisons)), min(naive_sample, len(comparisons))))
    naive: dict[int, float] = {}
    naive_tokens = naive_keys = 0
    start = time.perf_counter()
    for index in sample:
        c = comparisons[index]
        p_a, length = naive_p_a(model, tokenizer, comparative_messages(source, texts[c.first], texts[c.second], c.aspect), label_ids)
        naive[index] = p_a
        naive_tokens += length
        naive_keys += length * (length + 1) // 2
    naive_time = time.perf_counter() - start
    naive_rate = len(sample) / naive_time
    naive_flops = model_flops(model, naive_tokens, naive_keys, naive_tokens)
    whole = "" if len(sample) == len(comparisons) else f" (a fixed random sample of {len(sample)} of {len(comparisons)}: the whole article would take ~{len(comparisons) / naive_rate / 60:.0f} min)"
    print(f"(a) naive loop{whole}: {naive_time:.1f} s, {naive_rate:.3f} comparisons/s, {naive_tokens} tokens computed "
          f"({naive_tokens / len(sample):.0f} per comparison, logits at every position), "
          f"{naive_flops / naive_time / 1e9:.1f} GFLOP/s = {naive_flops / naive_time / peak:.0%} of peak")

    # (b) the engine on the whole article, against a throw-away cache.
    with tempfile.TemporaryDirectory(prefix="nlgjudge-bench-") as tmp:
        cache = OutputCache(Path(tmp) / "bench.sqlite")
        judge = Judge(handle, cache=cache, progress=True)
        requests = [
            ClassifyRequest(
                prompt=comparative_messages(source, texts[c.first], texts[c.second], c.aspect),
                labels=LABELS,
                response_prefix=RESPONSE_PREFIX,
                meta={"first": c.first, "second": c.second, "aspect": c.aspect},
            )
            for c in comparisons
        ]
        start = time.perf_counter()
        results = judge.label_probs(requests)
        engine_time = time.perf_counter() - start
        cache.close()
    stats = judge.last_run.stats
    engine_rate = len(comparisons) / engine_time
    engine_flops = model_flops(model, stats.tokens_computed, stats.attended_keys, stats.output_rows)
    print(f"(b) engine, whole article: {engine_time:.1f} s, {engine_rate:.3f} comparisons/s, {stats.tokens_computed} tokens "
          f"computed ({stats.tokens_computed / len(comparisons):.0f} per comparison; {stats.padded_tokens} with padding), "
          f"{stats.forward_calls} forward passes, {stats.output_rows} output-layer rows, "
          f"{engine_flops / engine_time / 1e9:.1f} GFLOP/s = {engine_flops / engine_time / peak:.0%} of peak; "
          f"{judge.last_run.computed} computed, {judge.last_run.from_cache} from cache")
    p_engine = np.array([results[i].probs[0] for i in sample])
    p_naive = np.array([naive[i] for i in sample])
    diff = float(np.max(np.abs(p_engine - p_naive)))
    all_p = np.array([r.probs[0] for r in results])
    print(f"mean P(A) over the article {all_p.mean():.3f}; share of comparisons with P(A) > 0.5: {(all_p > 0.5).mean():.2f}")
    print("caveat: CPU time is shared with other processes on this machine; the ratio is the robust figure")
    print(f"speedup={engine_rate / naive_rate:.2f} max_abs_diff={diff:.2e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
