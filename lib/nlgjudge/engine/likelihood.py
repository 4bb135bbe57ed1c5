"""Likelihood scoring as in BARTScore, T5Score and GPTScore (seed 003, eq. 2 and Tables 5-6).

Score(h | d, a, S) = sum_t w_t log p(h_t | h_<t, S): with equal weights w_t = 1/m this is the mean
token log-likelihood the three scorers use. The conditioning text is the supplementary text S
(the source in the reference-free setting, the reference in the reference-based one) with the
prefix or suffix each model family was given (seed 003, Tables 5 and 6).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Affixes:
    prefix: str = ""
    suffix: str = ""


# family -> (reference-free affixes, reference-based affixes); seed 003 Tables 5 and 6.
# Fine-tuned summarisers (the "-CNN"/"-XSUM" checkpoints) use none: pass Affixes() for them.
SEED003_AFFIXES: dict[str, tuple[Affixes, Affixes]] = {
    "bart": (Affixes(prefix="Summarize:"), Affixes(suffix="in other words:")),
    "t5": (Affixes(prefix="Summarize:"), Affixes(prefix="Paraphrase:")),
    "gpt2": (Affixes(suffix="TL;DR:"), Affixes(suffix="Paraphrase the sentence:")),
    "gpt3": (Affixes(suffix="TL;DR:"), Affixes(suffix="Paraphrase the sentence:")),
    "flan-t5": (Affixes(suffix="TL;DR:"), Affixes(suffix="Paraphrase the sentence:")),
    "cohere": (Affixes(prefix="Write a concise summarization:"), Affixes(suffix="Paraphrase the sentence:")),
}


def seed003_affixes(family: str, reference_based: bool) -> Affixes:
    """The prefix/suffix of seed 003 for a pretrained (not summarisation-fine-tuned) model family."""
    key = family.lower()
    if key not in SEED003_AFFIXES:
        raise KeyError(f"unknown family {family!r}; known: {', '.join(SEED003_AFFIXES)}")
    return SEED003_AFFIXES[key][1 if reference_based else 0]


def scoring_condition(supplementary_text: str, affixes: Affixes, separator: str = " ") -> str:
    """prefix + S + suffix, joined by ``separator`` (empty parts skipped)."""
    if not supplementary_text.strip():
        raise ValueError("empty supplementary text (source or reference)")
    return separator.join(part for part in (affixes.prefix, supplementary_text, affixes.suffix) if part)


def weighted_loglikelihood(token_logprobs: Sequence[float] | np.ndarray, weights: Sequence[float] | np.ndarray | None = None) -> float:
    """Eq. 2: sum_t w_t log p(h_t | ...); ``weights=None`` means w_t = 1/m (the mean)."""
    values = np.asarray(token_logprobs, dtype=float)
    if values.ndim != 1 or values.size == 0:
        raise ValueError("token_logprobs must be a non-empty 1-d sequence")
    if weights is None:
        return float(values.mean())
    w = np.asarray(weights, dtype=float)
    if w.shape != values.shape:
        raise ValueError(f"weights have shape {w.shape}, token log-probs {values.shape}")
    return float(np.dot(w, values))
