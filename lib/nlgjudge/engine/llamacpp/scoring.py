"""Label probabilities and log-likelihoods on llama.cpp: a prefix tree, each node computed once.

What it guarantees: :class:`TreeScoring` fills every wanted log-probability of a
:class:`~nlgjudge.engine.tree.PrefixTree` with the bits of each sequence computed alone (the layout
of :mod:`~nlgjudge.engine.llamacpp.context`), whichever scheme computes it; the two schemes give
the same bits; a run that fails partway leaves an empty cache, never a stale sequence.

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
  from cell 0 instead (``python -m nlgjudge.bench floating-trunk``: WebNLG label probabilities
  right after sampling, 2008 rows against 7744, 45.6 s against 100.1 s, same bits; one run).
  Short sibling leaves (a prompt's score-word continuations " 1" ... " 9") are computed side by
  side in one call, each recomputing the parent's partial last block, instead of one call each
  (``python -m nlgjudge.bench label-leaves --repeats 3``: 32 SummEval expected-score prompts of the
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
(:func:`~nlgjudge.engine.llamacpp.prompt_cache_loop.prefix_cache_loop_label_logprobs`) 112.1 s, the torch engine 225.8 s (batches then padded
to 16 rows; medians of 3 runs with 8-row padding, ``--repeats 3 --default-scheme-only``:
sequential 100.4 s, loop 101.1 s, torch 198.2 s). At the issue's own setting (all 16 candidates =
240 ordered pairs x COH, ``--aspects COH --repeats 3 --default-scheme-only``, 2026-11-26, medians):
sequential 237.5 s, loop 234.5 s, torch 467.6 s, the same 19101 tokens on every side; the
loop's 1.02 comparisons/s are below the issue's 1.36 because this machine's llama.cpp prefill
is ~90 tokens/s at 128-512-token batches (not the issue's 165), and neither flash attention nor
the row padding explains the gap (both on, both off: within 5% on 32 of these prompts). The parallel scheme
loses because llama.cpp's throughput on this CPU is nearly flat above ~32 tokens per batch
(Qwen2.5-0.5B, 1 thread: 54 tokens/s at 16, 65 at 64, 62 at 496; 2 threads: 93, 108, 111), so
larger batches gain little, while the exact layout (:mod:`~nlgjudge.engine.llamacpp.context`) costs the parallel scheme about 7 extra
tokens per tree node (10139 tokens computed against 7679 here) and its sequences attend over more
cells. Sequential is the default; the benchmark prints both (``--repeats R`` for medians), so the
choice can be revisited on another machine.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from nlgjudge.engine.llamacpp.cells import _Block, _Row
from nlgjudge.engine.llamacpp.context import TRUNK, LlamaCppModel, _log_softmax_rows
from nlgjudge.engine.stats import ForwardStats
from nlgjudge.engine.tree import PrefixTree, TreeNode


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


class TreeScoring:
    """Computes a :class:`PrefixTree` on a :class:`LlamaCppModel`: every wanted log-probability, and
    for kept nodes their KV sequence and next-token log-probabilities (the generation half of
    :class:`~nlgjudge.engine.llamacpp.generation.LlamaCppRunner` decodes from those).

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
            # the prefix again from cell 0 costs its tokens once (python -m nlgjudge.bench floating-trunk).
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
        call: about as many rows, far fewer calls (``python -m nlgjudge.bench label-leaves``). The
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

