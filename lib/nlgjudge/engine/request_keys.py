"""What goes into each judge operation's cache key besides the model and its fingerprint, validated on the way.

A key holds exactly what decides the output: the prompt as written (:func:`~nlgjudge.engine.prompting.prompt_key`),
the labels or decoding settings, and the texts' protection only where it is off (so every protected request keeps
the key its released output was stored under).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from nlgjudge.engine.prompting import prompt_key, protection_key
from nlgjudge.engine.requests import ClassifyRequest, EngineInputError, GenerateRequest, LoglikRequest, SampleRequest


def _keyed_label_probs(r: ClassifyRequest) -> dict[str, Any]:
    if isinstance(r.labels, str):
        raise EngineInputError(
            f"labels must be a sequence of label strings, got the single string {r.labels!r} (which would be read as "
            f"the labels {list(r.labels)!r}); write e.g. labels=(' A', ' B')"
        )
    labels = tuple(r.labels)
    if len(labels) < 2 or any(not isinstance(x, str) or x == "" for x in labels):
        raise EngineInputError(f"labels must be at least two non-empty strings, got {labels!r}")
    if len(set(labels)) != len(labels):
        raise EngineInputError(f"duplicate labels {labels!r}")
    return {**prompt_key(r.prompt, r.response_prefix), "labels": list(labels), "label_end": r.label_end,
            **protection_key(r.protect_texts)}


def _keyed_sample(r: SampleRequest) -> dict[str, Any]:
    if r.n_samples < 1 or r.max_new_tokens < 1 or not (r.temperature > 0 and math.isfinite(r.temperature)):
        raise EngineInputError(
            f"sampling needs n_samples >= 1, max_new_tokens >= 1 and a finite temperature > 0, got {r!r}"
        )
    return {
        **prompt_key(r.prompt, r.response_prefix),
        "n_samples": r.n_samples,
        "temperature": float(r.temperature),
        "max_new_tokens": r.max_new_tokens,
        "seed": r.seed,
    }


def _keyed_generate(r: GenerateRequest) -> dict[str, Any]:
    if r.max_new_tokens < 1:
        raise EngineInputError("max_new_tokens must be >= 1")
    return {**prompt_key(r.prompt, r.response_prefix), "max_new_tokens": r.max_new_tokens, "decoding": "greedy"}


def _keyed_loglikelihood(r: LoglikRequest) -> dict[str, Any]:
    if not r.condition.strip() or not r.target.strip():
        raise EngineInputError("empty condition or target text in a log-likelihood request")
    return {"condition": r.condition, "target": r.target}


#: What goes into each operation's cache key besides model and fingerprint (validated on the way).
_KEYED_FIELDS: dict[str, Callable[[Any], dict[str, Any]]] = {
    "label_probs": _keyed_label_probs,
    "sample": _keyed_sample,
    "generate": _keyed_generate,
    "loglikelihood": _keyed_loglikelihood,
}


def _keyed(operation: str, requests: Sequence[Any]) -> list[dict[str, Any]]:
    return [_KEYED_FIELDS[operation](r) for r in requests]
