"""Benchmark of prompt scoring with and without sharing each prompt between its two readings.

Prompt scoring reads one prompt twice: the expected score (label probabilities of the score
words) and K sampled answers. Without sharing, sampling computes every prompt again; inside
``Judge.sharing_prompts()`` it starts from the key/values kept by the label-probability call.
On one context of a dataset, in one process and with the same loaded model, both sides run
``expected_scores`` then ``sampled_scores`` of :mod:`nlgjudge.studies.scoring` with no cache,
alternately, ``--repeats`` times. Prints the median seconds of each side, the tokens each
computed, whether the samples are identical, and last, exactly:
``speedup=<median plain / median shared> same_samples=<True|False> max_abs_diff=<expected scores>``.

Run: ``python -m nlgjudge.bench sharing`` (Qwen2.5-Coder-1.5B-Instruct, one TopicalChat
dialogue) or ``--quick`` (SmolLM2-135M).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any

import numpy as np


def run_side(
    handle: Any, ds: Any, shared: bool, aspects: list[str] | None, n_samples: int, templates: Sequence[int] = (1, 2)
) -> tuple[float, int, Any, Any]:
    """One side: seconds, tokens computed, expected-score frame, sampled frame (no cache)."""
    from nlgjudge.engine import Judge
    from nlgjudge.studies.scoring import expected_scores, sampled_scores

    judge = Judge(handle, cache=False, progress=False, backend="torch")  # sharing_prompts is a torch feature
    start = time.perf_counter()
    with judge.sharing_prompts() if shared else nullcontext():
        expected = expected_scores(judge, ds, aspects=aspects, templates=templates)
        sampled = sampled_scores(judge, ds, aspects=aspects, templates=templates, n_samples=n_samples)
    seconds = time.perf_counter() - start
    return seconds, sum(r.stats.tokens_computed for r in judge.reports), expected, sampled


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nlgjudge.bench sharing", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="SmolLM2-135M instead of Qwen2.5-Coder-1.5B")
    parser.add_argument("--model", default=None, help="any model name resolve_model accepts")
    parser.add_argument("--dataset", default="topicalchat")
    parser.add_argument("--context", type=int, default=0, help="index of the context in the dataset")
    parser.add_argument("--aspects", nargs="*", default=None, help="default: every aspect")
    parser.add_argument("--samples", type=int, default=10, help="K samples per prompt")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    if args.repeats < 1:
        raise SystemExit(f"--repeats must be at least 1, got {args.repeats}")

    import torch

    from nlgjudge.data import load_dataset
    from nlgjudge.models import resolve_model

    name = args.model or ("smollm2-135m-instruct" if args.quick else "qwen2.5-coder-1.5b-instruct")
    full = load_dataset(args.dataset)
    context_id = full.context_ids()[args.context]
    ds = full.only(context_id)
    handle = resolve_model(name)
    handle.load()
    print(f"model {name}; {args.dataset} context {context_id}: {len(ds.frame)} candidates, "
          f"aspects {args.aspects or 'all'}, K={args.samples}; threads {torch.get_num_threads()}; fp32")

    times: dict[bool, list[float]] = {False: [], True: []}
    tokens: dict[bool, int] = {}
    frames: dict[bool, tuple[Any, Any]] = {}
    for repeat in range(args.repeats):
        # Alternate which side goes first, so neither always meets a warmer machine.
        for shared in ((False, True) if repeat % 2 == 0 else (True, False)):
            seconds, computed, expected, sampled = run_side(handle, ds, shared, args.aspects, args.samples)
            times[shared].append(seconds)
            tokens[shared], frames[shared] = computed, (expected, sampled)
            print(f"repeat {repeat + 1}: {'shared' if shared else 'plain '} {seconds:.1f} s, {computed} tokens computed")
    plain, shared = statistics.median(times[False]), statistics.median(times[True])
    same = list(frames[False][1]["samples"]) == list(frames[True][1]["samples"])
    diff = float(np.max(np.abs(frames[False][0]["expected"].to_numpy() - frames[True][0]["expected"].to_numpy())))
    print(f"median plain {plain:.1f} s ({tokens[False]} tokens), median shared {shared:.1f} s ({tokens[True]} tokens), "
          f"over {args.repeats} repeats")
    print("caveat: CPU time is shared with other processes on this machine; the ratio is the robust figure")
    print(f"speedup={plain / shared:.2f} same_samples={same} max_abs_diff={diff:.2e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
