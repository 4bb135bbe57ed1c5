"""Install the project's dependencies into the current interpreter from environment.yml.

environment.yml is the single dependency list (conda users: ``conda env create -f environment.yml``).
This script reads its ``pip:`` section so that the pip path installs the very same list:
ordinary lines in one ``pip install``, lines marked ``# no-deps`` in a second one with ``--no-deps``.
Lines marked ``# backend`` (llama-cpp-python, the judge engine's llama.cpp runtime) are installed
only with ``--with-backend``: computing model outputs needs them (``make test``, ``make outputs``,
``make bench``), building the book from the released outputs does not (``make book``). They build
from source (cmake and the C++ compiler), so pip runs for them without ``-q`` and shows progress.
Only the standard library is used, since it runs before anything is installed.

Usage: ``python .ci/install.py [--with-backend]``
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--with-backend",
        action="store_true",
        help="also install the lines marked '# backend' (llama-cpp-python, built from source)",
    )
    args = parser.parse_args(argv)
    normal, no_deps, backend = read_pip_section(ROOT / "environment.yml")
    pip = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run(pip + split_args(normal), check=True)
    if no_deps:
        subprocess.run(pip + ["--no-deps"] + split_args(no_deps), check=True)
    if args.with_backend and backend:
        install_backend(backend)


if __name__ == "__main__":
    main()
