"""Install the project's dependencies into the current interpreter from environment.yml.

environment.yml is the single dependency list (conda users: ``conda env create -f environment.yml``).
This script reads its ``pip:`` section so that the pip path installs the very same list:
ordinary lines in one ``pip install``, lines marked ``# no-deps`` in a second one with ``--no-deps``.
Only the standard library is used, since it runs before anything is installed.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def read_pip_section(path: Path) -> tuple[list[str], list[str]]:
    """Return (requirements, no_deps_requirements) from the ``pip:`` list of a conda env file."""
    normal: list[str] = []
    no_deps: list[str] = []
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
        (no_deps if "no-deps" in comment else normal).append(requirement)
    if not normal:
        raise SystemExit(f"{path}: found no pip requirements under '- pip:'")
    return normal, no_deps


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


def main() -> None:
    normal, no_deps = read_pip_section(ROOT / "environment.yml")
    pip = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run(pip + split_args(normal), check=True)
    if no_deps:
        subprocess.run(pip + ["--no-deps"] + split_args(no_deps), check=True)


if __name__ == "__main__":
    main()
