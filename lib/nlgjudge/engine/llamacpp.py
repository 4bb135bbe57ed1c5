"""The llama.cpp runtime: the judge's four operations on the packaged GGUF files, as shipped.

``Judge(model, backend="llamacpp")`` (the default, ``"auto"``, for the packaged GGUF models) runs
the quantised GGUF file itself through llama-cpp-python's low-level API (``llama_batch``,
``llama_decode``, ``llama_get_logits_ith``, ``llama_memory_seq_cp`` / ``llama_memory_seq_rm``)
instead of de-quantising it to fp32 for torch. Requests, results, cache and token ids are the
torch path's: prompts are tokenised by the same Hugging Face tokenizer (read from the GGUF file;
llama.cpp's own tokenizer gives the same ids on the chat prompts tried), so both runtimes see
identical token ids; only the forward pass differs. One context per model and thread count,
shared by the judges that use it, with a *unified* KV cache (one pool of cells for all
sequences, so a sequence copy shares cells instead of copying data).

**Prefix sharing for scoring** (label probabilities, log-likelihoods). The requests of a chunk go
into the same token radix tree as the torch path (:mod:`nlgjudge.engine.tree`); logits are asked
for only at the positions scored (the last prompt token, each label token but the last). Two
schemes compute the tree (``LlamaCppRunner(scheme=...)``, or ``NLGJUDGE_LLAMACPP_SCHEME``):

- ``"sequential"`` (default): depth first on one KV sequence, the *trunk*: each node is decoded
  right after its parent's tokens, after ``seq_rm`` of the previous sibling's, together with its
  first child (and that child's first child, ...) while they fit one batch; so each node is
  computed once, in prompt order, in as few calls as a prompt cache would need (llama-server's
  ``cache_prompt``), and the trunk (the last path) stays for the next chunk or call. When the
  prefix a run would reuse lies above free cells (where a sampling group may leave it), every
  batch of the run would fill those cells with scratch rows, so that prefix is computed again
  from cell 0 instead (``python -m nlgjudge.bench_floating_trunk``: WebNLG label probabilities
  right after sampling, 2008 rows against 7744, 45.6 s against 100.1 s, same bits; one run).
  Short sibling leaves (a prompt's score-word continuations " 1" ... " 9") are computed side by
  side in one call, each recomputing the parent's partial last block, instead of one call each
  (``python -m nlgjudge.bench_label_leaves --repeats 3``: 32 SummEval expected-score prompts of the
  judge, 66 calls and 5576 rows against 290 and 3528, medians 75.3 s against 86.9 s, 1.15x, same
  bits);
- ``"parallel"``: sibling nodes (the "Summary B" continuations of a context and "Summary A", the
  aspect questions of a pair, the label continuations) are decoded side by side as parallel
  sequences in one ``llama_decode`` batch of up to ``n_batch`` tokens, each on its own sequence
  made by ``seq_cp`` of its parent's; children follow depth first.

Measured on the judge (Qwen2.5-Coder-1.5B-Instruct, one SummEval article, 8 candidates = 56
ordered pairs x 4 aspects = 224 comparisons, 2 threads, a quiet machine, one run;
``make bench BENCH_ARGS="--compare-backends --candidates 8 --generate 4 --max-new-tokens 60"``):
sequential 100.9 s, parallel 195.8 s, the plain prompt-cache loop
(:func:`prefix_cache_loop_label_logprobs`) 112.1 s, the torch engine 225.8 s (batches then padded
to 16 rows; medians of 3 runs with 8-row padding, ``--repeats 3 --default-scheme-only``:
sequential 100.4 s, loop 101.1 s, torch 198.2 s). At the issue's own setting (all 16 candidates =
240 ordered pairs x COH, ``--aspects COH --repeats 3 --default-scheme-only``, 2026-11-26, medians):
sequential 237.5 s, loop 234.5 s, torch 467.6 s, the same 19101 tokens on every side; the
loop's 1.02 comparisons/s are below the issue's 1.36 because this machine's llama.cpp prefill
is ~90 tokens/s at 128-512-token batches (not the issue's 165), and neither flash attention nor
the row padding explains the gap (both on, both off: within 5% on 32 of these prompts). The parallel scheme
loses because llama.cpp's throughput on this CPU is nearly flat above ~32 tokens per batch
(Qwen2.5-0.5B, 1 thread: 54 tokens/s at 16, 65 at 64, 62 at 496; 2 threads: 93, 108, 111), so
larger batches gain little, while the exact layout below costs the parallel scheme about 7 extra
tokens per tree node (10139 tokens computed against 7679 here) and its sequences attend over more
cells. Sequential is the default; the benchmark prints both (``--repeats R`` for medians), so the
choice can be revisited on another machine.

**Exact, batch-independent numerics.** llama.cpp's CPU kernels give results that depend on how
work is laid out: (a) rows beyond the last multiple of 8 of a batch, and batches of fewer than 8
rows, go through other matrix kernels (up to 0.3 difference in a log-probability, measured), and (b) the
attention softmax sums key cells in SIMD chunks of 8 (16 with AVX-512), so a sequence whose cells
sit at another offset modulo 8 gets other roundings, which the 8-bit activation quantisation
amplifies (again up to 0.3). Flash attention is worse (its CPU kernel depends on batch size and
thread count) and is turned off. So every batch is padded to a multiple of 8 rows with throw-away
tokens on a scratch sequence (8 also with AVX-512, where cell blocks are 16 wide), the rows that
ask for logits are padded to a multiple of 8 too (the output layer only sees those rows, so its
kernel depends on their count: without this, on Qwen2.5-Coder-1.5B, the same sampling requests in
other chunks read next-token scores up to 0.018 apart -- the inputs sampling draws from: the
log-probabilities of the first answer token, the logits of the next ones;
``tests/test_engine_llamacpp_row_padding.py`` fails without it), and every sequence is laid out exactly as it would
lie alone in an empty cache: each aligned block of 8 (16) positions in an aligned block of 8 (16)
cells, blocks in increasing order. The runner mirrors llama.cpp's cell allocator (:class:`_Cells`: the rules of
``llama_kv_cache::find_slot`` / ``apply_ubatch`` / ``seq_rm`` in the pinned release) to know where
each token will land, and steers it with scratch tokens where needed; a parallel node recomputes
the at most 7 tokens of its parent's last, partial block. Result: every output is bitwise the
output of its sequence computed alone -- independent of chunking, batching, the other requests
in the chunk, the scheme and the prompt cache, and identical after a kill and resume (tested
on SmolLM2-135M, whose kernels do not depend on the row count at all, and on
Qwen2.5-Coder-1.5B, whose do: chunking, the two schemes, padding to 8 or 16 rows).
The output rows are padded from commit 16ae99d (2026-11-25) on. The llama.cpp outputs
released before (the Elo, narcissism and self-preference chapters', and issue 12's first
recomputation) were computed without it: on the Qwen models their values depend on the batch they
were computed in (measured on the 1.5B judge only: up to 0.018 in a next-token score, one article's
16 sampling prompts, above; SmolLM2's do not). They stay released under the same cache keys;
computing them again gives the batch-independent values, which differ from them by noise of that
size in a probability or likelihood, and outright where such noise changes a sampled token (an
answer, and so a sampled score). Which released outputs are from before the commit is listed in
the README.
Sliding-window models (Gemma 3) keep a second cache for their local layers in which llama.cpp
recycles cells that leave the window, so sharing or rolling back key/values is unsafe there:
each of their sequences is computed alone from position 0 (as the torch path does for sequences
longer than the window), and their results are exact only up to float noise.

**Sampling and generation.** Prompts are computed through the tree (the parallel scheme, with
kept nodes: the KV sequence at each prompt's end and its full next-token log-probabilities);
every sample of every job is then a parallel sequence (``seq_cp`` of its prompt's), and one
``llama_decode`` per step advances all of them. To keep the layout exact, each sample reserves
the 8 cells of its current block with scratch tokens that are dropped one by one as it fills
them; this costs about one extra row per sample and step on average, the price of generation
that does not depend on batching. Jobs go in groups sized to the context, each group on the cache
as the last one left it (the trunk keeps their shared prefix); a group that finds no room (a
sequence's blocks climb through the cells, so fragments left high up can leave a long prompt none)
starts again on an empty cache, with the same results; a step whose new blocks do not fit one batch, as
with fragmented free cells, takes several, with the same results. Tokens are drawn in numpy from the logits with one
``numpy.random.Generator`` per request seeded with the request's seed, in a fixed order (step by
step, the request's samples in order), so a request's samples depend on nothing else in its
batch or chunk; temperature 0 is greedy (argmax). Stop tokens are the model's and the
tokenizer's end-of-sequence ids, as in torch. Samples of one request that drew the same tokens so
far could share one sequence until they part (a sample that parts recomputes the shared
sequence's last, partial block). Tried: on 16 SummEval scoring prompts of Qwen2.5-Coder-1.5B (10
samples each) it computed 14% fewer rows, but its samples read logits up to 3.3e-6 from the
token-by-token ones, so it was dropped; that was measured before the output rows were padded,
which may have been the cause, so it deserves another try.

**Threads.** ``n_threads`` (generation) and ``n_threads_batch`` (prompts) are the cores this
process may really use, ``len(os.sched_getaffinity(0))``, unless overridden by the ``threads``
argument (``Judge(..., threads=n)``) or the ``NLGJUDGE_THREADS`` environment variable. llama.cpp's
worker threads spin-wait between operations: with other busy processes on the same cores its
prompt throughput falls steeply (measured 165 -> 42 tokens/s on 2 shared cores), so on a shared
machine use fewer threads than cores, or run one model process at a time. The thread count does
not change the results.

**Numerics against torch.** llama.cpp computes with the quantised weights (activations quantised
to 8 bits for the dot products, an f16 KV cache), torch with de-quantised fp32 weights: label
log-probabilities differ by a few hundredths (SmolLM2: P(A) within 0.05; see the bounds tested
in ``tests/test_engine_llamacpp_smollm2.py``). Outputs of the two runtimes never mix in the
cache: llama.cpp keys carry ``|runtime=llama.cpp`` in their fingerprint (torch keys unchanged).
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import threading
import weakref
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nlgjudge.engine.stats import ForwardStats
from nlgjudge.engine.tree import DecodeJob, PrefixTree, TreeNode

log = logging.getLogger(__name__)

#: The llama-cpp-python release this backend is written and tested against (environment.yml).
PINNED_VERSION = "0.3.36"
THREADS_ENV = "NLGJUDGE_THREADS"
#: Fingerprint suffix of llama.cpp cache keys (torch keys have none, so they stay as they were).
FINGERPRINT_SUFFIX = "|runtime=llama.cpp"
TRUNK = 0  # KV sequence that keeps the last computed path between runs (a prompt cache)
#: From this commit on, the rows that ask for logits are padded too (see the module docstring):
#: llama.cpp outputs released before it carry batch-dependent noise where the kernels depend on
#: the row count.
OUTPUT_PADDING_COMMIT = "16ae99d"
#: That noise as measured before the commit, and the model: the largest difference between two
#: chunkings of the same sampling requests in the next-token scores sampling draws from
#: (log-probabilities of the first answer token, logits after; one SummEval article, 16 prompts x 10
#: samples), with the engine of commit 7af7988.
UNPADDED_OUTPUT_NOISE = (0.018, "qwen2.5-coder-1.5b-instruct")


class KVCacheFullError(RuntimeError):
    """The KV cache has no room for the next block or batch (see :meth:`LlamaCppModel.place`)."""


class BackendUnavailableError(ImportError):
    """The llama.cpp backend was chosen but llama-cpp-python is not importable."""


def install_hint() -> str:
    return (
        "Install it with `make install-backend` (or `python .ci/install.py --with-backend`, or "
        f"`pip install llama-cpp-python=={PINNED_VERSION}`; it compiles llama.cpp from source, about 7 minutes "
        "on 2 cores), or create the judge with backend=\"torch\" (transformers, weights de-quantised to fp32)."
    )


def is_available() -> bool:
    """True when llama-cpp-python is installed (checked without importing it)."""
    return importlib.util.find_spec("llama_cpp") is not None


def import_llama_cpp() -> Any:
    """The ``llama_cpp`` module, or :class:`BackendUnavailableError` saying how to get it."""
    try:
        import llama_cpp
    except ImportError as err:
        raise BackendUnavailableError(
            f"The llama.cpp backend needs the package llama-cpp-python, which cannot be imported here ({err}). "
            + install_hint()
        ) from err
    return llama_cpp


def version() -> str | None:
    """The installed llama-cpp-python version (None when it is not installed)."""
    from importlib import metadata

    try:
        return metadata.version("llama-cpp-python")
    except metadata.PackageNotFoundError:
        return None


def thread_count(threads: int | None = None) -> int:
    """Threads for llama.cpp: ``threads``, else ``$NLGJUDGE_THREADS``, else the usable cores."""
    source = "threads"
    if threads is None:
        env = os.environ.get(THREADS_ENV, "").strip()
        if env:
            source = THREADS_ENV
            try:
                threads = int(env)
            except ValueError:
                raise ValueError(f"{THREADS_ENV}={env!r} is not a whole number of threads; set e.g. {THREADS_ENV}=2") from None
        else:
            threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if not isinstance(threads, int) or isinstance(threads, bool) or threads < 1:
        raise ValueError(f"{source} must be a whole number >= 1, got {threads!r}")
    return threads


def _log_softmax_rows(logits: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax in float64 (the logits come as float32)."""
    x = logits.astype(np.float64)
    m = x.max(axis=-1, keepdims=True)
    return x - (m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))


# ---- the KV cell allocator, mirrored ---------------------------------------------------------------
class _Cells:
    """A mirror of llama.cpp's cell bookkeeping for one unified KV cache (no data, just indices).

    Follows ``llama_kv_cache::find_slot`` (non-contiguous slots: the first free cells scanning up
    from ``head``, wrapping; from 0 when ``head > used + 2 * n_tokens``), ``apply_ubatch`` (``head``
    moves past the last cell taken), ``seq_cp`` (cells gain a sequence) and ``seq_rm`` (cells lose
    one; ``head`` moves down to the first cell freed). Every operation on the context goes through
    here too, so the runner knows in which cell each token will land before it decodes.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.count = np.zeros(size, dtype=np.int32)  # sequences holding each cell
        self.head = 0
        self.used = 0
        self.members: dict[int, dict[int, int]] = {}  # sequence -> {position: cell}

    def clear(self) -> None:
        self.count[:] = 0
        self.head = 0
        self.used = 0
        self.members = {}

    def scan(self, n_tokens: int) -> np.ndarray:
        """Free cells in the order ``find_slot`` takes them for a batch of ``n_tokens``."""
        start = 0 if self.head > self.used + 2 * n_tokens else self.head
        free = np.flatnonzero(self.count == 0)
        return np.concatenate([free[free >= start], free[free < start]])

    def would_restart(self, n_tokens: int) -> bool:
        return self.head > self.used + 2 * n_tokens

    def apply(self, cells: Sequence[int], seqs: Sequence[int], positions: Sequence[int]) -> None:
        for cell, seq, pos in zip(cells, seqs, positions, strict=True):
            if self.count[cell] != 0:  # pragma: no cover - the mirror only hands out free cells
                raise RuntimeError(f"KV mirror out of step: cell {cell} is not free")
            self.count[cell] = 1
            self.members.setdefault(seq, {})[pos] = int(cell)
        self.used += len(cells)
        self.head = int(cells[-1]) + 1

    def copy(self, src: int, dst: int, end: int) -> None:
        target = self.members.setdefault(dst, {})
        held = set(target.values())
        for pos, cell in self.members.get(src, {}).items():
            if pos < end and cell not in held:
                target[pos] = cell
                self.count[cell] += 1

    def drop(self, seq: int, start: int = 0, stop: int | None = None) -> None:
        held = self.members.get(seq)
        if not held:
            return
        gone = [pos for pos in held if pos >= start and (stop is None or pos < stop)]
        freed = []
        for pos in gone:
            cell = held.pop(pos)
            self.count[cell] -= 1
            if self.count[cell] == 0:
                freed.append(cell)
        if freed:
            self.used -= len(freed)
            self.head = min(self.head, min(freed))

    def max_cell(self, seq: int) -> int:
        held = self.members.get(seq)
        return max(held.values()) if held else -1

    def max_pos(self, seq: int) -> int:
        held = self.members.get(seq)
        return max(held) if held else -1


@dataclass
class _Row:
    """One token of a batch: id, position, sequence, whether its logits are wanted."""

    token: int
    pos: int
    seq: int
    output: bool = False


@dataclass
class _Block:
    """Tokens of one sequence at positions ``[a, a + k)``, ``a`` a multiple of the alignment,
    ``k`` at most the alignment, placed in consecutive cells starting at an aligned cell above
    every cell the sequence already holds; ``rows`` may end with scratch rows (reservations)."""

    seq: int
    rows: list[_Row]
    tag: Any = None
    cell: int = -1  # where it was placed


# ---- the model and its context ------------------------------------------------------------------
class LlamaCppModel:
    """One GGUF model loaded by llama.cpp, with one context (unified KV cache, many sequences).

    A thin wrapper over the low-level API: :meth:`decode_placed` fills a ``llama_batch`` and
    calls ``llama_decode``; :meth:`copy` and :meth:`drop` are ``llama_memory_seq_cp`` /
    ``llama_memory_seq_rm``; :meth:`place` lays blocks out in the cache (see the module
    docstring). Not thread-safe: judges sharing it take :attr:`lock`.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        threads: int | None = None,
        n_ctx: int = 8192,
        n_batch: int = 512,
        n_seq_max: int = 256,
        flash_attn: bool = False,
    ) -> None:
        lc = import_llama_cpp()
        _quiet_llama_cpp()
        self._lc = lc
        self.path = Path(path)
        self.threads = thread_count(threads)
        self.n_seq_max = int(min(n_seq_max, 256))
        self.flash_attn = flash_attn
        self.lock = threading.RLock()
        self.stats = ForwardStats()
        lc.llama_backend_init()
        info = lc.llama_print_system_info().decode(errors="replace")
        #: Block size of the cell layout: the SIMD width of llama.cpp's softmax sums.
        self.align = 16 if "AVX512 = 1" in info else 8
        #: Batches are padded to a multiple of this many rows: batches of fewer than 8 rows, and rows
        #: beyond the last multiple of 8, go through other matrix kernels (Qwen2.5-Coder-1.5B Q4_K_M on
        #: this AVX-512 machine: 1-7 rows change a logit by up to 0.29; 8-20 rows give the same bits).
        self.row_align = 8
        #: The rows that ask for logits are padded to a multiple of row_align too (False only for the
        #: negative control in tests/test_engine_llamacpp_row_padding.py: the engine before 16ae99d).
        self.pad_output_rows = True
        self.n_batch = max(self.align, int(n_batch) // self.align * self.align)
        params = lc.llama_model_default_params()
        params.n_gpu_layers = 0
        self._model = lc.llama_model_load_from_file(str(self.path).encode(), params)
        if not self._model:
            raise RuntimeError(f"llama.cpp could not load the GGUF file {self.path}; is it complete and a GGUF model?")
        self._vocab = lc.llama_model_get_vocab(self._model)
        self.n_vocab = int(lc.llama_vocab_n_tokens(self._vocab))
        self.n_ctx_train = int(lc.llama_model_n_ctx_train(self._model))
        self.n_swa = int(lc.llama_model_n_swa(self._model))
        eos = int(lc.llama_vocab_eos(self._vocab))
        self.eos_ids = {eos} if eos >= 0 else set()
        self._ctx: Any = None
        self._batch: Any = None
        self.n_ctx = 0
        self.trunk: list[int] = []  # tokens whose key/values sequence TRUNK holds
        self._create_context(n_ctx)

    # -- context ------------------------------------------------------------------------------
    def _create_context(self, n_ctx: int) -> None:
        lc = self._lc
        self._free_context()
        params = lc.llama_context_default_params()
        params.n_ctx = int(n_ctx)
        params.n_batch = self.n_batch
        params.n_ubatch = self.n_batch  # one batch = one ubatch: the layout is planned per ubatch
        params.n_seq_max = self.n_seq_max
        params.n_threads = self.threads
        params.n_threads_batch = self.threads
        params.kv_unified = True  # one cell pool: a sequence copy shares cells instead of copying data
        params.swa_full = True  # sliding-window models (Gemma 3): keep every cell, so prefixes can be shared
        params.no_perf = True
        # Flash attention off (llama.cpp's "auto" turns it on for CPUs): its CPU kernel depends on
        # the batch size and thread count (measured up to 0.65 in one log-probability).
        params.flash_attn_type = lc.LLAMA_FLASH_ATTN_TYPE_ENABLED if self.flash_attn else lc.LLAMA_FLASH_ATTN_TYPE_DISABLED
        ctx = lc.llama_init_from_model(self._model, params)
        if not ctx:
            raise RuntimeError(f"llama.cpp could not create a context of {n_ctx} tokens for {self.path.name} (memory?)")
        self._ctx = ctx
        self._mem = lc.llama_get_memory(ctx)
        self.n_ctx = int(lc.llama_n_ctx(ctx))
        self._batch = lc.llama_batch_init(self.n_batch, 0, 1)
        self._tokens = np.ctypeslib.as_array(self._batch.token, shape=(self.n_batch,))
        self._pos = np.ctypeslib.as_array(self._batch.pos, shape=(self.n_batch,))
        self._n_seq = np.ctypeslib.as_array(self._batch.n_seq_id, shape=(self.n_batch,))
        self._flags = np.ctypeslib.as_array(self._batch.logits, shape=(self.n_batch,))
        self._n_seq[:] = 1
        self.cells = _Cells(self.n_ctx)
        self.trunk = []
        self.scratch = self.n_seq_max - 1  # throw-away tokens that steer the layout (see place)
        self._free_seqs = list(range(self.n_seq_max - 2, 0, -1))  # 0 is the trunk; pop() gives the lowest

    def reset(self) -> None:
        """Forget every sequence (the KV cache empties; the next run starts without a prompt cache)."""
        with self.lock:
            self._lc.llama_memory_clear(self._mem, False)
            self.cells.clear()
            self.trunk = []
            self._free_seqs = list(range(self.n_seq_max - 2, 0, -1))

    def ensure_capacity(self, cells: int) -> None:
        """Grow the context (a new, empty KV cache) when ``cells`` would not fit in it."""
        if cells <= self.n_ctx:
            return
        size = -(-cells // 1024) * 1024
        log.info("llama.cpp context grows from %d to %d cells", self.n_ctx, size)
        self._create_context(size)

    def _free_context(self) -> None:
        if self._batch is not None:
            self._lc.llama_batch_free(self._batch)
            self._batch = None
        if self._ctx is not None:
            self._lc.llama_free(self._ctx)
            self._ctx = None

    def close(self) -> None:
        self._free_context()
        if getattr(self, "_model", None):
            self._lc.llama_model_free(self._model)
            self._model = None

    def __del__(self) -> None:  # pragma: no cover - interpreter shutdown order varies
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass

    # -- sequences ----------------------------------------------------------------------------
    def new_seq(self) -> int:
        if not self._free_seqs:
            raise RuntimeError(
                f"llama.cpp: all {self.n_seq_max - 2} KV sequences are in use (a very deep prefix tree or many "
                "samples at once); lower the Judge's chunk_size"
            )
        return self._free_seqs.pop()

    @property
    def free_seq_count(self) -> int:
        return len(self._free_seqs)

    def copy(self, src: int, dst: int, end: int) -> None:
        """Sequence ``dst`` also holds ``src``'s key/values of positions [0, end) (shared cells)."""
        if end <= 0:
            return
        self._lc.llama_memory_seq_cp(self._mem, src, dst, 0, end)
        self.cells.copy(src, dst, end)

    def drop(self, seq: int, start: int = 0, stop: int | None = None) -> None:
        """Forget positions [start, stop) of ``seq`` (cells no other sequence holds are freed)."""
        if not self._lc.llama_memory_seq_rm(self._mem, seq, start if start > 0 else -1, -1 if stop is None else stop):
            raise RuntimeError(f"llama.cpp refused to remove positions >= {start} of sequence {seq}")
        self.cells.drop(seq, start, stop)

    def free_cells_below(self, seq: int, end: int | None = None) -> int:
        """Free cells below the highest cell ``seq`` holds for positions before ``end`` (default: all);
        0 for a sequence laid from cell 0 up."""
        held = self.cells.members.get(seq, {})
        cells = [cell for pos, cell in held.items() if end is None or pos < end]
        return int(np.count_nonzero(self.cells.count[: max(cells) + 1] == 0)) if cells else 0

    @property
    def idle(self) -> bool:
        """No cell in use and no sequence id handed out: :meth:`reset` loses nothing."""
        return self.cells.used == 0 and len(self._free_seqs) == self.n_seq_max - 2

    def release(self, seq: int) -> None:
        if seq in self._free_seqs:  # a bookkeeping bug: the id may already serve another sequence
            raise RuntimeError(f"llama.cpp KV sequence {seq} released twice")
        self.drop(seq)
        if seq not in (TRUNK, self.scratch):
            self._free_seqs.append(seq)

    # -- layout and forward -------------------------------------------------------------------
    def pad(self) -> _Row:
        """A throw-away token on the scratch sequence; its position is set when it is decoded."""
        return _Row(0, -1, self.scratch)

    def place(
        self, blocks: Sequence[_Block], exact: dict[int, _Row] | None = None, n_max: int | None = None,
        pads_only: bool = False,
    ) -> tuple[list[_Row], list[int], list[_Block]]:
        """Lay out one batch: (rows, their cells, the blocks placed).

        ``exact`` rows must land in the given (free) cells; blocks go to the first aligned run of
        consecutive free cells above every cell their sequence holds, in order per sequence;
        scratch rows fill the cells in between and round the batch up to a multiple of the
        alignment. Blocks that do not fit in ``n_max`` rows are left for the next batch. When no
        block fits, that is an error, unless ``pads_only``: then the batch of scratch rows alone is
        returned (decoding it fills the fragmented cells, so the next batch gets further).
        """
        exact = dict(exact or {})
        n_max = min(n_max or self.n_batch, self.n_batch)
        plan = self._walk(self.cells.scan(n_max), blocks, exact, n_max)
        if self.cells.would_restart(len(plan[0])) != self.cells.would_restart(n_max):
            # find_slot's starting cell depends on the batch size; plan again for the size we got.
            trial = self._walk(self.cells.scan(len(plan[0])), blocks, exact, n_max)
            if self.cells.would_restart(len(trial[0])) == self.cells.would_restart(len(plan[0])):
                plan = trial
            else:  # pragma: no cover - rare: pad the first plan until its size agrees with its scan
                plan = self._walk(self.cells.scan(n_max), blocks, exact, n_max)
                rows, cells, placed = plan
                order = self.cells.scan(n_max)
                while self.cells.would_restart(len(rows)) and len(rows) + self.align <= self.n_batch:
                    for _ in range(self.align):
                        rows.append(self.pad())
                        cells.append(int(order[len(cells)]))
        rows, cells, placed = plan
        if len(placed) == 0 and not exact and blocks and not (pads_only and rows):
            raise KVCacheFullError(
                f"llama.cpp KV cache of {self.n_ctx} cells has no room for the next block; lower the Judge's "
                "chunk_size (or, when one request is too large, its samples or max_new_tokens)"
            )
        return plan

    def _walk(
        self, order: np.ndarray, blocks: Sequence[_Block], exact: dict[int, _Row], n_max: int
    ) -> tuple[list[_Row], list[int], list[_Block]]:
        a = self.align
        queues: dict[int, deque[_Block]] = {}
        for block in blocks:
            queues.setdefault(block.seq, deque()).append(block)
        floor = {seq: self.cells.max_cell(seq) for seq in queues}
        pending = len(blocks)
        waiting = dict(exact)
        rows: list[_Row] = []
        cells: list[int] = []
        placed: list[_Block] = []
        i, n = 0, len(order)
        while (pending or waiting) and i < n:
            cell = int(order[i])
            if cell in waiting:
                rows.append(waiting.pop(cell))
                cells.append(cell)
                i += 1
                continue
            room = n_max - len(rows) - len(waiting)
            if pending and cell % a == 0:
                chosen = None
                for seq, queue in queues.items():
                    if not queue:
                        continue
                    k = len(queue[0].rows)
                    if cell > floor[seq] and k <= room and i + k <= n and int(order[i + k - 1]) - cell == k - 1:
                        chosen = seq
                        break
                if chosen is not None:
                    block = queues[chosen].popleft()
                    block.cell = cell
                    k = len(block.rows)
                    rows.extend(block.rows)
                    cells.extend(int(c) for c in order[i : i + k])
                    floor[chosen] = cell + k - 1
                    placed.append(block)
                    pending -= 1
                    i += k
                    continue
            if room < 1 or (not pending and not waiting):
                break
            rows.append(self.pad())
            cells.append(cell)
            i += 1
        if waiting:
            raise RuntimeError(f"llama.cpp KV layout: cells {sorted(waiting)} were expected free")  # pragma: no cover
        while len(rows) % self.row_align:
            if i >= n:
                raise KVCacheFullError(
                    f"llama.cpp KV cache of {self.n_ctx} cells is full; lower the Judge's chunk_size (or, when one "
                    "request is too large, its samples or max_new_tokens)"
                )
            rows.append(self.pad())
            cells.append(int(order[i]))
            i += 1
        return rows, cells, placed

    def decode_placed(self, rows: Sequence[_Row], cells: Sequence[int]) -> None:
        """One ``llama_decode`` of a planned batch (its rows a multiple of ``row_align``)."""
        n = len(rows)
        if not 0 < n <= self.n_batch:
            raise ValueError(f"a llama.cpp batch holds 1..{self.n_batch} tokens, got {n}")
        # llama.cpp wants each sequence's new positions to follow its last one without gaps.
        next_pos = self.cells.max_pos(self.scratch) + 1
        for r in rows:
            if r.seq == self.scratch:
                r.pos = next_pos
                next_pos += 1
        self._tokens[:n] = [r.token for r in rows]
        self._pos[:n] = [r.pos for r in rows]
        # The output layer's matrix kernel depends on how many rows ask for logits, as every matrix
        # kernel depends on its row count (see row_align): so ask for them on a multiple of row_align
        # rows, scratch rows first (their logits are never read).
        flags = [1 if r.output else 0 for r in rows]
        extra = -sum(flags) % self.row_align if any(flags) and self.pad_output_rows else 0
        for i in sorted(range(n), key=lambda i: rows[i].seq != self.scratch):
            if extra == 0:
                break
            if not flags[i]:
                flags[i] = 1
                extra -= 1
        if extra:  # pragma: no cover - n is a multiple of row_align (place pads it), so rows remain
            raise RuntimeError(f"llama.cpp batch of {n} rows cannot ask for logits on a multiple of {self.row_align} rows")
        self._flags[:n] = flags
        seq_id = self._batch.seq_id
        for i, r in enumerate(rows):
            seq_id[i][0] = r.seq
        self._batch.n_tokens = n
        rc = self._lc.llama_decode(self._ctx, self._batch)
        if rc != 0:
            if rc == 1:
                raise KVCacheFullError(
                    f"llama.cpp found no room for {n} tokens in its KV cache of {self.n_ctx} cells; lower the Judge's "
                    "chunk_size"
                )
            raise RuntimeError(f"llama_decode failed with code {rc}")
        self.cells.apply(cells, [r.seq for r in rows], [r.pos for r in rows])
        real = sum(1 for r in rows if r.seq != self.scratch)
        self.stats.forward_calls += 1
        self.stats.tokens_computed += real
        self.stats.padded_tokens += n
        self.stats.output_rows += sum(flags)
        self.stats.attended_keys += sum(r.pos + 1 for r in rows if r.seq != self.scratch)

    def decode(self, tokens: Sequence[int], positions: Sequence[int], seqs: Sequence[int], outputs: Sequence[bool]) -> None:
        """Decode tokens as given (no layout planning), the batch padded to a multiple of the
        alignment with scratch tokens that are dropped again. For the prompt-cache loop and tests."""
        rows = [_Row(int(t), int(p), int(s), bool(o)) for t, p, s, o in zip(tokens, positions, seqs, outputs, strict=True)]
        for start in range(0, len(rows), self.n_batch - self.align):
            part = rows[start : start + self.n_batch - self.align]
            first_pad = self.cells.max_pos(self.scratch) + 1
            while len(part) % self.row_align:
                part.append(self.pad())
            order = self.cells.scan(len(part))
            self.decode_placed(part, [int(c) for c in order[: len(part)]])
            self.drop(self.scratch, first_pad)

    def canonical(self, seq: int) -> bool:
        """True when ``seq`` lies in the cache as it would alone: every aligned block of positions in
        an aligned block of cells at the same offsets, blocks in increasing cell order."""
        held = self.cells.members.get(seq)
        if not held:
            return True
        positions = np.array(sorted(held))
        cells = np.array([held[p] for p in positions])
        a = self.align
        if positions[0] != 0 or np.any(np.diff(positions) != 1) or np.any(cells % a != positions % a):
            return False
        block_start = cells - positions % a
        same_block = positions // a
        starts = block_start[np.r_[True, np.diff(same_block) != 0]]
        return bool(np.all(np.diff(starts) > 0) and np.all(block_start == np.repeat(starts, np.bincount(same_block - same_block[0]))))

    def logits(self, index: int) -> np.ndarray:
        """Next-token logits (float32 copy) at batch position ``index`` of the last decode."""
        ptr = self._lc.llama_get_logits_ith(self._ctx, index)
        if not ptr:
            raise RuntimeError(f"llama.cpp has no logits for batch position {index}")
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)).copy()


_LOG_CALLBACK: Any = None


def _quiet_llama_cpp() -> None:
    """llama.cpp logs every load step to stderr: print its errors only (everything when the
    ``llama-cpp-python`` logger is set to INFO or DEBUG). llama-cpp-python's own callback maps
    ggml's log levels with an older numbering (its errors would count as debug messages), so
    ours reads them as ggml 0.25 defines them: 1 debug, 2 info, 3 warning, 4 error, 5 continued."""
    global _LOG_CALLBACK
    if _LOG_CALLBACK is not None:
        return
    import ctypes
    import sys

    import llama_cpp

    logger = logging.getLogger("llama-cpp-python")
    last = [0]

    @llama_cpp.llama_log_callback
    def callback(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        level = last[0] if level == 5 else level
        last[0] = level
        verbose = logger.level != logging.NOTSET and logger.level <= logging.INFO
        if level >= 4 or verbose:
            print(text.decode("utf-8", errors="replace"), end="", file=sys.stderr, flush=True)

    _LOG_CALLBACK = callback  # keep a reference: llama.cpp calls it for the life of the process
    llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))


# ---- running a prefix tree ----------------------------------------------------------------------
@dataclass
class _Handle:
    """Key/values of positions [0, end) of a path: held by ``seq``; ``tail`` are the path's tokens
    after its last aligned position (a child recomputes them in its own first block)."""

    seq: int
    end: int
    tail: list[int] = field(default_factory=list)


def _tail(tokens: Sequence[int], start: int, end: int, align: int) -> list[int]:
    """Tokens at positions [floor(end / align) * align, end) of a run starting at ``start``."""
    first = end // align * align
    return list(tokens[first - start : end - start])


#: Prefix-sharing schemes for scoring (label probabilities, log-likelihoods); see the module docstring.
SCHEMES = ("sequential", "parallel")
SCHEME_ENV = "NLGJUDGE_LLAMACPP_SCHEME"


class LlamaCppRunner:
    """Computes a :class:`PrefixTree` (and decoding jobs) on a :class:`LlamaCppModel`.

    ``scheme`` (scoring trees; trees with kept prompts always run "parallel"):

    - ``"sequential"``: depth first on one KV sequence (the trunk), each node decoded once
      right after its parent's tokens; what a prompt cache gives, driven by the tree, with only
      the needed logits;
    - ``"parallel"``: sibling nodes decoded side by side as parallel sequences (``seq_cp`` of the
      parent), groups of up to ``group_tokens`` tokens (default: the context's ``n_batch``),
      children depth first so only one group per tree level holds key/values at a time.

    Both give the same results, bitwise (tested on SmolLM2-135M and Qwen2.5-Coder-1.5B).
    Default: ``$NLGJUDGE_LLAMACPP_SCHEME``, else
    "sequential" (faster in the measurement in the module docstring).
    """

    #: Decoding groups start on the cache the previous group left, whose trunk holds the prefix they
    #: share (False: every group on an empty cache, as before 2026-11-25; for the benchmark).
    keep_trunk_between_groups = True
    #: The sequential scheme computes the prefix it would reuse from the trunk again, from cell 0,
    #: when free cells lie below that prefix (False: reuse it where it lies, as before 2026-11-25;
    #: for the benchmark and its test).
    drop_floating_trunk = True
    #: The sequential scheme computes short sibling leaves (label continuations) side by side in one
    #: call instead of one call each (False: one at a time, as before 2026-11-25; for the benchmark
    #: and its test).
    group_short_leaves = True

    def __init__(
        self,
        model: LlamaCppModel,
        stats: ForwardStats | None = None,
        group_tokens: int | None = None,
        scheme: str | None = None,
    ) -> None:
        self.model = model
        self.stats = stats if stats is not None else ForwardStats()
        self.group_tokens = group_tokens or model.n_batch
        self.max_group_nodes = 64
        self._retained_live: list[_Handle] = []
        if scheme is None:
            scheme = os.environ.get(SCHEME_ENV, "").strip() or "sequential"
        if scheme not in SCHEMES:
            raise ValueError(f"llama.cpp prefix-sharing scheme {scheme!r} is not one of {', '.join(SCHEMES)}")
        self.scheme = scheme

    # -- public -------------------------------------------------------------------------------
    def run(self, tree: PrefixTree) -> None:
        """Fill ``logprobs`` of every wanted position; kept nodes get ``state`` (a KV sequence id,
        to be released with :meth:`release`) and ``last_logprobs`` (full next-token log-probs)."""
        if not tree.sequences:
            return
        m = self.model
        with m.lock:
            longest = max(len(s) for s in tree.sequences)
            kept = sum(len(s) for s in tree.sequences) if _has_kept(tree) else 0
            m.ensure_capacity(2 * longest + kept + 6 * m.n_batch)
            before = _snapshot(m.stats)
            try:
                if m.n_swa > 0:
                    self._run_unshared(tree)
                elif self.scheme == "sequential" and not kept:
                    self._run_sequential(tree)
                else:
                    retained = self._retained_path(tree)
                    items = self._reuse_trunk(tree)
                    handles: dict[int, _Handle] = {}
                    self._run_level(items, handles, retained)
                    self._keep_trunk(tree, handles)
            except BaseException:
                # A run that fails partway (KVCacheFullError, an interrupt) leaves sequences nothing
                # will release and a trunk out of step with its tokens: forget it all (an empty
                # cache), so that no stale sequence id is released later, freed twice once the ids
                # are handed out again, and no half-written trunk is reused.
                self._retained_live = []
                _clear_states(tree)
                m.reset()
                raise
            finally:
                _add_delta(self.stats, m.stats, before)

    def release(self, nodes: Sequence[TreeNode]) -> None:
        """Free the KV sequences of kept nodes (after decoding from them)."""
        with self.model.lock:
            for node in nodes:
                if node.state is not None:
                    self.model.release(int(node.state.seq))
                    node.state = None
                    node.last_logprobs = None

    # -- sliding-window models: one sequence at a time ----------------------------------------------
    def _run_unshared(self, tree: PrefixTree) -> None:
        """Each distinct sequence computed alone on an empty cache (no prefix sharing).

        llama.cpp recycles a sequence's cells that fall out of the sliding window, so key/values
        shared between sequences or kept for a later rollback may be gone: only a single sequence
        growing from position 0 is safe (the torch path runs such models unshared too).
        """
        m = self.model
        for seq, path in tree.distinct_paths():
            outputs = {}
            for n in path:
                for off in n.wanted:
                    outputs[n.start + off] = (n, off)
                if n.keep_state:
                    outputs[n.end - 1] = (n, len(n.tokens) - 1)
            m.drop(TRUNK)
            m.trunk = []
            step = m.n_batch - m.align
            for start in range(0, len(seq), step):
                stop = min(start + step, len(seq))
                m.decode(seq[start:stop], range(start, stop), [TRUNK] * (stop - start), [p in outputs for p in range(start, stop)])
                for p in range(start, stop):
                    if p not in outputs:
                        continue
                    n, off = outputs[p]
                    logprobs = _log_softmax_rows(m.logits(p - start)[None])[0]
                    for target in n.wanted.get(off, ()):
                        n.logprobs[(off, target)] = float(logprobs[target])
                    if n.keep_state and off == len(n.tokens) - 1:
                        n.last_logprobs = logprobs.astype(np.float32)
            m.trunk = list(seq)

    def _decode_unshared(self, jobs: list[DecodeJob], stop: set[int]) -> list[list[list[int]]]:
        """Sliding-window models: one prompt at a time, its samples as parallel sequences."""
        m = self.model
        outputs: list[list[list[int]]] = [[] for _ in jobs]
        for j, job in enumerate(jobs):
            tree = PrefixTree()
            end = tree.keep(tree.insert(job.prompt_ids))
            self._run_unshared(tree)
            generator = np.random.default_rng(job.seed)
            rows = []
            for _ in range(job.n_samples):
                seq = m.new_seq()
                m.copy(TRUNK, seq, len(job.prompt_ids))
                rows.append(seq)
            generated: list[list[int]] = [[] for _ in rows]
            current: list[np.ndarray] = [end.last_logprobs for _ in rows]
            done = [False] * len(rows)
            try:
                for step in range(job.max_new_tokens):
                    active = []
                    for r in range(len(rows)):
                        if done[r]:
                            continue
                        token = draw(current[r], job.temperature, generator)
                        if token in stop:
                            done[r] = True
                            continue
                        generated[r].append(token)
                        if step + 1 < job.max_new_tokens:
                            active.append((r, token))
                    if not active:
                        break
                    pos = len(job.prompt_ids) + step
                    m.decode([t for _, t in active], [pos] * len(active), [rows[r] for r, _ in active], [True] * len(active))
                    for i, (r, _) in enumerate(active):
                        current[r] = m.logits(i)
            finally:
                for seq in rows:
                    m.release(seq)
            outputs[j] = generated
        return outputs

    # -- the sequential scheme -----------------------------------------------------------------
    def _run_sequential(self, tree: PrefixTree) -> None:
        """Depth first on the trunk sequence: each node continues its parent's tokens in place.

        A node that must be decoded takes its first child along (and that child's first child, ...)
        while the chain fits one batch, as a prompt cache decodes a whole prompt's new suffix in one
        call: fewer, fuller batches and less padding than one call per node, the same tokens, and
        bitwise the same results (every token still lands where it would alone).
        """
        m = self.model
        if not m.canonical(TRUNK) or m.n_swa > 0:
            m.drop(TRUNK)
            m.trunk = []
        elif self.drop_floating_trunk and m.free_cells_below(TRUNK, _common_length(_first_path(tree), m.trunk)) > 0:
            # The prefix this run would reuse lies above free cells (a sampling group leaves its
            # prompt where the group put it). That costs every batch of the run: a block must lie
            # above every cell its sequence holds, and each batch fills the free cells that
            # find_slot offers first with scratch rows, which are freed again after it. Computing
            # the prefix again from cell 0 costs its tokens once (python -m nlgjudge.bench_floating_trunk).
            self.stats.dropped_trunks += 1
            m.drop(TRUNK)
            m.trunk = []
            if m.idle:
                m.reset()  # find_slot's head back to cell 0, so the prefix is laid from there
        room = m.n_batch - m.align
        stack = list(reversed(tree.root.children.values()))
        while stack:
            node = stack.pop()
            if self.group_short_leaves and self._short_leaf(node):
                # Its siblings next on the stack (nodes of one start are siblings in a depth-first
                # walk) that are short leaves too: one call for all (see _run_leaves).
                leaves = [node]
                while stack and stack[-1].start == node.start and self._short_leaf(stack[-1]):
                    leaves.append(stack.pop())
                if len(leaves) > 1:
                    self._run_leaves(leaves)
                    continue
            held = m.trunk
            common = 0
            limit = min(len(node.tokens), len(held) - node.start)
            while common < limit and node.tokens[common] == held[node.start + common]:
                common += 1
            needs = list(node.wanted) + ([len(node.tokens) - 1] if node.keep_state else [])
            if needs:
                common = min(common, min(needs))
            if common == len(node.tokens):
                self.stats.reused_tokens += len(node.tokens)
                stack.extend(reversed(node.children.values()))
                continue
            if common:
                self.stats.reused_tokens += common
            chain, size = [node], len(node.tokens) - common
            while chain[-1].children:
                first = next(iter(chain[-1].children.values()))
                if size + len(first.tokens) > room:
                    break
                chain.append(first)
                size += len(first.tokens)
            self._continue_trunk(chain, node.start + common)
            # depth first as before: the last chain node's children first, then each earlier
            # node's other children (its first child is in the chain)
            for k, done in enumerate(chain):
                rest = list(done.children.values())[1 if k + 1 < len(chain) else 0 :]
                stack.extend(reversed(rest))

    def _short_leaf(self, node: TreeNode) -> bool:
        """A node without children, shorter than a block, whose logits are wanted (and not kept)."""
        return not node.children and len(node.tokens) < self.model.align and bool(node.wanted) and not node.keep_state

    def _run_leaves(self, leaves: Sequence[TreeNode]) -> None:
        """Short sibling leaves (the label continuations of one prompt: " 1", ..., " 9") side by side
        as parallel sequences, each copying the trunk's path up to their parent's last aligned block.

        One at a time on the trunk, each leaf costs a call of its own (its tokens padded to
        ``row_align`` rows: 8 rows for a one-token leaf); side by side, each recomputes its parent's
        partial last block (at most ``align - 1`` tokens: 7, or 15 with AVX-512) and all share one
        call: about as many rows, far fewer calls (``python -m nlgjudge.bench_label_leaves``). The
        trunk is left as it was (the parent's path, and the first child's the chain computed); the
        results are bitwise those of each leaf computed alone, as everywhere.
        """
        m = self.model
        start = leaves[0].start
        parent = _Handle(TRUNK, start, _tail(m.trunk, 0, start, m.align))
        for group in self._groups([(leaf, parent) for leaf in leaves]):
            pads_from = m.cells.max_pos(m.scratch) + 1
            for live in self._compute(group):
                m.release(live.seq)
            m.drop(m.scratch, pads_from)
        self.stats.grouped_leaves += len(leaves)

    def _continue_trunk(self, chain: Sequence[TreeNode], start: int) -> None:
        """Decode the path of ``chain`` (a node and descendants, each the first child of the one
        before) from position ``start`` on the trunk, which holds the path before ``chain[0]``.

        The trunk's partial last block is continued in place when its cells are free, else
        recomputed from its aligned start (so the trunk keeps the canonical layout).
        """
        m = self.model
        a = m.align
        node = chain[0]
        full = list(m.trunk[: node.start])  # the path's tokens, positions [0, chain[-1].end)
        owners: dict[int, tuple[TreeNode, int]] = {}  # position -> (node, offset) whose logits are wanted there
        for member in chain:
            full.extend(member.tokens)
            for off in member.wanted:
                owners[member.start + off] = (member, off)
            if member.keep_state:
                owners[member.end - 1] = (member, len(member.tokens) - 1)
        m.drop(TRUNK, start)
        first = start // a * a
        base = m.cells.members.get(TRUNK, {}).get(first, -1) if first < start else -1
        in_place = first == start or (
            base >= 0 and base % a == 0 and base + a <= m.n_ctx and not np.any(m.cells.count[base + start - first : base + a])
        )
        if not in_place:
            m.drop(TRUNK, first)
            start = first
        rows = [_Row(int(full[pos]), pos, TRUNK, pos in owners) for pos in range(start, chain[-1].end)]
        exact: dict[int, _Row] = {}
        k = 0
        while k < len(rows) and rows[k].pos % a:
            exact[base + rows[k].pos % a] = rows[k]
            k += 1
        remaining = [_Block(TRUNK, rows[b : b + a]) for b in range(k, len(rows), a)]
        pads_from = m.cells.max_pos(m.scratch) + 1
        while exact or remaining:
            placed_rows, placed_cells, placed = m.place(remaining, exact)
            m.decode_placed(placed_rows, placed_cells)
            m.drop(m.scratch, pads_from)  # the padding sits above the trunk: free it for the next node
            exact = {}
            done = {id(b) for b in placed}
            remaining = [b for b in remaining if id(b) not in done]
            for i, row in enumerate(placed_rows):
                if not row.output or row.seq != TRUNK:
                    continue
                member, offset = owners[row.pos]
                logprobs = _log_softmax_rows(m.logits(i)[None])[0]
                for target in member.wanted.get(offset, ()):
                    member.logprobs[(offset, target)] = float(logprobs[target])
                if member.keep_state and offset == len(member.tokens) - 1:
                    member.last_logprobs = logprobs.astype(np.float32)
        m.trunk = full

    # -- trunk (prompt cache between runs) ----------------------------------------------------
    def _reuse_trunk(self, tree: PrefixTree) -> list[tuple[TreeNode, _Handle | None]]:
        """Start from the longest common prefix with what sequence TRUNK holds from the last run.

        Returns the nodes to compute with their parents' key/values; nodes wholly inside the reused
        prefix (no wanted position, not kept) are not computed again.
        """
        m = self.model
        trunk = m.trunk
        roots: list[tuple[TreeNode, _Handle | None]] = [(child, None) for child in tree.root.children.values()]
        if not trunk or m.n_swa > 0:
            # Sliding-window models: llama.cpp may recycle a sequence's cells beyond the window, so a
            # stored prefix is not reusable in general: start afresh.
            if trunk:
                m.drop(TRUNK)
                m.trunk = []
            return roots
        path: list[TreeNode] = []
        parent, pos, usable_end = tree.root, 0, 0
        while pos < len(trunk):
            child = parent.children.get(trunk[pos])
            if child is None:
                break
            common = 0
            limit = min(len(child.tokens), len(trunk) - pos)
            while common < limit and child.tokens[common] == trunk[pos + common]:
                common += 1
            # Positions whose logits are wanted (or a kept end) must be computed: stop before them.
            needs = list(child.wanted) + ([len(child.tokens) - 1] if child.keep_state else [])
            if needs:
                common = min(common, min(needs))
            if common == 0:
                break
            if common < len(child.tokens):
                PrefixTree._split(parent, child, common)
                child = parent.children[trunk[pos]]
                path.append(child)
                usable_end = child.end
                break
            path.append(child)
            usable_end = child.end
            parent, pos = child, child.end
        m.drop(TRUNK, usable_end)
        m.trunk = trunk[:usable_end]
        if not path:
            m.trunk = []
            m.drop(TRUNK)
            return roots
        items: list[tuple[TreeNode, _Handle | None]] = []
        parent, handle = tree.root, None
        for node in path:
            items.extend((c, handle) for c in parent.children.values() if c is not node)
            parent, handle = node, _Handle(TRUNK, node.end, _tail(trunk, 0, node.end, m.align))
        items.extend((c, handle) for c in parent.children.values())
        self.stats.reused_tokens += usable_end
        return items

    @staticmethod
    def _retained_path(tree: PrefixTree) -> set[int]:
        """Nodes on the path of the chunk's last sequence: kept for the next run's prefix."""
        seq = tree.sequences[-1]
        ids: set[int] = set()
        node, pos = tree.root, 0
        while pos < len(seq):
            node = node.children[seq[pos]]
            ids.add(id(node))
            pos = node.end
        return ids

    def _keep_trunk(self, tree: PrefixTree, handles: dict[int, _Handle]) -> None:
        m = self.model
        deepest = None
        node, pos, seq = tree.root, 0, tree.sequences[-1]
        while pos < len(seq):
            node = node.children[seq[pos]]
            if id(node) in handles:
                deepest = node
            pos = node.end
        if deepest is not None and m.n_swa == 0:
            live = handles[id(deepest)]
            m.drop(TRUNK)
            m.copy(live.seq, TRUNK, live.end)
            m.trunk = list(seq[: live.end])
        for live in self._retained_live:
            m.release(live.seq)
        self._retained_live = []

    # -- levels ---------------------------------------------------------------------------------
    def _groups(self, items: list[tuple[TreeNode, _Handle | None]]) -> Iterator[list[tuple[TreeNode, _Handle | None]]]:
        group: list[tuple[TreeNode, _Handle | None]] = []
        size = 0
        for item in items:
            n = len(item[0].tokens) + self.model.align
            if group and (size + n > self.group_tokens or len(group) >= self._group_node_limit()):
                yield group
                group, size = [], 0
            group.append(item)
            size += n
        if group:
            yield group

    def _group_node_limit(self) -> int:
        # Leave sequences for the levels below this one (children of this group).
        return max(1, min(self.max_group_nodes, self.model.free_seq_count // 4))

    def _run_level(self, items: list[tuple[TreeNode, _Handle | None]], handles: dict[int, _Handle], retained: set[int]) -> None:
        m = self.model
        for group in self._groups(items):
            pads_from = m.cells.max_pos(m.scratch) + 1
            lives = self._compute(group)
            for (node, _), live in zip(group, lives, strict=True):
                handles[id(node)] = live
            children = [(child, live) for (node, _), live in zip(group, lives, strict=True) for child in node.children.values()]
            if children:
                self._run_level(children, handles, retained)
            for (node, _), live in zip(group, lives, strict=True):
                if node.keep_state:
                    node.state = live  # the caller releases it (after decoding from it)
                elif id(node) in retained:
                    self._retained_live.append(live)  # released once the trunk holds the path
                else:
                    m.release(live.seq)
            m.drop(m.scratch, pads_from)  # the group's layout padding

    def _compute(self, group: list[tuple[TreeNode, _Handle | None]]) -> list[_Handle]:
        """Decode a group of nodes as parallel sequences, laid out canonically; record log-probs."""
        m = self.model
        a = m.align
        lives: list[_Handle] = []
        blocks: list[_Block] = []
        for node, parent in group:
            seq = m.new_seq()
            first = node.start // a * a  # the node recomputes its parent's partial last block
            tail = parent.tail if parent is not None else []
            if len(tail) != node.start - first:  # pragma: no cover - guarded by construction
                raise RuntimeError("prefix tree and its key/values out of step")
            if parent is not None:
                m.copy(parent.seq, seq, first)
            tokens = [*tail, *node.tokens]
            shift = len(tail)
            wanted = {shift + off for off in node.wanted}
            if node.keep_state:
                wanted.add(len(tokens) - 1)
            for b in range(0, len(tokens), a):
                rows = [_Row(int(tokens[k]), first + k, seq, k in wanted) for k in range(b, min(b + a, len(tokens)))]
                blocks.append(_Block(seq, rows, tag=(node, b - shift)))
            lives.append(_Handle(seq, node.end, _tail(tokens, first, node.end, a)))
        remaining = blocks
        while remaining:
            rows, cells, placed = m.place(remaining)
            m.decode_placed(rows, cells)
            done = {id(b) for b in placed}
            remaining = [b for b in remaining if id(b) not in done]
            index = {id(r): i for i, r in enumerate(rows)}
            for block in placed:
                node, base = block.tag
                for k, row in enumerate(block.rows):
                    if not row.output:
                        continue
                    offset = base + k
                    logprobs = _log_softmax_rows(m.logits(index[id(row)])[None])[0]
                    for target in node.wanted.get(offset, ()):
                        node.logprobs[(offset, target)] = float(logprobs[target])
                    if node.keep_state and offset == len(node.tokens) - 1:
                        node.last_logprobs = logprobs.astype(np.float32)
        return lives

    # -- decoding -------------------------------------------------------------------------------
    def decode(self, jobs: Sequence[DecodeJob], stop: set[int]) -> list[list[list[int]]]:
        """Generated token ids: one list per job, one entry per sample (stop token excluded)."""
        results: list[list[list[int]]] = [[] for _ in jobs]
        if not jobs:
            return results
        m = self.model
        if m.n_swa > 0:
            with m.lock:
                m.ensure_capacity(max(len(j.prompt_ids) + j.n_samples * j.max_new_tokens for j in jobs) + 6 * m.n_batch)
                before = _snapshot(m.stats)
                try:
                    return self._decode_unshared(list(jobs), stop)
                finally:
                    _add_delta(self.stats, m.stats, before)
        order = sorted(range(len(jobs)), key=lambda j: jobs[j].prompt_ids)
        max_rows = max(1, min(m.n_seq_max // 3, m.n_batch // m.align))
        budget = max(m.n_ctx, 8192) // 2
        group: list[int] = []
        cells = rows = 0
        for j in [*order, -1]:
            if j >= 0:
                need = len(jobs[j].prompt_ids) + jobs[j].n_samples * (jobs[j].max_new_tokens + 3 * m.align)
                if not group or (cells + need <= budget and rows + jobs[j].n_samples <= max_rows):
                    group.append(j)
                    cells += need
                    rows += jobs[j].n_samples
                    continue
            with m.lock:
                if not self.keep_trunk_between_groups:
                    m.reset()
                m.ensure_capacity(2 * cells + 6 * m.n_batch)
                group_jobs = [jobs[g] for g in group]
                try:
                    # On the cache as the last group left it: its trunk holds their shared prefix (the
                    # article or dialogue), which is not computed again.
                    outputs = self._decode_group(group_jobs, stop)
                except KVCacheFullError:
                    # A sequence's blocks must climb through the cells (see place), so what earlier
                    # groups and calls left (the trunk, fragments high up the cache) can leave a long
                    # prompt no room even when most cells are free: the group starts again on an
                    # empty cache, with the same results (they do not depend on the layout).
                    log.info("llama.cpp KV cache fragmented: a decoding group starts again on an empty cache")
                    self.stats.restarted_groups += 1
                    m.reset()
                    outputs = self._decode_group(group_jobs, stop)
                for g, out in zip(group, outputs, strict=True):
                    results[g] = out
            if j < 0:
                break
            group = [j]
            cells = len(jobs[j].prompt_ids) + jobs[j].n_samples * (jobs[j].max_new_tokens + 3 * m.align)
            rows = jobs[j].n_samples
        return results

    def _decode_group(self, jobs: list[DecodeJob], stop: set[int]) -> list[list[list[int]]]:
        m = self.model
        a = m.align
        tree = PrefixTree()
        ends = [tree.keep(tree.insert(job.prompt_ids)) for job in jobs]
        self.run(tree)
        before = _snapshot(m.stats)
        kept = list({id(node): node for node in ends}.values())
        pads_from = m.cells.max_pos(m.scratch) + 1
        generators = [np.random.default_rng(job.seed) for job in jobs]
        owner = [j for j, job in enumerate(jobs) for _ in range(job.n_samples)]
        row_seq: list[int] = []
        reserve: list[dict[int, int]] = [{} for _ in owner]  # per sample: cell -> scratch position holding it
        try:
            for j in owner:
                seq = m.new_seq()
                m.copy(ends[j].state.seq, seq, len(jobs[j].prompt_ids) // a * a)
                row_seq.append(seq)
            generated: list[list[int]] = [[] for _ in owner]
            done = [False] * len(owner)
            current: list[np.ndarray] = [ends[j].last_logprobs for j in owner]
            block_cell = [-1] * len(owner)
            steps = max(job.max_new_tokens for job in jobs)
            for step in range(steps):
                active: list[tuple[int, int]] = []
                for row, j in enumerate(owner):
                    if done[row] or step >= jobs[j].max_new_tokens:
                        done[row] = True
                        continue
                    token = draw(current[row], jobs[j].temperature, generators[j])
                    if token in stop:
                        done[row] = True
                        continue
                    generated[row].append(token)
                    if step + 1 < jobs[j].max_new_tokens:
                        active.append((row, token))
                    else:
                        done[row] = True
                if not active:
                    break
                self._step(jobs, owner, row_seq, reserve, block_cell, active, step, current)
        finally:
            for seq in row_seq:
                m.release(seq)
            m.drop(m.scratch, pads_from)
            self.release(kept)
            _add_delta(self.stats, m.stats, before)
        outputs: list[list[list[int]]] = [[] for _ in jobs]
        for row, j in enumerate(owner):
            outputs[j].append(generated[row])
        return outputs

    def _step(
        self,
        jobs: list[DecodeJob],
        owner: list[int],
        row_seq: list[int],
        reserve: list[dict[int, int]],
        block_cell: list[int],
        active: list[tuple[int, int]],
        step: int,
        current: list[np.ndarray],
    ) -> None:
        """Decode one new token per active sample; each sample's tokens fill its own aligned block
        of cells (reserved by scratch tokens, freed one by one as the sample reaches them)."""
        m = self.model
        a = m.align
        exact: dict[int, _Row] = {}
        blocks: list[_Block] = []
        out_row: dict[int, _Row] = {}
        for row, token in active:
            prompt = jobs[owner[row]].prompt_ids
            pos = len(prompt) + step
            lane = pos % a
            new = _Row(token, pos, row_seq[row], True)
            out_row[row] = new
            if step > 0 and lane != 0:
                cell = block_cell[row] + lane
                scratch_pos = reserve[row].pop(cell)
                m.drop(m.scratch, scratch_pos, scratch_pos + 1)
                exact[cell] = new
                continue
            first = pos // a * a
            tail = [_Row(int(t), first + k, row_seq[row]) for k, t in enumerate(prompt[first:pos])] if step == 0 else []
            block = _Block(row_seq[row], [*tail, new], tag=row)
            block.rows.extend(m.pad() for _ in range(a - len(block.rows)))
            blocks.append(block)
        # One batch when it fits. When free cells are fragmented (the scratch rows that fill the gaps
        # count against n_batch), the blocks left over go in further batches of the same step: each
        # sample's token depends on its own sequence only, so the split changes no result.
        pending = blocks
        while True:
            # pads_only: a batch may place no block and only fill fragmented cells with scratch rows
            # (progress: those cells are then taken); place() still fails when it cannot do even that
            rows, cells, placed = m.place(pending, exact, n_max=m.n_batch, pads_only=True)
            m.decode_placed(rows, cells)
            for block in placed:
                row = block.tag
                block_cell[row] = block.cell
                reserve[row] = {block.cell + k: r.pos for k, r in enumerate(block.rows) if r.seq == m.scratch}
            index = {id(r): i for i, r in enumerate(rows)}
            for row, new in out_row.items():
                if id(new) in index:
                    current[row] = m.logits(index[id(new)])  # greedy and sampling need only the logits (see draw)
            placed_ids = {id(block) for block in placed}
            pending = [block for block in pending if id(block) not in placed_ids]
            exact = {}
            if not pending:
                break


def draw(scores: np.ndarray, temperature: float, generator: np.random.Generator) -> int:
    """One token from next-token logits or log-probs (the normaliser cancels): argmax at
    temperature 0, else one draw from softmax(scores / temperature) with ``generator``."""
    if temperature == 0:
        return int(np.argmax(scores))
    x = scores.astype(np.float64) / temperature
    x -= x.max()
    cumulative = np.cumsum(np.exp(x))
    u = generator.random() * cumulative[-1]
    return int(min(np.searchsorted(cumulative, u, side="right"), len(cumulative) - 1))


def _first_path(tree: PrefixTree) -> list[int]:
    """The tokens of the path the sequential scheme computes first (first children from the root)."""
    tokens: list[int] = []
    node = tree.root
    while node.children:
        node = next(iter(node.children.values()))
        tokens.extend(node.tokens)
    return tokens


def _common_length(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def _nodes(tree: PrefixTree) -> Iterator[TreeNode]:
    stack = [tree.root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children.values())


def _clear_states(tree: PrefixTree) -> None:
    """Forget the KV sequences kept nodes were given (after a failed run reset the cache)."""
    for node in _nodes(tree):
        node.state = None
        node.last_logprobs = None


def _has_kept(tree: PrefixTree) -> bool:
    return any(node.keep_state for node in _nodes(tree))


def _snapshot(stats: ForwardStats) -> tuple[int, int, int, int, int]:
    return (stats.forward_calls, stats.tokens_computed, stats.padded_tokens, stats.output_rows, stats.attended_keys)


def _add_delta(target: ForwardStats, source: ForwardStats, before: tuple[int, int, int, int, int]) -> None:
    if target is source:
        return
    now = _snapshot(source)
    target.forward_calls += now[0] - before[0]
    target.tokens_computed += now[1] - before[1]
    target.padded_tokens += now[2] - before[2]
    target.output_rows += now[3] - before[3]
    target.attended_keys += now[4] - before[4]


# ---- the plain prompt-cache loop (the baseline a llama.cpp user gets) ---------------------------------
def prefix_cache_loop_label_logprobs(
    model: LlamaCppModel, prompts: Sequence[Sequence[int]], labels: Sequence[Sequence[Sequence[int]]]
) -> list[list[float]]:
    """Whole-label log-probabilities, one prompt after another on one KV sequence.

    Keeps the key/values of the longest common prefix with the previous prompt and decodes the
    rest in ``n_batch`` pieces, logits at the last prompt token only; a label of several tokens
    is decoded after the prompt and removed again. This is what llama-server's prompt cache or a
    plain llama-cpp-python loop gives; the benchmark compares the tree runner against it. Started
    on an empty cache (:meth:`LlamaCppModel.reset`), every prompt lies in the cache exactly as it
    would alone, so its results equal the tree runner's bit for bit.
    """
    m = model
    out: list[list[float]] = []
    with m.lock:
        m.ensure_capacity(max(len(p) + max(len(x) for x in ls) for p, ls in zip(prompts, labels, strict=True)) + 2 * m.n_batch)
        previous = m.trunk
        for prompt, label_ids in zip(prompts, labels, strict=True):
            common = 0
            limit = min(len(previous), len(prompt) - 1)  # the last prompt token is always decoded (its logits)
            while common < limit and previous[common] == prompt[common]:
                common += 1
            m.drop(TRUNK, common)
            step = m.n_batch - m.align
            for start in range(common, len(prompt), step):
                stop = min(start + step, len(prompt))
                m.decode(prompt[start:stop], range(start, stop), [TRUNK] * (stop - start), [i == len(prompt) - 1 for i in range(start, stop)])
            last = _log_softmax_rows(m.logits(stop - start - 1)[None])[0]
            scores = []
            for label in label_ids:
                total = float(last[label[0]])
                if len(label) > 1:
                    n = len(label) - 1
                    m.decode(label[:n], range(len(prompt), len(prompt) + n), [TRUNK] * n, [True] * n)
                    rows = _log_softmax_rows(np.stack([m.logits(i) for i in range(n)]))
                    total += float(sum(rows[i, label[i + 1]] for i in range(n)))
                    m.drop(TRUNK, len(prompt))
                scores.append(total)
            out.append(scores)
            previous = list(prompt)
        m.trunk = list(previous)
    return out


# ---- loading ----------------------------------------------------------------------------------
_MODELS: weakref.WeakValueDictionary[tuple[str, int], LlamaCppModel] = weakref.WeakValueDictionary()
_MODELS_LOCK = threading.Lock()


def load_model(path: str | os.PathLike[str], threads: int | None = None) -> LlamaCppModel:
    """A :class:`LlamaCppModel` for ``path``, shared by the judges that use it with the same threads."""
    n_threads = thread_count(threads)
    key = (str(Path(path).resolve()), n_threads)
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is None:
            model = LlamaCppModel(path, threads=n_threads)
            _MODELS[key] = model
        return model


@functools.lru_cache(maxsize=8)
def load_tokenizer(name: str, gguf: str) -> Any:
    """The Hugging Face tokenizer of a packaged GGUF model: the torch path's, token for token.

    Taken from the torch path's converted folder when it exists, else read from the GGUF file
    once and saved under ``config.cache_dir()/tokenizers/<name>`` (atomic rename).
    """
    import shutil
    import tempfile

    from transformers import AutoTokenizer

    from nlgjudge import config
    from nlgjudge.models.handle import _CONVERTED_MARK, converted_dir
    from nlgjudge.models.packaged import PACKAGED_MODELS

    spec = PACKAGED_MODELS[name]
    for folder in (converted_dir(spec), config.cache_dir() / "tokenizers" / spec.name):
        mark = folder / _CONVERTED_MARK
        if mark.is_file() and mark.read_text().strip() == spec.sha256:
            return AutoTokenizer.from_pretrained(str(folder))
    path = Path(gguf)
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    target = config.cache_dir() / "tokenizers" / spec.name
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{spec.name}-") as work:
        out = Path(work) / "tokenizer"
        tokenizer.save_pretrained(str(out))
        (out / _CONVERTED_MARK).write_text(spec.sha256 + "\n")
        if target.exists():
            shutil.rmtree(target, ignore_errors=True)
        try:
            os.replace(out, target)
        except OSError:  # another process won the race: its copy is the same
            pass
    return tokenizer


def stop_ids(model: LlamaCppModel, tokenizer: Any) -> set[int]:
    """End-of-sequence ids: the GGUF's and the tokenizer's (the torch path reads the same two)."""
    ids = set(model.eos_ids)
    value = getattr(tokenizer, "eos_token_id", None)
    if isinstance(value, int):
        ids.add(value)
    return ids
