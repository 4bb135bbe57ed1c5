"""`nlgjudge rank` and `nlgjudge.rank`: the files it writes, and clean refusals of bad input at the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from engine_utils import tiny_handle

import nlgjudge
from nlgjudge.cache import OutputCache
from nlgjudge.cli import main as cli_main
from nlgjudge.engine import Judge
from nlgjudge.ranking import MANIFEST_NAME, OUTPUT_FILES, rank_outputs
from nlgjudge.safety import markdown_text

#: Outputs that differ in words, not only in a number: a system whose outputs differ only in a number reads as constant.
WEATHER = ("rain", "sun", "snow", "wind", "fog", "hail", "storm", "frost", "mist", "dew")
GOOD = [
    {"context_id": f"c{c}", "source": f"Article {c}: the council met on Monday .", "system": s, "output": f"{s} says {WEATHER[c % len(WEATHER)]} {c} ."}
    for c in range(3)
    for s in ("alpha", "beta", "gamma")
]


def tiny_judge(tmp_path: Path) -> Judge:
    return Judge(tiny_handle("qwen2"), cache=OutputCache(tmp_path / "c.sqlite"), study="rank", progress=False)


def test_the_function_writes_four_files_and_returns_the_leaderboard(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    result = rank_outputs(pd.DataFrame(GOOD), judge=tiny_judge(tmp_path), out=out, n_boot=50, progress=False)
    assert sorted(p.name for p in out.iterdir()) == sorted([*OUTPUT_FILES, MANIFEST_NAME, "notes.txt"])
    assert (out / "notes.txt").read_text() == "mine"  # nobody else's file is touched
    board = pd.read_csv(out / "leaderboard.csv")
    assert board["system"].tolist() == result.leaderboard["system"].tolist() and len(board) == 3
    assert {"system", "rank", "score", "ci_low", "ci_high", "wins", "comparisons"} <= set(board.columns)
    assert (board["ci_low"] <= board["score"] + 1e-9).all() and (board["score"] <= board["ci_high"] + 1e-9).all()
    lines = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    assert len(lines) == 3 * 3 and all(r["p_a_1_first"] is not None and r["p_a_2_first"] is not None for r in lines)
    report = (out / "report.md").read_text()
    assert "P(A) before debiasing" in report and "tiny-qwen2-0" in report
    assert (out / "win_matrix.png").read_bytes()[:4] == b"\x89PNG"
    assert [p.name for p in out.glob(".*")] == [MANIFEST_NAME]  # no temporary files left behind, only the manifest


def test_nlgjudge_rank_returns_the_leaderboard(tmp_path: Path) -> None:
    board = nlgjudge.rank(pd.DataFrame(GOOD), judge=tiny_judge(tmp_path), n_boot=20, progress=False)
    assert board["rank"].min() == 1 and len(board) == 3


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


BAD_INPUTS = {
    "missing file": (None, "no such file"),
    "bad json": ('{"context_id": "c0", "source": "s", "system": "a", "output": "x"}\n{broken\n', "line 2: not valid JSON"),
    "missing field": ([{"context_id": "c0", "source": "s", "system": "a"}], "line 1: missing field 'output'"),
    "non-string output": ([{"context_id": "c0", "source": "s", "system": "a", "output": {"text": "x"}}], "is a dict"),
    "empty file": ("", "the file is empty"),
    "duplicate rows": ([GOOD[0], GOOD[1], GOOD[0]], "appears more than once in context 'c0'"),
    "one system": ([GOOD[0], GOOD[1], GOOD[3]], "context 'c1' has one system"),
}


@pytest.mark.parametrize("kind", list(BAD_INPUTS))
def test_bad_input_is_one_clear_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    content, message = BAD_INPUTS[kind]
    path = tmp_path / "in.jsonl"
    if isinstance(content, str):
        path.write_text(content)
    elif content is not None:
        _jsonl(path, content)
    out = tmp_path / "out"
    status = cli_main(["rank", str(path), "--model", "smollm2-135m-instruct", "--out", str(out)])
    captured = capsys.readouterr()
    assert status == 2
    assert captured.err.startswith("error: ") and captured.err.count("\n") == 1 and message in captured.err
    assert "in.jsonl" in captured.err and "Traceback" not in captured.err
    assert not out.exists()  # nothing written that a rerun could trust


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--model", "no-such-model"], "Unknown model 'no-such-model'"),
        (["--model", "smollm2-135m-instruct", "--budget", "1.5"], "outside (0, 1]"),
        (["--model", "smollm2-135m-instruct", "--budget", "0"], "outside (0, 1]"),
        (["--model", "smollm2-135m-instruct", "--budget", "half"], "is not a number"),
        (["--model", "smollm2-135m-instruct", "--prompt", "missing.txt"], "no such prompt file"),
    ],
)
def test_bad_options_are_refused_before_any_model(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                                  message: str) -> None:
    path = _jsonl(tmp_path / "in.jsonl", GOOD)
    status = cli_main(["rank", str(path), "--out", str(tmp_path / "out"), *argv])
    err = capsys.readouterr().err
    assert status == 2 and err.startswith("error: ") and message in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_an_out_path_that_is_a_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _jsonl(tmp_path / "in.jsonl", GOOD)
    (tmp_path / "taken").write_text("someone's file")
    status = cli_main(["rank", str(path), "--model", "smollm2-135m-instruct", "--out", str(tmp_path / "taken")])
    assert status == 2 and "is not a folder" in capsys.readouterr().err
    assert (tmp_path / "taken").read_text() == "someone's file"


@pytest.mark.slow
def test_the_command_line_on_the_real_smollm2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("llama_cpp")
    path = tmp_path / "in.csv"
    pd.DataFrame(GOOD).to_csv(path, index=False)
    out = tmp_path / "out"
    status = cli_main(["rank", str(path), "--model", "smollm2-135m-instruct", "--out", str(out), "--bootstrap", "50"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    board = pd.read_csv(out / "leaderboard.csv")
    assert sorted(board["system"]) == ["alpha", "beta", "gamma"]
    assert (board["ci_low"] <= board["score"]).all() and (board["score"] <= board["ci_high"]).all()
    assert "alpha" in captured.out and "wrote" in captured.err
    # A second run computes nothing: every judgment comes from the cache.
    stored = OutputCache().count()
    assert stored >= 3 * 6
    status = cli_main(["rank", str(path), "--model", "smollm2-135m-instruct", "--out", str(out), "--bootstrap", "50"])
    assert status == 0 and OutputCache().count() == stored
    pd.testing.assert_frame_equal(pd.read_csv(out / "leaderboard.csv"), board)


# --------------------------------------------------------------------------------------------
# Issue 39: every argument and the output folder are checked before the model loads


@pytest.fixture
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading a model is a failure of these tests: their arguments must be refused before it."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model was loaded before the bad argument was refused")

    monkeypatch.setattr("nlgjudge.ranking._load_judge", refuse)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--out", ""], "--out '' is empty"),
        (["--out", "   "], "--out '   ' is empty"),
        (["--seed", "-1"], "--seed -1: must be a non-negative integer"),
        (["--noun", " summary"], "--noun ' summary': what an output is called"),
        (["--noun", ""], "--noun '': what an output is called"),
        (["--out", "/proc/self"], "--out /proc/self: cannot write there"),
        (["--out", "/proc/nlgjudge-no-such/out"], "--out /proc/nlgjudge-no-such/out: cannot create the folder"),
        (["--aspect", "concise"], None),  # an adjective the user chose: accepted (the sentinel model load fails the run)
        (["--aspect", "XYZ"], "--aspect 'XYZ': looks like an abbreviation but is none the book knows"),
    ],
)
def test_arguments_are_refused_up_front_naming_the_option(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          no_model: None, argv: list[str], message: str | None) -> None:
    path = _jsonl(tmp_path / "in.jsonl", GOOD)
    full = ["rank", str(path), "--model", "smollm2-135m-instruct", "--out", str(tmp_path / "out"), *argv]
    if message is None:
        with pytest.raises(AssertionError, match="the model was loaded"):
            cli_main(full)
        return
    status = cli_main(full)
    err = capsys.readouterr().err
    assert status == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert message in err and "Traceback" not in err and "Wording" not in err
    assert not (tmp_path / "out").exists()
    assert not list(Path.cwd().glob(".nlgjudge-write-test-*"))


def test_an_out_path_through_a_file_is_refused_up_front(tmp_path: Path, capsys: pytest.CaptureFixture[str], no_model: None) -> None:
    path = _jsonl(tmp_path / "in.jsonl", GOOD)
    (tmp_path / "taken").write_text("someone's file")
    status = cli_main(["rank", str(path), "--model", "smollm2-135m-instruct", "--out", str(tmp_path / "taken" / "sub")])
    err = capsys.readouterr().err
    assert status == 2 and "goes through" in err and "is a file, not a folder" in err and err.startswith("error: --out")


def test_a_prompt_folder_is_called_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str], no_model: None) -> None:
    path = _jsonl(tmp_path / "in.jsonl", GOOD)
    status = cli_main(["rank", str(path), "--model", "smollm2-135m-instruct", "--out", str(tmp_path / "out"),
                       "--prompt", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 2 and "is a folder, not a prompt file" in err and "no such prompt file" not in err


def test_a_folder_created_for_a_run_that_fails_is_removed(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path = _jsonl(tmp_path / "in.jsonl", GOOD)

    def cannot_load(*args: object, **kwargs: object) -> None:
        from nlgjudge.data.user_outputs import UserInputError

        raise UserInputError("cannot load the model 'x': offline")

    monkeypatch.setattr("nlgjudge.ranking._load_judge", cannot_load)
    status = cli_main(["rank", str(path), "--model", "smollm2-135m-instruct", "--out", str(tmp_path / "new" / "out")])
    assert status == 2 and "cannot load" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()  # created for the check, taken back: nothing written


# --------------------------------------------------------------------------------------------
# Issue 39: the four files are one set with the user's umask; a killed run's leftovers are removed


def test_outputs_get_the_users_umask_and_leftovers_are_removed(tmp_path: Path) -> None:
    import os

    from nlgjudge.ranking import STAGING_MARKER, STAGING_PREFIX

    out = tmp_path / "out"
    out.mkdir()
    dead = _dead_pid()
    leftover = out / f"{STAGING_PREFIX}{dead}-0123abcd"  # what a killed run left: its pid and marker
    leftover.mkdir()
    (leftover / STAGING_MARKER).write_text(str(dead))
    (leftover / "report.md").write_text("half")
    (out / ".hidden-notes").write_text("mine")
    previous = os.umask(0o022)
    try:
        rank_outputs(pd.DataFrame(GOOD), judge=tiny_judge(tmp_path), out=out, n_boot=20, progress=False)
    finally:
        os.umask(previous)
    for name in OUTPUT_FILES:
        assert (out / name).stat().st_mode & 0o777 == 0o644, name
    assert sorted(p.name for p in out.iterdir()) == sorted([*OUTPUT_FILES, MANIFEST_NAME, ".hidden-notes"])


def _dead_pid() -> int:
    import subprocess
    import sys

    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(child.stdout)


# --------------------------------------------------------------------------------------------
# Issue 39: messages that say what to fix


def test_a_text_too_long_for_the_judge_names_line_context_systems_and_truncate(tmp_path: Path) -> None:
    rows = [dict(r) for r in GOOD]
    for row in rows:
        if row["context_id"] == "c1":
            row["source"] = "The council met on Monday and talked about the budget . " * 120
    path = _jsonl(tmp_path / "in.jsonl", rows)
    from nlgjudge.data.user_outputs import UserInputError

    with pytest.raises(UserInputError) as caught:
        rank_outputs(path, judge=tiny_judge(tmp_path), n_boot=20, progress=False)
    message = str(caught.value)
    assert "in.jsonl, line" in message and "context 'c1'" in message and "--truncate" in message
    assert "exceeds the context window of 512 tokens" in message and "truncate=True" not in message
    # Issue 48: every prompt's tokens are counted before any judging: nothing was judged in vain.
    assert OutputCache(tmp_path / "c.sqlite").count() == 0


def test_truncate_cuts_and_the_report_and_warnings_say_so(tmp_path: Path) -> None:
    rows = [dict(r) for r in GOOD]
    for row in rows:
        if row["context_id"] == "c1":
            row["source"] = "The council met on Monday and talked about the budget . " * 120
    judge = Judge(tiny_handle("qwen2"), cache=OutputCache(tmp_path / "c.sqlite"), study="rank", progress=False, truncate=True)
    out = tmp_path / "out"
    result = rank_outputs(pd.DataFrame(rows), judge=judge, out=out, n_boot=20, progress=False)
    notes = [w for w in result.warnings if w.startswith("truncated prompts: 6 of 18 comparisons")]
    assert len(notes) == 1 and notes[0] in (out / "report.md").read_text()


# --------------------------------------------------------------------------------------------
# Issue 39, minor: emoji names draw without glyph warnings; identical outputs say they were not compared


def test_emoji_system_names_give_no_glyph_warnings(tmp_path: Path) -> None:
    import warnings

    rows = [{**r, "system": {"alpha": "alpha 🤖", "beta": "beta 🦄", "gamma": "gamma"}[r["system"]]} for r in GOOD]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rank_outputs(pd.DataFrame(rows), judge=tiny_judge(tmp_path), out=tmp_path / "out", n_boot=20, progress=False)
    assert not [str(w.message) for w in caught if "Glyph" in str(w.message)]
    board = pd.read_csv(tmp_path / "out" / "leaderboard.csv")
    assert "alpha 🤖" in set(board["system"])  # the files keep the names; only the figure spells the glyph


def test_identical_outputs_everywhere_are_explained_beside_the_zero_intervals(tmp_path: Path) -> None:
    rows = [{**r, "output": f"the same text {r['context_id']} ."} for r in GOOD]
    result = rank_outputs(pd.DataFrame(rows), judge=tiny_judge(tmp_path), n_boot=20, progress=False)
    assert (result.leaderboard["ci_low"] == 0).all() and (result.leaderboard["ci_high"] == 0).all()
    notes = [w for w in result.warnings if w.startswith("no comparison was possible")]
    assert len(notes) == 1 and "18 ordered pairs are ties by definition" in notes[0] and markdown_text(notes[0]) in result.report


def test_the_command_line_names_the_line_of_a_text_too_long(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [dict(r) for r in GOOD]
    for row in rows:
        if row["context_id"] == "c1":
            row["source"] = "The council met on Monday and talked about the budget . " * 120
    path = _jsonl(tmp_path / "in.jsonl", rows)
    monkeypatch.setattr("nlgjudge.ranking._load_judge", lambda model, backend, truncate: Judge(
        tiny_handle("qwen2"), cache=OutputCache(tmp_path / "c.sqlite"), study="rank", progress=False, truncate=truncate))
    monkeypatch.setenv("NLGJUDGE_OUTPUT_CACHE", str(tmp_path / "c.sqlite"))
    status = cli_main(["rank", str(path), "--model", "smollm2-135m-instruct", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err.splitlines()
    errors = [line for line in err if line.startswith("error:")]
    assert status == 2 and len(errors) == 1 and "Traceback" not in "\n".join(err)
    assert errors[0].startswith(f"error: {path}, line 4 and line 5 (context 'c1', system 'alpha' against 'beta'): prompt of ")
    assert errors[0].endswith("or pass --truncate to cut such prompts from the left (counted in report.md)")
    assert not (tmp_path / "out").exists()
    # With --truncate the same input is ranked, and the cut prompts are counted where the user reads.
    assert cli_main(["rank", str(path), "--model", "smollm2-135m-instruct", "--out", str(tmp_path / "out"), "--truncate"]) == 0
    assert "warning: truncated prompts: 6 of 18 comparisons" in capsys.readouterr().err
