"""The llama.cpp backend without loading a model: runtime choice, clear errors, cache keys, layout mirror.

The tests that run the real SmolLM2 GGUF on llama.cpp are in test_engine_llamacpp_smollm2.py.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from engine_utils import tiny_handle

from nlgjudge.cache import CacheEntry, OutputCache, request_key
from nlgjudge.engine import BackendUnavailableError, ClassifyRequest, EngineInputError, Judge
from nlgjudge.engine.judge import _keyed
from nlgjudge.engine.llamacpp import FINGERPRINT_SUFFIX, PINNED_VERSION, _Cells, thread_count
from nlgjudge.models import PACKAGED_MODELS, resolve_model

SMOLLM2 = "smollm2-135m-instruct"
REQUEST = ClassifyRequest(
    prompt=[{"role": "user", "content": "Summary A: the council met. Summary B: a storm hit. Which is better?"}],
    response_prefix="Answer: Summary",
    labels=(" A", " B"),
)


# ---- which runtime -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", [n for n, m in PACKAGED_MODELS.items() if m.gguf_file])
def test_auto_runs_packaged_gguf_models_on_llamacpp(name, monkeypatch):
    monkeypatch.delenv("NLGJUDGE_BACKEND", raising=False)
    judge = Judge(name, cache=False)
    assert judge.backend == "llamacpp"
    assert judge.runtime_description().startswith("llama.cpp (llama-cpp-python ")
    assert f"GGUF {PACKAGED_MODELS[name].quantisation} as shipped" in judge.runtime_description()


def test_the_runtime_description_names_the_pinned_release_installed_or_not(monkeypatch):
    """Chapters read released outputs computed on the pinned llama-cpp-python: a book built without
    the backend says the same as one built with it; another installed release is named as such."""
    from importlib import metadata

    from nlgjudge.engine.llamacpp import PINNED_VERSION

    judge = Judge(SMOLLM2, cache=False, backend="llamacpp")
    real_version = metadata.version

    def version(name: str, answer: str | None) -> str:
        if name != "llama-cpp-python":
            return real_version(name)
        if answer is None:
            raise metadata.PackageNotFoundError(name)
        return answer

    for answer, expected in ((None, PINNED_VERSION), (PINNED_VERSION, PINNED_VERSION), ("9.9.9", f"9.9.9, not the pinned {PINNED_VERSION}")):
        monkeypatch.setattr(metadata, "version", lambda name, answer=answer: version(name, answer))
        assert judge.runtime_description() == f"llama.cpp (llama-cpp-python {expected}, GGUF Q4_1 as shipped)"


def test_auto_keeps_hub_local_memory_and_encoder_models_on_torch(tmp_path, monkeypatch):
    monkeypatch.delenv("NLGJUDGE_BACKEND", raising=False)
    folder = tmp_path / "my-model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    for model in ("google/flan-t5-large", str(folder), tiny_handle("gpt2"), "minilm-l6"):
        judge = Judge(model, cache=False)
        assert judge.backend == "torch", model
        assert judge.runtime_description().startswith("transformers (")
    packaged_on_torch = Judge(SMOLLM2, cache=False, backend="torch")
    assert "de-quantised GGUF Q4_1" in packaged_on_torch.runtime_description()


def test_llamacpp_for_a_model_it_cannot_run_is_a_clear_error():
    with pytest.raises(ValueError, match=r"runs the packaged GGUF models only .*use backend='torch'"):
        Judge("google/flan-t5-large", cache=False, backend="llamacpp")
    with pytest.raises(ValueError, match=r"backend='cuda' is not a runtime; choose one of auto, torch, llamacpp"):
        Judge(SMOLLM2, cache=False, backend="cuda")


def test_environment_sets_the_default_backend(monkeypatch):
    monkeypatch.setenv("NLGJUDGE_BACKEND", "torch")
    assert Judge(SMOLLM2, cache=False).backend == "torch"
    assert Judge(SMOLLM2, cache=False, backend="auto").backend == "llamacpp"  # an explicit choice wins
    monkeypatch.setenv("NLGJUDGE_BACKEND", "gpu")
    with pytest.raises(ValueError, match="NLGJUDGE_BACKEND='gpu' is not a runtime"):
        Judge(SMOLLM2, cache=False)


def test_missing_llama_cpp_says_how_to_install_it_or_use_torch(monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import llama_cpp now raises ImportError
    judge = Judge(SMOLLM2, cache=False, backend="llamacpp")  # choosing it is fine: nothing loads yet
    with pytest.raises(BackendUnavailableError) as info:
        judge.label_probs([REQUEST])
    message = str(info.value)
    assert f"pip install llama-cpp-python=={PINNED_VERSION}" in message
    assert "make install-backend" in message
    assert 'backend="torch"' in message
    assert isinstance(info.value, ImportError)


def test_cache_hits_need_no_runtime(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    with OutputCache(tmp_path / "c.sqlite") as cache:
        judge = Judge(SMOLLM2, cache=cache, backend="llamacpp", progress=False)
        keyed = _keyed("label_probs", [REQUEST])[0]
        cache.put_many([CacheEntry.create(judge.handle.name, judge.fingerprint, "label_probs", keyed, {"logprobs": [-0.2, -1.7], "truncated": False})])
        result = judge.label_probs([REQUEST])[0]
    assert result.from_cache
    np.testing.assert_allclose(result.logprobs, [-0.2, -1.7])
    assert judge._llama is None


# ---- cache keys ----------------------------------------------------------------------------------
#: The key of REQUEST for SmolLM2 on torch, computed with the Judge of the commit before the llama.cpp
#: backend (git show f257f37:lib/nlgjudge/engine/judge.py, Judge._key); pinned so that a
#: change to the torch keys (which would orphan every released output) fails here.
TORCH_KEY = "f9aada78be2fcba36c4d47b3a838aaef49cb0686e92adb12b32182c3413d7512"


def _old_torch_key(request: ClassifyRequest) -> str:
    spec = PACKAGED_MODELS[SMOLLM2]
    fields = {
        "messages": [dict(m) for m in request.prompt],
        "response_prefix": request.response_prefix,
        "labels": list(request.labels),
        "label_end": request.label_end,
    }
    return request_key(SMOLLM2, f"sha256:{spec.sha256}", "label_probs", fields)


def test_torch_keys_are_unchanged():
    judge = Judge(SMOLLM2, cache=False, backend="torch")
    key = judge._key("label_probs", _keyed("label_probs", [REQUEST])[0])
    assert key == _old_torch_key(REQUEST)
    assert judge.fingerprint == judge.handle.fingerprint == f"sha256:{PACKAGED_MODELS[SMOLLM2].sha256}"


def test_torch_key_literal():
    assert _old_torch_key(REQUEST) == TORCH_KEY


def test_llamacpp_keys_differ_from_torch_keys_and_name_the_runtime():
    torch_judge = Judge(SMOLLM2, cache=False, backend="torch")
    llama_judge = Judge(SMOLLM2, cache=False, backend="llamacpp")
    keyed = _keyed("label_probs", [REQUEST])[0]
    assert llama_judge.fingerprint == torch_judge.fingerprint + FINGERPRINT_SUFFIX
    assert llama_judge._key("label_probs", keyed) != torch_judge._key("label_probs", keyed)
    assert llama_judge._key("label_probs", keyed) == request_key(SMOLLM2, llama_judge.fingerprint, "label_probs", keyed)


def test_released_outputs_of_each_runtime_are_found_by_that_runtimes_keys_only():
    """Keys of a released context, rebuilt from the dataset: the torch release's records are found by
    torch keys, llama.cpp's by llama.cpp keys (where it released that context too), and no key of
    one runtime finds a record of the other, although one file holds both."""
    from nlgjudge.config import outputs_dir
    from nlgjudge.data import DataNotFoundError, load_dataset
    from nlgjudge.studies.comparative import comparative_requests
    from nlgjudge.studies.prompting import prompt_style

    path = outputs_dir() / "comparative-summeval" / f"{SMOLLM2}__label_probs.jsonl"
    if not path.exists():
        pytest.skip(f"no released outputs at {path}")
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    torch_judge = Judge(SMOLLM2, cache=False, backend="torch")
    llama_judge = Judge(SMOLLM2, cache=False, backend="llamacpp")
    released = {
        runtime: {r["key"]: r["meta"]["context_id"] for r in records if r["fingerprint"] == judge.fingerprint}
        for runtime, judge in (("torch", torch_judge), ("llamacpp", llama_judge))
    }
    assert released["torch"], "the torch release of SmolLM2's SummEval comparisons is gone"
    context = next(iter(released["torch"].values()))
    try:
        ds = load_dataset("summeval")
    except DataNotFoundError as error:  # pragma: no cover - depends on the machine
        pytest.skip(str(error))
    requests, _ = comparative_requests(ds.restrict([context]), style=prompt_style(torch_judge.handle))
    keyed = _keyed("label_probs", requests)
    torch_keys = {torch_judge._key("label_probs", k) for k in keyed}
    llama_keys = {llama_judge._key("label_probs", k) for k in keyed}
    assert torch_keys <= released["torch"].keys()
    assert not torch_keys & llama_keys
    assert not llama_keys & released["torch"].keys() and not torch_keys & released["llamacpp"].keys()
    if context in released["llamacpp"].values():  # llama.cpp released this context too (issue 12)
        assert llama_keys <= released["llamacpp"].keys()


# ---- input errors and settings -------------------------------------------------------------------
def test_labels_given_as_one_string_are_a_clear_error():
    bad = ClassifyRequest(prompt="Which is better? Answer:", labels="AB")  # type: ignore[arg-type]
    with pytest.raises(EngineInputError, match=r"single string 'AB'.*labels=\(' A', ' B'\)"):
        Judge(tiny_handle("gpt2"), cache=False, progress=False).label_probs([bad])


def test_thread_count_from_argument_environment_or_cores(monkeypatch):
    import os

    monkeypatch.delenv("NLGJUDGE_THREADS", raising=False)
    assert thread_count() == len(os.sched_getaffinity(0))
    assert thread_count(3) == 3
    monkeypatch.setenv("NLGJUDGE_THREADS", "1")
    assert thread_count() == 1
    monkeypatch.setenv("NLGJUDGE_THREADS", "two")
    with pytest.raises(ValueError, match="NLGJUDGE_THREADS='two' is not a whole number"):
        thread_count()
    with pytest.raises(ValueError, match="threads must be a whole number >= 1, got 0"):
        Judge(SMOLLM2, cache=False, threads=0)


# ---- the mirror of llama.cpp's cell allocator ----------------------------------------------------
def test_cell_mirror_follows_find_slot_and_seq_rm():
    cells = _Cells(32)
    first = cells.scan(4)[:4]
    assert first.tolist() == [0, 1, 2, 3]
    cells.apply(first, [0] * 4, range(4))
    assert (cells.head, cells.used) == (4, 4)
    cells.copy(0, 1, 2)  # sequence 1 shares positions 0-1
    assert cells.count[:4].tolist() == [2, 2, 1, 1]
    cells.drop(0, 1)  # positions >= 1 of sequence 0: cells 2 and 3 are freed, 1 is still held by 1
    assert cells.count[:4].tolist() == [2, 1, 0, 0]
    assert (cells.head, cells.used) == (2, 2)
    cells.apply(cells.scan(2)[:2], [1, 1], [2, 3])
    assert cells.members[1] == {0: 0, 1: 1, 2: 2, 3: 3}
    # many free cells below head: find_slot restarts from cell 0
    cells.apply(cells.scan(20)[:20], [2] * 20, range(20))
    cells.drop(2, 0, 12)
    cells.drop(1)  # cell 0 stays: sequence 0 still holds it
    assert (cells.head, cells.count[0]) == (1, 1)
    cells.head = 30
    assert cells.would_restart(2) and cells.scan(2)[0] == 1  # the lowest free cell, not head
