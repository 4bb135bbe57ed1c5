"""Benchmark of llama.cpp label probabilities right after sampling: the trunk the sampling run left
in the KV cache reused where it lies, or its prefix computed again from cell 0.

The scoring study computes, per context, the expected-score prompts (label probabilities, the
sequential scheme) and then the sampled prompts, so each context's label probabilities start on the
cache the previous context's sampling left. Its trunk (the prefix the last decoding group shared)
lies where that group put it, possibly above free cells; a block must lie above every cell its
sequence holds, so every later batch may have to fill those free cells with scratch rows.

On two contexts of a dataset (the first two of its seeded 6-context subset, in the order the
studies compute them; default WebNLG, whose released subset that is), in one process with one
loaded model and no output cache:

(a) sample the first context's sampled prompts (not timed), then time the second context's first
    ``--label-prompts`` expected-score prompts, the trunk computed again when free cells lie below
    it (the default, from 2026-11-25);
(b) the same, the trunk reused where it lies (before).

(a) and (b) alternate ``--repeats`` times. Prints the free cells below the trunk when the label
probabilities start and whether (a) computed the prefix it would reuse again (it does when free
cells lie below that prefix), the median seconds, the tokens and rows (padding and layout steering included)
each computed, whether (a) and (b) give the same label probabilities bit for bit, and last, exactly:
``floating_trunk_speedup=<median b / median a> same_bits=<True|False> rows_a=<r> rows_b=<r>``.

Run: ``python -m nlgjudge.bench floating-trunk`` (Qwen2.5-Coder-1.5B-Instruct) or ``--quick``
(SmolLM2-135M, a few prompts).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np


def _side(judge: Any, sampled: list[Any], expected: list[Any], drop: bool) -> tuple[float, Any, int, np.ndarray]:
    """Seconds of the label probabilities, their forward statistics, the free cells below the trunk
    when they started, and the probabilities (one row per request)."""
    from nlgjudge.engine import llamacpp

    model, _ = judge._load()
    model.reset()
    judge.sample(sampled)
    below = model.free_cells_below(llamacpp.TRUNK)
    original = llamacpp.LlamaCppRunner.drop_floating_trunk
    llamacpp.LlamaCppRunner.drop_floating_trunk = drop
    try:
        start = time.perf_counter()
        results = judge.label_probs(expected)
        seconds = time.perf_counter() - start
    finally:
        llamacpp.LlamaCppRunner.drop_floating_trunk = original
    return seconds, judge.last_run.stats, below, np.stack([r.probs for r in results])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nlgjudge.bench floating-trunk", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="SmolLM2-135M, 12 sampled prompts x 2 samples, 6 label prompts")
    parser.add_argument("--model", default=None, help="a packaged GGUF model (default: qwen2.5-coder-1.5b-instruct)")
    parser.add_argument("--dataset", default="webnlg", choices=("summeval", "topicalchat", "webnlg"), help="dataset (default webnlg)")
    parser.add_argument("--sample-prompts", type=int, default=None, help="sampled prompts of the first context (default: all; --quick 12)")
    parser.add_argument("--samples", type=int, default=None, help="answers sampled per prompt (default 10, the study's; --quick 2)")
    parser.add_argument("--label-prompts", type=int, default=None, help="expected-score prompts of the second context (default 20; --quick 6)")
    parser.add_argument("--repeats", type=int, default=1, help="alternate (a) and (b) R times and report medians (odd R advised)")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: the usable cores)")
    args = parser.parse_args(argv)
    for name in ("sample_prompts", "samples", "label_prompts", "repeats"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {value}")

    from nlgjudge.data import load_dataset
    from nlgjudge.engine import Judge
    from nlgjudge.studies.scoring import expected_requests, sampled_requests

    name = args.model or ("smollm2-135m-instruct" if args.quick else "qwen2.5-coder-1.5b-instruct")
    n_samples = args.samples or (2 if args.quick else 10)
    n_sampled = args.sample_prompts or (12 if args.quick else None)
    n_label = args.label_prompts or (6 if args.quick else 20)
    ds = load_dataset(args.dataset).select_contexts(6, seed=0)
    first, second = ds.context_ids()[:2]
    judge = Judge(name, cache=False, progress=False, backend="llamacpp", threads=args.threads)
    sampled, _ = sampled_requests(judge.handle, ds.restrict([first]), n_samples=n_samples)
    expected, _ = expected_requests(judge.handle, ds.restrict([second]))
    sampled, expected = sampled[:n_sampled], expected[:n_label]
    print(f"model {name}; {args.dataset}: {len(sampled)} sampled prompts x {n_samples} samples of {first}, then "
          f"{len(expected)} expected-score prompts of {second}; {judge.runtime_description()}")

    times: dict[bool, list[float]] = {True: [], False: []}
    stats: dict[bool, Any] = {}
    below: dict[bool, int] = {}
    probs: dict[bool, np.ndarray] = {}
    for _ in range(args.repeats):
        for drop in (True, False):
            seconds, stats[drop], below[drop], probs[drop] = _side(judge, sampled, expected, drop)
            times[drop].append(seconds)

    label = "median s" if args.repeats > 1 else "time s"
    print(f"\nfree cells below the trunk's highest cell when the label probabilities start: (a) {below[True]}, (b) {below[False]}; "
          f"(a) computed the reused prefix again {stats[True].dropped_trunks} time(s)")
    print(f"{'run':<52} {label:>9} {'tokens':>8} {'rows':>8} {'calls':>6}")
    for text, drop in (("(a) trunk computed again when free cells lie below it", True),
                       ("(b) trunk reused where it lies", False)):
        st = stats[drop]
        print(f"{text:<52} {statistics.median(times[drop]):>9.1f} {st.tokens_computed:>8} {st.padded_tokens:>8} {st.forward_calls:>6}")
    if args.repeats > 1:
        print(f"({args.repeats} runs of (a) and (b), alternating; rows = tokens + padding and layout steering)")
    same = bool(np.array_equal(probs[True], probs[False]))
    diff = float(np.max(np.abs(probs[True] - probs[False])))
    print(f"label probabilities, {probs[True].size} values: (a) = (b) bitwise {same} (max |diff| {diff:.3g})")
    speedup = statistics.median(times[False]) / statistics.median(times[True])
    print(f"floating_trunk_speedup={speedup:.2f} same_bits={same} rows_a={stats[True].padded_tokens} rows_b={stats[False].padded_tokens}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
