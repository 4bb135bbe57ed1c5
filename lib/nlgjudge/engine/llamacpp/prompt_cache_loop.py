"""The plain prompt-cache loop: the baseline a llama.cpp user gets, which the benchmark compares against.

What it guarantees: whole-label log-probabilities, one prompt after another on one KV sequence,
reusing only the common prefix with the previous prompt (as llama-server's ``cache_prompt`` or a
plain llama-cpp-python loop); started on an empty cache, its results equal the tree runner's bit
for bit (``tests/test_engine_llamacpp_smollm2.py``), so the benchmark compares time alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nlgjudge.engine.llamacpp.context import TRUNK, LlamaCppModel, _log_softmax_rows


def prefix_cache_loop_label_logprobs(
    model: LlamaCppModel, prompts: Sequence[Sequence[int]], labels: Sequence[Sequence[Sequence[int]]]
) -> list[list[float]]:
    """Whole-label log-probabilities, one prompt after another on one KV sequence.

    Keeps the key/values of the longest common prefix with the previous prompt and decodes the
    rest in ``n_batch`` pieces, logits at the last prompt token only; a label of several tokens
    is decoded after the prompt and removed again. This is what llama-server's prompt cache or a
    plain llama-cpp-python loop gives; the benchmark compares the tree runner against it. Started
    on an empty cache (:meth:`LlamaCppModel.reset`), every prompt lies in the cache exactly as it
    would alone, so its results equal the tree runner's bit for bit.
    """
    m = model
    out: list[list[float]] = []
    with m.lock:
        m.ensure_capacity(max(len(p) + max(len(x) for x in ls) for p, ls in zip(prompts, labels, strict=True)) + 2 * m.n_batch)
        previous = m.trunk
        for prompt, label_ids in zip(prompts, labels, strict=True):
            common = 0
            limit = min(len(previous), len(prompt) - 1)  # the last prompt token is always decoded (its logits)
            while common < limit and previous[common] == prompt[common]:
                common += 1
            m.drop(TRUNK, common)
            step = m.n_batch - m.align
            for start in range(common, len(prompt), step):
                stop = min(start + step, len(prompt))
                m.decode(prompt[start:stop], range(start, stop), [TRUNK] * (stop - start), [i == len(prompt) - 1 for i in range(start, stop)])
            last = _log_softmax_rows(m.logits(stop - start - 1)[None])[0]
            scores = []
            for label in label_ids:
                total = float(last[label[0]])
                if len(label) > 1:
                    n = len(label) - 1
                    m.decode(label[:n], range(len(prompt), len(prompt) + n), [TRUNK] * n, [True] * n)
                    rows = _log_softmax_rows(np.stack([m.logits(i) for i in range(n)]))
                    total += float(sum(rows[i, label[i + 1]] for i in range(n)))
                    m.drop(TRUNK, len(prompt))
                scores.append(total)
            out.append(scores)
            previous = list(prompt)
        m.trunk = list(previous)
    return out

