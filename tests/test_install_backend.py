"""The llama.cpp runtime's install ladder (``.ci/install.py``): build, smoke-test, climb down on a crash.

Nothing is compiled here: the build, the smoke run and the machine probe are faked, so these tests
show the decisions (which rung first, which next, what the user is told) in milliseconds. The real
smoke run of the installed runtime is in ``tests/test_engine_llamacpp_health.py``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installer():
    spec = importlib.util.spec_from_file_location("nlgjudge_ci_install", ROOT / ".ci" / "install.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


OK = {"ok": True, "checked": True, "detail": "ran: 384 tokens", "seconds": 2.5, "returncode": 0}
SIGILL = {"ok": False, "checked": True, "detail": "killed by SIGILL (an instruction this CPU does not run)",
          "seconds": 0.8, "returncode": -4}


def test_a_cpu_without_amx_starts_with_the_native_build(installer) -> None:
    rungs, why = installer.plan_rungs(installer.Probe(("avx2", "fma"), None), None)
    assert [name for name, _ in rungs] == ["native", "native-no-amx", "portable-avx2"]
    assert rungs[0][1] == "-DGGML_NATIVE=ON" and "native build" in why


def test_a_cpu_that_lists_amx_it_cannot_run_skips_the_native_build(installer) -> None:
    rungs, why = installer.plan_rungs(installer.Probe(("amx_tile", "avx512f"), False), None)
    assert [name for name, _ in rungs] == ["native-no-amx", "portable-avx2"]
    assert "-mno-amx-tile" in rungs[0][1] and "AMX" in why


def test_the_users_cmake_args_win(installer) -> None:
    rungs, why = installer.plan_rungs(installer.Probe(("amx_tile",), False), "-DGGML_NATIVE=ON")
    assert rungs == [("your CMAKE_ARGS", "-DGGML_NATIVE=ON")] and "your CMAKE_ARGS" in why


def test_a_crashing_smoke_run_climbs_to_the_next_rung(installer) -> None:
    installed, results = [], iter([SIGILL, OK])
    chosen, attempts = installer.climb(list(installer.RUNGS), lambda rung, args: installed.append(rung),
                                       lambda: next(results))
    assert installed == ["native", "native-no-amx"]
    assert chosen is not None and chosen.rung == "native-no-amx"
    assert [a.smoke["ok"] for a in attempts] == [False, True]


def test_every_rung_crashing_chooses_none(installer) -> None:
    chosen, attempts = installer.climb(list(installer.RUNGS), lambda rung, args: None, lambda: SIGILL)
    assert chosen is None and len(attempts) == len(installer.RUNGS)


def test_a_run_that_could_not_be_checked_stops_the_climb(installer) -> None:
    unchecked = {"ok": False, "checked": False, "detail": "cannot check: no smoke model", "seconds": 0.0}
    installed = []
    chosen, attempts = installer.climb(list(installer.RUNGS), lambda rung, args: installed.append(rung),
                                       lambda: unchecked)
    assert installed == ["native"] and chosen is attempts[0]


@pytest.fixture
def fake_machine(installer, monkeypatch):
    """install_backend with the build, the smoke run and the record faked; returns what was installed."""
    installed: list[tuple[str, str]] = []
    monkeypatch.setattr(installer, "_installed", lambda requirement: False)
    monkeypatch.setattr(installer, "_install_wheel", lambda llama, version, rung, args, probe: installed.append((rung, args)))
    monkeypatch.setattr(installer, "_write_record", lambda chosen, why, attempts: None)
    monkeypatch.setattr(installer.subprocess, "run", lambda *a, **k: None)  # the other backend lines
    monkeypatch.delenv("CMAKE_ARGS", raising=False)
    return installed


def test_install_says_in_one_line_what_was_chosen_and_why(installer, fake_machine, monkeypatch, capsys) -> None:
    results = iter([SIGILL, OK])
    monkeypatch.setattr(installer, "_smoke", lambda refresh: next(results))
    installer.install_backend(["llama-cpp-python==0.3.36"], probe=installer.Probe(("avx2",), None))
    out = capsys.readouterr().out
    assert [rung for rung, _ in fake_machine] == ["native", "native-no-amx"]
    assert "native (-DGGML_NATIVE=ON): smoke evaluation killed by SIGILL" in out
    assert "the native-no-amx build runs on this CPU" in out and "after native failed its smoke run" in out


def test_on_a_cpu_where_native_runs_the_native_build_is_kept(installer, fake_machine, monkeypatch, capsys) -> None:
    monkeypatch.setattr(installer, "_smoke", lambda refresh: OK)
    installer.install_backend(["llama-cpp-python==0.3.36"], probe=installer.Probe(("avx2",), None))
    out = capsys.readouterr().out
    assert fake_machine == [("native", "-DGGML_NATIVE=ON")]
    assert "the native build runs on this CPU (-DGGML_NATIVE=ON); smoke check 2.5 s" in out


def test_the_users_crashing_cmake_args_say_so_and_how_to_fix_it(installer, fake_machine, monkeypatch) -> None:
    monkeypatch.setenv("CMAKE_ARGS", "-DGGML_NATIVE=ON")
    monkeypatch.setattr(installer, "_smoke", lambda refresh: SIGILL)
    with pytest.raises(SystemExit) as stop:
        installer.install_backend(["llama-cpp-python==0.3.36"], probe=installer.Probe(("amx_tile",), False))
    message = str(stop.value)
    assert fake_machine == [("your CMAKE_ARGS", "-DGGML_NATIVE=ON")]  # no other rung: the user's arguments win
    assert "your CMAKE_ARGS='-DGGML_NATIVE=ON' does not run on this CPU" in message
    assert "killed by SIGILL" in message and "Unset CMAKE_ARGS" in message and "-mno-amx-tile" in message


def test_an_installed_runtime_that_runs_is_not_rebuilt(installer, fake_machine, monkeypatch, capsys) -> None:
    monkeypatch.setattr(installer, "_installed", lambda requirement: True)
    monkeypatch.setattr(installer, "_smoke", lambda refresh: OK)
    monkeypatch.setattr(installer, "_built_line", lambda: "built with CMAKE_ARGS '-DGGML_NATIVE=ON' (native)")
    installer.install_backend(["llama-cpp-python==0.3.36"], probe=installer.Probe(("avx2",), None))
    assert fake_machine == []
    assert "already installed and it runs on this CPU" in capsys.readouterr().out


def test_an_installed_runtime_that_crashes_is_rebuilt(installer, fake_machine, monkeypatch, capsys) -> None:
    """A virtual environment moved to another CPU: the kept build crashes, the ladder rebuilds it."""
    monkeypatch.setattr(installer, "_installed", lambda requirement: True)
    results = iter([SIGILL, OK])
    monkeypatch.setattr(installer, "_smoke", lambda refresh: next(results))
    installer.install_backend(["llama-cpp-python==0.3.36"], probe=installer.Probe(("avx2",), None))
    out = capsys.readouterr().out
    assert "fails on this CPU (killed by SIGILL" in out and "rebuilding it" in out
    assert [rung for rung, _ in fake_machine] == ["native"]


def test_the_wheel_cache_is_keyed_by_the_cpu_and_the_arguments(installer, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("NLGJUDGE_CACHE_DIR", str(tmp_path))
    here = installer.Probe(("avx2", "avx512f"), None)
    other = installer.Probe(("avx2",), None)
    assert installer.wheel_cache_dir(here, "0.3.36", "-DGGML_NATIVE=ON") != installer.wheel_cache_dir(other, "0.3.36", "-DGGML_NATIVE=ON")
    assert installer.wheel_cache_dir(here, "0.3.36", "-DGGML_NATIVE=ON") != installer.wheel_cache_dir(here, "0.3.36", "-DGGML_NATIVE=OFF")
    assert installer.wheel_cache_dir(here, "0.3.36", "x").is_relative_to(tmp_path)
