"""`nlgjudge rank` against hostile use (issue 48): nothing of the user's is removed, two runs into one
`--out` cannot clobber each other, nothing that can be checked before judging is found after it, and
every refusal is one `error:` line naming its option, exit 2, no traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from engine_utils import tiny_handle
from test_cli_output_set import make_result

from nlgjudge.cache import OutputCache
from nlgjudge.cli import main as cli_main
from nlgjudge.engine import Judge
import nlgjudge.ranking as ranking
from nlgjudge.ranking import MANIFEST_NAME, OUTPUT_FILES, STAGING_PREFIX, rank_outputs, write_outputs

# Read with defaults so that the tests run (and fail on their behaviour) against code before issue 48.
LOCK_NAME = getattr(ranking, "LOCK_NAME", ".nlgjudge-rank.lock")
STAGING_MARKER = getattr(ranking, "STAGING_MARKER", ".nlgjudge-staging-owner")

#: Outputs that differ in words, not only in a number: a system whose outputs differ only in a number reads as constant.
WEATHER = ("rain", "sun", "snow", "wind", "fog", "hail", "storm", "frost", "mist", "dew")
GOOD = [
    {"context_id": f"c{c}", "source": f"Article {c}: the council met on Monday .", "system": s, "output": f"{s} says {WEATHER[c % len(WEATHER)]} {c} ."}
    for c in range(2)
    for s in ("alpha", "beta")
]


def _jsonl(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def one_error(status: int, err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert status == 2 and len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


@pytest.fixture
def no_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Loading a model is a failure of these tests: their arguments must be refused before it."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model was loaded before the bad argument was refused")

    monkeypatch.setattr("nlgjudge.ranking._load_judge", refuse)
    monkeypatch.setenv("NLGJUDGE_OUTPUT_CACHE", str(tmp_path / "c.sqlite"))
    monkeypatch.delenv("NLGJUDGE_SERVER_URL", raising=False)
    monkeypatch.delenv("NLGJUDGE_BACKEND", raising=False)


def rank_cli(tmp_path: Path, *options: str, rows: list[dict[str, str]] = GOOD, out: str | None = None) -> int:
    path = _jsonl(tmp_path / "in.jsonl", rows)
    return cli_main(["rank", str(path), "--model", "smollm2-135m-instruct", "--out", out or str(tmp_path / "out"), *options])


# --------------------------------------------------------------------------------------------
# Data loss: only what this run created is removed


def test_the_users_hidden_files_that_look_like_ours_are_kept(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    mine = [".report.md.orig", ".leaderboard.csv.bak", ".judgments.jsonl.2024", ".win_matrix.png.keep"]
    for name in mine:
        (out / name).write_text("mine")
    (out / ".nlgjudge-staging-mine").mkdir()
    (out / ".nlgjudge-staging-mine" / "notes.txt").write_text("mine")
    write_outputs(make_result(2), out)
    assert sorted(p.name for p in out.iterdir()) == sorted([*OUTPUT_FILES, MANIFEST_NAME, *mine, ".nlgjudge-staging-mine"])
    assert (out / ".nlgjudge-staging-mine" / "notes.txt").read_text() == "mine"


def test_the_staging_folder_of_a_live_run_is_kept_and_a_dead_runs_is_removed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    live = out / f"{STAGING_PREFIX}{os.getppid()}-aaaa"  # a process that is alive: another run writing now
    live.mkdir()
    (live / STAGING_MARKER).write_text(str(os.getppid()))
    (live / "win_matrix.png").write_bytes(b"half")
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(child.stdout)
    dead = out / f"{STAGING_PREFIX}{dead_pid}-bbbb"
    dead.mkdir()
    (dead / STAGING_MARKER).write_text(str(dead_pid))
    unmarked = out / f"{STAGING_PREFIX}{dead_pid}-cccc"  # no marker: not provably ours
    unmarked.mkdir()
    write_outputs(make_result(2), out)
    assert live.is_dir() and (live / "win_matrix.png").read_bytes() == b"half"
    assert not dead.exists() and unmarked.is_dir()


HOLD = """
import sys, time
from nlgjudge.ranking import out_lock
with out_lock(sys.argv[1]):
    print("held", flush=True)
    time.sleep(60)
"""


def test_a_second_run_into_the_same_out_refuses_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         no_model: None) -> None:
    out = tmp_path / "out"
    out.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        line = one_error(rank_cli(tmp_path), capsys.readouterr().err)
        assert line.startswith(f"error: --out {out}: another nlgjudge rank is writing to this folder now"), line
    finally:
        holder.kill()
        holder.wait()
    # Its holder gone, the lock is free again (the next run gets as far as loading the model).
    with pytest.raises(AssertionError, match="the model was loaded"):
        rank_cli(tmp_path)


def test_the_lock_file_is_removed_after_a_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_outputs(make_result(2), out)
    assert not (out / LOCK_NAME).exists()


# --------------------------------------------------------------------------------------------
# Silent wrong answers in the output files


def test_a_formula_in_a_system_name_is_neutralised_in_the_leaderboard(tmp_path: Path) -> None:
    names = {"alpha": "=cmd|' /C calc'!A0", "beta": "@SUM(1+1)"}
    rows = [{**r, "system": names[r["system"]]} for r in GOOD]
    judge = Judge(tiny_handle("qwen2"), cache=OutputCache(tmp_path / "c.sqlite"), study="rank", progress=False)
    rank_outputs(pd.DataFrame(rows), judge=judge, out=tmp_path / "out", n_boot=20, progress=False)
    text = (tmp_path / "out" / "leaderboard.csv").read_text()
    cells = {line.split(",")[0] for line in text.splitlines()[1:]}
    assert all(cell.startswith(("\"'", "'")) for cell in cells), cells
    assert "\n=" not in text and "\n@" not in text


# --------------------------------------------------------------------------------------------
# Checks made before judging (no model is loaded before they refuse)


def test_out_with_a_tilde_is_the_home_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_model: None) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    made = []  # the folder exists when the model would load (a run that then stops removes the folder it made)

    def load(*args: object) -> None:
        made.append((tmp_path / "home" / "ranking").is_dir())
        raise AssertionError("the model was loaded")

    monkeypatch.setattr("nlgjudge.ranking._load_judge", load)
    with pytest.raises(AssertionError, match="the model was loaded"):
        rank_cli(tmp_path, out="~/ranking")
    assert made == [True] and not (tmp_path / "cwd" / "~").exists()


@pytest.mark.parametrize("name", ["leaderboard.csv", "judgments.jsonl"])
def test_an_output_name_taken_by_a_folder_is_refused_up_front(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              no_model: None, name: str) -> None:
    (tmp_path / "out" / name).mkdir(parents=True)
    line = one_error(rank_cli(tmp_path), capsys.readouterr().err)
    assert line.startswith(f"error: --out {tmp_path / 'out'}: {name} there is not a regular file (a folder"), line


@pytest.mark.parametrize(("options", "message"), [
    (["--bootstrap", "200000000"], "--bootstrap 200000000: must be between 2 and 100000"),
    (["--bootstrap", "1"], "--bootstrap 1: must be between 2 and 100000"),
    (["--max-concurrency", "0"], "--max-concurrency 0: must be a whole number >= 1"),
    (["--model", "minilm-l6"], "--model minilm-l6: a sentence encoder, which cannot judge"),
    (["--server-url", "http://bob:pw@127.0.0.1:9/v1"], "--server-url: server_url 'http://127.0.0.1:9/v1' carries credentials"),
    (["--server-url", "http://127.0.0.1:9/v1?api_key=K"], "--server-url: server_url 'http://127.0.0.1:9/v1' has a query"),
    (["--server-url", "http://[::1/v1"], "--server-url: server_url 'http://[::1/v1' is not a valid URL"),
    (["--server-url", "http://127.0.0.1:99999/v1"], "--server-url: server_url 'http://127.0.0.1:99999/v1' is not a valid URL"),
    (["--server-url", "http://127.0.0.1:port/v1"], "is not a valid URL (Port could not be cast"),
    (["--server-url", "127.0.0.1:8000"], "got '127.0.0.1:8000'"),
    (["--prompt", "p" * 300], "--prompt " + "p" * 300 + ": cannot read it (File name too long)"),
    (["--context-field", "system"], "--context-field and --system-field both name the field 'system'"),
])
def test_hostile_options_are_one_line_naming_the_option(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        no_model: None, options: list[str], message: str) -> None:
    argv = [*options]
    if options[0] == "--model":
        path = _jsonl(tmp_path / "in.jsonl", GOOD)
        status = cli_main(["rank", str(path), "--out", str(tmp_path / "out"), *argv])
    else:
        status = rank_cli(tmp_path, *argv)
    err = capsys.readouterr().err
    line = one_error(status, err)
    assert message in line, line
    assert "pw" not in err and "api_key=K" not in err
    assert not (tmp_path / "out").exists()


def test_a_prompt_too_long_in_the_last_context_is_refused_before_any_judging(tmp_path: Path,
                                                                              capsys: pytest.CaptureFixture[str],
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [dict(r) for r in GOOD] + [
        {"context_id": "c9", "source": "The council met on Monday and talked about the budget . " * 120, "system": s,
         "output": f"{s} says 9 ."} for s in ("alpha", "beta")]
    calls: list[int] = []

    class Counting(Judge):
        def label_probs(self, requests):  # type: ignore[no-untyped-def]
            calls.append(len(requests))
            return super().label_probs(requests)

    monkeypatch.setattr("nlgjudge.ranking._load_judge", lambda model, backend, truncate: Counting(
        tiny_handle("qwen2"), cache=OutputCache(tmp_path / "c.sqlite"), study="rank", progress=False, truncate=truncate))
    monkeypatch.setenv("NLGJUDGE_OUTPUT_CACHE", str(tmp_path / "c.sqlite"))
    line = one_error(rank_cli(tmp_path, rows=rows), capsys.readouterr().err.replace("rank: ", "").split("\n", 1)[-1])
    assert "line 5 and line 6 (context 'c9'" in line and "exceeds the context window" in line, line
    assert calls == [] and OutputCache(tmp_path / "c.sqlite").count() == 0  # nothing judged in vain


def test_the_model_cache_setting_gets_its_own_fix_not_the_model_name_one() -> None:
    line = ranking._load_failure("smollm2-135m-instruct", ValueError("NLGJUDGE_THREADS='abc' is not a whole number of threads; "
                                                             "set e.g. NLGJUDGE_THREADS=2"))
    assert line.endswith("set e.g. NLGJUDGE_THREADS=2") and "packaged short name" not in line
    line = ranking._load_failure("smollm2-135m-instruct", json.JSONDecodeError("Expecting value", "", 0))
    assert "model cache folder" in line and "file_sha256.json" in line and "packaged short name" not in line


# --------------------------------------------------------------------------------------------
# What the probe found after 58dced5


@pytest.mark.parametrize("variable", ["NLGJUDGE_CACHE_DIR", "NLGJUDGE_OUTPUT_CACHE"])
def test_a_cache_setting_naming_an_impossible_place_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch, no_model: None,
                                                             variable: str) -> None:
    (tmp_path / "afile").write_text("x")
    monkeypatch.setenv(variable, str(tmp_path / "afile" / "sub" / ("c.sqlite" if "OUTPUT" in variable else "")))
    line = one_error(rank_cli(tmp_path), capsys.readouterr().err)
    assert line.startswith(f"error: {variable}='{tmp_path / 'afile' / 'sub'}") and f"set {variable} to" in line, line
    assert not (tmp_path / "out").exists()


def test_truncate_with_a_server_names_the_options(tmp_path: Path, capsys: pytest.CaptureFixture[str], no_model: None) -> None:
    line = one_error(rank_cli(tmp_path, "--truncate", "--server-url", "http://127.0.0.1:9/v1"), capsys.readouterr().err)
    assert line.startswith("error: --truncate is for a judge computed here") and "truncate=True" not in line, line
    assert not (tmp_path / "out").exists()
