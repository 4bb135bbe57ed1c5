"""A few real comparisons with the packaged SmolLM2-135M-Instruct on the torch runtime (marked slow).

The llama.cpp runtime on the same model: test_engine_llamacpp_smollm2.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from nlgjudge.engine import ClassifyRequest, Judge
from nlgjudge.models import MissingPackageError, resolve_model

pytestmark = pytest.mark.slow

PASSAGE = (
    "The city council of Springfield voted on Monday to build a new public library downtown. "
    "The library will cost 12 million dollars and is expected to open in two years. Council members "
    "said the old library was too small and had a leaking roof."
)
GOOD = "Springfield's council approved a 12 million dollar downtown library, due in two years, to replace the small, leaking old one."
BAD = "A football team won a match on Sunday after extra time."


def _request(a: str, b: str) -> ClassifyRequest:
    content = f"{PASSAGE}\n\nSummary A: {a}\n\nSummary B: {b}\n\nWhich summary is more consistent with the passage, Summary A or Summary B?"
    return ClassifyRequest(prompt=[{"role": "user", "content": content}], response_prefix="Answer: Summary", labels=(" A", " B"))


@pytest.fixture(scope="module")
def smollm2():
    handle = resolve_model("smollm2-135m-instruct")
    try:
        handle.load()
    except MissingPackageError as err:
        pytest.skip(str(err))
    return handle


def test_real_comparisons_match_a_plain_forward_and_show_position_bias(smollm2, tmp_path):
    import torch

    from nlgjudge.cache import OutputCache
    from nlgjudge.engine.prompting import encode_prompt

    model, tok = smollm2.load()
    assert [tok(x, add_special_tokens=False).input_ids for x in (" A", " B")] == [[330], [389]]  # models.md
    requests = [_request(GOOD, BAD), _request(BAD, GOOD)]
    with OutputCache(tmp_path / "c.sqlite") as cache:
        results = Judge(smollm2, cache=cache, progress=False, backend="torch").label_probs(requests)
    for request, result in zip(requests, results):
        ids = encode_prompt(tok, request.prompt, request.response_prefix)
        with torch.inference_mode():
            last = torch.log_softmax(model(torch.tensor([ids])).logits[0, -1], -1)
        np.testing.assert_allclose(result.logprobs, [float(last[330]), float(last[389])], atol=1e-4)
    p_good_first, p_bad_first = results[0].probs[0], results[1].probs[0]
    # Recorded behaviour (models.md): SmolLM2 answers "A" whatever the order -- positional bias.
    assert p_good_first > 0.5 and p_bad_first > 0.5
