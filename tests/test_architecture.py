"""Where code lives, checked statically: the one rule of the library's layout, and no import circles.

* figures: only ``nlgjudge.plotting`` imports matplotlib or seaborn;
* tables: nothing under ``nlgjudge.analysis`` reaches a model runtime (torch, transformers,
  llama_cpp, the engine, the model registry), directly or through another module of the package;
* no two modules of the package import each other, even lazily inside a function.

The import graph is read from the source with :mod:`ast` (nothing is imported), counting imports
anywhere in a file, so a lazy import inside a function counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import nlgjudge

PACKAGE_ROOT = Path(nlgjudge.__file__).resolve().parent
RUNTIMES = ("torch", "transformers", "llama_cpp", "nlgjudge.engine", "nlgjudge.models")
PLOTTING_LIBRARIES = ("matplotlib", "seaborn")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE_ROOT.rglob("*.py"))}


def _imports(path: Path, module: str, known: frozenset[str] = frozenset()) -> set[str]:
    """Every module ``path`` imports (absolute names), anywhere in the file.

    ``from pkg import sub`` counts as importing ``pkg.sub`` when that is one of the ``known``
    modules (a submodule), else as importing ``pkg`` (a name defined in its ``__init__``)."""
    found: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in known else base)
    return found


def _graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports. A module's own parent packages are left out:
    Python imports them before any submodule anyway, so that edge is never a choice of the code."""
    modules = _modules()
    known = frozenset(modules)
    return {
        name: {m for m in _imports(path, name, known) if m in modules and m != name and not name.startswith(m + ".")}
        for name, path in modules.items()
    }


def _external(name: str) -> set[str]:
    return _imports(_modules()[name], name, frozenset(_modules()))


def _reaches(start: str, graph: dict[str, set[str]]) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _is_under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_the_homes_exist() -> None:
    modules = _modules()
    for package in ("nlgjudge.analysis", "nlgjudge.plotting", "nlgjudge.studies", "nlgjudge.stats"):
        assert package in modules, f"{package} is missing"
    assert "nlgjudge.studies.registry" in modules


def test_only_plotting_imports_matplotlib_or_seaborn() -> None:
    offenders = sorted(
        name for name in _modules()
        if not _is_under(name, ("nlgjudge.plotting",))
        and any(_is_under(m, PLOTTING_LIBRARIES) for m in _external(name))
    )
    assert not offenders, f"these modules draw figures outside nlgjudge.plotting: {offenders}"


def test_analysis_never_reaches_a_model_runtime() -> None:
    graph = _graph()
    problems = {}
    for name in graph:
        if not _is_under(name, ("nlgjudge.analysis",)):
            continue
        reached = {name, *_reaches(name, graph)}
        bad = sorted({m for r in reached for m in _external(r) if _is_under(m, RUNTIMES)})
        if bad:
            problems[name] = bad
    assert not problems, f"analysis modules that reach a model runtime: {problems}"


def test_stats_is_pure() -> None:
    for name in _modules():
        if _is_under(name, ("nlgjudge.stats",)):
            internal = {m for m in _external(name) if m.startswith("nlgjudge") and not _is_under(m, ("nlgjudge.stats",))}
            assert not internal, f"{name} imports {sorted(internal)}: stats/ is arrays in, numbers out"


def test_no_import_circle_between_modules() -> None:
    graph = _graph()
    cycles = []
    for start in sorted(graph):
        if start in _reaches(start, graph):
            cycles.append(start)
    assert not cycles, f"modules on an import circle: {cycles}"


def _room(module: str) -> str:
    """The package's top-level room a module lives in: ``nlgjudge.studies.rank`` -> ``nlgjudge.studies``."""
    return ".".join(module.split(".")[:2])


def _room_graph() -> dict[str, set[str]]:
    rooms: dict[str, set[str]] = {}
    for name, imported in _graph().items():
        if name == "nlgjudge":  # the package's front door re-exports; it is no room of its own
            continue
        rooms.setdefault(_room(name), set()).update(_room(m) for m in imported if m != "nlgjudge")
    return {room: {r for r in targets if r != room} for room, targets in rooms.items()}


def test_no_import_circle_between_packages() -> None:
    """Rooms (``nlgjudge.studies``, ``nlgjudge.ranking``, ...) import each other one way only: what two
    rooms both need lives in a lower one (e.g. the served-prompt check in ``nlgjudge.engine``)."""
    graph = _room_graph()
    circles = sorted(room for room in graph if room in _reaches(room, {r: graph.get(r, set()) for r in graph}))
    assert not circles, f"packages on an import circle: {circles} ({ {r: sorted(graph[r]) for r in circles} })"


def test_the_room_reader_sees_a_circle() -> None:
    """The check can fail: a made-up circle between two rooms is found."""
    graph = {"nlgjudge.studies": {"nlgjudge.ranking"}, "nlgjudge.ranking": {"nlgjudge.studies"}, "nlgjudge.stats": set()}
    assert [r for r in sorted(graph) if r in _reaches(r, graph)] == ["nlgjudge.ranking", "nlgjudge.studies"]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import a.b", {"a.b"}),
        ("from . import c", {"nlgjudge.studies"}),
        ("from . import registry", {"nlgjudge.studies.registry"}),
        ("from .d import e", {"nlgjudge.studies.d"}),
        ("def f():\n    from nlgjudge.engine import Judge", {"nlgjudge.engine"}),
    ],
)
def test_the_import_reader_sees_every_form(tmp_path: Path, source: str, expected: set[str]) -> None:
    fake = tmp_path / "x.py"
    fake.write_text(source)
    assert _imports(fake, "nlgjudge.studies.x", frozenset({"nlgjudge.studies.registry"})) == expected
