"""Request and result types of the judge operations, and the engine's input errors.

A prompt is either plain text (used as is; the tokenizer adds its usual special tokens such as a
BOS) or a list of chat messages (``[{"role": "user", "content": ...}]``) rendered with the model's
own chat template plus ``response_prefix``: the start of the assistant's answer, written out by
the caller (for instance ``"Answer: Summary"``) so that how every prompt ends is explicit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

import numpy as np

Message = Mapping[str, str]
Prompt = Union[str, Sequence[Message]]


class EngineInputError(ValueError):
    """A request the engine cannot score as asked (empty text, indistinguishable labels, ...)."""


class ContextTooLongError(EngineInputError):
    """A prompt longer than the model's context window (pass ``truncate=True`` to cut it)."""


class NumericalError(FloatingPointError):
    """NaN or infinite scores came out of the model."""


@dataclass(frozen=True)
class ClassifyRequest:
    """Probabilities of ``labels`` as the continuation of ``prompt`` (seed 000, eq. 3).

    Each label is scored as its whole token sequence (``label_end`` appended, e.g. ``"\\n"`` or the
    end-of-turn token, when one label's tokens start another's, as "1" and "10" do).
    """

    prompt: Prompt
    labels: tuple[str, ...]
    response_prefix: str = ""
    label_end: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)
    #: Research only (the gaming chapter): ``False`` lets control strings in the texts act as the judge's
    #: template syntax, as an unprotected judge reads them, to measure what the protection prevents.
    #: In-process runtimes only; a server refuses it. Never for judging.
    protect_texts: bool = True


@dataclass
class ClassifyResult:
    probs: np.ndarray  # normalised over the labels
    logprobs: np.ndarray  # whole-sequence log p(label | prompt), unnormalised
    from_cache: bool
    truncated: bool = False
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SampleRequest:
    """``n_samples`` continuations at ``temperature`` (seed 000, eqs. 4-5), reproducible from ``seed``."""

    prompt: Prompt
    n_samples: int = 1
    temperature: float = 1.0
    max_new_tokens: int = 5
    seed: int = 0
    response_prefix: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class SampleResult:
    texts: list[str]
    from_cache: bool
    truncated: bool = False
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class LoglikRequest:
    """Per-token log p(target | condition) (BARTScore / T5Score / GPTScore, seed 003 eq. 2).

    ``condition`` is the full conditioning text, prefix and suffix included (see
    :func:`nlgjudge.prompts.narcissism.likelihood_condition`). For decoder-only models the condition
    and target are tokenised separately and concatenated, so the target's tokens never depend on
    where the condition ends. For encoder-decoder models the condition is the encoder input and
    the target (with the end-of-sequence token, as BARTScore does) the decoder output.
    """

    condition: str
    target: str
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class LoglikResult:
    token_logprobs: np.ndarray
    tokens: list[str]
    from_cache: bool
    truncated: bool = False
    meta: Mapping[str, Any] = field(default_factory=dict)

    def score(self, weights: Sequence[float] | np.ndarray | None = None) -> float:
        from nlgjudge.stats.likelihood import weighted_loglikelihood

        return weighted_loglikelihood(self.token_logprobs, weights)


@dataclass(frozen=True)
class GenerateRequest:
    """Greedy generation (e.g. a summary with a family's prompt, seed 003 Table 4)."""

    prompt: Prompt
    max_new_tokens: int = 60
    response_prefix: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class GenerateResult:
    text: str
    from_cache: bool
    truncated: bool = False
    meta: Mapping[str, Any] = field(default_factory=dict)
