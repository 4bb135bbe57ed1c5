"""Batches padded to 8 rows give the bits of batches padded to 16, on the judge (marked slow).

``LlamaCppModel.row_align`` is 8 even on AVX-512 CPUs, where the cell blocks are 16 wide: llama.cpp's
matrix kernels handle batches of fewer than 8 rows, and the rows beyond the last multiple of 8,
another way, but a row inside a padded batch of 8 is computed as inside one of 16. SmolLM2-135M's
kernels do not depend on the batch at all, so this runs on Qwen2.5-Coder-1.5B-Instruct, whose
Q4_K weights do (skipped when its package is not installed).
"""

from __future__ import annotations

import numpy as np
import pytest

from nlgjudge.engine import GenerateRequest, Judge, SampleRequest
from nlgjudge.models import MissingPackageError

pytestmark = pytest.mark.slow

NAME = "qwen2.5-coder-1.5b-instruct"
ARTICLE = (
    "Springfield's council voted on Monday to build a 12 million dollar library downtown. "
    "The mayor said construction would start in the spring and take two years."
)


def _logit_rows(judge: Judge, row_align: int | None) -> tuple[list[np.ndarray], list[object]]:
    """Every logit row the engine reads, and the texts, with batches padded to ``row_align`` rows
    (None: the engine's default)."""
    model, _ = judge._load()
    model.reset()
    default = model.row_align
    model.row_align = row_align or default
    seen: list[np.ndarray] = []
    original = model.logits

    def recording(index: int) -> np.ndarray:
        row = original(index)
        seen.append(row.copy())
        return row

    model.logits = recording  # type: ignore[method-assign]
    try:
        samples = judge.sample(
            [SampleRequest(prompt=[{"role": "user", "content": f"{ARTICLE[: 60 + 40 * k]}\nRate it from 1 to 5."}],
                           n_samples=1 + k % 2, temperature=1.0, max_new_tokens=4, seed=k) for k in range(3)]
        )
        summaries = judge.generate([GenerateRequest(prompt=[{"role": "user", "content": f"Summarize: {ARTICLE}"}], max_new_tokens=6)])
    finally:
        del model.logits
        model.row_align = default
    return seen, [s.texts for s in samples] + [g.text for g in summaries]


def test_batches_padded_to_8_rows_give_the_bits_of_batches_padded_to_16():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make install-backend)")
    judge = Judge(NAME, cache=False, progress=False, backend="llamacpp", threads=2)
    try:
        judge._load()
    except MissingPackageError as err:
        pytest.skip(str(err))
    rows_16, texts_16 = _logit_rows(judge, 16)
    assert judge._load()[0].row_align == 8
    rows_8, texts_8 = _logit_rows(judge, None)
    assert texts_8 == texts_16
    assert len(rows_8) == len(rows_16) > 10
    assert all(np.array_equal(a, b) for a, b in zip(rows_8, rows_16, strict=True))
    # The premise: fewer than 8 rows would change the logits (why the batches are padded at all).
    rows_4, _ = _logit_rows(judge, 4)
    if judge._load()[0].align == 16:  # measured on this AVX-512 machine; other CPUs may differ
        assert not all(np.array_equal(a, b) for a, b in zip(rows_4, rows_16, strict=True))
