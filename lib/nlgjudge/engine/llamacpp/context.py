"""One GGUF model in llama.cpp and its context, laid out so that every output is batch-independent.

What it guarantees: :class:`LlamaCppModel` decodes every batch so that each sequence lies in the
KV cache exactly as it would alone in an empty cache, and pads batches and output rows so that
llama.cpp's kernels see the same shapes whatever else is in the batch: an output is bitwise the
output of its sequence computed alone. The runner (:mod:`~nlgjudge.engine.llamacpp.scoring`,
:mod:`~nlgjudge.engine.llamacpp.generation`) builds on this; it only chooses what to decode.

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
"""

from __future__ import annotations

import logging
import os
import threading
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from nlgjudge.engine.llamacpp.backend import _quiet_llama_cpp, import_llama_cpp, thread_count
from nlgjudge.engine.llamacpp.cells import _Block, _Cells, _Row
from nlgjudge.engine.stats import ForwardStats

log = logging.getLogger("nlgjudge.engine.llamacpp")  # the logger's name before the split

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


def _log_softmax_rows(logits: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax in float64 (the logits come as float32)."""
    x = logits.astype(np.float64)
    m = x.max(axis=-1, keepdims=True)
    return x - (m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))


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
        except BaseException:  # noqa: BLE001 - a finalizer cannot pass on even a Ctrl-C: Python would print a traceback
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

