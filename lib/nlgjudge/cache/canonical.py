"""Canonical JSON: one byte string per value, so that equal requests hash equally and exports diff cleanly.

Rules (strict JSON, no silent coercion):

- allowed: ``None``, ``bool``, ``int``, finite ``float``, ``str``, lists/tuples (written as lists) and
  dicts with ``str`` keys; numpy scalars and arrays are accepted and written via ``.tolist()``;
- rejected with :class:`NotJSONableError` naming the offending location: NaN and infinities (JSON has
  no spelling for them), dict keys that are not strings (``json`` would silently turn ``1`` into ``"1"``
  and make two different requests collide), and any other type.

Floats are written by ``repr`` (Python's shortest round-trip form), so ``json.loads`` gives back the
very same float.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["NotJSONableError", "to_json_tree", "canonical_json", "canonical_json_of_parsed", "loads_strict"]


class NotJSONableError(ValueError):
    """A value that cannot be stored as strict JSON (NaN, infinity, a non-string key, an unknown type)."""


def _is_numpy(obj: object) -> bool:
    # Duck-typed so that this module never imports numpy itself.
    return type(obj).__module__ == "numpy" and hasattr(obj, "tolist")


class _NotPlain(Exception):
    """Raised by :func:`_plain_tree` at the first value it cannot convert; the slow walk names it."""


def _plain_tree(obj: Any) -> Any:
    """:func:`to_json_tree` without building the error location of every item (keys are computed for
    every request, so this walk is hot); any doubt goes to the full walk."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        if not math.isfinite(obj):
            raise _NotPlain
        return float(obj)
    if isinstance(obj, dict):
        tree: dict[str, Any] = {}
        for key, item in obj.items():
            if not isinstance(key, str):
                raise _NotPlain
            tree[key] = _plain_tree(item)
        return tree
    if isinstance(obj, (list, tuple)):
        return [_plain_tree(item) for item in obj]
    if _is_numpy(obj):
        return _plain_tree(obj.tolist())
    raise _NotPlain


def to_json_tree(obj: Any, where: str = "value") -> Any:
    """Return ``obj`` as plain JSON types (lists, dicts, str, int, float, bool, None), or raise.

    ``where`` names the top-level object in error messages, e.g. ``request['labels'][2]``.
    """
    try:
        return _plain_tree(obj)
    except _NotPlain:
        return _json_tree(obj, where)  # the same walk again, to raise with the value's location


def _json_tree(obj: Any, where: str) -> Any:
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return int(obj)  # int subclasses (IntEnum, numpy ints on some platforms) become plain ints
    if isinstance(obj, float):
        if not math.isfinite(obj):
            raise NotJSONableError(
                f"{where} is {obj!r}: NaN and infinities have no JSON form; store None (or a string "
                "such as 'nan') for a missing number"
            )
        return float(obj)
    if isinstance(obj, dict):
        tree: dict[str, Any] = {}
        for key, item in obj.items():
            if not isinstance(key, str):
                raise NotJSONableError(
                    f"{where} has a dict key {key!r} of type {type(key).__name__}; JSON keys must be "
                    "strings (convert it with str() yourself so that the choice is explicit)"
                )
            tree[key] = _json_tree(item, f"{where}[{key!r}]")
        return tree
    if isinstance(obj, (list, tuple)):
        return [_json_tree(item, f"{where}[{index}]") for index, item in enumerate(obj)]
    if _is_numpy(obj):
        return _json_tree(obj.tolist(), where)
    raise NotJSONableError(
        f"{where} has type {type(obj).__name__}, which is not JSON-able; use str, int, float, bool, "
        "None, lists and dicts with string keys"
    )


def canonical_json(obj: Any, where: str = "value") -> str:
    """Strict, canonical JSON text: sorted keys, no whitespace, UTF-8 characters kept as they are."""
    return json.dumps(
        to_json_tree(obj, where),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )


def canonical_json_of_parsed(obj: Any) -> str:
    """:func:`canonical_json` for a value that came from :func:`loads_strict` (already plain, finite JSON).

    Skips the type walk, which dominates the cost of importing large released files.
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (NaN and infinities are not allowed)")


# One decoder for all calls: json.loads(text, parse_constant=...) would build a new one every time.
_STRICT_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def loads_strict(text: str) -> Any:
    """``json.loads`` that refuses the non-standard ``NaN``/``Infinity`` constants."""
    return _STRICT_DECODER.decode(text)
