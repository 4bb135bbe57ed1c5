"""JSON read strictly: an object that names one key twice is refused, never read as its last value.

``json.loads`` keeps the last of two equal keys without a word, so a file's row or a server's answer
that says two things would silently say one. :func:`unique_keys` is the ``object_pairs_hook`` that
refuses it with :class:`DuplicateKeyError`, which names the key. Pure, no imports beyond typing.
"""

from __future__ import annotations

from typing import Any


class DuplicateKeyError(ValueError):
    """A JSON object names ``key`` twice."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``' object hook: a key given twice is refused (JSON itself keeps the last one silently)."""
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise DuplicateKeyError(key)
        seen[key] = value
    return seen
