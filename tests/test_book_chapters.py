"""The chapter registry is consistent with the notebooks, the book's table of contents and itself."""

from __future__ import annotations

import ast
import json

import nbformat
import pytest
import yaml

from nlgjudge.chapters import (
    CHAPTERS,
    Chapter,
    ParameterError,
    UnknownChapterError,
    get_chapter,
    list_chapters,
)
from nlgjudge.config import REPO_ROOT


def assigned_names(source: str) -> set[str]:
    """Names assigned at the top level of a code cell (``x = ...`` and ``x: T = ...``)."""
    names: set[str] = set()
    for statement in ast.parse(source).body:
        targets = statement.targets if isinstance(statement, ast.Assign) else (
            [statement.target] if isinstance(statement, ast.AnnAssign) else []
        )
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def parameters_cells(chapter: Chapter) -> list[nbformat.NotebookNode]:
    notebook = nbformat.read(chapter.source_path(), as_version=4)
    return [c for c in notebook.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])]


def test_names_are_unique_and_lookup_works() -> None:
    names = [c.name for c in list_chapters()]
    assert len(names) == len(set(names))
    assert names, "the registry is empty"
    for name in names:
        assert get_chapter(name).name == name


def test_unknown_chapter_lists_the_known_ones() -> None:
    with pytest.raises(UnknownChapterError, match="datasets"):
        get_chapter("no-such-chapter")


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.name)
def test_notebook_declares_every_default_parameter(chapter: Chapter) -> None:
    assert chapter.source_path().is_file(), f"{chapter.source_path()} is missing"
    cells = parameters_cells(chapter)
    assert len(cells) == 1, f"{chapter.notebook} needs exactly one cell tagged 'parameters', has {len(cells)}"
    declared = assigned_names(cells[0].source)
    missing = set(chapter.defaults) - declared
    assert not missing, f"{chapter.notebook}'s parameters cell does not assign {sorted(missing)}"
    # and the other way round: a parameter the notebook declares but the registry forgets cannot be set by make
    undeclared = declared - set(chapter.defaults)
    assert not undeclared, f"{chapter.notebook} declares {sorted(undeclared)}, absent from the registry's defaults"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.name)
def test_notebook_defaults_match_the_registry(chapter: Chapter) -> None:
    # The registry's defaults are what make book runs; the notebook's own values are what a reader
    # running it by hand gets. They must agree.
    namespace: dict[str, object] = {}
    exec(compile(parameters_cells(chapter)[0].source, chapter.notebook, "exec"), namespace)  # noqa: S102
    for name, value in chapter.defaults.items():
        assert namespace[name] == value, f"{chapter.notebook}: {name} = {namespace[name]!r}, registry says {value!r}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.name)
def test_notebook_runs_in_the_project_kernel(chapter: Chapter) -> None:
    notebook = json.loads(chapter.source_path().read_text(encoding="utf-8"))
    assert notebook["metadata"]["kernelspec"]["name"] == "nlgjudge"
    # source notebooks are committed without outputs: execution belongs to papermill
    outputs = [c for c in notebook["cells"] if c["cell_type"] == "code" and (c.get("outputs") or c.get("execution_count"))]
    assert not outputs, f"{chapter.notebook} has {len(outputs)} executed cell(s); clear its outputs"


def test_toc_lists_the_intro_then_every_chapter_in_registry_order() -> None:
    toc = yaml.safe_load((REPO_ROOT / "_toc.yml").read_text(encoding="utf-8"))
    assert toc["root"] == "book/intro"
    assert (REPO_ROOT / "book" / "intro.md").is_file()
    files = [entry["file"] for entry in toc["chapters"]]
    assert files == [c.toc_entry for c in CHAPTERS]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.name)
def test_executed_chapter_is_committed_without_errors(chapter: Chapter) -> None:
    output = chapter.output_path()
    assert output.is_file(), f"{output} is missing: run `make chapter NAME={chapter.name}`"
    notebook = nbformat.read(output, as_version=4)
    errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, f"{output} contains an error output: {errors[0].get('ename')}: {errors[0].get('evalue')}"
    stamp = notebook.metadata.get("nlgjudge", {})
    assert stamp.get("chapter") == chapter.name and len(stamp.get("stamp", "")) == 64


def test_parameters_merge_overrides_and_reject_unknown_names() -> None:
    chapter = Chapter(name="toy", title="Toy", notebook="toy.ipynb", defaults={"items": ["a"], "n": None}, ci={"n": 2})
    assert chapter.parameters({"n": 5}) == {"items": ["a"], "n": 5}
    assert chapter.ci_parameters() == {"items": ["a"], "n": 2}
    merged = chapter.parameters()
    merged["items"].append("b")  # a caller mutating its copy must not change the registry
    assert chapter.defaults["items"] == ["a"]
    with pytest.raises(ParameterError, match="n_contexts"):
        chapter.parameters({"n_contexts": 3})


def test_ci_parameters_must_be_declared_defaults() -> None:
    with pytest.raises(ParameterError, match="typo"):
        Chapter(name="toy", title="Toy", notebook="toy.ipynb", defaults={"n": None}, ci={"typo": 1})


def test_paths_follow_the_layout(tmp_path) -> None:
    chapter = get_chapter("datasets")
    assert chapter.source_path(tmp_path) == tmp_path / "notebooks" / chapter.notebook
    assert chapter.output_path(tmp_path) == tmp_path / "book" / "datasets.ipynb"
    assert chapter.toc_entry == "book/datasets"
