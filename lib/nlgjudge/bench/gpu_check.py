"""A five-minute check of the torch runtime on a GPU: the same P(A) as on the CPU, and how much faster.

A packaged model (default SmolLM2-135M-Instruct) judges 20 comparative prompts of one SummEval
article twice on the torch runtime, once on the GPU (its dtype as the judge picks it: bf16 or
fp16) and once on the CPU in fp32, each without an output cache and on its own copy of the
weights, after one untimed warm-up request each. Prints each side's time and comparisons per
second, the largest and mean |P(A)| difference and the share of comparisons preferring the same
summary, and ends with exactly ``gpu_vs_cpu=<speed ratio> max_abs_diff=<d>``.

Run: ``python -m nlgjudge.bench gpu-check`` (or ``--gpu-check``). Without a CUDA device it says so in
one line and exits with status 2.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

PROG = "python -m nlgjudge.bench gpu-check"


@dataclass(frozen=True)
class Side:
    """One device's run: where, how long, and P(A) of every comparison."""

    label: str
    seconds: float
    p_a: np.ndarray

    @property
    def rate(self) -> float:
        return len(self.p_a) / self.seconds if self.seconds > 0 else float("nan")


@dataclass(frozen=True)
class Check:
    gpu: Side
    cpu: Side

    @property
    def differences(self) -> np.ndarray:
        return np.abs(self.gpu.p_a - self.cpu.p_a)

    @property
    def speedup(self) -> float:
        return self.gpu.rate / self.cpu.rate

    def lines(self) -> list[str]:
        diff = self.differences
        n = len(diff)
        same = float(np.mean((self.gpu.p_a > 0.5) == (self.cpu.p_a > 0.5)))
        out = [f"{'runtime':<40} {'time s':>8} {'comparisons/s':>14}"]
        for side in (self.gpu, self.cpu):
            out.append(f"{side.label:<40} {side.seconds:>8.2f} {side.rate:>14.2f}")
        out.append(f"P(A) GPU vs CPU on {n} comparisons: max |diff| {diff.max():.4f}, mean {diff.mean():.4f}; "
                   f"same preferred summary in {same:.0%}")
        out.append(f"gpu_vs_cpu={self.speedup:.2f} max_abs_diff={diff.max():.4f}")
        return out


def timed_side(label: str, judge: Any, requests: Sequence[Any], clock: Callable[[], float] = time.perf_counter) -> Side:
    """One untimed warm-up request (loads the weights, starts CUDA), then every request timed."""
    judge.label_probs(list(requests[:1]))
    start = clock()
    results = judge.label_probs(list(requests))
    seconds = clock() - start
    return Side(label, seconds, np.array([r.probs[0] for r in results], dtype=float))


def run_check(gpu_judge: Any, cpu_judge: Any, requests: Sequence[Any], clock: Callable[[], float] = time.perf_counter) -> Check:
    """The same requests on both judges (GPU first, so a failing GPU fails before the CPU's minutes)."""
    def label(judge: Any) -> str:
        placement = judge.placement
        return f"torch {placement.dtype} on {placement.device}"

    gpu = timed_side(label(gpu_judge), gpu_judge, requests, clock)
    cpu = timed_side(label(cpu_judge), cpu_judge, requests, clock)
    return Check(gpu, cpu)


def comparative_prompts(model: str, count: int) -> list[Any]:
    """The first ``count`` comparative requests of SummEval's first article (template 1, coherence)."""
    from nlgjudge.bench.engine import one_article
    from nlgjudge.data import load_dataset
    from nlgjudge.models import resolve_model
    from nlgjudge.studies.comparative import comparative_requests
    from nlgjudge.studies.prompting import prompt_style

    one = one_article(load_dataset("summeval"), 0, None)
    requests, _ = comparative_requests(one, aspects=["COH"], templates=[1], style=prompt_style(resolve_model(model)))
    return requests[:count]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2-135m-instruct", help="a packaged causal model (default: smollm2-135m-instruct)")
    parser.add_argument("--prompts", type=int, default=20, help="comparative prompts judged on each device (default 20)")
    parser.add_argument("--device", default="cuda", help="the GPU to check (default: cuda)")
    parser.add_argument("--dtype", default=None, help="its dtype (default: bf16 where native, else fp16)")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.prompts < 2:
        parser.error(f"--prompts must be at least 2, got {args.prompts}")

    import torch

    if not torch.cuda.is_available():
        print(f"gpu-check: no CUDA device is available (torch {torch.__version__}, CUDA build: "
              f"{torch.version.cuda or 'none'}); run it on a GPU machine with the CUDA build of torch", file=sys.stderr)
        return 2

    from nlgjudge.engine import Judge
    from nlgjudge.models import resolve_model

    requests = comparative_prompts(args.model, args.prompts)
    # Two handles: each judge moves its own copy of the weights (a half-precision copy is not cast back).
    gpu_judge = Judge(resolve_model(args.model), cache=False, progress=False, backend="torch", device=args.device, dtype=args.dtype)
    cpu_judge = Judge(resolve_model(args.model), cache=False, progress=False, backend="torch", device="cpu", dtype="float32")
    print(f"model {args.model}; {len(requests)} comparative prompts of one SummEval article; "
          f"GPU {torch.cuda.get_device_name(torch.device(gpu_judge.placement.device).index or 0)}; "
          f"CPU threads {torch.get_num_threads()}")
    for line in run_check(gpu_judge, cpu_judge, requests).lines():
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
