"""How a prompt template becomes an engine request for a given model: one place, explicit.

Three styles, chosen per model and shown in every chapter that uses them:

* ``chat``: instruction-tuned decoder-only models (Qwen2.5-Instruct, SmolLM2-Instruct, Llama-2-chat).
  The template text is the user turn, rendered with the model's chat template; the assistant turn
  is opened with the ending's ``answer_prefix`` (e.g. "Summary") and the labels (" A", " B") are
  scored after it.
* ``plain``: base decoder-only models (Gemma-3-270m, GPT-2). The prompt text, the ending's
  suffix and answer prefix form one string; labels follow.
* ``seq2seq``: encoder-decoder models (FLAN-T5, BART). The prompt goes to the encoder; the
  decoder scores the whole labels including the answer prefix ("Summary A" vs "Summary B"),
  as the paper does with FlanT5.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nlgjudge.engine import ClassifyRequest, SampleRequest
from nlgjudge.models import PACKAGED_MODELS, ModelHandle, PackagedModel
from nlgjudge.prompts import PromptEnding

PROMPT_STYLES = ("chat", "plain", "seq2seq")
#: How a judge of each prompt style reads its prompts, for a chapter's reader.
STYLE_WORDS = {"chat": "its prompts as a user's turn in its chat template", "plain": "its prompts as plain text",
               "seq2seq": "its prompts as its encoder's input"}


def _packaged(handle: ModelHandle) -> PackagedModel | None:
    """The registry entry of a packaged model with a known prompt style (known without loading)."""
    if handle.source != "packaged":
        return None
    spec = PACKAGED_MODELS.get(handle.location)
    return spec if spec is not None and spec.prompt_style is not None else None


def prompt_style(handle: ModelHandle, style: str = "auto") -> str:
    """The prompt style for a model: ``style`` if given, else decided from the model's kind/tokenizer."""
    if style != "auto":
        if style not in PROMPT_STYLES:
            raise ValueError(f"unknown prompt style {style!r}; choose one of {PROMPT_STYLES} or 'auto'")
        return style
    spec = _packaged(handle)
    if spec is not None:
        return str(spec.prompt_style)
    if handle.kind == "seq2seq":
        return "seq2seq"
    _, tokenizer = _tokenizer_only(handle)
    return "chat" if getattr(tokenizer, "chat_template", None) else "plain"


def answer_end(handle: ModelHandle, style: str) -> str:
    """Text that closes a complete answer (so that score "1" is not a prefix of "10")."""
    spec = _packaged(handle)
    if spec is not None and spec.answer_end is not None:
        return spec.answer_end
    if style == "plain":
        return "\n"
    _, tokenizer = _tokenizer_only(handle)
    end = getattr(tokenizer, "eos_token", None)
    if not end:
        raise ValueError(f"{handle.name}: the tokenizer has no end-of-sequence token; pass label_end explicitly")
    return str(end)


def _tokenizer_only(handle: ModelHandle) -> tuple[None, Any]:
    if handle.is_loaded:
        return None, handle.load()[1]
    from transformers import AutoTokenizer

    return None, AutoTokenizer.from_pretrained(handle.location, revision=handle.revision)


def classify_request(
    text: str, ending: PromptEnding, style: str, meta: Mapping[str, Any], label_end: str = ""
) -> ClassifyRequest:
    """A prompt-classification request for ``text`` ended as ``ending`` says, in ``style``."""
    if style == "chat":
        return ClassifyRequest(
            prompt=[{"role": "user", "content": ending.user_text(text)}],
            labels=tuple(ending.labels),
            response_prefix=ending.answer_prefix,
            label_end=label_end,
            meta=dict(meta),
        )
    if style == "plain":
        return ClassifyRequest(prompt=ending.prompt_text(text), labels=tuple(ending.labels), label_end=label_end, meta=dict(meta))
    if style == "seq2seq":
        return ClassifyRequest(prompt=ending.user_text(text), labels=ending.full_labels, label_end=label_end, meta=dict(meta))
    raise ValueError(f"unknown prompt style {style!r}; choose one of {PROMPT_STYLES}")


def sample_request(
    text: str,
    ending: PromptEnding,
    style: str,
    meta: Mapping[str, Any],
    *,
    n_samples: int,
    temperature: float,
    max_new_tokens: int,
    seed: int,
) -> SampleRequest:
    """A sampling request (seed 000 eq. 4): the answer is generated after the ending's prefix."""
    common = dict(n_samples=n_samples, temperature=temperature, max_new_tokens=max_new_tokens, seed=seed, meta=dict(meta))
    if style == "chat":
        return SampleRequest(
            prompt=[{"role": "user", "content": ending.user_text(text)}], response_prefix=ending.answer_prefix, **common
        )
    if style == "plain":
        return SampleRequest(prompt=ending.prompt_text(text), **common)
    if style == "seq2seq":
        return SampleRequest(prompt=ending.user_text(text), **common)
    raise ValueError(f"unknown prompt style {style!r}; choose one of {PROMPT_STYLES}")
