"""A mirror of llama.cpp's KV-cell allocator: where each token of a batch will land, known in advance.

What it guarantees: :class:`_Cells` hands out cells in the order the pinned release's
``llama_kv_cache::find_slot`` takes them and frees them as ``seq_rm`` does, so the context
(:mod:`nlgjudge.engine.llamacpp.context`) can plan each batch's layout before decoding it. Pure
bookkeeping (indices only, no llama.cpp call), so it is tested without the library. :class:`_Row`
and :class:`_Block` are the units a batch is planned in.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


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

