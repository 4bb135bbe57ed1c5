"""The llama.cpp runtime's smoke check: a crash in a child process is named, never suffered.

Faked crashes (a child killed by SIGILL) test what the judge and the check do with them; one real
smoke run checks the installed runtime itself (skipped where llama-cpp-python is not installed).
"""

from __future__ import annotations

import logging
import sys

import pytest

from nlgjudge.engine import Judge
from nlgjudge.engine.llamacpp import BackendUnavailableError, health, loading

SMOLLM2 = "smollm2-135m-instruct"
CRASHED = health.SmokeResult(False, -4, 0.7, "killed by SIGILL (an instruction this CPU does not run)")
PASSED = health.SmokeResult(True, 0, 2.0, "ran: 384 tokens in one batch")


def test_a_child_killed_by_sigill_is_named_not_suffered() -> None:
    child = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGILL)"]
    result = health.run_smoke(timeout=60, command=child)
    assert not result.ok and result.checked
    assert result.signal_name == "SIGILL"
    assert result.detail == "killed by SIGILL (an instruction this CPU does not run)"


def test_a_child_that_cannot_check_is_not_a_crash() -> None:
    child = [sys.executable, "-c", "print('cannot check: no smoke model'); raise SystemExit(3)"]
    result = health.run_smoke(timeout=60, command=child)
    assert not result.ok and not result.checked and "no smoke model" in result.detail


def test_the_answer_is_kept_per_cpu_and_library(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(health, "_checks_dirs", lambda: [tmp_path])
    monkeypatch.setattr(health, "build_digest", lambda folder=None: "lib-1")
    runs = []
    monkeypatch.setattr(health, "run_smoke", lambda timeout=0: runs.append(1) or PASSED)
    assert health.check_runtime().ok and health.check_runtime().ok
    assert len(runs) == 1  # the second call read the kept answer
    monkeypatch.setattr(health, "build_digest", lambda folder=None: "lib-2")  # a rebuilt library
    health.check_runtime()
    monkeypatch.setattr(health, "cpu_flags", lambda: ("avx2", "other-cpu"))  # a moved environment
    health.check_runtime()
    assert len(runs) == 3


def test_auto_falls_back_to_torch_with_one_warning_line(monkeypatch, caplog) -> None:
    monkeypatch.delenv("NLGJUDGE_BACKEND", raising=False)
    monkeypatch.setattr(health, "is_installed", lambda: True)
    monkeypatch.setattr(health, "check_runtime", lambda **kw: CRASHED)
    with caplog.at_level(logging.WARNING, logger="nlgjudge.engine.judge"):
        judge = Judge(SMOLLM2, cache=False)
    assert judge.backend == "torch"
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 1 and "\n" not in lines[0]
    assert "using the torch runtime instead" in lines[0] and "killed by SIGILL" in lines[0]
    assert "make install-backend" in lines[0]


def test_auto_keeps_llamacpp_when_its_check_passes(monkeypatch) -> None:
    monkeypatch.delenv("NLGJUDGE_BACKEND", raising=False)
    monkeypatch.setattr(health, "is_installed", lambda: True)
    monkeypatch.setattr(health, "check_runtime", lambda **kw: PASSED)
    assert Judge(SMOLLM2, cache=False).backend == "llamacpp"


def test_an_explicit_llamacpp_that_fails_names_the_rebuild_command(monkeypatch) -> None:
    monkeypatch.setattr(health, "check_runtime", lambda **kw: CRASHED)
    monkeypatch.setattr(loading, "_RUNTIME_CHECKED", False)
    with pytest.raises(BackendUnavailableError) as info:
        loading.require_working_runtime()
    message = str(info.value)
    assert "the llama.cpp runtime installed here" in message and "killed by SIGILL" in message
    assert "`make install-backend`" in message and "backend='torch'" in message


def test_the_installed_runtime_passes_a_real_smoke_run() -> None:
    """The library installed here evaluates one batch of several hundred tokens on SmolLM2 in a child."""
    if not health.is_installed():
        pytest.skip("llama-cpp-python is not installed (make install-backend)")
    result = health.run_smoke()
    assert result.ok, result.detail
    assert f"{health.SMOKE_TOKENS} tokens in one batch" in result.detail
