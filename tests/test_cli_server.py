"""`nlgjudge rank --server-url` and `nlgjudge.rank(..., server_url=...)`: argument checks before any server
work, one-line failures (server down, a 500 mid-run), and the same judgments as in-process llama.cpp
through a real llama-cpp-python server on real SummEval outputs (slow).

Only 127.0.0.1 is ever contacted."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from test_engine_server import TOKENIZER, Stub

from nlgjudge.engine.server.local import free_port, stop_server

import nlgjudge
from nlgjudge.cli import main as cli_main

#: Outputs that differ in words, not only in a number: a system whose outputs differ only in a number reads as constant.
WEATHER = ("rain", "sun", "snow", "wind", "fog", "hail", "storm", "frost", "mist", "dew")
ROWS = [
    {"context_id": f"c{c}", "source": f"Article {c}: the council met on Monday .", "system": s, "output": f"{s} says {WEATHER[c % len(WEATHER)]} {c} ."}
    for c in range(2)
    for s in ("alpha", "beta")
]


@pytest.fixture
def inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NLGJUDGE_OUTPUT_CACHE", str(tmp_path / "cache.sqlite"))
    monkeypatch.delenv("NLGJUDGE_SERVER_URL", raising=False)
    monkeypatch.delenv("NLGJUDGE_BACKEND", raising=False)
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


def one_error(status: int, err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    assert status == 2 and len(errors) == 1 and "Traceback" not in err, err
    return errors[0]


def rank_cli(path: Path, out: Path, *options: str) -> int:
    return cli_main(["rank", str(path), "--out", str(out), "--bootstrap", "20", *options])


UNREACHABLE = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens: any contact would say so


@pytest.mark.parametrize("options, message", [
    (["--server-url", "ftp://host/v1"], "--server-url: server_url must be an http(s) URL"),
    (["--server-url", UNREACHABLE, "--backend", "torch"], "--server-url judges on a server: drop --backend torch"),
    (["--server-url", UNREACHABLE, "--max-concurrency", "0"], "--max-concurrency 0: must be a whole number >= 1"),
    (["--server-tokenizer", TOKENIZER], "--server-tokenizer is for a judge on a server: pass --server-url too"),
    (["--backend", "server"], "--server-url: backend='server' needs server_url=... or $NLGJUDGE_SERVER_URL"),
    (["--server-url", UNREACHABLE, "--server-tokenizer", "no-such-model"], "--server-tokenizer no-such-model: the prompts"),
    (["--server-url", UNREACHABLE, "--budget", "2"], "budget '2' is outside (0, 1]"),
])
def test_bad_server_options_fail_before_any_server_work(inputs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        options: list[str], message: str) -> None:
    status = rank_cli(inputs, tmp_path / "out", "--model", TOKENIZER, *options)
    line = one_error(status, capsys.readouterr().err)
    assert line.startswith(f"error: {message}"), line
    assert "no inference server answers" not in line  # refused before contacting anything
    assert not (tmp_path / "out").exists()


def test_server_not_running_is_one_clear_line(inputs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = rank_cli(inputs, tmp_path / "out", "--model", TOKENIZER, "--server-url", UNREACHABLE)
    line = one_error(status, capsys.readouterr().err)
    assert line.startswith(f"error: no inference server answers at {UNREACHABLE}"), line
    assert not (tmp_path / "out").exists()


def test_a_500_mid_run_is_one_line_and_the_rerun_completes(inputs: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    stub = Stub()
    try:
        options = ["--model", "stub", "--server-tokenizer", TOKENIZER, "--server-url", stub.url, "--max-concurrency", "1",
                   "--server-identity", "stub"]
        stub.fail_after = 8  # the probe's few requests pass, then every completion is a 500
        status = rank_cli(inputs, tmp_path / "out", *options)
        line = one_error(status, capsys.readouterr().err)
        # the 500s began before any judgment was stored: the line says so, never that judgments were kept (probe 12)
        assert "HTTP 500" in line and line.endswith("no judgment of this run was finished, so a rerun starts from the beginning")
        assert not (tmp_path / "out" / "leaderboard.csv").exists()
        stub.fail_after = None
        assert rank_cli(inputs, tmp_path / "out", *options) == 0
        judgments = [json.loads(x) for x in (tmp_path / "out" / "judgments.jsonl").read_text().splitlines()]
        assert len(judgments) == 2 and all(abs(r["p_a_1_first"] - 0.679178699) < 1e-6 for r in judgments)
        assert "an OpenAI-compatible server" in (tmp_path / "out" / "report.md").read_text()
    finally:
        stub.close()


def test_nlgjudge_rank_takes_a_server_url(inputs: Path, tmp_path: Path) -> None:
    stub = Stub()
    try:
        board = nlgjudge.rank(pd.DataFrame(ROWS), model="stub", server_url=stub.url, server_tokenizer=TOKENIZER,
                              n_boot=20, progress=False, cache=False)
        assert sorted(board["system"]) == ["alpha", "beta"]
        with pytest.raises(ValueError, match="server_tokenizer is for a judge on a server"):
            nlgjudge.rank(pd.DataFrame(ROWS), model=TOKENIZER, server_tokenizer=TOKENIZER, cache=False)
    finally:
        stub.close()


# ---- against llama-cpp-python's own server, on real SummEval outputs --------------------------------
def start_llama_server() -> tuple[subprocess.Popen[bytes], str]:
    from nlgjudge.engine.server.local import start_llama_cpp_server

    return start_llama_cpp_server(TOKENIZER, threads=1, n_ctx=2048, timeout=60)


#: P(A) tolerance: the one tests/test_engine_server.py states for log-probabilities (1e-4; measured there
#: 2.6e-7), which bounds the P(A) difference too (a softmax over two labels moves P by at most a quarter of it).
TOLERANCE = 1e-4


def summeval_outputs(path: Path, systems: int = 3) -> Path:
    from nlgjudge.data import DataNotFoundError, load_dataset

    try:
        ds = load_dataset("summeval", n_contexts=1, seed=0)
    except (DataNotFoundError, FileNotFoundError) as error:
        pytest.skip(f"SummEval not available here: {error}")
    frame = ds.frame[ds.frame["system"].isin(sorted(set(ds.frame["system"]))[:systems])]
    rows = [{"context_id": r.context_id, "source": r.source, "system": r.system, "output": r.text}
            for r in frame.itertuples()]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.slow
def test_served_judgments_match_in_process_llamacpp_and_a_stopped_server_is_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("llama_cpp")
    pytest.importorskip("uvicorn")
    monkeypatch.setenv("NLGJUDGE_THREADS", "1")
    monkeypatch.delenv("NLGJUDGE_SERVER_URL", raising=False)
    path = summeval_outputs(tmp_path / "summeval.jsonl")
    monkeypatch.setenv("NLGJUDGE_OUTPUT_CACHE", str(tmp_path / "local.sqlite"))
    assert rank_cli(path, tmp_path / "local", "--model", TOKENIZER, "--backend", "llamacpp", "--aspect", "COH") == 0
    proc, url = start_llama_server()  # one model process at a time: the in-process model is gone by now
    try:
        monkeypatch.setenv("NLGJUDGE_OUTPUT_CACHE", str(tmp_path / "served.sqlite"))
        assert rank_cli(path, tmp_path / "served", "--model", TOKENIZER, "--server-url", url, "--aspect", "COH",
                        "--max-concurrency", "1", "--server-identity", "llama-cpp-python smollm2 q8") == 0
    finally:
        stop_server(proc)
    read = lambda folder: pd.read_json(tmp_path / folder / "judgments.jsonl", lines=True)  # noqa: E731
    local, served = read("local"), read("served")
    assert len(local) == 3 and list(local["system_1"]) == list(served["system_1"])  # 3 pairs, both orders each
    columns = ["p_a_1_first", "p_a_2_first"]
    diff = float((local[columns] - served[columns]).abs().to_numpy().max())
    print(f"largest |P(A) difference| {diff:.2e} over {2 * len(local)} comparisons")
    assert diff <= TOLERANCE
    assert "an OpenAI-compatible server" in (tmp_path / "served" / "report.md").read_text()
    capsys.readouterr()
    monkeypatch.setenv("NLGJUDGE_OUTPUT_CACHE", str(tmp_path / "stopped.sqlite"))
    status = rank_cli(path, tmp_path / "stopped", "--model", TOKENIZER, "--server-url", url, "--aspect", "COH")
    line = one_error(status, capsys.readouterr().err)
    assert line.startswith(f"error: no inference server answers at {url}"), line
    assert os.path.exists(tmp_path / "served" / "leaderboard.csv") and not (tmp_path / "stopped").exists()
