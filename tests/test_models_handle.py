"""resolve_model: lazy handles, cheap fingerprints, clear errors."""

from __future__ import annotations

import pytest
from engine_utils import tiny_model, tiny_tokenizer

from nlgjudge.models import ModelHandle, UnknownModelError, list_packaged_models, resolve_model


def test_packaged_short_names_resolve_lazily():
    handle = resolve_model("qwen2.5-coder-1.5b-instruct")
    assert handle.kind == "causal"
    assert handle.fingerprint == "sha256:cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert not handle.is_loaded and handle.load_count == 0
    assert resolve_model("minilm-l6").kind == "encoder"
    assert "smollm2-135m-instruct" in list_packaged_models()


def test_unknown_names_list_what_is_accepted():
    with pytest.raises(UnknownModelError) as err:
        resolve_model("qwen-huge")
    message = str(err.value)
    assert "smollm2-135m-instruct" in message and "hub ids" in message and "local model folders" in message
    with pytest.raises(UnknownModelError):
        resolve_model("")


def test_hub_ids_carry_their_revision():
    handle = resolve_model("google/flan-t5-base@abc123")
    assert handle.source == "hub" and handle.revision == "abc123"
    assert handle.fingerprint.startswith("hub:google/flan-t5-base@")


def test_hub_fingerprint_does_not_change_when_the_model_is_downloaded(tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    before = resolve_model("google/flan-t5-base").fingerprint  # nothing downloaded yet
    refs = tmp_path / "hub" / "models--google--flan-t5-base" / "refs"
    refs.mkdir(parents=True)
    (refs / "main").write_text("7d5e5b3c1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d\n")  # what a download leaves
    after = resolve_model("google/flan-t5-base").fingerprint
    assert before == after == "hub:google/flan-t5-base@main"
    # Pinning to weights is the user's choice, and then the key follows the commit given.
    pinned = resolve_model("google/flan-t5-base@7d5e5b3c1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d")
    assert pinned.fingerprint == "hub:google/flan-t5-base@7d5e5b3c1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d"
    assert resolve_model("google/flan-t5-base", revision="v1").fingerprint == "hub:google/flan-t5-base@v1"


def test_local_folder_fingerprint_from_weight_files(tmp_path, monkeypatch):
    monkeypatch.setenv("NLGJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "tiny"
    tiny_model("llama").save_pretrained(folder)
    tiny_tokenizer().save_pretrained(folder)
    handle = resolve_model(folder)
    assert handle.source == "local" and handle.kind == "causal"
    first = handle.fingerprint
    assert resolve_model(folder).fingerprint == first  # memoised, same value
    assert (tmp_path / "cache" / "fingerprints.json").is_file()
    tiny_model("llama", seed=1).save_pretrained(folder)  # new weights, new fingerprint
    assert resolve_model(folder).fingerprint != first
    model, tok = resolve_model(folder).load()
    assert not model.training and next(model.parameters()).dtype.is_floating_point
    seq2seq = tmp_path / "bart"
    tiny_model("bart").save_pretrained(seq2seq)
    assert resolve_model(seq2seq).kind == "seq2seq"


def test_folder_without_config_is_refused(tmp_path):
    with pytest.raises(UnknownModelError, match="config.json"):
        resolve_model(tmp_path)


def test_in_memory_fingerprint_follows_the_weights():
    a = ModelHandle.from_objects("x", tiny_model("gpt2", seed=0), tiny_tokenizer())
    b = ModelHandle.from_objects("x", tiny_model("gpt2", seed=0), tiny_tokenizer())
    c = ModelHandle.from_objects("x", tiny_model("gpt2", seed=1), tiny_tokenizer())
    assert a.fingerprint == b.fingerprint != c.fingerprint
    assert a.kind == "causal" and ModelHandle.from_objects("t", tiny_model("t5"), tiny_tokenizer()).kind == "seq2seq"
