"""Content addresses of model outputs.

A key is the sha256 of the canonical JSON of everything that determines an output: the model name,
a fingerprint of its weights, the operation and the request (exact prompt text, label words,
decoding settings, seed). Same inputs, same key, in any process, on any machine.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from nlgjudge.cache.canonical import canonical_json_of_parsed, to_json_tree

__all__ = ["request_key", "is_valid_key", "KEY_PATTERN"]

#: A key is 64 lowercase hexadecimal characters (a sha256 digest).
KEY_PATTERN = re.compile(r"[0-9a-f]{64}")


def _require_text(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}: {value!r}")
    if value == "":
        raise ValueError(f"{name} must not be empty")
    return value


def request_key(model_id: str, fingerprint: str, operation: str, request: Mapping[str, Any]) -> str:
    """sha256 hex digest of the canonical JSON of ``model_id``, ``fingerprint``, ``operation`` and ``request``.

    Raises ``NotJSONableError`` (a ``ValueError``) naming the offending field when the request holds
    NaN, infinity, non-string dict keys or a type JSON cannot represent.
    """
    _require_text("model_id", model_id)
    _require_text("fingerprint", fingerprint)
    _require_text("operation", operation)
    if not isinstance(request, Mapping):
        raise TypeError(f"request must be a mapping (dict) of JSON-able values, got {type(request).__name__}")
    payload = {
        "fingerprint": fingerprint,
        "model_id": model_id,
        "operation": operation,
        "request": to_json_tree(dict(request), where="request"),  # errors name e.g. request['labels'][1]
    }
    text = canonical_json_of_parsed(payload)  # already plain JSON types: no second walk
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def is_valid_key(key: object) -> bool:
    """True when ``key`` looks like a key made by :func:`request_key`."""
    return isinstance(key, str) and KEY_PATTERN.fullmatch(key) is not None
