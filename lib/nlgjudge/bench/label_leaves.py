"""Benchmark of llama.cpp label probabilities with many short labels: the label continuations of a
prompt side by side in one call, or one call each.

Prompt scoring's expected score reads P(s) for the score words 1..10. A word that is not the whole
label ("1" is also the start of "10") is scored up to the token after it, so every prompt ends in a
handful of short sibling leaves of the prefix tree (one per score word). The sequential scheme
decodes each leaf on the trunk right after the previous one was dropped: a call of one block
(one token, padded to 8 rows) per leaf. Side by side, each leaf recomputes its prompt's partial
last block on its own sequence and they share one call.

On the first context of a dataset's seeded 6-context subset (default SummEval, whose scoring
release this is), in one process with one loaded model and no output cache, the first ``--prompts``
expected-score prompts, each side from an empty KV cache:

(a) short sibling leaves side by side (the default, from 2026-11-25);
(b) one leaf at a time on the trunk (before).

(a) and (b) alternate ``--repeats`` times. Prints the median seconds, the tokens, rows (padding and
layout steering included) and ``llama_decode`` calls each computed, whether (a) and (b) give the same
label probabilities bit for bit, and last, exactly:
``label_leaves_speedup=<median b / median a> same_bits=<True|False> calls_a=<c> calls_b=<c>``.

Run: ``python -m nlgjudge.bench label-leaves`` (Qwen2.5-Coder-1.5B-Instruct) or ``--quick``
(SmolLM2-135M, a few prompts).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np


def _side(judge: Any, requests: list[Any], grouped: bool) -> tuple[float, Any, np.ndarray]:
    """Seconds of the label probabilities from an empty cache, their forward statistics, and the
    probabilities (one row per request)."""
    from nlgjudge.engine import llamacpp

    model, _ = judge._load()
    model.reset()
    original = llamacpp.LlamaCppRunner.group_short_leaves
    llamacpp.LlamaCppRunner.group_short_leaves = grouped
    try:
        start = time.perf_counter()
        results = judge.label_probs(requests)
        seconds = time.perf_counter() - start
    finally:
        llamacpp.LlamaCppRunner.group_short_leaves = original
    return seconds, judge.last_run.stats, np.stack([r.probs for r in results])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nlgjudge.bench label-leaves", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="SmolLM2-135M, 8 prompts")
    parser.add_argument("--model", default=None, help="a packaged GGUF model (default: qwen2.5-coder-1.5b-instruct)")
    parser.add_argument("--dataset", default="summeval", choices=("summeval", "topicalchat", "webnlg"), help="dataset (default summeval)")
    parser.add_argument("--prompts", type=int, default=None, help="expected-score prompts of the first context (default 32; --quick 8)")
    parser.add_argument("--repeats", type=int, default=1, help="alternate (a) and (b) R times and report medians (odd R advised)")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: the usable cores)")
    args = parser.parse_args(argv)
    for name in ("prompts", "repeats"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name} must be at least 1, got {value}")

    from nlgjudge.data import load_dataset
    from nlgjudge.engine import Judge
    from nlgjudge.studies.scoring import expected_requests

    name = args.model or ("smollm2-135m-instruct" if args.quick else "qwen2.5-coder-1.5b-instruct")
    n_prompts = args.prompts or (8 if args.quick else 32)
    ds = load_dataset(args.dataset).select_contexts(6, seed=0)
    first = ds.context_ids()[0]
    judge = Judge(name, cache=False, progress=False, backend="llamacpp", threads=args.threads)
    requests, _ = expected_requests(judge.handle, ds.restrict([first]))
    requests = requests[:n_prompts]
    print(f"model {name}; {args.dataset}: {len(requests)} expected-score prompts of {first} "
          f"({len(requests[0].labels)} labels each); {judge.runtime_description()}")

    times: dict[bool, list[float]] = {True: [], False: []}
    stats: dict[bool, Any] = {}
    probs: dict[bool, np.ndarray] = {}
    for _ in range(args.repeats):
        for grouped in (True, False):
            seconds, stats[grouped], probs[grouped] = _side(judge, requests, grouped)
            times[grouped].append(seconds)

    label = "median s" if args.repeats > 1 else "time s"
    print(f"\n{'run':<40} {label:>9} {'tokens':>8} {'rows':>8} {'calls':>6}")
    for text, grouped in (("(a) sibling leaves side by side", True), ("(b) one leaf at a time", False)):
        st = stats[grouped]
        print(f"{text:<40} {statistics.median(times[grouped]):>9.1f} {st.tokens_computed:>8} {st.padded_tokens:>8} {st.forward_calls:>6}")
    print(f"(a) computed {stats[True].grouped_leaves} leaves side by side"
          + (f"; {args.repeats} runs of (a) and (b), alternating" if args.repeats > 1 else ""))
    same = bool(np.array_equal(probs[True], probs[False]))
    diff = float(np.max(np.abs(probs[True] - probs[False])))
    print(f"label probabilities, {probs[True].size} values: (a) = (b) bitwise {same} (max |diff| {diff:.3g})")
    speedup = statistics.median(times[False]) / statistics.median(times[True])
    print(f"label_leaves_speedup={speedup:.2f} same_bits={same} calls_a={stats[True].forward_calls} calls_b={stats[False].forward_calls}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
