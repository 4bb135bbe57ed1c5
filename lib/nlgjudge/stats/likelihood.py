"""Seed 003 eq. 2: a hypothesis's score from its token log-likelihoods (pure arithmetic).

Score(h | d, a, S) = sum_t w_t log p(h_t | h_<t, S). With equal weights w_t = 1/m this is the
mean token log-likelihood that BARTScore, T5Score and GPTScore use; with w_t = 1 it is the sum
(the total log-probability, which favours short hypotheses). The prompt words around S live in
:mod:`nlgjudge.prompts.narcissism`, the model calls in :mod:`nlgjudge.engine`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["weighted_loglikelihood"]


def weighted_loglikelihood(
    token_logprobs: Sequence[float] | np.ndarray, weights: Sequence[float] | np.ndarray | None = None
) -> float:
    """Eq. 2: sum_t w_t log p(h_t | ...); ``weights=None`` means w_t = 1/m (the mean)."""
    values = np.asarray(token_logprobs, dtype=float)
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"token_logprobs must be a non-empty 1-d sequence; got shape {values.shape}")
    # -inf is a legitimate log-probability (p = 0); NaN or +inf means the model output was broken.
    broken = np.isnan(values) | np.isposinf(values)
    if broken.any():
        raise ValueError(
            f"token_logprobs contain {int(broken.sum())} NaN or +inf value(s) (first at token "
            f"{int(np.argmax(broken))}); log-probabilities are finite or -inf, so the model output is broken"
        )
    if weights is None:
        return float(values.mean())
    w = np.asarray(weights, dtype=float)
    if w.shape != values.shape:
        raise ValueError(f"weights have shape {w.shape}, token log-probs {values.shape}; give one weight per token")
    if not np.isfinite(w).all():
        raise ValueError(f"weights contain {int((~np.isfinite(w)).sum())} NaN or infinite value(s)")
    return float(np.dot(w, values))
