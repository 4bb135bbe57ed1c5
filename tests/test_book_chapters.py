"""The chapter registry is consistent with the notebooks, the book's table of contents and itself."""

from __future__ import annotations

import ast
import json

import nbformat
import pytest
import yaml

from nlgjudge.chapters import (
    STATIC_PAGES,
    ALL_DATASETS,
    CHAPTERS,
    NONE,
    STRATEGY_NAMES,
    Chapter,
    ParameterError,
    ParameterTypeError,
    UnknownChapterError,
    contexts_per_dataset,
    get_chapter,
    integer,
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
    assert files == [c.toc_entry for c in CHAPTERS] + list(STATIC_PAGES)
    assert all((REPO_ROOT / f"{page}.md").is_file() for page in STATIC_PAGES)


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
    chapter = Chapter(
        name="toy",
        title="Toy",
        notebook="toy.ipynb",
        defaults={"items": ["a"], "n": None},
        ci={"n": 2},
        types={"n": NONE | integer(minimum=1)},
        meanings={"items": "the items", "n": "how many"},
    )
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


# --------------------------------------------------------------------------------------------
# Parameter types: a wrong value fails in Chapter.parameters, before papermill runs anything


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.name)
def test_every_parameter_has_a_type_that_its_default_and_ci_value_fit(chapter: Chapter) -> None:
    assert set(chapter.types) == set(chapter.defaults)
    for name, value in chapter.ci_parameters().items():
        kind = chapter.types[name]
        assert kind.accepts(value), f"{chapter.name}.{name} = {value!r} does not fit {kind}"


@pytest.mark.parametrize(
    ("name", "parameter", "value", "expected"),
    [
        ("bias", "seed", {"a": 1}, r"an integer >= 0; got \{'a': 1\} \(dict\)"),
        ("bias", "seed", True, r"an integer >= 0; got True \(bool\)"),  # YAML's true is not 1
        ("bias", "seed", 1.5, r"an integer >= 0; got 1.5 \(float\)"),
        ("bias", "seed", -1, "an integer >= 0; got -1"),
        ("bias", "n_contexts", 0, "None .* or an integer >= 1 or a mapping of dataset names"),
        ("bias", "n_contexts", "3", r".*; got '3' \(str\)"),
        ("bias", "n_contexts", {"summeval": 0}, r".*; got \{'summeval': 0\}"),
        ("bias", "n_contexts", [3], r".*; got \[3\] \(list\)"),
        ("bias", "templates", [3], "a non-empty list of prompt templates from 1, 2; got \\[3\\]"),
        ("bias", "templates", 1, r"a non-empty list of prompt templates from 1, 2; got 1 \(int\)"),
        ("bias", "templates", [], r".*; got \[\] \(list\)"),
        ("bias", "released_only", "yes", "true or false; got 'yes'"),
        ("bias", "aspects", "COH", "None .* or a non-empty list of non-empty strings; got 'COH'"),
        ("bias", "data_dir", 5, "None .* or a non-empty string; got 5 \\(int\\); to pass it as text, quote it"),
        ("bias", "small_models", "smollm2-135m-instruct", "a list of non-empty strings"),
        ("comparative", "model", 123, "a non-empty string; got 123 .*quote it: -p model \"'123'\""),
        ("comparative", "model", None, r"a non-empty string; got None \(NoneType\)$"),
        ("comparative", "n_samples", 0, "an integer >= 1; got 0"),
        ("subsets", "strategies", ["sorted"], "a non-empty list of selection strategies from 'full', 'random'"),
        ("subsets", "n_draws", 1, "an integer >= 2; got 1"),
        ("subsets", "self_consistency_sizes", [4, 1], r"a non-empty list of integers >= 2; got \[4, 1\]"),
        ("datasets", "datasets", ["summeval", "no-such-data"], "a non-empty list of dataset names from 'summeval'"),
        ("datasets", "optional_datasets", "podcast", "a list of dataset names"),
        ("datasets", "n_contexts", {"summeval": 3}, r"None \(null\) or an integer >= 1; got \{'summeval': 3\}"),
    ],
)
def test_a_wrongly_typed_value_is_one_line_naming_chapter_parameter_type_and_value(
    name: str, parameter: str, value: object, expected: str
) -> None:
    chapter = get_chapter(name)
    start = f"^chapter '{name}': parameter '{parameter}' must be "
    with pytest.raises(ParameterTypeError, match=start + expected) as error:
        chapter.parameters({parameter: value})
    assert "\n" not in str(error.value)
    assert isinstance(error.value, ParameterError) and isinstance(error.value, TypeError)


@pytest.mark.parametrize(
    ("name", "overrides"),
    [
        ("bias", {"n_contexts": 3}),  # the same for every dataset
        ("bias", {"n_contexts": None}),
        ("bias", {"n_contexts": {"summeval": 2}}),  # the other datasets: their planned sizes
        ("bias", {"n_contexts": {"summeval": None, "webnlg": 4}}),
        ("bias", {"datasets": ["summeval"], "n_contexts": {"summeval": 2}}),
        ("bias", {"aspects": ["COH"], "templates": [2], "seed": 7, "data_dir": "/data", "small_models": []}),
        ("comparative", {"model": "Qwen/Qwen2.5-1.5B-Instruct", "released_only": False, "n_samples": 1}),
        ("subsets", {"strategies": ["active"], "n_draws": 2, "self_consistency_sizes": [2]}),
        ("datasets", {"n_contexts": 4, "optional_datasets": []}),
    ],
)
def test_well_typed_overrides_are_merged(name: str, overrides: dict) -> None:
    merged = get_chapter(name).parameters(overrides)
    assert {key: merged[key] for key in overrides} == overrides


def test_n_contexts_may_not_name_an_unknown_dataset() -> None:
    bias = get_chapter("bias")
    with pytest.raises(ParameterError, match=r"^chapter 'bias': n_contexts names \['sumeval'\], which is no dataset"):
        bias.parameters({"n_contexts": {"sumeval": 3}})  # a typo would otherwise be silently ignored
    # the defaults name three planned datasets: choosing fewer works, the others' keys are ignored
    assert bias.parameters({"datasets": ["summeval"]})["datasets"] == ["summeval"]  # other planned keys ignored
    with pytest.raises(ParameterError, match=r"\['sumeval'\], which is no dataset"):
        bias.parameters({"n_contexts": {"sumeval": 2}})


def test_contexts_per_dataset_accepts_none_an_integer_or_a_mapping() -> None:
    datasets = ["summeval", "topicalchat", "webnlg"]
    assert contexts_per_dataset(None, datasets) == {"summeval": None, "topicalchat": None, "webnlg": None}
    assert contexts_per_dataset(5, datasets) == {"summeval": 5, "topicalchat": 5, "webnlg": 5}
    per_dataset = contexts_per_dataset({"webnlg": 2, "summeval": None}, datasets, planned={"topicalchat": 10})
    assert per_dataset == {"summeval": None, "topicalchat": 10, "webnlg": 2}  # missing: the planned size
    assert list(per_dataset) == datasets  # in the order of datasets
    assert contexts_per_dataset({}, ("summeval", "rose"), planned={"summeval": 6}) == {"summeval": 6, "rose": None}
    assert contexts_per_dataset({"webnlg": 3, "summeval": 2}, ["summeval"]) == {"summeval": 2}  # webnlg not read


@pytest.mark.parametrize(
    ("n_contexts", "datasets", "error", "message"),
    [
        ({"qags": 3}, ["summeval"], ParameterError, r"names \['qags'\], which is no dataset"),
        (0, ["summeval"], ParameterTypeError, "n_contexts must be None .* or an integer >= 1"),
        (True, ["summeval"], ParameterTypeError, r"got True \(bool\)"),
        ("3", ["summeval"], ParameterTypeError, r"got '3' \(str\)"),
        ({"summeval": 2.5}, ["summeval"], ParameterTypeError, "mapping of dataset names to integers >= 1 or None"),
        (3, "summeval", ParameterTypeError, "datasets must be a list of dataset names; got 'summeval'"),
    ],
)
def test_contexts_per_dataset_rejects_what_it_cannot_use(
    n_contexts: object, datasets: object, error: type, message: str
) -> None:
    with pytest.raises(error, match=message):
        contexts_per_dataset(n_contexts, datasets)  # type: ignore[arg-type]


def test_types_are_inferred_from_defaults_or_must_be_declared() -> None:
    toy = Chapter(name="toy", title="Toy", notebook="toy.ipynb", defaults={"count": 3, "label": "x", "names": ["a"]},
                  meanings={"count": "a count", "label": "a label", "names": "some names"})
    assert toy.parameters({"count": 4, "names": ["b", "c"]})["names"] == ["b", "c"]
    with pytest.raises(ParameterTypeError, match="^chapter 'toy': parameter 'count' must be an integer; got 'four'"):
        toy.parameters({"count": "four"})
    with pytest.raises(ParameterTypeError, match="parameter 'names' must be a list of non-empty strings"):
        toy.parameters({"names": "b"})
    with pytest.raises(ParameterError, match="parameter 'n' defaults to None.*declare it"):
        Chapter(name="toy", title="Toy", notebook="toy.ipynb", defaults={"n": None})
    with pytest.raises(ParameterError, match=r"types are declared for \['typo'\]"):
        Chapter(name="toy", title="Toy", notebook="toy.ipynb", defaults={"n": 1}, types={"typo": NONE})


def test_the_registry_itself_must_fit_its_types() -> None:
    with pytest.raises(ParameterTypeError, match="parameter 'n' must be an integer >= 1; got 0"):
        Chapter(name="toy", title="Toy", notebook="toy.ipynb", defaults={"n": 0}, types={"n": integer(minimum=1)})
    with pytest.raises(ParameterTypeError, match="parameter 'n' must be an integer; got 'x'"):
        Chapter(name="toy", title="Toy", notebook="toy.ipynb", defaults={"n": 1}, ci={"n": "x"})


def test_choices_follow_the_library() -> None:
    # The registry spells them out so that the book's command line does not import nlgjudge.stats
    # or nlgjudge.data; these checks keep the copies equal.
    from nlgjudge.data import list_datasets
    from nlgjudge.stats.selection import STRATEGIES

    assert STRATEGY_NAMES == STRATEGIES
    assert sorted(ALL_DATASETS) == sorted(list_datasets())


def test_the_elo_chapters_contestants_are_the_contests() -> None:
    from nlgjudge.chapters import CONTEST_CONTESTANTS
    from nlgjudge.data.contest import CONTESTANTS

    assert list(CONTEST_CONTESTANTS) == list(CONTESTANTS)


# --------------------------------------------------------------------------------------------
# Parameters of this chapter: every parameter declared once with its type and its meaning


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.name)
def test_every_parameter_has_a_one_line_meaning(chapter: Chapter) -> None:
    assert set(chapter.meanings) == set(chapter.defaults)
    for name, meaning in chapter.meanings.items():
        assert meaning and "\n" not in meaning and len(meaning) <= 100, (chapter.name, name, meaning)


def test_a_parameter_without_a_meaning_is_refused() -> None:
    with pytest.raises(ParameterError, match=r"\['frobnicate'\] have no meaning"):
        Chapter(name="x", title="X", notebook="x.ipynb", defaults={"seed": 0, "frobnicate": 1})
    with pytest.raises(ParameterError, match="meanings are given for"):
        Chapter(name="x", title="X", notebook="x.ipynb", defaults={"seed": 0}, meanings={"other": "?"})


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.name)
def test_the_table_s_last_column_is_a_runnable_command_that_changes_the_value(chapter: Chapter, monkeypatch) -> None:
    """Each row's ``make chapter NAME=... PARAMS="-p NAME VALUE"``, split by the shell and then the
    way ``make chapter`` reads PARAMS, names this chapter and sets the row's parameter to another
    value the chapter accepts (issue 47: the column repeated the current value)."""
    import shlex

    from nlgjudge.book import parameters_from_environment, parse_overrides

    rows = chapter.parameter_rows(dict(chapter.defaults))
    assert [r["parameter"] for r in rows] == list(chapter.defaults)
    for row in rows:
        make, target, chapter_name, params = shlex.split(row["to change it"])
        assert (make, target, chapter_name) == ("make", "chapter", f"NAME={chapter.name}")
        assert params.startswith("PARAMS=")
        monkeypatch.setenv("PARAMS", params.removeprefix("PARAMS="))
        overrides = parse_overrides(parameters_from_environment("PARAMS"))
        name = row["parameter"]
        assert name in overrides, row["to change it"]
        assert overrides[name] != chapter.defaults[name], f"{chapter.name}: {row['to change it']} changes nothing"
        chapter.parameters(overrides)  # accepted (types, n_contexts against datasets)
        assert row["meaning"] == chapter.meanings[name]


def test_examples_never_suggest_the_judge_that_answers_by_position() -> None:
    for chapter in CHAPTERS:
        for name in chapter.defaults:
            if "model" in name and "smollm2-135m" not in str(chapter.defaults[name]):
                assert "smollm2-135m" not in chapter.change_command(name, chapter.defaults[name])


def test_book_list_prints_every_parameter_with_its_meaning(capsys) -> None:
    from nlgjudge.book import main

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for chapter in CHAPTERS:
        for name, meaning in chapter.meanings.items():
            assert f"{name} = " in out and meaning in out


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.name)
def test_every_chapter_shows_its_parameters_near_its_top(chapter: Chapter) -> None:
    source = nbformat.read(chapter.source_path(), as_version=4)
    position = next(k for k, c in enumerate(source.cells) if f"parameters_table({chapter.name!r}, globals())" in c.source)
    assert position <= 4 and source.cells[position - 1].source.startswith("## Parameters of this chapter")
    executed = nbformat.read(chapter.output_path(), as_version=4)
    cell = next(c for c in executed.cells if "parameters_table(" in c.source)
    shown = "".join(o.get("data", {}).get("text/html", "") for o in cell.outputs)
    for name in chapter.defaults:
        assert f">{name}<" in shown, f"{chapter.name}: the executed table lacks {name}"
    assert "..." not in shown  # nothing is cut
    injected = [c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert all("remove-cell" in c.metadata["tags"] for c in injected)  # the table replaces the injected cell


# --------------------------------------------------------------------------------------------
# The command line (issue 39): a bad argument is one `error:` line, exit 2, before anything runs


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["chapter", "elo", "-p", "judge_models", "[no-such-judge]"], "parameter 'judge_models': Unknown model 'no-such-judge'"),
        (["chapter", "rank", "-p", "judge_model", "no-such-judge"], "parameter 'judge_model': Unknown model 'no-such-judge'"),
        (["chapter", "elo", "-p", "data_dir", "/no/such/folder"], "parameter 'data_dir' '/no/such/folder' is not a folder"),
        (["chapter", "no-such-chapter"], "no chapter named 'no-such-chapter'"),
        (["chapter", "elo", "-p", "n_articles", "-3"], "parameter 'n_articles' must be"),
    ],
)
def test_the_book_command_refuses_bad_arguments_before_executing(argv, message, capsys, monkeypatch) -> None:
    import nlgjudge.book as book

    executed = []
    monkeypatch.setattr(book, "execute_chapter", lambda *args, **kwargs: executed.append(args))
    assert book.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err and "Traceback" not in err
    assert executed == []


def test_a_failing_chapter_is_one_error_line(capsys, monkeypatch) -> None:
    import nlgjudge.book as book

    def fails(*args: object, **kwargs: object) -> None:
        raise book.BookError("chapter 'elo' failed in cell 3: ValueError: boom\n(the partially executed notebook is x)")

    monkeypatch.setattr(book, "execute_chapter", fails)
    assert book.main(["chapter", "elo", "-p", "seed", "1"]) == 2
    err = capsys.readouterr().err
    assert err == "error: chapter 'elo' failed in cell 3: ValueError: boom (the partially executed notebook is x)\n"
