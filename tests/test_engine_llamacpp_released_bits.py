"""Released SmolLM2 outputs recomputed by the in-process llama.cpp runtime: same keys, same bits (marked slow).

The llama.cpp runtime promises outputs that do not depend on batching, chunking or the other
requests computed with them (:mod:`nlgjudge.engine.llamacpp`), so a sample of the released
records, rebuilt from the dataset by the studies' own request builders and computed afresh in a
batch of their own, must come back under the same cache keys with the same bits (floats compared
exactly, sampled texts character for character). This guards refactorings of the runtime (the
split of ``engine/llamacpp.py`` into modules, issue 38): a changed key, fingerprint or result
fails here. SmolLM2-135M on one thread, 34 requests on the
shortest SummEval article of the plan: under a minute. Skipped without
llama-cpp-python, the packaged model or the released outputs and dataset.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from nlgjudge.config import outputs_dir
from nlgjudge.engine import Judge

pytestmark = pytest.mark.slow

NAME = "smollm2-135m-instruct"
#: Requests recomputed per (study, operation): (blocks, block size), the blocks evenly spread over one
#: context's requests. A block is consecutive requests (one pair or candidate, its four aspects), which
#: share their prompt but its last words: cheap to compute, and the prefix tree has siblings to share.
SAMPLE = {("comparative", "label_probs"): (6, 4), ("scoring", "label_probs"): (2, 4), ("scoring", "sample"): (1, 2)}


def _released(folder: str, operation: str) -> dict[str, dict]:
    """The released llama.cpp records of SmolLM2 in ``folder``, by cache key."""
    path = outputs_dir() / folder / f"{NAME}__{operation}.jsonl"
    if not path.exists():
        pytest.skip(f"no released outputs at {path}")
    records = (json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return {r["key"]: r for r in records if r["fingerprint"].endswith("|runtime=llama.cpp")}


def _spread(items: list, blocks: int, size: int) -> list:
    """``blocks`` runs of ``size`` consecutive items starting at multiples of ``size``, evenly spread over
    ``items`` (the first and the last run included)."""
    starts = sorted(set(np.linspace(0, len(items) // size - 1, blocks).round().astype(int) * size))
    return [item for start in starts for item in items[start : start + size]]


@pytest.fixture(scope="module")
def judge() -> Judge:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make install-backend)")
    from nlgjudge.models import MissingPackageError

    judge = Judge(NAME, cache=False, progress=False, backend="llamacpp", threads=1)
    try:
        judge._load()
    except MissingPackageError as err:
        pytest.skip(str(err))
    return judge


@pytest.fixture(scope="module")
def context():
    """The plan's SummEval subset (as ``make outputs`` built it), cut to its shortest article (the cheapest)."""
    from nlgjudge.data import DataNotFoundError, load_dataset
    from nlgjudge.studies.plan import N_CONTEXTS, SEED

    try:
        ds = load_dataset("summeval", n_contexts=N_CONTEXTS["summeval"], seed=SEED)
    except DataNotFoundError as error:  # pragma: no cover - depends on the machine
        pytest.skip(str(error))
    shortest = min(ds.context_ids(), key=lambda c: len(str(ds.candidates(c)["source"].iloc[0])))
    return ds.restrict([shortest])


def _planned(judge: Judge, study_name: str, operation: str, ds) -> list[tuple[str, object]]:
    """(cache key, request) of a sample of ``study_name``'s ``operation`` requests on ``ds``."""
    from nlgjudge.studies.registry import StudyOptions, get_study
    from nlgjudge.studies.released import request_keys

    requests = [r for op, build in get_study(study_name).checks(judge.handle, ds, StudyOptions()) if op == operation
                for r in build(ds)]
    chosen = _spread(requests, *SAMPLE[(study_name, operation)])
    return list(zip(request_keys(judge, operation, chosen), chosen, strict=True))


def test_the_runtime_keys_its_outputs_as_released(judge):
    from nlgjudge.engine.llamacpp import FINGERPRINT_SUFFIX

    assert FINGERPRINT_SUFFIX == "|runtime=llama.cpp"
    assert judge.fingerprint == judge.handle.fingerprint + "|runtime=llama.cpp"


@pytest.mark.parametrize("study_name", ["comparative", "scoring"])
def test_released_label_probabilities_recompute_bit_for_bit(judge, context, study_name):
    released = _released(f"{study_name}-summeval", "label_probs")
    planned = _planned(judge, study_name, "label_probs", context)
    blocks, size = SAMPLE[(study_name, "label_probs")]
    assert len(planned) == blocks * size
    missing = [key for key, _ in planned if key not in released]
    assert not missing, f"{len(missing)} of {len(planned)} keys are not in the release (changed keys?)"
    judge._load()[0].reset()  # no prompt cache from an earlier test
    results = judge.label_probs([request for _, request in planned])
    for (key, _), result in zip(planned, results, strict=True):
        # exact: the JSON floats are float64 reprs, which round-trip
        assert result.logprobs.tolist() == released[key]["value"]["logprobs"], key


def test_released_samples_recompute_token_for_token(judge, context):
    released = _released("scoring-summeval", "sample")
    planned = _planned(judge, "scoring", "sample", context)
    assert [key for key, _ in planned if key not in released] == []
    judge._load()[0].reset()
    results = judge.sample([request for _, request in planned])
    for (key, _), result in zip(planned, results, strict=True):
        assert result.texts == released[key]["value"]["texts"], key


def test_a_patch_of_draw_where_it_is_called_sees_every_draw(judge, monkeypatch):
    """Since the split, ``draw`` is called from :mod:`nlgjudge.engine.llamacpp.generation`: the row-padding
    test and the decoding benchmark patch it there, and this checks that such a patch is reached."""
    from nlgjudge.engine import SampleRequest
    from nlgjudge.engine.llamacpp import generation

    calls = []
    original = generation.draw

    def recording(scores, temperature, generator):
        calls.append(temperature)
        return original(scores, temperature, generator)

    monkeypatch.setattr(generation, "draw", recording)
    request = SampleRequest(prompt=[{"role": "user", "content": "Say one word."}], n_samples=2, temperature=1.0,
                            max_new_tokens=2, seed=0)
    judge.sample([request])
    assert len(calls) >= 2  # one per sample and step, at least the first step of both samples
