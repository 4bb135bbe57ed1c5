"""Judge.sharing_prompts: sampling and generation start from the prompt states of label_probs."""

from __future__ import annotations

import numpy as np
import pytest
from engine_utils import tiny_handle

from nlgjudge.engine import ClassifyRequest, GenerateRequest, Judge, SampleRequest

PROMPTS = ["The cat sat on the mat", "Summary A : the council approved", "Which summary is more coherent ?", "Score the summary from 1 to 10 . Score :"]
LABELS = ("1", "5", "10")  # each label plus its end is several tokens: the kept prompt is an inner node


def _classify() -> list[ClassifyRequest]:
    return [ClassifyRequest(prompt=p, labels=LABELS, label_end="</s>") for p in PROMPTS]


def _sample() -> list[SampleRequest]:
    return [SampleRequest(prompt=p, n_samples=4, temperature=1.0, max_new_tokens=5, seed=i) for i, p in enumerate(PROMPTS)]


def _both(judge: Judge) -> tuple[list, list]:
    return judge.label_probs(_classify()), judge.sample(_sample())


@pytest.mark.parametrize("family", ["gpt2", "llama", "qwen2"])
def test_shared_prompts_give_the_same_results_and_skip_the_prompt_tokens(family: str) -> None:
    handle = tiny_handle(family)
    plain = Judge(handle, cache=False, progress=False)
    probs_plain, samples_plain = _both(plain)
    shared = Judge(handle, cache=False, progress=False)
    with shared.sharing_prompts():
        probs_shared, samples_shared = _both(shared)
    assert [r.texts for r in samples_shared] == [r.texts for r in samples_plain]
    np.testing.assert_allclose([r.probs for r in probs_shared], [r.probs for r in probs_plain], atol=1e-6)
    sampled_plain, sampled_shared = plain.reports[-1].stats, shared.reports[-1].stats
    # Only the generated tokens are computed: every prompt token was computed by label_probs.
    generated = sum(len(handle.load()[1](t, add_special_tokens=False).input_ids) for r in samples_plain for t in r.texts)
    assert sampled_shared.tokens_computed < sampled_plain.tokens_computed
    assert sampled_shared.tokens_computed <= generated + 4 * len(PROMPTS)  # + the stop token of each sample
    assert shared._shared_prompts is None  # released when the block ends


def test_greedy_generation_from_shared_prompts_equals_plain() -> None:
    handle = tiny_handle("llama")
    requests = [GenerateRequest(prompt=p, max_new_tokens=6) for p in PROMPTS]
    plain = Judge(handle, cache=False, progress=False).generate(requests)
    judge = Judge(handle, cache=False, progress=False)
    with judge.sharing_prompts():
        judge.label_probs(_classify())
        shared = judge.generate(requests)
    assert [r.text for r in shared] == [r.text for r in plain]


def test_the_byte_budget_bounds_what_is_kept() -> None:
    handle = tiny_handle("qwen2")
    plain = Judge(handle, cache=False, progress=False)
    _both(plain)
    judge = Judge(handle, cache=False, progress=False)
    with judge.sharing_prompts(max_bytes=0):
        _, samples = _both(judge)
        assert judge._shared_prompts == {}
    assert judge.reports[-1].stats.tokens_computed == plain.reports[-1].stats.tokens_computed
    assert [r.texts for r in samples] == [r.texts for r in plain.sample(_sample())]


def test_encoder_decoder_models_are_unchanged_by_the_block() -> None:
    handle = tiny_handle("t5")
    plain = _both(Judge(handle, cache=False, progress=False))[1]
    judge = Judge(handle, cache=False, progress=False)
    with judge.sharing_prompts():
        shared = _both(judge)[1]
        assert judge._shared_prompts == {}
    assert [r.texts for r in shared] == [r.texts for r in plain]


def test_blocks_do_not_nest_and_are_released_after_an_error() -> None:
    judge = Judge(tiny_handle("gpt2"), cache=False, progress=False)
    with pytest.raises(RuntimeError, match="nested"):
        with judge.sharing_prompts():
            with judge.sharing_prompts():
                pass
    assert judge._shared_prompts is None
    with pytest.raises(ValueError):
        with judge.sharing_prompts():
            raise ValueError("boom")
    assert judge._shared_prompts is None
