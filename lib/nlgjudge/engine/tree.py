"""The token radix tree and decoding jobs shared by both runtimes (no torch import here).

Every sequence of a batch of requests is inserted into a radix tree over token ids; each node is
one segment of tokens whose next-token log-probabilities are wanted at some offsets. A runner
(:class:`nlgjudge.engine.prefix_tree.CausalRunner` for torch,
:class:`nlgjudge.engine.llamacpp.LlamaCppRunner` for llama.cpp) computes each node once, on top
of its parent's key/values, and fills in ``logprobs`` (and ``state``/``last_logprobs`` of kept
nodes).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class DecodeJob:
    """One sampling or greedy-generation request, as token ids."""

    prompt_ids: list[int]
    n_samples: int
    temperature: float  # 0 = greedy
    max_new_tokens: int
    seed: int


class Runner(Protocol):
    """Anything that computes a :class:`PrefixTree` (fills the wanted log-probabilities)."""

    def run(self, tree: PrefixTree) -> None: ...


@dataclass
class TreeNode:
    """One segment of a radix tree; ``start`` is the absolute position of ``tokens[0]``."""

    tokens: list[int]
    start: int
    children: dict[int, TreeNode] = field(default_factory=dict)
    # offset within the segment -> target token ids whose log-probability is wanted there
    wanted: dict[int, set[int]] = field(default_factory=dict)
    keep_state: bool = False  # keep this node's key/values after the run (generation continues from it)
    # results
    logprobs: dict[tuple[int, int], float] = field(default_factory=dict)  # (offset, token) -> log p
    # The runtime's handle on the key/values at the end of this node, if kept: per-layer tensors
    # (torch) or a KV sequence id (llama.cpp).
    state: Any = None
    last_logprobs: Any = None  # full next-token log-probs at the last token (if kept)

    @property
    def end(self) -> int:
        return self.start + len(self.tokens)


class PrefixTree:
    """Radix tree of token sequences with the positions whose next-token log-probs are wanted."""

    def __init__(self) -> None:
        self.root = TreeNode(tokens=[], start=0)
        self.sequences: list[list[int]] = []

    def distinct_paths(self) -> Iterator[tuple[list[int], list[TreeNode]]]:
        """Each distinct inserted sequence once (first occurrence order) with the nodes it runs
        through, root excluded: what a runner that computes sequences one by one walks."""
        done: set[tuple[int, ...]] = set()
        for seq in self.sequences:
            if tuple(seq) in done:
                continue
            done.add(tuple(seq))
            path, node, pos = [], self.root, 0
            while pos < len(seq):
                node = node.children[seq[pos]]
                path.append(node)
                pos = node.end
            yield seq, path

    def insert(self, tokens: Sequence[int]) -> int:
        """Insert one sequence; returns its index. Sequences may be inserted more than once."""
        if len(tokens) == 0:
            raise ValueError("cannot insert an empty token sequence")
        seq = list(tokens)
        node, pos = self.root, 0
        while pos < len(seq):
            child = node.children.get(seq[pos])
            if child is None:
                node.children[seq[pos]] = TreeNode(tokens=seq[pos:], start=pos)
                break
            common = 0
            limit = min(len(child.tokens), len(seq) - pos)
            while common < limit and child.tokens[common] == seq[pos + common]:
                common += 1
            if common < len(child.tokens):
                self._split(node, child, common)
                child = node.children[seq[pos]]
            node, pos = child, pos + common
        self.sequences.append(seq)
        return len(self.sequences) - 1

    @staticmethod
    def _split(parent: TreeNode, child: TreeNode, at: int) -> None:
        head = TreeNode(tokens=child.tokens[:at], start=child.start)
        head.wanted = {off: t for off, t in child.wanted.items() if off < at}
        child.wanted = {off - at: t for off, t in child.wanted.items() if off >= at}
        tail_tokens = child.tokens[at:]
        child.tokens, child.start = tail_tokens, child.start + at
        head.children[tail_tokens[0]] = child
        parent.children[head.tokens[0]] = head

    def locate(self, seq_index: int, position: int) -> tuple[TreeNode, int]:
        """The node holding ``position`` of sequence ``seq_index`` and the offset in it."""
        seq = self.sequences[seq_index]
        node, pos = self.root, 0
        while True:
            child = node.children[seq[pos]]
            if position < child.end:
                return child, position - child.start
            node, pos = child, child.end

    def want(self, seq_index: int, position: int, target: int) -> tuple[TreeNode, int]:
        """Ask for log p(target | seq[: position + 1])."""
        node, offset = self.locate(seq_index, position)
        node.wanted.setdefault(offset, set()).add(target)
        return node, offset

    def keep(self, seq_index: int) -> TreeNode:
        """Keep the key/values and full next-token log-probs at the end of this sequence."""
        seq = self.sequences[seq_index]
        node, offset = self.locate(seq_index, len(seq) - 1)
        if offset != len(node.tokens) - 1:  # the sequence ends inside a segment: split there
            parent = self._parent_of(node)
            self._split(parent, node, offset + 1)
            node, offset = self.locate(seq_index, len(seq) - 1)
        node.keep_state = True
        return node

    def _parent_of(self, target: TreeNode) -> TreeNode:
        stack = [self.root]
        while stack:
            node = stack.pop()
            for child in node.children.values():
                if child is target:
                    return node
                stack.append(child)
        raise KeyError("node not in tree")

    def unique_tokens(self) -> int:
        total, stack = 0, [self.root]
        while stack:
            node = stack.pop()
            total += len(node.tokens)
            stack.extend(node.children.values())
        return total


def score_continuations(runner: Runner, items: Sequence[tuple[Sequence[int], int]]) -> list[list[float]]:
    """For each ``(tokens, first)``: ``[log p(tokens[t] | tokens[:t]) for t in first .. len-1]``.

    All items go into one tree, so shared prefixes (a passage, a prompt, a condition) are
    computed once. The last token of each sequence is never run through the model: only the
    hidden states before each scored token are needed.
    """
    return score_continuations_keeping(runner, items, ())[0]


def score_continuations_keeping(
    runner: Runner, items: Sequence[tuple[Sequence[int], int]], keep: Sequence[Sequence[int]]
) -> tuple[list[list[float]], dict[tuple[int, ...], TreeNode]]:
    """:func:`score_continuations`, also keeping the key/values at the end of each ``keep`` prefix.

    The kept nodes (``state`` and ``last_logprobs`` set) are returned by prefix, so that decoding
    can start from them without computing the prefix again. A prefix that is not itself inside the
    tree (no item starts with it) adds its own tokens to the run.
    """
    tree = PrefixTree()
    indices = []
    for tokens, first in items:
        if not 1 <= first < len(tokens):
            raise ValueError(f"scored span must start after the first token and inside the sequence (first={first}, length={len(tokens)})")
        indices.append(tree.insert(list(tokens[:-1])))
    kept_indices = {tuple(prefix): tree.insert(list(prefix)) for prefix in keep}
    for index, (tokens, first) in zip(indices, items, strict=True):
        for t in range(first, len(tokens)):
            tree.want(index, t - 1, int(tokens[t]))
    kept = {prefix: tree.keep(index) for prefix, index in kept_indices.items()}
    runner.run(tree)
    results = []
    for index, (tokens, first) in zip(indices, items, strict=True):
        values = []
        for t in range(first, len(tokens)):
            node, offset = tree.locate(index, t - 1)
            values.append(node.logprobs[(offset, int(tokens[t]))])
        results.append(values)
    return results, kept
