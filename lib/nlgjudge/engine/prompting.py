"""From a request's prompt to token ids, the same way for the engine and for a plain forward pass.

Texts under judgment are data, never template syntax: a candidate or source that holds the judge's
control strings (``<|im_end|>``, a forged assistant turn) is tokenized as plain text, so it can
never close the judge's turn or write its answer. Only the chat template itself writes control
tokens. A prompt whose texts hold no control string is tokenized exactly as before (the same ids,
so every released output stays valid); one that holds some is tokenized piece by piece: the
template's pieces with their control tokens, the texts with ``split_special_tokens``. For a server,
which reads text, the control strings in the texts are escaped instead (:func:`escape_control`).
"""

from __future__ import annotations

import re
import weakref
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
    try:
        text = tokenizer.apply_chat_template([dict(m) for m in messages], tokenize=False, add_generation_prompt=True)
    except Exception as error:  # noqa: BLE001 - a template may refuse the prompt's roles (raise_exception), or fail to render
        roles = ", ".join(str(m["role"]) for m in messages)
        raise EngineInputError(f"the tokenizer's chat template refused this prompt (roles {roles}): "
                               f"{type(error).__name__}: {str(error).strip()[:200]}; use a tokenizer whose template "
                               "takes a system and a user message, or a packaged judge") from None
    # The template already wrote the special tokens (BOS, turn markers) as text.
    return text + response_prefix, False


#: Marks a message's place while the chat template is rendered around it (never in a real text).
_MARK = "\ue000nlgjudge-text-{}\ue001"
#: What :func:`escape_control` puts after a control string's first character (a zero-width space).
ESCAPE = "\u200b"


def control_strings(tokenizer: Any) -> tuple[str, ...]:
    """The tokenizer's control strings: its special tokens and special added tokens, longest first
    (read once per tokenizer: every prompt asks)."""
    try:
        return _CONTROL_STRINGS[tokenizer]
    except (KeyError, TypeError):
        pass
    strings = _read_control_strings(tokenizer)
    try:
        _CONTROL_STRINGS[tokenizer] = strings
    except TypeError:  # a tokenizer that cannot be weakly referenced: read each time
        pass
    return strings


_CONTROL_STRINGS: "weakref.WeakKeyDictionary[Any, tuple[str, ...]]" = weakref.WeakKeyDictionary()


def _read_control_strings(tokenizer: Any) -> tuple[str, ...]:
    found = {str(t) for t in getattr(tokenizer, "all_special_tokens", []) or [] if str(t)}
    for token in (getattr(tokenizer, "added_tokens_decoder", {}) or {}).values():
        if getattr(token, "special", False) and str(getattr(token, "content", "")):
            found.add(str(token.content))
    return tuple(sorted(found, key=lambda t: (-len(t), t)))


def control_strings_in(tokenizer: Any, texts: Sequence[str]) -> list[str]:
    """The control strings of ``tokenizer`` that occur in any of ``texts`` (sorted, each once)."""
    strings = control_strings(tokenizer)
    return sorted({c for c in strings for text in texts if c in text})


def encode_text(tokenizer: Any, text: str, add_special_tokens: bool) -> list[int]:
    """Token ids of a plain text under judgment: control strings in it stay plain text."""
    return list(tokenizer(text, add_special_tokens=add_special_tokens, split_special_tokens=True)["input_ids"])


def escape_control(tokenizer: Any, text: str) -> str:
    """``text`` with a zero-width space after the first character of each control string it holds,
    for a server that tokenizes text itself (it then reads them as plain characters)."""
    strings = control_strings(tokenizer)
    if not any(c in text for c in strings):
        return text
    pattern = re.compile("|".join(re.escape(c) for c in strings))
    return pattern.sub(lambda m: m.group(0)[0] + ESCAPE + m.group(0)[1:], text)


#: Why a server cannot take the unprotected research reading.
UNPROTECTED_ON_SERVER = (
    "protect_texts=False (control strings in the texts read as template syntax) is a research setting of the "
    "in-process runtimes; a server tokenizes the text itself, so run it with the torch or llama.cpp runtime")


def protection_key(protect_texts: object) -> dict[str, bool]:
    """What the protection adds to a request's cache key: nothing when on (every protected request keeps
    its released key), ``{"protect_texts": False}`` when off."""
    if protect_texts is True:
        return {}
    if protect_texts is False:
        return {"protect_texts": False}
    raise EngineInputError(f"protect_texts must be True or False, got {protect_texts!r}")


def encode_prompt(tokenizer: Any, prompt: Prompt, response_prefix: str = "", *, protect_texts: bool = True) -> list[int]:
    """Token ids of a prompt; the texts in it are data (see the module's docstring).

    ``protect_texts=False`` (research only) tokenizes the rendered prompt whole, so control strings in
    the texts become control tokens: what a judge without the protection reads."""
    if not protect_texts:
        text, special = render_prompt(tokenizer, prompt, response_prefix)
        ids = list(tokenizer(text, add_special_tokens=special)["input_ids"])
    elif isinstance(prompt, str):
        text, special = render_prompt(tokenizer, prompt, response_prefix)
        ids = encode_text(tokenizer, text, special)
    elif not control_strings_in(tokenizer, [str(m["content"]) for m in validate_messages(prompt)]):
        text, special = render_prompt(tokenizer, prompt, response_prefix)
        ids = list(tokenizer(text, add_special_tokens=special)["input_ids"])
    else:
        ids = _encode_piecewise(tokenizer, list(prompt), response_prefix)
    if not ids:
        raise EngineInputError("the prompt encodes to no tokens")
    return list(ids)


def _encode_piecewise(tokenizer: Any, messages: list[Mapping[str, str]], response_prefix: str) -> list[int]:
    """The template rendered around marks, its pieces tokenized with control tokens, the texts without."""
    contents = [str(m["content"]) for m in messages]
    marked = [{"role": m["role"], "content": _MARK.format(k)} for k, m in enumerate(messages)]
    text, _ = render_prompt(tokenizer, marked, response_prefix)
    whole, _ = render_prompt(tokenizer, messages, response_prefix)
    pieces = re.split("(" + _MARK.format(r"(\d+)") + ")", text)
    # re.split with two groups yields: template piece, whole mark, its index, template piece, ...
    template, order = pieces[0::3], [int(k) for k in pieces[2::3]]
    rebuilt = template[0] + "".join(contents[k] + piece for k, piece in zip(order, template[1:], strict=True))
    if sorted(order) != list(range(len(messages))) or rebuilt != whole:
        raise EngineInputError(
            "a text holds the judge's control strings and this model's chat template changes the texts it wraps, "
            "so they cannot be kept apart from its control tokens; remove the control strings "
            f"({', '.join(control_strings_in(tokenizer, contents))}) from the texts")
    ids: list[int] = []
    for i, piece in enumerate(template):
        if piece:
            ids += list(tokenizer(piece, add_special_tokens=False)["input_ids"])
        if i < len(order):
            ids += encode_text(tokenizer, contents[order[i]], False)
    return ids


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
