"""``python -m nlgjudge.bench gpu-check`` (issue 40) without a GPU: the one-line refusal, and its
comparison and report on a stand-in device pair (a tiny model on the CPU in fp32 and in bf16,
through the same code path a GPU machine runs)."""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest
import torch
from engine_utils import tiny_handle

from nlgjudge import bench
from nlgjudge.bench import gpu_check
from nlgjudge.engine import ClassifyRequest, Judge

REQUESTS = [
    ClassifyRequest(prompt=f"Summary A : the council approved the new budget . Which summary is {w} ? Answer : Summary",
                    labels=(" A", " B"))
    for w in ("more coherent", "more fluent", "better", "shorter", "clearer")
]


def test_without_cuda_one_line_and_status_2(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert bench.main(["gpu-check"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("gpu-check: no CUDA device is available")


def test_the_issues_spelling_from_the_command_line_exits_2_without_a_traceback():
    if torch.cuda.is_available():  # pragma: no cover - a GPU machine runs the real check instead
        pytest.skip("a CUDA device is present")
    done = subprocess.run([sys.executable, "-m", "nlgjudge.bench", "--gpu-check"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and done.stderr.strip().count("\n") == 0
    assert "no CUDA device is available" in done.stderr


def test_the_arithmetic_of_the_report_with_a_fake_clock():
    check = gpu_check.Check(
        gpu=gpu_check.Side("torch bfloat16 on cuda", 0.5, np.array([0.9, 0.2, 0.6, 0.5])),
        cpu=gpu_check.Side("torch float32 on cpu", 4.0, np.array([0.88, 0.25, 0.4, 0.5])),
    )
    lines = check.lines()
    assert check.gpu.rate == 8.0 and check.cpu.rate == 1.0
    assert lines[-1] == "gpu_vs_cpu=8.00 max_abs_diff=0.2000"
    assert "max |diff| 0.2000, mean 0.0675" in lines[-2] and "same preferred summary in 75%" in lines[-2]


def test_a_device_pair_through_the_same_path_as_on_a_gpu():
    """fp32 vs bf16 on the CPU stand in for CPU vs GPU: two judges, each on its own weights."""
    half = Judge(tiny_handle("llama"), cache=False, progress=False, device="cpu", dtype="bfloat16")
    full = Judge(tiny_handle("llama"), cache=False, progress=False, device="cpu", dtype="float32")
    ticks = itertools.count(step=2.0)  # every timed run takes 2 "seconds"
    check = gpu_check.run_check(half, full, REQUESTS, clock=lambda: next(ticks))
    assert check.gpu.label == "torch bfloat16 on cpu" and check.cpu.label == "torch float32 on cpu"
    assert check.gpu.seconds == check.cpu.seconds == 2.0 and check.speedup == 1.0
    reference = np.array([r.probs[0] for r in Judge(tiny_handle("llama"), cache=False, progress=False).label_probs(REQUESTS)])
    np.testing.assert_array_equal(check.cpu.p_a, reference)  # the fp32 side is the CPU runtime as it always was
    assert 0 < check.differences.max() < 0.02  # bf16 moves P(A) a little, not at all would mean no cast
    assert check.lines()[-1] == f"gpu_vs_cpu=1.00 max_abs_diff={check.differences.max():.4f}"


def test_arguments_are_checked_before_anything_loads(capsys):
    with pytest.raises(SystemExit) as info:
        gpu_check.main(["--prompts", "1"])
    assert info.value.code == 2 and "--prompts must be at least 2" in capsys.readouterr().err
