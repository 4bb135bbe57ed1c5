"""Bookkeeping for a run: how many outputs were computed and how many came from the cache."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["CacheStats", "OperationCounts"]


@dataclass
class OperationCounts:
    """Counts for one operation (e.g. ``label_probs``)."""

    computed: int = 0
    from_cache: int = 0

    @property
    def total(self) -> int:
        return self.computed + self.from_cache


@dataclass
class CacheStats:
    """Running totals of computed vs cached outputs, overall and per operation.

    >>> stats = CacheStats()
    >>> stats.record("label_probs", computed=12, from_cache=228)
    >>> stats.summary()
    'computed 12 outputs, 228 from the cache (240 in all, 95.0% cached)'
    """

    computed: int = 0
    from_cache: int = 0
    per_operation: dict[str, OperationCounts] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return self.computed + self.from_cache

    def record(self, operation: str | None = None, *, computed: int = 0, from_cache: int = 0) -> None:
        """Add ``computed`` freshly computed outputs and ``from_cache`` cache hits (both >= 0)."""
        for name, count in (("computed", computed), ("from_cache", from_cache)):
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise ValueError(f"{name} must be a non-negative int, got {count!r}")
        self.computed += computed
        self.from_cache += from_cache
        if operation is not None:
            counts = self.per_operation.setdefault(operation, OperationCounts())
            counts.computed += computed
            counts.from_cache += from_cache

    def merge(self, other: CacheStats) -> None:
        """Add another run's counts into this one (e.g. several Judge objects of one chapter)."""
        self.computed += other.computed
        self.from_cache += other.from_cache
        for operation, counts in other.per_operation.items():
            mine = self.per_operation.setdefault(operation, OperationCounts())
            mine.computed += counts.computed
            mine.from_cache += counts.from_cache

    def __add__(self, other: CacheStats) -> CacheStats:
        combined = CacheStats()
        combined.merge(self)
        combined.merge(other)
        return combined

    def summary(self) -> str:
        """One line for the end of a run."""
        if self.total == 0:
            return "no outputs requested"
        share = 100.0 * self.from_cache / self.total
        return (
            f"computed {self.computed} outputs, {self.from_cache} from the cache "
            f"({self.total} in all, {share:.1f}% cached)"
        )

    def report(self) -> str:
        """The summary line followed by one line per operation (sorted by name)."""
        lines = [self.summary()]
        for operation in sorted(self.per_operation):
            counts = self.per_operation[operation]
            lines.append(f"  {operation}: computed {counts.computed}, from the cache {counts.from_cache}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()
