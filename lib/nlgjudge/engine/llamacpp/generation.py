"""Sampling and greedy generation on llama.cpp, and :class:`LlamaCppRunner`, the runner the judge drives.

What it guarantees: a request's samples depend on its prompt, settings and seed only -- not on
the other requests of its batch or chunk, nor on how decoding groups are formed or restarted --
because every sample's tokens are laid out as alone (:mod:`~nlgjudge.engine.llamacpp.context`) and
drawn from its own request's random generator.

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
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from nlgjudge.engine.llamacpp.cells import _Block, _Row
from nlgjudge.engine.llamacpp.context import TRUNK, KVCacheFullError
from nlgjudge.engine.llamacpp.scoring import TreeScoring, _add_delta, _snapshot
from nlgjudge.engine.tree import DecodeJob, PrefixTree

log = logging.getLogger("nlgjudge.engine.llamacpp")  # the logger's name before the split


class LlamaCppRunner(TreeScoring):
    """Computes a :class:`PrefixTree` (and decoding jobs) on a :class:`LlamaCppModel`.

    Scoring (:meth:`run`, :meth:`release`, the two schemes) is :class:`TreeScoring`'s; this class
    adds sampling and greedy generation (:meth:`decode`).
    """

    #: Decoding groups start on the cache the previous group left, whose trunk holds the prefix they
    #: share (False: every group on an empty cache, as before 2026-11-25; for the benchmark).
    keep_trunk_between_groups = True

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

    # -- sliding-window models: one prompt at a time -----------------------------------------------
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

