"""CacheStats: the computed / from-cache tally printed at the end of a run."""

from __future__ import annotations

import pytest

from nlgjudge.cache import CacheStats


def test_counts_and_summary() -> None:
    stats = CacheStats()
    stats.record("label_probs", computed=12, from_cache=228)
    stats.record("sample", computed=3)
    assert (stats.computed, stats.from_cache, stats.total) == (15, 228, 243)
    assert stats.summary() == "computed 15 outputs, 228 from the cache (243 in all, 93.8% cached)"
    assert stats.report().splitlines()[1:] == [
        "  label_probs: computed 12, from the cache 228",
        "  sample: computed 3, from the cache 0",
    ]


def test_empty_stats() -> None:
    assert CacheStats().summary() == "no outputs requested"


def test_merge_and_add() -> None:
    first, second = CacheStats(), CacheStats()
    first.record("a", computed=1, from_cache=2)
    second.record("a", computed=10)
    second.record("b", from_cache=5)
    combined = first + second
    assert (combined.computed, combined.from_cache) == (11, 7)
    assert combined.per_operation["a"].total == 13
    assert (first.computed, second.computed) == (1, 10)  # + does not modify its operands


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_bad_counts_are_rejected(bad: object) -> None:
    with pytest.raises(ValueError, match="non-negative int"):
        CacheStats().record(computed=bad)  # type: ignore[arg-type]
