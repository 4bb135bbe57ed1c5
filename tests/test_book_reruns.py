"""nlgjudge.book: a rerun a class can follow (issue 47): nothing but the chapter's own output in the
page (no progress bars, no papermill or nbformat warnings), one progress line on the terminal with an
honest estimate, and failure hints in the command line's words."""

from __future__ import annotations

import io
import json
import logging
import warnings
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from nlgjudge.book import (
    KERNEL_ENVIRONMENT,
    BookError,
    ChapterProgress,
    command_line_hints,
    duration_text,
    execute_chapter,
    kernel_environment,
    normalised_source,
    previous_cell_seconds,
)
from nlgjudge.chapters import Chapter


def _toy(tmp_path: Path, cells: list[str], parameters_cell: str = "count = 3\nlabel = 'x'") -> tuple[Path, Chapter]:
    root = tmp_path / "repo"
    (root / "notebooks").mkdir(parents=True)
    (root / "lib" / "nlgjudge").mkdir(parents=True)
    (root / "lib" / "nlgjudge" / "module.py").write_text("VALUE = 1\n")
    notebook = new_notebook(
        cells=[new_code_cell(parameters_cell, metadata={"tags": ["parameters"]})] + [new_code_cell(c) for c in cells],
        metadata={"kernelspec": {"name": "nlgjudge", "display_name": "Python (nlgjudge)", "language": "python"}},
    )
    nbformat.write(notebook, root / "notebooks" / "toy.ipynb")
    chapter = Chapter(name="toy", title="Toy", notebook="toy.ipynb", defaults={"count": 3, "label": "x"},
                      meanings={"count": "how many", "label": "a label"})
    return root, chapter


def _printed(notebook_path: Path) -> str:
    notebook = nbformat.read(notebook_path, as_version=4)
    return "".join(o.get("text", "") for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", []))


def test_the_page_gets_no_progress_bar_and_the_terminal_no_kernel_or_papermill_warning(
    tmp_path: Path, capfd, caplog
) -> None:
    # papermill cannot read this parameters cell (an apostrophe in a comment), so it would warn that
    # `label` is an unknown parameter; the registry declares it, and the value still arrives.
    root, chapter = _toy(
        tmp_path,
        ["from tqdm.auto import tqdm\nfor _ in tqdm(range(3), desc='Loading weights'):\n    pass\nprint('label is', label)"],
        parameters_cell="count = 3\nlabel = 'x'  # the label's text",
    )
    with caplog.at_level(logging.INFO, logger="papermill"):
        output = execute_chapter(chapter, {"label": "y"}, root=root, progress_bar=False)
    assert "label is y" in _printed(output)
    # no tqdm bar in the page: in a kernel it is a widget (a box on the page), elsewhere text on stderr
    outputs = json.dumps([c.get("outputs", []) for c in nbformat.read(output, as_version=4).cells])
    assert "Loading weights" not in outputs and "widget-view" not in outputs
    messages = " ".join(record.getMessage() for record in caplog.records)
    assert "Passed unknown parameter" not in messages and "Unable to parse line" not in messages
    terminal = capfd.readouterr()
    assert "without encryption" not in terminal.out + terminal.err  # the kernel talks over local sockets


def test_a_parameter_the_registry_does_not_declare_is_still_reported(tmp_path: Path, caplog) -> None:
    from nlgjudge.book import _RegisteredParameterNotice

    notice = _RegisteredParameterNotice(["count", "label"])
    record = logging.LogRecord("papermill", logging.WARNING, __file__, 1, "Passed unknown parameter: %s", ("other",), None)
    assert notice.filter(record)
    record.args = ("label",)
    assert not notice.filter(record)


def test_a_notebook_without_cell_ids_runs_without_nbformat_warnings(tmp_path: Path) -> None:
    root, chapter = _toy(tmp_path, ["print(count)"])
    source = root / "notebooks" / "toy.ipynb"
    raw = json.loads(source.read_text())
    for cell in raw["cells"]:
        del cell["id"]  # as an older tool saves it
    source.write_text(json.dumps(raw))
    copy = normalised_source(source, tmp_path)
    assert copy != source and all("id" in cell for cell in json.loads(copy.read_text())["cells"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        output = execute_chapter(chapter, root=root, progress_bar=False)
    assert not [w for w in caught if "MissingIDField" in type(w.message).__name__], caught
    assert "3" in _printed(output)
    assert nbformat.read(output, as_version=4).metadata["papermill"]["input_path"].endswith("notebooks/toy.ipynb")
    assert not (root / "_build" / "papermill" / "toy.source.ipynb").exists()  # the copy is gone


def test_a_complete_notebook_is_run_as_it_is(tmp_path: Path) -> None:
    root, _ = _toy(tmp_path, ["print(count)"])
    source = root / "notebooks" / "toy.ipynb"
    assert normalised_source(source, tmp_path) == source


def test_kernel_environment_is_set_for_the_run_only(monkeypatch) -> None:
    monkeypatch.setenv("TQDM_DISABLE", "0")
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    import os

    with kernel_environment():
        assert os.environ["TQDM_DISABLE"] == "1" and os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "1"
    assert os.environ["TQDM_DISABLE"] == "0" and "HF_HUB_DISABLE_PROGRESS_BARS" not in os.environ
    assert {"TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS"} <= set(KERNEL_ENVIRONMENT)


# --------------------------------------------------------------------------------------------
# The terminal's line


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_estimate_scales_the_last_runs_remaining_cells_by_this_runs_pace() -> None:
    clock, terminal = FakeClock(), Terminal()
    progress = ChapterProgress("comparative", 4, [0.0, 10.0, 60.0, 30.0], stream=terminal, clock=clock)
    clock.now += 20.0  # the first two cells took 20 s where the last run took 10 s: twice as slow
    progress.cell_done()
    progress.cell_done()
    assert progress.seconds_left() == pytest.approx(180.0)
    assert terminal.getvalue().endswith("[nlgjudge.book] comparative: cell 2/4, 20 s, about 3 min 00 s left")
    progress.finish()
    assert terminal.getvalue().endswith("comparative: done after 2/4 cells in 20 s\n")


def test_without_timings_of_the_same_parameters_it_gives_no_estimate() -> None:
    clock, terminal = FakeClock(), Terminal()
    progress = ChapterProgress("elo", 3, None, stream=terminal, clock=clock)
    progress.cell_done()
    assert progress.seconds_left() is None
    assert "no estimate" in terminal.getvalue()
    # timings of another notebook (another number of cells) are not used either
    assert ChapterProgress("elo", 3, [1.0, 2.0], stream=terminal, clock=clock).seconds_left() is None


def test_in_a_log_only_the_last_state_is_printed() -> None:
    clock, log = FakeClock(), io.StringIO()
    progress = ChapterProgress("bias", 3, [1.0, 1.0, 1.0], stream=log, clock=clock)
    for _ in range(3):
        progress.cell_done()
    clock.now += 75
    progress.finish()
    assert log.getvalue() == "[nlgjudge.book] bias: done after 3/3 cells in 1 min 15 s\n"


def test_a_run_prints_one_line_for_the_chapter(tmp_path: Path, capsys) -> None:
    root, chapter = _toy(tmp_path, ["x = 1", "y = 2"])
    execute_chapter(chapter, root=root, progress_bar=True)
    out = capsys.readouterr().out
    assert "Executing:" not in out and "cell/s" not in out  # papermill's own bar is off
    assert out.count("[nlgjudge.book] toy: done after 4/4 cells in") == 1  # with papermill's parameters cell


def test_previous_timings_are_read_only_for_the_same_parameters(tmp_path: Path) -> None:
    root, chapter = _toy(tmp_path, ["x = 1"])
    output = execute_chapter(chapter, root=root, progress_bar=False)
    seconds = previous_cell_seconds(output, chapter.parameters())
    assert seconds is not None and len(seconds) == len(nbformat.read(output, as_version=4).cells)
    assert previous_cell_seconds(output, chapter.parameters({"count": 4})) is None
    assert previous_cell_seconds(tmp_path / "missing.ipynb", chapter.parameters()) is None


@pytest.mark.parametrize(
    ("seconds", "text"), [(8.4, "8 s"), (60, "1 min 00 s"), (75.2, "1 min 15 s"), (746, "12 min 26 s")]
)
def test_durations_read_as_minutes_and_seconds(seconds: float, text: str) -> None:
    assert duration_text(seconds) == text


# --------------------------------------------------------------------------------------------
# Hints in the command line's words


def test_python_settings_in_a_hint_become_chapter_options() -> None:
    text = 'llama-cpp-python is not installed; run `make install-backend`, or create the judge with backend="torch"'
    assert command_line_hints(text, ["backend", "model"]).endswith("create the judge with `-p backend torch`")
    assert command_line_hints("use backend='torch' (or 'auto')", ["backend"]) == "use `-p backend torch` (or 'auto')"
    # names that are no chapter parameter are left as they are
    assert command_line_hints('device="cuda"', ["backend"]) == 'device="cuda"'


def test_a_failing_chapter_names_the_option_to_pass(tmp_path: Path) -> None:
    root, chapter = _toy(tmp_path, ["raise RuntimeError('this needs label=\"long text\" to run')"])
    with pytest.raises(BookError, match=r"this needs `-p label 'long text'` to run"):
        execute_chapter(chapter, root=root, progress_bar=False)
