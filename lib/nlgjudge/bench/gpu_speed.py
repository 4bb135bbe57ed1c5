"""The torch runtime's speed on a GPU against a plain batched forward pass (issue 49's workload).

One SummEval article's comparative prompts (16 summaries, 240 ordered pairs, coherence, template
1: the ``--compare-backends`` workload) as the judge encodes them, P(A) over the labels " A"/" B".
Sides, in one process on one model, each after an untimed warm-up on the same prompts, timed as
the median of ``--repeats`` runs (the device synchronised before each clock reading):

- the torch runtime's prefix-tree runners, as the judge builds them (same items, budgets and
  runner choice, without the output cache): the level-by-level layout (the CPU's default, and a
  GPU's before issue 49) and the packed depth-first layout at each ``--chunks`` size, with SDPA
  (and FlexAttention with ``--flex``); the row marked "default" is what the judge picks here;
- plain forward passes, batch 1 (one prompt at a time, as the papers' code);
- plain batches of 16 prompts, left padding, ``logits_to_keep=1``.

For each side: seconds, comparisons/s, tokens through the transformer, rows the matrices saw
(padding included), forward calls, output-layer rows, and the largest |P(A)| difference and the
share of comparisons preferring the same summary, both against the plain batches of 16. It ends
with exactly ``engine_vs_plain_batch16=<ratio of the default runner's rate to the plain batches'>``.

Weights are random at the model's configuration by default (speed does not depend on the values);
``--gguf FILE`` loads real weights from a GGUF file (for agreement). ``--profile`` adds, for the
runners, the share of the wall time the device spent in kernels (torch.profiler): the rest is
Python and launch gaps. ``--tiny``: a tiny random model and a synthetic workload of the same shape
(16 candidates, 240 ordered pairs) that runs on the CPU in seconds (the test suite runs it).

The prompts need the data directory and the model's tokenizer; ``--export-workload FILE`` writes
their token ids (and the model's config) so that ``--workload FILE`` runs them on a machine with
neither, e.g. a GPU machine: ``python -m nlgjudge.bench gpu-speed --export-workload w.json`` here,
then ``python -m nlgjudge.bench gpu-speed --workload w.json`` there.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

PROG = "python -m nlgjudge.bench gpu-speed"
DEFAULT_MODEL = "qwen2.5-coder-1.5b-instruct"


@dataclass(frozen=True)
class Workload:
    """Token ids of each comparison's prompt (response prefix included) and of the two labels."""

    model: str
    description: str
    prompts: list[list[int]]
    labels: list[list[int]]  # " A", " B"
    config: dict[str, Any] = field(default_factory=dict)  # the model's config (random weights)

    def items(self) -> list[tuple[list[int], int]]:
        return [(prompt + label, len(prompt)) for prompt in self.prompts for label in self.labels]

    def to_json(self) -> str:
        return json.dumps({"model": self.model, "description": self.description, "prompts": self.prompts,
                           "labels": self.labels, "config": self.config})

    @classmethod
    def from_json(cls, text: str) -> Workload:
        data = json.loads(text)
        return cls(data["model"], data["description"], data["prompts"], data["labels"], data.get("config", {}))


@dataclass
class Side:
    label: str
    seconds: float
    p_a: np.ndarray
    tokens: int
    rows: int
    calls: int
    output_rows: int
    kernel_share: float | None = None
    default: bool = False

    @property
    def rate(self) -> float:
        return len(self.p_a) / self.seconds if self.seconds > 0 else float("nan")


def article_workload(model: str) -> Workload:
    """The article's 240 comparative prompts, encoded by the packaged model's tokenizer."""
    from nlgjudge.bench.gpu_check import comparative_prompts
    from nlgjudge.engine.prompting import encode_labels, encode_prompt
    from nlgjudge.models import PACKAGED_MODELS

    spec = PACKAGED_MODELS.get(model)
    if spec is None or spec.gguf_file is None:
        raise SystemExit(f"{PROG}: --model takes a packaged GGUF model ({', '.join(n for n, m in PACKAGED_MODELS.items() if m.gguf_file)}); "
                         f"got {model!r}")
    from transformers import AutoConfig

    from nlgjudge.engine.llamacpp.loading import load_tokenizer
    from nlgjudge.models.packaged import gguf_path

    path = gguf_path(spec)
    tokenizer = load_tokenizer(spec.name, str(path))
    config = AutoConfig.from_pretrained(str(path.parent), gguf_file=path.name).to_dict()
    requests = comparative_prompts(model, 10**6)
    prompts = [encode_prompt(tokenizer, r.prompt, r.response_prefix) for r in requests]
    labels = encode_labels(tokenizer, requests[0].labels, requests[0].label_end)
    return Workload(model, f"one SummEval article, {len(prompts)} comparative prompts (COH, template 1)", prompts, labels, config)


def tiny_workload(seed: int = 0, candidates: int = 16) -> Workload:
    """The article's shape with random token ids: a passage, 16 summaries, every ordered pair."""
    rng = np.random.default_rng(seed)
    vocab = 256
    passage = rng.integers(8, vocab, 96).tolist()
    summaries = [rng.integers(8, vocab, int(rng.integers(12, 28))).tolist() for _ in range(candidates)]
    question = rng.integers(8, vocab, 12).tolist()
    prompts = [passage + [3] + a + [4] + b + question for i, a in enumerate(summaries) for j, b in enumerate(summaries) if i != j]
    config = {"model_type": "qwen2", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": vocab, "max_position_embeddings": 1024}
    return Workload("tiny-qwen2", f"synthetic article shape, {len(prompts)} comparative prompts", prompts, [[5], [6]], config)


def random_model(config: dict[str, Any], device: str, dtype: str) -> Any:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = AutoConfig.for_model(**config)
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(cfg, dtype=getattr(torch, dtype))
    return model.eval()


def gguf_model(path: str, device: str, dtype: str) -> Any:
    import torch
    from transformers import AutoModelForCausalLM

    file = Path(path)
    model = AutoModelForCausalLM.from_pretrained(str(file.parent), gguf_file=file.name, dtype=torch.float32)
    return model.to(device=device, dtype=getattr(torch, dtype)).eval()


def _synchronise(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _p_a(label_logprobs: np.ndarray) -> np.ndarray:
    """P(first label) over the two labels from [comparisons, 2] log-probabilities."""
    shifted = label_logprobs - label_logprobs.max(axis=1, keepdims=True)
    probs = np.exp(shifted)
    return probs[:, 0] / probs.sum(axis=1)


def runner_side(model: Any, workload: Workload, layout: Any, budgets: tuple[int, int]) -> Callable[[], tuple[np.ndarray, Any]]:
    """The judge's tree runner for ``layout`` (a RunnerLayout) on every comparison of the workload."""
    from nlgjudge.engine.packed_tree import PackedRunner
    from nlgjudge.engine.prefix_tree import CausalRunner
    from nlgjudge.engine.tree import score_continuations

    items = workload.items()
    k = len(workload.labels)

    def run() -> tuple[np.ndarray, Any]:
        if layout.name == "packed":
            runner: Any = PackedRunner(model, chunk_tokens=layout.chunk_tokens, attention=layout.attention,
                                       token_budget=budgets[0], state_budget=budgets[1])
        else:
            runner = CausalRunner(model, token_budget=budgets[0], state_budget=budgets[1])
        scores = score_continuations(runner, items)
        sums = np.array([sum(s) for s in scores], dtype=float).reshape(-1, k)
        return _p_a(sums), runner.stats

    return run


def plain_side(model: Any, workload: Workload, batch: int) -> Callable[[], tuple[np.ndarray, Any]]:
    """Plain forward passes over whole prompts, ``batch`` at a time, left padding, last logits only."""
    import torch

    from nlgjudge.engine.stats import ForwardStats

    device = next(model.parameters()).device
    first = [label[0] for label in workload.labels]
    if any(len(label) != 1 for label in workload.labels):
        raise SystemExit(f"{PROG}: the plain sides read single-token labels; got {workload.labels}")

    @torch.inference_mode()
    def run() -> tuple[np.ndarray, Any]:
        stats = ForwardStats()
        values = []
        for lo in range(0, len(workload.prompts), batch):
            group = workload.prompts[lo : lo + batch]
            width = max(map(len, group))
            ids = torch.zeros((len(group), width), dtype=torch.long)
            mask = torch.zeros((len(group), width), dtype=torch.long)
            for row, prompt in enumerate(group):
                ids[row, width - len(prompt):] = torch.tensor(prompt)
                mask[row, width - len(prompt):] = 1
            positions = (mask.cumsum(1) - 1).clamp(min=0)
            out = model(input_ids=ids.to(device), attention_mask=mask.to(device), position_ids=positions.to(device),
                        logits_to_keep=1, use_cache=False)
            logprobs = torch.log_softmax(out.logits[:, -1].float(), dim=-1)[:, first]
            values.append(logprobs.cpu().numpy())
            stats.forward_calls += 1
            stats.tokens_computed += sum(map(len, group))
            stats.padded_tokens += len(group) * width
            stats.output_rows += len(group)
        return _p_a(np.concatenate(values).astype(float)), stats

    return run


def timed(label: str, run: Callable[[], tuple[np.ndarray, Any]], device: str, repeats: int,
          clock: Callable[[], float] = time.perf_counter, warmup: Callable[[], Any] | None = None) -> Side:
    (warmup or run)()  # warm-up: kernels chosen, compiled and cached on these very shapes
    times, result = [], None
    for _ in range(repeats):
        _synchronise(device)
        start = clock()
        result = run()
        _synchronise(device)
        times.append(clock() - start)
    assert result is not None
    p_a, stats = result
    return Side(label, statistics.median(times), p_a, stats.tokens_computed, stats.padded_tokens, stats.forward_calls, stats.output_rows)


def kernel_share(run: Callable[[], Any], device: str) -> float | None:
    """Device kernel time over wall time of one run (torch.profiler); None where it cannot tell."""
    if not device.startswith("cuda"):
        return None
    import torch
    from torch.profiler import ProfilerActivity, profile

    _synchronise(device)
    start = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        run()
        _synchronise(device)
    wall = time.perf_counter() - start
    events = prof.key_averages()
    kernel_us = sum(getattr(e, "self_device_time_total", 0) or getattr(e, "self_cuda_time_total", 0) for e in events)
    del torch
    return (kernel_us / 1e6) / wall if wall > 0 else None


def lines(sides: Sequence[Side], reference: Side) -> list[str]:
    out = [f"{'side':<50} {'s':>7} {'comp/s':>8} {'tokens':>8} {'rows':>8} {'calls':>6} {'out rows':>8} "
           f"{'max|dP(A)|':>10} {'same':>6} {'kernels':>8}"]
    for side in sides:
        diff = np.abs(side.p_a - reference.p_a)
        same = float(np.mean((side.p_a > 0.5) == (reference.p_a > 0.5)))
        share = "-" if side.kernel_share is None else f"{side.kernel_share:.0%}"
        out.append(f"{side.label:<50} {side.seconds:>7.3f} {side.rate:>8.1f} {side.tokens:>8} {side.rows:>8} {side.calls:>6} "
                   f"{side.output_rows:>8} {diff.max():>10.4f} {same:>6.0%} {share:>8}")
    return out


def markdown_table(numbers: dict[str, Any]) -> str:
    """A measurement file's sides as the Markdown table book/gpu.md shows (a test keeps them equal)."""
    head = ("| side | s | comparisons/s | tokens computed | rows (with padding) | forward calls | "
            "max \\|Δp(A)\\| vs " + ("plain batches of 16" if "batches of 16" in numbers["reference"] else "the level runner")
            + " | same side |")
    out = [head, "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for side in numbers["sides"]:
        label = side["label"].replace(" [default]", " **(default)**")
        out.append(f"| {label} | {side['seconds']:.3f} | {side['comparisons_per_s']:.1f} | {side['tokens']:,} | {side['rows']:,} | "
                   f"{side['calls']} | {side['max_abs_diff_vs_reference']:.4f} | {side['same_side_vs_reference']:.0%} |")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=DEFAULT_MODEL, help=f"packaged model whose config and tokenizer are used (default {DEFAULT_MODEL})")
    parser.add_argument("--tiny", action="store_true", help="a tiny random model and a synthetic workload (CPU, seconds)")
    parser.add_argument("--workload", default=None, help="token ids written by --export-workload (no data or tokenizer needed)")
    parser.add_argument("--export-workload", default=None, help="write the workload's token ids and config to this file and stop")
    parser.add_argument("--gguf", default=None, help="real weights from this GGUF file instead of random ones")
    parser.add_argument("--device", default=None, help="torch device (default: cuda when available, else cpu)")
    parser.add_argument("--dtype", default=None, help="dtype (default: bf16 on a GPU that has it, else fp16; fp32 on the CPU)")
    parser.add_argument("--chunks", nargs="*", type=int, default=None, help="packed chunk sizes to time (default: 2048 4096 8192; --tiny: 64 256)")
    parser.add_argument("--flex", action="store_true", help="also time the packed layout with FlexAttention")
    parser.add_argument("--no-batch1", action="store_true", help="skip the plain batch-1 side (the slowest)")
    parser.add_argument("--repeats", type=int, default=None, help="timed runs per side, median reported (default 3; --tiny: 1)")
    parser.add_argument("--runners-only", action="store_true", help="time the runners only (differences against the level runner; no final ratio)")
    parser.add_argument("--profile", action="store_true", help="kernel time share of the runners (torch.profiler, GPU only)")
    parser.add_argument("--json", default=None, help="also write every number to this file")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.repeats is None:
        args.repeats = 1 if args.tiny else 3
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    if args.chunks is not None and any(c < 1 for c in args.chunks):
        parser.error(f"--chunks must be positive token counts, got {args.chunks}")

    if args.tiny:
        workload = tiny_workload()
    elif args.workload:
        try:
            workload = Workload.from_json(Path(args.workload).read_text())
        except (OSError, ValueError, KeyError) as error:
            parser.error(f"--workload {args.workload!r} cannot be read as a workload file ({error}); write one with --export-workload")
    else:
        workload = article_workload(args.model)
    if args.export_workload:
        Path(args.export_workload).write_text(workload.to_json())
        print(f"wrote {len(workload.prompts)} prompts of {workload.model} to {args.export_workload}")
        return 0

    import torch

    from nlgjudge.models.device import RunnerLayout, batch_budgets, choose_placement, choose_torch_runner

    placement = choose_placement("cpu" if args.tiny and args.device is None else args.device, args.dtype)
    device, dtype = placement.device, placement.dtype
    model = gguf_model(args.gguf, device, dtype) if args.gguf else random_model(workload.config, device, dtype)
    from nlgjudge.engine.judge import _kv_bytes_per_token

    budgets = batch_budgets(placement, 1024, 16384, _kv_bytes_per_token(model))  # the Judge's defaults
    default = choose_torch_runner(placement)
    chunks = args.chunks if args.chunks is not None else ([64, 256] if args.tiny else [2048, 4096, 8192])
    layouts = [RunnerLayout("levels")] + [RunnerLayout("packed", c, "sdpa") for c in chunks]
    if args.flex:
        layouts.append(RunnerLayout("packed", max(chunks) if chunks else 4096, "flex"))
    if default not in layouts:
        layouts.append(default)
    where = f"{device} {dtype}" + (f" ({torch.cuda.get_device_name()})" if device.startswith("cuda") else f" ({torch.get_num_threads()} threads)")
    weights = f"GGUF weights {args.gguf}" if args.gguf else "random weights at its config"
    prompt_tokens = sum(map(len, workload.prompts))
    print(f"{workload.model} ({weights}); {workload.description}; {where}; "
          f"{prompt_tokens} prompt tokens; median of {args.repeats} timed runs after a warm-up")

    reference = None if args.runners_only else timed(
        "plain, batches of 16 (left padding, last logits)", plain_side(model, workload, 16), device, args.repeats)
    sides: list[Side] = []
    for layout in layouts:
        name = "levels (padded rows)" if layout.name == "levels" else f"packed, {layout.chunk_tokens}-token chunks, {layout.attention}"
        label = f"runtime: {name}" + (" [default]" if layout == default else "")
        run = runner_side(model, workload, layout, budgets)
        try:
            side = timed(label, run, device, args.repeats)
        except Exception as error:  # noqa: BLE001 - one failing side must not lose the others' numbers
            import traceback

            traceback.print_exc()
            print(f"{label}: failed ({type(error).__name__}: {str(error).splitlines()[0][:160]})")
            continue
        side.default = layout == default
        if args.profile:
            side.kernel_share = kernel_share(run, device)
        sides.append(side)
    if reference is None:
        if not sides:
            return 1
        for line in lines(sides, sides[0]):
            print(line)
        _write_json(args.json, workload, weights, where, args.repeats, sides, sides[0])
        return 0
    if not args.no_batch1:
        few = Workload(workload.model, "", workload.prompts[:4], workload.labels)
        sides.append(timed("plain, batch 1 (one prompt at a time, 1 run)", plain_side(model, workload, 1), device, 1,
                           warmup=plain_side(model, few, 1)))
    sides.append(reference)
    for line in lines(sides, reference):
        print(line)
    _write_json(args.json, workload, weights, where, args.repeats, sides, reference)
    engine = next((s for s in sides if s.default), None)
    if engine is None:
        print("engine_vs_plain_batch16=nan (the default runner failed, see above)")
        return 1
    print(f"engine_vs_plain_batch16={engine.rate / reference.rate:.2f}")
    return 0


def _write_json(path: str | None, workload: Workload, weights: str, where: str, repeats: int,
                sides: Sequence[Side], reference: Side) -> None:
    if not path:
        return
    import platform

    import torch
    import transformers

    Path(path).write_text(json.dumps({
        "command": " ".join(["python -m nlgjudge.bench gpu-speed", *sys.argv[1:]]),
        "torch": torch.__version__, "transformers": transformers.__version__, "python": platform.python_version(),
        "model": workload.model, "weights": weights, "device": where, "repeats": repeats, "reference": reference.label,
        "sides": [{"label": s.label, "seconds": s.seconds, "comparisons_per_s": s.rate, "tokens": s.tokens, "rows": s.rows,
                   "calls": s.calls, "output_rows": s.output_rows, "kernel_share": s.kernel_share, "default": s.default,
                   "max_abs_diff_vs_reference": float(np.abs(s.p_a - reference.p_a).max()),
                   "same_side_vs_reference": float(np.mean((s.p_a > 0.5) == (reference.p_a > 0.5))),
                   "p_a": s.p_a.tolist()} for s in sides],
    }, indent=1))


if __name__ == "__main__":
    raise SystemExit(main())
