"""Batch independence where llama.cpp's kernels depend on the row count: the judge (marked slow).

SmolLM2-135M's kernels do not depend on the batch at all, so the SmolLM2 tests cannot see what
these check, on Qwen2.5-Coder-1.5B-Instruct, whose Q4_K weights go through other kernels for
fewer than 8 rows (skipped when its package is not installed):

- ``LlamaCppModel.row_align`` is 8 even on AVX-512 CPUs, where the cell blocks are 16 wide: a row
  inside a padded batch of 8 is computed as inside one of 16;
- the output layer sees only the rows that ask for logits, so their count is padded too: without
  that, sampling the same requests in other chunks changed a next-token score by up to 0.018
  (the negative control below sees a difference);
- so both prefix-sharing schemes give the same bits.
"""

from __future__ import annotations

import numpy as np
import pytest

from nlgjudge.engine import ClassifyRequest, GenerateRequest, Judge, SampleRequest
from nlgjudge.models import MissingPackageError

pytestmark = pytest.mark.slow

NAME = "qwen2.5-coder-1.5b-instruct"
ARTICLE = (
    "Springfield's council voted on Monday to build a 12 million dollar library downtown. "
    "The mayor said construction would start in the spring and take two years."
)


@pytest.fixture(scope="module")
def judge() -> Judge:
    """The judge on llama.cpp (2 threads, no cache); skipped without llama-cpp-python or its package."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make install-backend)")
    judge = Judge(NAME, cache=False, progress=False, backend="llamacpp", threads=2)
    try:
        judge._load()
    except MissingPackageError as err:
        pytest.skip(str(err))
    return judge


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


def test_batches_padded_to_8_rows_give_the_bits_of_batches_padded_to_16(judge):
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


def _draws_by_request(judge: Judge, requests: list[SampleRequest], monkeypatch) -> dict[int, list[bytes]]:
    """Every next-token distribution each request's draws read, in order, keyed by the request's seed."""
    from nlgjudge.engine.llamacpp import generation  # the module whose code calls draw

    seen: dict[int, list[bytes]] = {}
    original = generation.draw

    def recording(scores, temperature, generator):
        seen.setdefault(int(generator.bit_generator.seed_seq.entropy), []).append(np.asarray(scores).tobytes())
        return original(scores, temperature, generator)

    with monkeypatch.context() as patch:
        patch.setattr(generation, "draw", recording)
        judge.sample(requests)
    return seen


def _together_and_alone(judge: Judge, requests: list[SampleRequest], monkeypatch) -> tuple[dict, dict]:
    """The draws of the requests in one call, and one request per call in reverse order."""
    model, _ = judge._load()
    model.reset()
    together = _draws_by_request(judge, requests, monkeypatch)
    model.reset()
    alone = _draws_by_request(Judge(NAME, cache=False, progress=False, backend="llamacpp", threads=2, chunk_size=1), requests[::-1], monkeypatch)
    return together, alone


def test_sampling_reads_the_same_bits_however_the_requests_are_chunked(judge, monkeypatch):
    model, _ = judge._load()
    requests = [
        SampleRequest(prompt=[{"role": "user", "content": f"{ARTICLE}\nRate summary {k} ('{ARTICLE[: 30 + 25 * k]}') from 1 to 5."}],
                      n_samples=3, temperature=1.0, max_new_tokens=3, seed=k)
        for k in range(3)
    ]
    together, alone = _together_and_alone(judge, requests, monkeypatch)
    assert together.keys() == alone.keys() == {0, 1, 2}
    assert all(together[k] == alone[k] for k in together)
    # The negative control: without the output-row padding (the engine before 16ae99d) the same
    # comparison finds a difference (measured on this AVX-512 machine; other CPUs may differ).
    if model.align == 16:
        model.pad_output_rows = False
        try:
            together, alone = _together_and_alone(judge, requests, monkeypatch)
        finally:
            model.pad_output_rows = True
        assert together.keys() == alone.keys() and not all(together[k] == alone[k] for k in together)


def test_both_prefix_sharing_schemes_give_the_same_bits_on_the_judge(judge, monkeypatch):
    model, _ = judge._load()
    from nlgjudge.engine.llamacpp import SCHEME_ENV

    summaries = ["The council approved a library.", "A library will open downtown in two years.", "Springfield voted."]
    requests = [
        ClassifyRequest(prompt=[{"role": "user", "content": f"{ARTICLE}\n\nSummary A: {summaries[i]}\n\nSummary B: {summaries[j]}\n\n"
                                                             f"Which summary is more {aspect}, Summary A or Summary B?"}],
                        response_prefix="Answer: Summary", labels=(" A", " B"))
        for i in range(3) for j in range(3) if i != j for aspect in ("coherent", "fluent")
    ]
    results = {}
    for scheme in ("sequential", "parallel"):
        monkeypatch.setenv(SCHEME_ENV, scheme)
        model.reset()
        results[scheme] = [r.logprobs for r in Judge(NAME, cache=False, progress=False, backend="llamacpp", threads=2).label_probs(requests)]
    assert all(np.array_equal(a, b) for a, b in zip(results["sequential"], results["parallel"], strict=True))
