"""`nlgjudge studies`: a bad argument is one `error:` line, exit 2, no traceback, nothing written, no model (issue 39)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_data_summeval import write_summeval

from nlgjudge.cli import main as cli_main

BAD = [
    (["--aspects", "XYZ"], "--aspects XYZ: summeval's aspects are COH, CON, FLU, REL"),
    (["--aspects"], "--aspects (none): summeval's aspects are"),
    (["--templates", "9"], "--templates 9: the comparative study cannot build its prompts"),
    (["--n-contexts", "0"], "--n-contexts 0: must be at least 1"),
    (["--n-contexts", "100000"], "--n-contexts 100000: summeval has 100 contexts; pass at most 100"),
    (["--max-contexts", "0"], "--max-contexts 0: must be at least 1"),
    (["--samples", "0"], "--samples 0: must be at least 1"),
    (["--seed", "-1"], "--seed -1: must be at least 0"),
    (["--server-url", "http://127.0.0.1:9/v1"], "--server-url is for a judge on a server: pass --backend server too"),
    (["--backend", "server"], "--server-url: backend='server' needs server_url=... or $NLGJUDGE_SERVER_URL"),
    (["--backend", "server", "--server-url", "ftp://host"], "--server-url: server_url must be an http(s) URL"),
    (["--backend", "server", "--server-url", "http://127.0.0.1:9/v1", "--max-concurrency", "0"],
     "--max-concurrency 0: must be at least 1"),
    (["--backend", "server", "--server-url", "http://127.0.0.1:9/v1", "--server-tokenizer", "nope"],
     "--server-tokenizer nope: the prompts for a served model are built with a packaged model's tokenizer"),
]


@pytest.mark.parametrize(("argv", "message"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_a_bad_argument_is_one_error_line_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str], message: str
) -> None:
    def no_model(*args: object, **kwargs: object) -> None:
        raise AssertionError("a judge was made before the bad argument was refused")

    monkeypatch.setattr("nlgjudge.engine.Judge", no_model)
    write_summeval(tmp_path / "data")
    db = tmp_path / "cache.sqlite"
    status = cli_main(["studies", "comparative", "--dataset", "summeval", "--model", "smollm2-135m-instruct",
                       "--data-dir", str(tmp_path / "data"), "--db", str(db), "--no-export", *argv])
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err and "Traceback" not in err
    assert not db.exists()  # nothing written: the cache is not even opened


def test_good_arguments_still_reach_the_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks refuse only what is wrong: a valid subset, aspects and templates get as far as the judge."""

    class Reached(Exception):
        pass

    def judge(*args: object, **kwargs: object) -> None:
        raise Reached

    monkeypatch.setattr("nlgjudge.engine.Judge", judge)
    monkeypatch.setattr("nlgjudge.studies.released.import_released", lambda *a, **k: 0)
    write_summeval(tmp_path / "data")
    with pytest.raises(Reached):
        cli_main(["studies", "comparative", "--dataset", "summeval", "--model", "smollm2-135m-instruct",
                  "--data-dir", str(tmp_path / "data"), "--db", str(tmp_path / "c.sqlite"), "--no-export",
                  "--n-contexts", "100", "--aspects", "COH", "FLU", "--templates", "2", "--samples", "1"])


def test_a_server_that_is_not_running_is_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from test_engine_server import free_port

    monkeypatch.setattr("nlgjudge.studies.released.import_released", lambda *a, **k: 0)
    write_summeval(tmp_path / "data")
    url = f"http://127.0.0.1:{free_port()}/v1"
    status = cli_main(["studies", "comparative", "--dataset", "summeval", "--model", "smollm2-135m-instruct",
                       "--data-dir", str(tmp_path / "data"), "--db", str(tmp_path / "c.sqlite"), "--no-export",
                       "--backend", "server", "--server-url", url])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert status == 2 and "Traceback" not in err and len(errors) == 1, err
    assert errors[0].startswith(f"error: no inference server answers at {url}")
