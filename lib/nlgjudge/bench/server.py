"""The served runtime against the in-process llama.cpp runtime on identical comparative prompts.

Starts llama-cpp-python's OpenAI-compatible server on a free 127.0.0.1 port serving the packaged
GGUF file, and judges the same comparative prompts of one SummEval article twice: in-process
(``backend="llamacpp"``) and through the server (``backend="server"``). One model process at a
time: the in-process model is freed before the server starts, and the server is stopped before
anything else; each side writes to its own fresh output cache, so nothing is read from a cache.
Prints each side's time and rate, the server's prefix-cache reuse where it reports any, and ends
with exactly ``server_vs_inprocess=<r> max_abs_diff=<d>`` (r: the server's comparison rate over
the in-process rate; d: the largest |P(A)| difference).

Where the server's time goes: between the two sides a third one runs the server's own library
path in-process, without HTTP -- llama-cpp-python's ``Llama`` built as its server builds it
(``logits_all=True``, the server's default and required for log-probabilities) answering the same
1-token completions with the same top-k log-probabilities, in the same shared-prefix order. Its
rate against the in-process runtime is what the server library costs; the served rate against it
is what HTTP, JSON and the client cost. ``--no-library-path`` skips it.

Run: ``python -m nlgjudge.bench server [--quick]`` (or ``--server``); ``--quick``: SmolLM2-135M and
the article's first 5 candidates, coherence only. The launcher refuses a ``--port`` another process
already holds (one line), so it never benchmarks some other server in its own's place.

A server that is already running (vLLM, SGLang, ...): ``python -m nlgjudge.bench server --server-url
URL --model NAME`` judges the same prompts through it and in-process on the runtime that computes the
same weights (``--inprocess torch``, the default: a vLLM server of the folder the torch runtime
converts, ``NLGJUDGE_CACHE_DIR/models/NAME``, in float32; ``--inprocess llamacpp`` for a server of
the GGUF file), NAME being the packaged model (``--server-name`` when the server serves it under
another name), printing both rates, the ratio and the largest P(A) difference with the same final
line. The running server shares the machine with the in-process side (an idle vLLM CPU server was
seen here keeping about one core busy), so on a small machine prefer the launcher:

``python -m nlgjudge.bench server --engine vllm``: one model process at a time again -- the torch
runtime in-process on the converted folder (fp32), then in-process llama.cpp on the GGUF file
(reported beside, ``--no-llamacpp`` skips it), then vLLM's CPU build (``make install-vllm``) started
on a free 127.0.0.1 port serving that folder in float32 with prefix caching, eager
(:func:`~nlgjudge.engine.server.local.start_vllm_server`; ``VLLM_CPU_OMP_THREADS_BIND=0-1`` in the
environment lets it use both cores), then stopped; the final line compares vLLM with torch.
"""

from __future__ import annotations

import argparse
import gc
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nlgjudge.engine.server.client import ServerUnavailableError, redact
from nlgjudge.engine.server.local import free_port, start_llama_cpp_server, start_vllm_server, stop_server

PROG = "python -m nlgjudge.bench server"


def final_line(inprocess_seconds: float, server_seconds: float, p_inprocess: np.ndarray, p_server: np.ndarray) -> str:
    """``server_vs_inprocess=<r> max_abs_diff=<d>``: rate ratio on the same requests, largest |P(A) diff|."""
    if len(p_inprocess) != len(p_server) or len(p_server) == 0:
        raise ValueError(f"the two runtimes judged {len(p_inprocess)} and {len(p_server)} comparisons")
    ratio = inprocess_seconds / server_seconds  # same count on both sides: rate ratio = inverse time ratio
    return f"server_vs_inprocess={ratio:.2f} max_abs_diff={float(np.max(np.abs(p_server - p_inprocess))):.2e}"


def start_server(model: str, threads: int, port: int) -> tuple[subprocess.Popen[bytes], str]:
    """llama-cpp-python's server on 127.0.0.1:``port`` serving the packaged ``model`` under its name."""
    try:
        return start_llama_cpp_server(model, threads=threads, port=port, n_ctx=4096)
    except ServerUnavailableError as error:
        raise SystemExit(f"{PROG}: {error}") from None


def vllm_prefix_cache(metrics: str) -> str | None:
    """vLLM's prefix-cache hit rate from its Prometheus text (``vllm:prefix_cache_hits_total`` over
    ``vllm:prefix_cache_queries_total``, in tokens, since the server started), or None if absent."""
    totals: dict[str, float] = {}
    for line in metrics.splitlines():
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in ("vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total"):
            try:
                totals[name] = totals.get(name, 0.0) + float(line.rsplit(" ", 1)[1])
            except (IndexError, ValueError):
                continue
    queries = totals.get("vllm:prefix_cache_queries_total")
    if not queries:
        return None
    hits = totals.get("vllm:prefix_cache_hits_total", 0.0)
    return (f"server prefix cache (vLLM, since it started): {hits:.0f} of {queries:.0f} prompt tokens found cached "
            f"({100 * hits / queries:.1f}%)")


def prefix_cache_report(url: str) -> str:
    """What the server says about prefix-cache reuse (llama-cpp-python's server: nothing, said so)."""
    import httpx

    root = url.removesuffix("/v1")
    try:
        response = httpx.get(root + "/metrics", timeout=5, trust_env=False)  # loopback: never via a proxy
    except httpx.TransportError:
        response = None
    if response is not None and response.status_code == 200:
        vllm = vllm_prefix_cache(response.text)
        if vllm is not None:
            return vllm
        lines = [x for x in response.text.splitlines() if "cache" in x.lower() and not x.startswith("#")]
        if lines:
            return "server prefix-cache counters: " + "; ".join(lines)
    return ("server prefix-cache reuse: not reported (llama-cpp-python's server exposes no cache counters; "
            "it keeps the previous prompt's key/values, so requests sent in shared-prefix order reuse them)")


def run_inprocess(model: str, requests: Sequence[Any], threads: int, cache_path: Path,
                  backend: str = "llamacpp") -> tuple[float, np.ndarray]:
    from nlgjudge.cache import OutputCache
    from nlgjudge.engine import Judge

    cache = OutputCache(cache_path)
    if backend == "torch":
        judge = Judge(model, cache=cache, progress=False, backend="torch", device="cpu", dtype="float32")
    else:
        judge = Judge(model, cache=cache, progress=False, backend="llamacpp", threads=threads)
    judge.load()
    start = time.perf_counter()
    results = judge.label_probs(list(requests))
    seconds = time.perf_counter() - start
    assert judge.last_run.from_cache == 0
    cache.close()
    del judge
    gc.collect()  # the in-process model leaves before the server's arrives
    return seconds, np.array([r.probs[0] for r in results])


def run_library_path(model: str, requests: Sequence[Any], threads: int) -> tuple[float, np.ndarray, int]:
    """The served requests through llama-cpp-python's completion code in this process (no HTTP).

    The ``Llama`` is built with the server's settings (``logits_all=True``, n_ctx 4096, its default
    batch sizes) and asked what the served runtime asks: a 1-token completion of the same prompt
    text with the top-k log-probabilities and end-of-text banned, in the judge's prompt order.
    Returns the time, P(A) (NaN where a label was outside the top-k; their count is returned too).
    """
    from nlgjudge.engine.llamacpp.loading import load_tokenizer, require_working_runtime

    require_working_runtime()  # a library that crashes on this CPU is named, not run
    from llama_cpp import Llama

    from nlgjudge.engine.judge import normalise
    from nlgjudge.engine.prompting import encode_labels, render_prompt
    from nlgjudge.engine.server.capabilities import FORCE_BIAS
    from nlgjudge.engine.server.runtime import DEFAULT_TOP_LOGPROBS
    from nlgjudge.engine.server.scoring import piece_texts
    from nlgjudge.models.packaged import PACKAGED_MODELS, gguf_path

    spec = PACKAGED_MODELS[model]
    path = str(gguf_path(spec))
    tokenizer = load_tokenizer(spec.name, path)
    items = []
    for r in requests:
        text, _ = render_prompt(tokenizer, r.prompt, r.response_prefix)
        items.append((text, [piece_texts(tokenizer, ids) for ids in encode_labels(tokenizer, r.labels, r.label_end)]))
    order = sorted(range(len(items)), key=lambda i: items[i][0])  # neighbours share a prefix, as served
    llm = Llama(model_path=path, n_ctx=4096, n_threads=threads, n_threads_batch=threads, logits_all=True, verbose=False)
    ban_eos = {llm.token_eos(): -FORCE_BIAS}
    p_a = np.full(len(items), np.nan)
    start = time.perf_counter()
    for i in order:
        text, labels = items[i]
        out = llm.create_completion(text, max_tokens=1, temperature=0.0, logprobs=DEFAULT_TOP_LOGPROBS, logit_bias=ban_eos)
        top = (out["choices"][0].get("logprobs") or {}).get("top_logprobs") or [None]
        values = [(top[0] or {}).get(pieces[0]) if len(pieces) == 1 else None for pieces in labels]
        if all(v is not None for v in values):
            p_a[i] = normalise(np.array(values, dtype=float))[0]  # the judge's own P(A)
    seconds = time.perf_counter() - start
    del llm
    gc.collect()  # this model leaves before the server's arrives
    return seconds, p_a, int(np.isnan(p_a).sum())


def run_served(model: str, requests: Sequence[Any], threads: int, cache_path: Path, port: int | None,
               max_concurrency: int = 4) -> tuple[float, np.ndarray, str]:
    from nlgjudge.models.packaged import PACKAGED_MODELS

    spec = PACKAGED_MODELS[model]
    proc, url = start_server(model, threads, port or free_port())
    try:
        # llama-cpp-python's server reports no identity: the keys name the file it was started on.
        seconds, p_a, reuse = judge_served(model, url, requests, cache_path, max_concurrency,
                                           identity=f"{spec.gguf_file} sha256 {spec.sha256} n_ctx 4096")
    finally:
        stop_server(proc)
    return seconds, p_a, reuse


def judge_served(served_name: str, url: str, requests: Sequence[Any], cache_path: Path, max_concurrency: int,
                 identity: str | None, tokenizer: str | None = None) -> tuple[float, np.ndarray, str]:
    """Time the served runtime on ``requests`` through the server at ``url`` on a fresh cache."""
    from nlgjudge.cache import OutputCache
    from nlgjudge.engine import Judge

    cache = OutputCache(cache_path)
    judge = Judge(served_name, cache=cache, progress=False, backend="server", server_url=url,
                  server_tokenizer=tokenizer, max_concurrency=max_concurrency, server_identity=identity)
    judge.load()  # the one capabilities probe, untimed as the in-process load is
    start = time.perf_counter()
    results = judge.label_probs(list(requests))
    seconds = time.perf_counter() - start
    assert judge.last_run.from_cache == 0
    cache.close()
    return seconds, np.array([r.probs[0] for r in results]), prefix_cache_report(url)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="SmolLM2-135M, 5 candidates, coherence only")
    parser.add_argument("--model", default=None, help="a packaged GGUF model (default: qwen2.5-coder-1.5b-instruct; --quick: smollm2-135m-instruct)")
    parser.add_argument("--context", type=int, default=0, help="index of the SummEval article")
    parser.add_argument("--candidates", type=int, default=None, help="the article's first N candidates only (--quick: 5)")
    parser.add_argument("--aspects", nargs="*", default=None, help="SummEval aspects (default: all four; --quick: COH)")
    parser.add_argument("--threads", type=int, default=None, help="threads for both runtimes (default: the usable cores)")
    parser.add_argument("--port", type=int, default=None, help="the server's port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--max-concurrency", type=int, default=4, help="requests in flight to the server (default: 4)")
    parser.add_argument("--no-library-path", action="store_true",
                        help="skip the third side: the server's library code in-process, without HTTP")
    parser.add_argument("--engine", choices=("llamacpp", "vllm"), default="llamacpp",
                        help="the server the benchmark starts: llama-cpp-python's on the GGUF file (default), or vLLM's "
                        "CPU build (make install-vllm) on the torch runtime's converted folder in float32")
    parser.add_argument("--no-llamacpp", action="store_true",
                        help="with --engine vllm: skip the in-process llama.cpp side reported beside torch")
    parser.add_argument("--server-url", default=None,
                        help="benchmark this already running server (e.g. vLLM at http://127.0.0.1:8000/v1) instead of "
                        "starting llama-cpp-python's; --model names the packaged model whose weights it serves")
    parser.add_argument("--server-name", default=None,
                        help="with --server-url: the name the server serves the model under (default: --model)")
    parser.add_argument("--server-tokenizer", default=None,
                        help="with --server-url: the tokenizer that builds the prompts (default: --model's)")
    parser.add_argument("--server-identity", default=None,
                        help="with --server-url: what names the served weights in the (temporary) cache keys, for a "
                        "server that reports no system_fingerprint")
    parser.add_argument("--inprocess", choices=("torch", "llamacpp"), default=None,
                        help="with --server-url: the in-process runtime on the same weights (default torch: a vLLM "
                        "server of the torch runtime's converted folder in float32)")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    running_only = [name for name, value in (("--server-name", args.server_name), ("--server-tokenizer", args.server_tokenizer),
                                             ("--server-identity", args.server_identity), ("--inprocess", args.inprocess))
                    if value is not None]
    if args.server_url is not None and args.engine != "llamacpp":
        parser.error("--engine chooses the server the benchmark starts; with --server-url the server runs already")
    if args.no_llamacpp and args.engine != "vllm":
        parser.error("--no-llamacpp is for --engine vllm")
    if args.server_url is None and running_only:
        parser.error(f"{running_only[0]} is for a running server: pass --server-url too")
    if args.server_url is not None and args.port is not None:
        parser.error("--port chooses where the benchmark starts its own server; with --server-url the server runs already")
    if args.server_url is not None:
        from nlgjudge.engine.server.client import ServerError, base_url

        try:
            base_url(args.server_url)
        except ServerError as error:
            parser.error(f"--server-url: {error}")
    if args.candidates is not None and args.candidates < 2:
        parser.error(f"--candidates must be at least 2, got {args.candidates}")
    if args.threads is not None and args.threads < 1:
        parser.error(f"--threads must be at least 1, got {args.threads}")
    if args.max_concurrency < 1:
        parser.error(f"--max-concurrency must be at least 1, got {args.max_concurrency}")

    from nlgjudge.bench.engine import one_article
    from nlgjudge.data import load_dataset
    from nlgjudge.engine.llamacpp import thread_count
    from nlgjudge.engine.server.runtime import DEFAULT_TOP_LOGPROBS
    from nlgjudge.models import PACKAGED_MODELS, resolve_model
    from nlgjudge.studies.comparative import comparative_requests
    from nlgjudge.studies.prompting import prompt_style

    model = args.model or ("smollm2-135m-instruct" if args.quick else "qwen2.5-coder-1.5b-instruct")
    spec = PACKAGED_MODELS.get(model)
    if spec is None or spec.gguf_file is None or spec.kind != "causal":
        parser.error(f"--model must be a packaged GGUF model ({', '.join(n for n, m in PACKAGED_MODELS.items() if m.gguf_file)}), got {model!r}")
    candidates = args.candidates if args.candidates is not None else (5 if args.quick else None)
    aspects = args.aspects if args.aspects is not None else (["COH"] if args.quick else None)
    threads = thread_count(args.threads)
    one = one_article(load_dataset("summeval"), args.context, candidates)
    requests, _ = comparative_requests(one, aspects=aspects, templates=[1], style=prompt_style(resolve_model(model)))
    where = (f"the running server at {redact(args.server_url)} vs {args.inprocess or 'torch'} in-process, each side on a "
             "fresh cache" if args.server_url is not None else
             f"{threads} threads on each side; one model process at a time, each side on a fresh cache")
    print(f"model {model}; SummEval article {one.context_ids()[0]}: {len(one.frame)} candidates, {len(requests)} comparisons; "
          f"{where}")

    if args.server_url is not None:
        return bench_running_server(args, model, requests, threads)
    if args.engine == "vllm":
        return bench_launched_vllm(args, model, requests, threads)

    with tempfile.TemporaryDirectory(prefix="nlgjudge-bench-server-") as tmp:
        t_in, p_in = run_inprocess(model, requests, threads, Path(tmp) / "inprocess.sqlite")
        library = None if args.no_library_path else run_library_path(model, requests, threads)
        t_srv, p_srv, reuse = run_served(model, requests, threads, Path(tmp) / "server.sqlite", args.port,
                                         max_concurrency=args.max_concurrency)
    n = len(requests)
    if library is not None:
        t_lib, p_lib, outside = library
    print_rates(n, [("llama.cpp in-process", t_in),
                    *([("llama-cpp-python server code, no HTTP", t_lib)] if library is not None else []),
                    ("llama.cpp server (HTTP, same GGUF)", t_srv)])
    if library is not None:
        print(f"where the server's time goes: its library path in-process / in-process runtime = {t_in / t_lib:.2f} "
              "(llama-cpp-python's completion code with logits_all=True), served / its library path = "
              f"{t_lib / t_srv:.2f} (HTTP, JSON and the client)")
        if outside:
            print(f"library path: {outside} of {n} comparisons had a label outside the top-{DEFAULT_TOP_LOGPROBS} log-probabilities (left out of the differences below)")
        kept = ~np.isnan(p_lib)
        if kept.any():
            print(f"largest |P(A)| difference: library path vs in-process {float(np.max(np.abs(p_lib[kept] - p_in[kept]))):.2e}, "
                  f"served vs library path {float(np.max(np.abs(p_srv[kept] - p_lib[kept]))):.2e}")
    print(reuse)
    print("caveat: CPU time is shared with other processes on this machine; time it on a quiet machine")
    print(final_line(t_in, t_srv, p_in, p_srv))
    return 0


def print_rates(n: int, rows: Sequence[tuple[str, float]]) -> None:
    """The report's table: one row per runtime, its median seconds and comparisons per second."""
    print(f"{'runtime':<40} {'time s':>8} {'comparisons/s':>14}")
    for label, seconds in rows:
        print(f"{label:<40} {seconds:>8.1f} {n / seconds:>14.3f}")


def bench_launched_vllm(args: argparse.Namespace, model: str, requests: Sequence[Any], threads: int) -> int:
    """torch in-process, llama.cpp in-process, then vLLM started here on the torch runtime's folder."""
    from nlgjudge.models.handle import converted_dir
    from nlgjudge.models.packaged import PACKAGED_MODELS

    n = len(requests)
    with tempfile.TemporaryDirectory(prefix="nlgjudge-bench-server-") as tmp:
        t_torch, p_torch = run_inprocess(model, requests, threads, Path(tmp) / "torch.sqlite", backend="torch")
        llama = None
        if not args.no_llamacpp:
            llama = run_inprocess(model, requests, threads, Path(tmp) / "llamacpp.sqlite", backend="llamacpp")
        folder = converted_dir(PACKAGED_MODELS[model])  # the torch side converted it
        log = Path(tmp) / "vllm.log"
        try:
            proc, url = start_vllm_server(folder, model, port=args.port, log_path=log)
        except ServerUnavailableError as error:
            raise SystemExit(f"{PROG}: {error}") from None
        try:
            t_srv, p_srv, reuse = judge_served(model, url, requests, Path(tmp) / "server.sqlite", args.max_concurrency,
                                               identity=None, tokenizer=str(folder))
        finally:
            stop_server(proc)
    print_rates(n, [("torch in-process (fp32, same weights)", t_torch),
                    *([("llama.cpp in-process (GGUF)", llama[0])] if llama is not None else []),
                    ("vLLM CPU server (HTTP, fp32)", t_srv)])
    if llama is not None:
        print(f"vLLM served vs llama.cpp in-process: {llama[0] / t_srv:.2f}x; largest |P(A)| difference llama.cpp vs "
              f"torch {float(np.max(np.abs(llama[1] - p_torch))):.2e} (the quantised GGUF vs its de-quantised copy)")
    print(reuse)
    print("caveat: CPU time is shared with other processes on this machine; time it on a quiet machine")
    print(final_line(t_torch, t_srv, p_torch, p_srv))
    return 0


def bench_running_server(args: argparse.Namespace, model: str, requests: Sequence[Any], threads: int) -> int:
    """The running server at ``--server-url`` against the in-process runtime on the same weights."""
    from nlgjudge.engine.server.client import ServerError

    backend = args.inprocess or "torch"
    served_name = args.server_name or model
    n = len(requests)
    with tempfile.TemporaryDirectory(prefix="nlgjudge-bench-server-") as tmp:
        try:  # the server first: a wrong URL or name fails in seconds, before the in-process run
            t_srv, p_srv, reuse = judge_served(served_name, args.server_url, requests, Path(tmp) / "server.sqlite",
                                               args.max_concurrency, args.server_identity or "benchmark (temporary cache)",
                                               args.server_tokenizer or model)
        except ServerError as error:
            raise SystemExit(f"{PROG}: {error}") from None
        t_in, p_in = run_inprocess(model, requests, threads, Path(tmp) / "inprocess.sqlite", backend=backend)
    inprocess = {"torch": "torch in-process (fp32, same weights)", "llamacpp": "llama.cpp in-process (same GGUF)"}[backend]
    print_rates(n, [(inprocess, t_in), ("running server (HTTP)", t_srv)])
    print(reuse)
    print("caveat: the running server shares this machine's CPU with the in-process side; time it on a quiet machine")
    print(final_line(t_in, t_srv, p_in, p_srv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
