"""From a request's prompt to token ids, the same way for the engine and for a plain forward pass."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nlgjudge.engine.requests import EngineInputError, Prompt


def prompt_key(prompt: Prompt, response_prefix: str) -> dict[str, Any]:
    """The exact prompt as it goes into a cache key (no tokenizer needed: cache hits load nothing)."""
    if isinstance(prompt, str):
        if response_prefix:
            raise EngineInputError(
                "response_prefix is for chat prompts; with a plain-text prompt write the ending into the text"
            )
        return {"text": prompt}
    return {"messages": [dict(m) for m in validate_messages(prompt)], "response_prefix": response_prefix}


def validate_messages(messages: Sequence[Mapping[str, str]]) -> list[Mapping[str, str]]:
    if not isinstance(messages, Sequence) or not messages:
        raise EngineInputError("a chat prompt must be a non-empty list of {'role', 'content'} messages")
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or set(message) != {"role", "content"}:
            raise EngineInputError(f"message {index} must be a dict with exactly 'role' and 'content'")
        if not str(message["content"]).strip():
            raise EngineInputError(f"message {index} ({message['role']}) has empty content")
    return list(messages)


def render_prompt(tokenizer: Any, prompt: Prompt, response_prefix: str = "") -> tuple[str, bool]:
    """(text, add_special_tokens). Chat prompts use the tokenizer's chat template."""
    if isinstance(prompt, str):
        if not prompt.strip():
            raise EngineInputError("empty prompt text")
        return prompt, True
    messages = validate_messages(prompt)
    if not getattr(tokenizer, "chat_template", None):
        raise EngineInputError(
            "this model's tokenizer has no chat template; pass the prompt as plain text instead"
        )
    text = tokenizer.apply_chat_template([dict(m) for m in messages], tokenize=False, add_generation_prompt=True)
    # The template already wrote the special tokens (BOS, turn markers) as text.
    return text + response_prefix, False


def encode_prompt(tokenizer: Any, prompt: Prompt, response_prefix: str = "") -> list[int]:
    text, special = render_prompt(tokenizer, prompt, response_prefix)
    ids = tokenizer(text, add_special_tokens=special)["input_ids"]
    if not ids:
        raise EngineInputError("the prompt encodes to no tokens")
    return list(ids)


def encode_labels(tokenizer: Any, labels: Sequence[str], label_end: str = "") -> list[list[int]]:
    """Token ids of each label (no special tokens); refuses labels the model cannot tell apart."""
    if len(labels) < 2:
        raise EngineInputError("prompt classification needs at least two labels")
    encoded = []
    for label in labels:
        if not isinstance(label, str) or label == "":
            raise EngineInputError(f"empty label in {list(labels)!r}")
        ids = list(tokenizer(label + label_end, add_special_tokens=False)["input_ids"])
        if not ids:
            raise EngineInputError(f"label {label!r} encodes to no tokens")
        encoded.append(ids)
    for i, a in enumerate(encoded):
        for j, b in enumerate(encoded):
            if i == j:
                continue
            if a == b:
                raise EngineInputError(
                    f"labels {labels[i]!r} and {labels[j]!r} encode to the same tokens {a}; the model cannot tell them apart"
                )
            if i < j and (b[: len(a)] == a or a[: len(b)] == b):
                short, long = (labels[i], labels[j]) if len(a) < len(b) else (labels[j], labels[i])
                raise EngineInputError(
                    f"label {short!r} is a token prefix of {long!r}, so P({short!r}) would include every "
                    f"continuation starting with it; pass label_end (e.g. '\\n' or the end-of-turn token) so "
                    "that each label is a complete answer"
                )
    return encoded
