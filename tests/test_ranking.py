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
from nlgjudge.ranking import OUTPUT_FILES, rank_outputs

GOOD = [
    {"context_id": f"c{c}", "source": f"Article {c}: the council met on Monday .", "system": s, "output": f"{s} says {c} ."}
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
    assert sorted(p.name for p in out.iterdir()) == sorted([*OUTPUT_FILES, "notes.txt"])
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
    assert not list(out.glob(".*"))  # no temporary files left behind


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
