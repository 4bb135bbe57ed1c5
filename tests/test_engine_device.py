"""Where the torch runtime computes (issue 40), tested without a GPU: a patched CUDA probe, torch's
``meta`` device (shapes only, no numbers) and bf16 on the CPU (the half-precision path with numbers)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from engine_utils import tiny_handle

from nlgjudge.engine import ClassifyRequest, EngineInputError, GenerateRequest, Judge
from nlgjudge.engine import prefix_tree
from nlgjudge.models import device as devices
from nlgjudge.models.device import DeviceUnavailableError, Placement, batch_budgets, choose_dtype, choose_placement

REQUESTS = [
    ClassifyRequest(prompt="Which summary is more coherent ? Answer : Summary", labels=(" A", " B")),
    ClassifyRequest(prompt="Which summary is more fluent ? Answer : Summary", labels=(" A", " B")),
    ClassifyRequest(prompt="Score the summary from 1 to 10 . Score :", labels=(" 1", " 10", " 5"), label_end=" ."),
]


@pytest.fixture(autouse=True)
def _no_settings(monkeypatch):
    monkeypatch.delenv(devices.DEVICE_ENV, raising=False)
    monkeypatch.delenv(devices.DTYPE_ENV, raising=False)


def fake_gpu(monkeypatch, capability=(8, 6), free_bytes=8 * 2**30):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda index=0: capability)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda index=0: (free_bytes, 2 * free_bytes))


def no_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


# ---- selection ------------------------------------------------------------------------------------
def test_the_cpu_in_fp32_without_cuda(monkeypatch):
    no_gpu(monkeypatch)
    assert choose_placement() == Placement("cpu", "float32")
    assert choose_placement().fingerprint_suffix == ""


@pytest.mark.parametrize(("capability", "dtype"), [((8, 0), "bfloat16"), ((9, 0), "bfloat16"), ((7, 5), "float16"), ((6, 1), "float16")])
def test_cuda_when_available_in_bf16_where_native_else_fp16(monkeypatch, capability, dtype):
    fake_gpu(monkeypatch, capability)
    placement = choose_placement()
    assert placement == Placement("cuda", dtype)
    assert placement.fingerprint_suffix == f"|device=cuda|dtype={dtype}"


def test_the_setting_and_the_environment_variable_win_over_the_probe(monkeypatch):
    fake_gpu(monkeypatch)
    assert choose_placement("cpu") == Placement("cpu", "float32")
    monkeypatch.setenv(devices.DEVICE_ENV, "cpu")
    assert choose_placement() == Placement("cpu", "float32")
    assert choose_placement("cuda:0") == Placement("cuda:0", "bfloat16")  # the argument before the variable
    monkeypatch.setenv(devices.DTYPE_ENV, "fp16")
    assert choose_placement("cuda") == Placement("cuda", "float16")
    assert choose_placement("cuda", "fp32") == Placement("cuda", "float32")


def test_asking_for_cuda_without_it_is_one_clear_line(monkeypatch):
    no_gpu(monkeypatch)
    with pytest.raises(DeviceUnavailableError, match="device='cuda' but torch sees no CUDA device") as info:
        choose_placement("cuda")
    assert "\n" not in str(info.value)
    monkeypatch.setenv(devices.DEVICE_ENV, "cuda")
    with pytest.raises(DeviceUnavailableError, match="NLGJUDGE_DEVICE='cuda'"):
        choose_placement()


def test_a_device_index_beyond_the_gpus_and_bad_names_are_refused(monkeypatch):
    fake_gpu(monkeypatch)
    with pytest.raises(DeviceUnavailableError, match="sees 1 CUDA device"):
        choose_placement("cuda:3")
    with pytest.raises(ValueError, match="not a torch device"):
        choose_placement("gpu0")
    with pytest.raises(ValueError, match="not a dtype"):
        choose_dtype("cpu", "int8")


def test_gpu_batch_budgets_grow_to_the_free_memory_and_the_cpu_keeps_its_own(monkeypatch):
    fake_gpu(monkeypatch, free_bytes=80 * 2**30)
    per_token = 2 * 30 * 5 * 64 * 2  # keys and values, 30 layers, 5 heads of 64, bf16
    token, state = batch_budgets(Placement("cuda", "bfloat16"), 1024, 16384, per_token)
    assert state == int(80 * 2**30 * devices.KV_MEMORY_SHARE) // per_token
    assert token == 16384  # capped
    assert batch_budgets(Placement("cpu", "float32"), 1024, 16384, per_token) == (1024, 16384)
    fake_gpu(monkeypatch, free_bytes=2**20)  # almost full: never below the judge's own key/value budget
    assert batch_budgets(Placement("cuda", "bfloat16"), 1024, 16384, per_token) == (16384 // 4, 16384)


# ---- the judge: cache keys, description, placement of the model --------------------------------------
def test_cpu_fp32_keys_are_the_handles_fingerprint_unchanged(monkeypatch):
    no_gpu(monkeypatch)
    handle = tiny_handle("gpt2")
    judge = Judge(handle, cache=False, progress=False)
    assert judge.fingerprint == handle.fingerprint
    assert "fp32" in judge.runtime_description()


def test_a_gpu_judge_keys_its_outputs_apart(monkeypatch):
    fake_gpu(monkeypatch, capability=(7, 0))
    handle = tiny_handle("gpt2")
    judge = Judge(handle, cache=False, progress=False)
    assert judge.placement == Placement("cuda", "float16")
    assert judge.fingerprint == handle.fingerprint + "|device=cuda|dtype=float16"
    assert "float16 on cuda" in judge.runtime_description()
    assert Judge(handle, cache=False, progress=False, device="cpu").fingerprint == handle.fingerprint


def test_device_is_for_the_torch_runtime_only():
    with pytest.raises(ValueError, match="torch runtime computes; this judge runs on llamacpp"):
        Judge("smollm2-135m-instruct", cache=False, backend="llamacpp", device="cuda")


def test_on_the_meta_device_every_forward_input_is_on_the_models_device(monkeypatch):
    """meta tensors have shapes and no values: a CPU input mixed into a meta model's pass raises, and
    the numbers are faked at the one point they come back to the CPU."""
    seen = []

    def fake_pick(logprobs, pairs):
        seen.append(logprobs.device.type)
        return [0.0] * len(pairs)

    monkeypatch.setattr(prefix_tree, "_pick", fake_pick)
    handle = tiny_handle("llama")
    judge = Judge(handle, cache=False, progress=False, device="meta", dtype="float32")
    results = judge.label_probs(REQUESTS)
    model, _ = handle.load()
    assert next(model.parameters()).device.type == "meta"
    assert seen and set(seen) == {"meta"}
    assert [r.probs.tolist() for r in results] == [[0.5, 0.5], [0.5, 0.5], [1 / 3] * 3]
    assert judge.fingerprint.endswith("|device=meta|dtype=float32")


def test_an_encoder_decoder_does_not_sample_off_the_cpu():
    judge = Judge(tiny_handle("t5"), cache=False, progress=False, device="meta")
    with pytest.raises(EngineInputError, match="run on the CPU only"):
        judge.generate([GenerateRequest(prompt="The cat sat on the mat", max_new_tokens=3)])


@pytest.mark.parametrize("family", ["llama", "t5"])
def test_half_precision_gives_the_fp32_numbers_to_bf16_precision(family):
    """The dtype path with real numbers: bf16 on the CPU against the fp32 judge on the same weights."""
    fp32 = Judge(tiny_handle(family), cache=False, progress=False)
    bf16 = Judge(tiny_handle(family), cache=False, progress=False, dtype="bfloat16")
    assert bf16.placement == Placement("cpu", "bfloat16") and bf16.fingerprint != fp32.fingerprint
    a = np.array([r.probs[0] for r in fp32.label_probs(REQUESTS)])
    b = np.array([r.probs[0] for r in bf16.label_probs(REQUESTS)])
    model, _ = bf16.handle.load()
    assert next(model.parameters()).dtype == torch.bfloat16
    # bf16 keeps 8 bits of mantissa: random tiny models' label probabilities move by ~1e-3, not 0.
    assert np.max(np.abs(a - b)) < 0.02
    assert not np.array_equal(a, b)


def test_a_half_precision_in_memory_model_is_not_cast_back():
    handle = tiny_handle("gpt2")
    Judge(handle, cache=False, progress=False, dtype="float16").label_probs(REQUESTS[:1])
    with pytest.raises(ValueError, match="already cast to float16"):
        Judge(handle, cache=False, progress=False).label_probs(REQUESTS[:1])
