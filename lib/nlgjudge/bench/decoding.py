"""Benchmark of llama.cpp sampling: decoding groups that keep their shared prefix, and the same
bits however the requests are chunked.

On one SummEval article's prompt-scoring prompts (the sampled reading of
:mod:`nlgjudge.studies.scoring`: up to 5 tokens, temperature 1, ``--samples`` answers each; the
first ``--prompts`` of the aspects COH and CON, template 1), in one process with one loaded model
and no output cache:

(a) every request in one call; each decoding group on the cache the previous group left, whose
    trunk holds the prefix the groups share (the default);
(b) the same, every group starting on an empty cache (what the engine did before 2026-11-25);
(c) one request per call (``chunk_size=1``), in reverse order.

(a) and (b) alternate ``--repeats`` times. Prints the median seconds of (a) and (b), the tokens and
rows (padding included) each computed, whether every request's draws read the same next-token
scores, bit for bit, in (a), (b) and (c), and last, exactly:
``keep_trunk_speedup=<median b / median a> same_bits=<True|False> max_abs_diff=<d>``, where ``d`` is
the largest difference between the runs' draw inputs as log-probabilities (``nan`` when the runs
drew a different number of times).

Run: ``python -m nlgjudge.bench decoding`` (Qwen2.5-Coder-1.5B-Instruct) or ``--quick`` (SmolLM2-135M).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np


def _recorded_run(judge: Any, requests: list[Any], keep_trunk: bool) -> tuple[float, Any, dict[int, list[np.ndarray]]]:
    """Seconds, forward statistics and every request's draw inputs (keyed by the request's seed)."""
    from nlgjudge.engine import llamacpp

    # draw is patched where it is called: llamacpp.generation since the runtime became a package
    # (an engine from before that, which this benchmark may also run against, calls its own)
    draw_home = getattr(llamacpp, "generation", llamacpp)
    seen: dict[int, list[np.ndarray]] = {}
    original_draw = draw_home.draw
    # getattr: the benchmark also runs against an engine from before the switch existed (every group
    # then starts on an empty cache), to measure what the output-row padding changed
    original_keep = getattr(llamacpp.LlamaCppRunner, "keep_trunk_between_groups", None)

    def recording(scores: np.ndarray, temperature: float, generator: np.random.Generator) -> int:
        seen.setdefault(int(generator.bit_generator.seed_seq.entropy), []).append(np.array(scores, dtype=np.float32))
        return original_draw(scores, temperature, generator)

    model, _ = judge._load()
    model.reset()
    draw_home.draw = recording
    if original_keep is not None:
        llamacpp.LlamaCppRunner.keep_trunk_between_groups = keep_trunk
    try:
        start = time.perf_counter()
        judge.sample(requests)
        seconds = time.perf_counter() - start
    finally:
        draw_home.draw = original_draw
        if original_keep is not None:
            llamacpp.LlamaCppRunner.keep_trunk_between_groups = original_keep
    return seconds, judge.last_run.stats, seen


def _compare(a: dict[int, list[np.ndarray]], b: dict[int, list[np.ndarray]]) -> tuple[bool, float | None]:
    """Whether two runs' draw inputs are the same bits, and their largest difference as
    log-probabilities (the inputs are log-probabilities at the first token and logits after, so each
    is normalised first); None when the runs drew a different number of times (not comparable)."""
    if a.keys() != b.keys() or any(len(a[k]) != len(b[k]) for k in a):
        return False, None
    pairs = [(x, y) for k in a for x, y in zip(a[k], b[k], strict=True)]
    same = all(np.array_equal(x, y) for x, y in pairs)
    from nlgjudge.engine.llamacpp import _log_softmax_rows

    diff = max((float(np.max(np.abs(np.diff(_log_softmax_rows(np.stack([x, y])), axis=0)))) for x, y in pairs), default=0.0)
    return same, diff


def _describe(diff: float | None) -> str:
    return "not comparable: the runs drew a different number of times" if diff is None else f"max |diff| {diff:.3g}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nlgjudge.bench decoding", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="SmolLM2-135M, 12 prompts (two decoding groups), 2 samples each")
    parser.add_argument("--model", default=None, help="a packaged GGUF model (default: qwen2.5-coder-1.5b-instruct)")
    parser.add_argument("--prompts", type=int, default=None, help="prompts (default 16; --quick 12)")
    parser.add_argument("--samples", type=int, default=None, help="answers sampled per prompt (default 10; --quick 2)")
    parser.add_argument("--repeats", type=int, default=1, help="alternate (a) and (b) R times and report medians (odd R advised)")
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: the usable cores)")
    args = parser.parse_args(argv)
    for name in ("prompts", "samples", "repeats"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name} must be at least 1, got {value}")

    from nlgjudge.data import load_dataset
    from nlgjudge.engine import Judge, llamacpp
    from nlgjudge.studies.scoring import sampled_requests

    name = args.model or ("smollm2-135m-instruct" if args.quick else "qwen2.5-coder-1.5b-instruct")
    n_prompts = args.prompts or (12 if args.quick else 16)
    n_samples = args.samples or (2 if args.quick else 10)
    ds = load_dataset("summeval").select_contexts(1, seed=0)
    judge = Judge(name, cache=False, progress=False, backend="llamacpp", threads=args.threads)
    requests, _ = sampled_requests(judge.handle, ds, aspects=["COH", "CON"], templates=[1], n_samples=n_samples)
    requests = requests[:n_prompts]
    print(f"model {name}; SummEval article {ds.context_ids()[0]}: {len(requests)} prompts x {n_samples} samples "
          f"(up to {requests[0].max_new_tokens} tokens each); {judge.runtime_description()}")

    if not hasattr(llamacpp.LlamaCppRunner, "keep_trunk_between_groups"):
        print("this engine predates keep_trunk_between_groups: (a) and (b) below both start every group on an empty cache")
    times: dict[bool, list[float]] = {True: [], False: []}
    stats: dict[bool, Any] = {}
    draws: dict[bool, dict[int, list[np.ndarray]]] = {}
    for _ in range(args.repeats):
        for keep in (True, False):
            seconds, stats[keep], draws[keep] = _recorded_run(judge, requests, keep)
            times[keep].append(seconds)
    alone = Judge(name, cache=False, progress=False, backend="llamacpp", threads=args.threads, chunk_size=1)
    t_alone, stats_alone, draws_alone = _recorded_run(alone, requests[::-1], True)

    label = "median s" if args.repeats > 1 else "time s"
    print(f"\n{'run':<58} {label:>9} {'tokens':>8} {'rows':>8} {'calls':>6}")
    lines = (("(a) one call, groups keep their shared prefix (default)", times[True], stats[True]),
             ("(b) one call, every group on an empty cache", times[False], stats[False]),
             ("(c) one request per call, reverse order", [t_alone], stats_alone))
    for text, seconds, st in lines:
        print(f"{text:<58} {statistics.median(seconds):>9.1f} {st.tokens_computed:>8} {st.padded_tokens:>8} {st.forward_calls:>6}")
    if args.repeats > 1:
        print(f"({args.repeats} runs of (a) and (b), alternating; rows = tokens + padding and layout steering)")
    restarted = {text[:3]: st.restarted_groups for text, _, st in lines if st.restarted_groups}
    if restarted:  # their draws are recorded twice, so the comparison below says "not comparable"
        print(f"decoding groups computed again on an empty cache (no room): {restarted}")
    same_ab, diff_ab = _compare(draws[True], draws[False])
    same_ac, diff_ac = _compare(draws[True], draws_alone)
    n_draws = sum(len(v) for v in draws[True].values())
    print(f"draw inputs, {n_draws} next-token score vectors (differences as log-probabilities): "
          f"(a) = (b) bitwise {same_ab} ({_describe(diff_ab)}); (a) = (c) bitwise {same_ac} ({_describe(diff_ac)})")
    speedup = statistics.median(times[False]) / statistics.median(times[True])
    diffs = (diff_ab, diff_ac)
    largest = "nan" if None in diffs else f"{max(d for d in diffs if d is not None):.3g}"
    print(f"keep_trunk_speedup={speedup:.2f} same_bits={same_ab and same_ac} max_abs_diff={largest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
