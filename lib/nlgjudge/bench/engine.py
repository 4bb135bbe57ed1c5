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

``--compare-backends`` compares the two runtimes instead (:func:`compare_backends`): the torch
engine, the llama.cpp engine and a plain llama.cpp prompt-cache loop on the same comparative
prompts and token ids, plus greedy generation; it ends with exactly
``llamacpp_vs_torch=<r> llamacpp_vs_prefix_cache_loop=<r> rank_agreement=<rho> max_abs_diff=<d>
generation_vs_torch=<g>``; ``--repeats R`` times every side R times in a row and takes the ratios
of the medians.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from dataclasses import dataclass, replace
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
    if argv is None:
        import sys

        argv = sys.argv[1:]
    if "--compare-backends" in argv:
        return compare_backends([a for a in argv if a != "--compare-backends"])
    parser = argparse.ArgumentParser(prog="python -m nlgjudge.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--compare-backends", action="store_true", help="torch vs llama.cpp runtimes (see compare_backends)")
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
        judge = Judge(handle, cache=cache, progress=True, backend="torch")  # the naive loop runs torch too
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


# ---- --compare-backends: torch vs llama.cpp ------------------------------------------------------
SUMMARY_INSTRUCTION = "Summarise the following news article in two or three sentences.\n\n{source}"


def one_article(dataset: Any, index: int, candidates: int | None) -> Any:
    """One SummEval article as a one-context dataset, optionally with its first N candidates only."""
    from nlgjudge.data import JudgeDataset

    context_ids = dataset.context_ids()
    if not 0 <= index < len(context_ids):
        raise SystemExit(f"--context must lie in 0..{len(context_ids) - 1}, got {index}")
    one = dataset.restrict([context_ids[index]])
    if candidates is not None:
        if candidates < 2:
            raise SystemExit(f"--candidates must be at least 2, got {candidates}")
        one = JudgeDataset(one.frame.head(candidates).copy(), one.info)
    return one


def _win_ratios(frame: Any, p_a: np.ndarray, n: int) -> dict[tuple[int, str], np.ndarray]:
    """Per (template, aspect): each candidate's win ratio (seed 000 eq. 6) from hard decisions."""
    from nlgjudge.stats import hard_decisions, win_ratio

    out = {}
    for (template, aspect), rows in frame.assign(p=p_a).groupby(["template", "aspect"], sort=True):
        matrix = np.full((n, n), np.nan)
        matrix[rows["i"].to_numpy(), rows["j"].to_numpy()] = rows["p"].to_numpy()
        out[(int(template), str(aspect))] = win_ratio(hard_decisions(matrix))
    return out


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    from scipy.stats import spearmanr

    keep = np.isfinite(a) & np.isfinite(b)
    if keep.sum() < 3 or np.ptp(a[keep]) == 0 or np.ptp(b[keep]) == 0:
        return float("nan")
    return float(spearmanr(a[keep], b[keep]).statistic)


def _timed(run: Any, repeats: int, before: Any = None) -> tuple[float, list[float], Any]:
    """Median wall time of ``repeats`` calls of ``run()`` (``before()`` first, untimed), all times, last result."""
    seconds = []
    result = None
    for _ in range(repeats):
        if before is not None:
            before()
        start = time.perf_counter()
        result = run()
        seconds.append(time.perf_counter() - start)
    return float(np.median(seconds)), seconds, result


def _spread(seconds: list[float]) -> str:
    return f"{min(seconds):.1f}-{max(seconds):.1f}" if len(seconds) > 1 else ""


def compare_backends(argv: list[str] | None = None) -> int:
    """The runtimes on identical prompts: torch engine, llama.cpp engine, llama.cpp prompt-cache loop.

    On one SummEval article (its comparative requests from
    :func:`nlgjudge.studies.comparative.comparative_requests`), in one process, every judge without
    an output cache (``cache=False``: nothing is read back). Prints a table and ends with exactly
    ``llamacpp_vs_torch=<r> llamacpp_vs_prefix_cache_loop=<r> rank_agreement=<rho>
    max_abs_diff=<d> generation_vs_torch=<g>``: comparison-rate ratios, the Spearman correlation
    of the per-candidate win ratios of the two runtimes (all templates and aspects together), the
    largest |P(A) difference|, and the ratio of greedy decoding speeds: tokens generated after the
    first, per second of the full generation's time minus the time of the same requests with one
    new token (the prompts), as the issue's one-sequence measurement (11.9 against 2.9 tokens/s)
    counts them; the prompts-included ratio is printed above it.
    With ``--repeats R`` each side runs R times (the llama.cpp KV cache emptied before each run)
    and every time is the median of the R runs (an odd R makes it one of them), every ratio a ratio
    of medians, and every rate the count divided by the median time; the table shows the range too.
    """
    parser = argparse.ArgumentParser(
        prog="python -m nlgjudge.bench --compare-backends", description=compare_backends.__doc__.split("\n\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="SmolLM2-135M, 5 candidates, 1 aspect, 2 summaries generated")
    parser.add_argument("--model", default=None, help="a packaged GGUF model (default: qwen2.5-coder-1.5b-instruct)")
    parser.add_argument("--context", type=int, default=0, help="index of the SummEval article")
    parser.add_argument("--candidates", type=int, default=None, help="use the article's first N candidates only")
    parser.add_argument("--max-pairs", type=int, default=None, help="keep the first N ordered pairs only")
    parser.add_argument("--aspects", nargs="*", default=None, help="SummEval aspects (default: all four; --quick: COH)")
    parser.add_argument("--templates", nargs="*", type=int, default=[1], help="comparative templates (default: 1)")
    parser.add_argument("--generate", type=int, default=None, help="summaries generated greedily per runtime (default 4; --quick 2)")
    parser.add_argument("--max-new-tokens", type=int, default=None, help="tokens per summary (default 60; --quick 24)")
    parser.add_argument("--threads", type=int, default=None, help="threads for both runtimes (default: the usable cores)")
    parser.add_argument("--default-scheme-only", action="store_true",
                        help="time only the default llama.cpp prefix-sharing scheme (the other one is slower here)")
    parser.add_argument("--repeats", type=int, default=1, help="time every side R times and report medians (default 1; odd R advised)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")

    import torch

    from nlgjudge.data import load_dataset
    from nlgjudge.engine import GenerateRequest, Judge
    from nlgjudge.engine.llamacpp import SCHEME_ENV, SCHEMES, prefix_cache_loop_label_logprobs, thread_count
    from nlgjudge.engine.prompting import encode_labels, encode_prompt
    from nlgjudge.models import resolve_model
    from nlgjudge.studies.comparative import comparative_requests
    from nlgjudge.studies.prompting import prompt_style

    name = args.model or ("smollm2-135m-instruct" if args.quick else "qwen2.5-coder-1.5b-instruct")
    candidates = args.candidates if args.candidates is not None else (5 if args.quick else None)
    aspects = args.aspects if args.aspects is not None else (["COH"] if args.quick else None)
    n_generate = args.generate if args.generate is not None else (2 if args.quick else 4)
    max_new = args.max_new_tokens if args.max_new_tokens is not None else (24 if args.quick else 60)
    threads = thread_count(args.threads)
    torch.set_num_threads(threads)

    handle = resolve_model(name)
    dataset = load_dataset("summeval")
    one = one_article(dataset, args.context, candidates)
    style = prompt_style(handle)
    requests, frame = comparative_requests(one, aspects=aspects, templates=args.templates, style=style)
    if args.max_pairs is not None:
        pairs = list(dict.fromkeys(zip(frame["i"], frame["j"], strict=True)))[: args.max_pairs]
        keep = [k for k, pair in enumerate(zip(frame["i"], frame["j"], strict=True)) if pair in set(pairs)]
        requests = [requests[k] for k in keep]
        frame = frame.iloc[keep].reset_index(drop=True)
    n_cand = len(one.frame)
    n_pairs = len(set(zip(frame["i"], frame["j"], strict=True)))
    print(f"model {name}; SummEval article {one.context_ids()[0]}: {n_cand} candidates, {n_pairs} ordered pairs, "
          f"{len(requests)} comparisons (templates {args.templates}, aspects {sorted(set(frame['aspect']))}); "
          f"{threads} threads for both runtimes (usable cores {thread_count()})")

    torch_judge = Judge(handle, cache=False, progress=False, backend="torch")
    llama_judge = Judge(handle, cache=False, progress=False, backend="llamacpp", threads=threads)
    start = time.perf_counter()
    torch_judge.load()
    print(f"torch model loaded in {time.perf_counter() - start:.1f} s: {torch_judge.runtime_description()}")
    start = time.perf_counter()
    llama_judge.load()
    llama_model, llama_tok = llama_judge._load()
    print(f"llama.cpp model loaded in {time.perf_counter() - start:.1f} s: {llama_judge.runtime_description()}")
    _, torch_tok = handle.load()

    # Identical token ids: both runtimes tokenise with the same Hugging Face tokenizer.
    prompts = [encode_prompt(llama_tok, r.prompt, r.response_prefix) for r in requests]
    labels = [encode_labels(llama_tok, r.labels, r.label_end) for r in requests]
    same = all(encode_prompt(torch_tok, r.prompt, r.response_prefix) == ids for r, ids in zip(requests, prompts, strict=True))
    print(f"identical prompt token ids in both runtimes: {same}; "
          f"{sum(map(len, prompts)) / len(prompts):.0f} tokens per prompt on average")

    repeats = args.repeats
    rows = []
    t_torch, runs, torch_results = _timed(lambda: torch_judge.label_probs(requests), repeats)
    stats = torch_judge.last_run.stats
    rows.append(("torch engine (prefix tree, fp32)", t_torch, runs, stats.tokens_computed, stats.padded_tokens))
    # The llama.cpp engine with each prefix-sharing scheme; the default one gives the final ratios.
    default_scheme = os.environ.get(SCHEME_ENV, "").strip() or SCHEMES[0]
    scheme_results = {}
    t_scheme = {}
    schemes = [default_scheme] if args.default_scheme_only else sorted(SCHEMES, key=lambda x: x != default_scheme)
    for scheme in schemes:
        os.environ[SCHEME_ENV] = scheme
        t_scheme[scheme], runs, scheme_results[scheme] = _timed(
            lambda: llama_judge.label_probs(requests), repeats, before=llama_model.reset
        )
        mark = " = default" if scheme == default_scheme else ""
        stats = llama_judge.last_run.stats
        rows.append((f"llama.cpp engine ({scheme} scheme{mark})", t_scheme[scheme], runs, stats.tokens_computed, stats.padded_tokens))
    os.environ[SCHEME_ENV] = default_scheme
    llama_results = scheme_results[default_scheme]
    t_llama = t_scheme[default_scheme]
    schemes_equal = all(
        np.array_equal(a.logprobs, b.logprobs) for res in scheme_results.values() for a, b in zip(res, llama_results, strict=True)
    )

    # The plain loop: prompts in sorted order, one after another, prompt cache of the previous one.
    order = sorted(range(len(requests)), key=lambda k: prompts[k])
    before = (llama_model.stats.tokens_computed, llama_model.stats.padded_tokens)
    t_loop, runs, loop_scores = _timed(
        lambda: prefix_cache_loop_label_logprobs(llama_model, [prompts[k] for k in order], [labels[k] for k in order]),
        repeats,
        before=llama_model.reset,
    )
    rows.append(("llama.cpp plain prompt-cache loop", t_loop, runs, (llama_model.stats.tokens_computed - before[0]) // repeats,
                 (llama_model.stats.padded_tokens - before[1]) // repeats))
    loop_logprobs = [np.zeros(0)] * len(requests)
    for k, scores in zip(order, loop_scores, strict=True):
        loop_logprobs[k] = np.asarray(scores)

    p_torch = np.array([r.probs[0] for r in torch_results])
    p_llama = np.array([r.probs[0] for r in llama_results])
    p_loop = np.array([float(np.exp(x[0] - np.logaddexp.reduce(x))) for x in loop_logprobs])
    diff = np.abs(p_llama - p_torch)
    loop_diff = float(np.max(np.abs(p_loop - p_llama)))

    print()
    timing = "median time s" if repeats > 1 else "time s"
    print(f"{'runtime':<52} {timing:>13} {'range':>11} {'comparisons/s':>14} {'tokens computed':>16} {'rows computed':>14}")
    for label, seconds, runs, tokens, padded in rows:
        print(f"{label:<52} {seconds:>13.1f} {_spread(runs):>11} {len(requests) / seconds:>14.3f} {tokens:>16} {padded:>14}")
    print("(rows computed: tokens plus padding; torch pads a batch's segments to equal length, llama.cpp pads each batch "
          "to a multiple of 8 rows and steers the cache layout with throw-away tokens)")
    if repeats > 1:
        print(f"({repeats} runs of every side, in a row; median times, rates per median time"
              f"{'' if repeats % 2 else '; an even count averages the middle two runs'})")
    print(f"P(A) llama.cpp vs torch: mean |diff| {diff.mean():.4f}, max {diff.max():.4f}; "
          f"same preferred summary in {np.mean((p_llama > 0.5) == (p_torch > 0.5)):.1%} of comparisons")
    compared = f"llama.cpp schemes bitwise equal: {schemes_equal}; " if len(scheme_results) > 1 else ""
    print(f"{compared}prompt-cache loop vs engine max |P(A) diff| {loop_diff:.1e}")
    wr_torch = _win_ratios(frame, p_torch, n_cand)
    wr_llama = _win_ratios(frame, p_llama, n_cand)
    for key in wr_torch:
        print(f"  win-ratio Spearman, template {key[0]} {key[1]}: {_spearman(wr_torch[key], wr_llama[key]):.3f}")
    rho = _spearman(np.concatenate(list(wr_torch.values())), np.concatenate([wr_llama[k] for k in wr_torch]))
    if not np.isfinite(rho):
        print("  (rank agreement undefined: a runtime gives every candidate the same win ratio, e.g. a judge that "
              "always answers A; use more candidates or a stronger judge)")

    # Greedy generation of a few summaries (different articles) with both runtimes.
    sources = [str(dataset.candidates(c)["source"].iloc[0]) for c in dataset.context_ids()[:n_generate]]
    if style == "chat":
        gen_requests = [GenerateRequest(prompt=[{"role": "user", "content": SUMMARY_INSTRUCTION.format(source=x)}], max_new_tokens=max_new) for x in sources]
    else:
        gen_requests = [GenerateRequest(prompt=f"Article: {x}\n\nSummary:", max_new_tokens=max_new) for x in sources]
    # Decoding speed is the difference of two timings: the full generation, and the same requests
    # with one new token (prompts only: the first token comes from the prompt's last logits).
    prompt_only = [replace(r, max_new_tokens=1) for r in gen_requests]
    timings = {}
    texts = {}
    for label, judge in (("torch", torch_judge), ("llama.cpp", llama_judge)):
        reset = llama_model.reset if judge is llama_judge else None
        seconds, runs, outputs = _timed(lambda judge=judge: judge.generate(gen_requests), repeats, before=reset)
        t_prompts, prompt_runs, _ = _timed(lambda judge=judge: judge.generate(prompt_only), repeats, before=reset)
        tokens = sum(len(llama_tok(o.text, add_special_tokens=False)["input_ids"]) for o in outputs)
        timings[label] = (seconds, runs, tokens, t_prompts, prompt_runs)
        texts[label] = [o.text for o in outputs]
    print()
    print(f"{'greedy generation':<52} {timing:>13} {'range':>11} {'tokens/s':>14} {'tokens':>16}")
    decode_speed = {}
    for label, (seconds, runs, tokens, t_prompts, prompt_runs) in timings.items():
        n = len(gen_requests)
        decoded = tokens - n  # every summary's first token comes with its prompt
        decode_seconds = seconds - t_prompts
        decode_speed[label] = decoded / decode_seconds if decode_seconds > 0 else float("nan")
        print(f"{label + f' ({n} summaries, batched, prompt included)':<52} {seconds:>13.1f} "
              f"{_spread(runs):>11} {tokens / seconds:>14.2f} {tokens:>16}")
        print(f"{label + ' prompts only (1 token each)':<52} {t_prompts:>13.1f} {_spread(prompt_runs):>11} {'':>14} {n:>16}")
        print(f"{label + ' decoding (the difference)':<52} {decode_seconds:>13.1f} {'':>11} {decode_speed[label]:>14.2f} {decoded:>16}")
    identical = sum(a == b for a, b in zip(texts["torch"], texts["llama.cpp"], strict=True))
    print(f"identical summaries: {identical} of {len(gen_requests)}")
    with_prompts = {k: t / s for k, (s, _, t, _, _) in timings.items()}
    generation = decode_speed["llama.cpp"] / decode_speed["torch"] if decode_speed["torch"] > 0 else float("nan")
    if not np.isfinite(generation):
        # A few decoded tokens can take less time than the noise between two timings of the prompts.
        print("  (decoding speed not measurable: a generation took no longer than its prompts alone; "
              "use more --max-new-tokens or --repeats, on a quiet machine)")
    print(f"generation speed llama.cpp / torch: {with_prompts['llama.cpp'] / with_prompts['torch']:.2f} prompts included, "
          f"{generation:.2f} decoding only (generation_vs_torch)")

    print("caveat: CPU time is shared with other processes on this machine; llama.cpp spin-waits, so a busy machine "
          "penalises it more than torch; measure on a quiet machine")
    print(
        f"llamacpp_vs_torch={t_torch / t_llama:.2f} llamacpp_vs_prefix_cache_loop={t_loop / t_llama:.2f} "
        f"rank_agreement={rho:.3f} max_abs_diff={diff.max():.3f} generation_vs_torch={generation:.2f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
