"""`python -m nlgjudge.studies` and the server client against hostile use (issue 48): one `error:` line
naming the option for every bad path or URL, no secret printed, and judging committed to the cache in
steps of seconds, not of 256 requests. Only 127.0.0.1 is ever contacted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from engine_utils import tiny_handle
from loopback_server import LoopbackServer, QuietJsonHandler
from test_data_summeval import write_summeval

from nlgjudge.cache import OutputCache
from nlgjudge.cli import main as cli_main
from nlgjudge.engine import ClassifyRequest, Judge
from nlgjudge.engine.server import ServerClient, ServerError


def studies(tmp_path: Path, *options: str, db: str | None = None, data: str | None = None) -> list[str]:
    return ["studies", "comparative", "--dataset", "summeval", "--model", "smollm2-135m-instruct",
            "--data-dir", data or str(tmp_path / "data"), "--db", db if db is not None else str(tmp_path / "c.sqlite"),
            "--no-export", *options]


@pytest.mark.parametrize(("options", "db", "message"), [
    ([], "/proc/nlgjudge-no-such/o.sqlite", "--db /proc/nlgjudge-no-such/o.sqlite: cannot open or create the cache file"),
    ([], "", "--db '' is empty"),
    (["--backend", "server", "--server-url", "http://[::1/v1"], None, "--server-url: server_url 'http://[::1/v1' is not a valid URL"),
    (["--backend", "server", "--server-url", "http://127.0.0.1:99999/v1"], None, "is not a valid URL (Port out of range"),
    (["--backend", "server", "--server-url", "http://bob:pw@127.0.0.1:9/v1"], None, "carries credentials before its host"),
    (["--backend", "server", "--server-url", "http://127.0.0.1:9/v1?api_key=K"], None, "has a query string"),
    (["--max-concurrency", "0"], None, "--max-concurrency 0: must be at least 1"),
])
def test_bad_paths_and_urls_are_one_line_naming_the_option(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch, options: list[str],
                                                           db: str | None, message: str) -> None:
    def no_model(*args: object, **kwargs: object) -> None:
        raise AssertionError("a judge was made before the bad argument was refused")

    monkeypatch.setattr("nlgjudge.engine.Judge", no_model)
    monkeypatch.setattr("nlgjudge.studies.released.import_released", lambda *a, **k: 0)
    write_summeval(tmp_path / "data")
    status = cli_main(studies(tmp_path, *options, db=db))
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert status == 2 and len(errors) == 1 and "Traceback" not in err, err
    assert message in errors[0], errors[0]
    assert "pw" not in err and "api_key=K" not in err


def test_a_data_dir_that_is_a_file_is_called_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("x")
    status = cli_main(studies(tmp_path, data=str(tmp_path / "file")))
    err = capsys.readouterr().err
    assert status == 2 and err.startswith(f"error: --data-dir {tmp_path / 'file'}: is a file, not a folder"), err


def test_tilde_in_db_and_data_dir_is_the_home_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class Reached(Exception):
        pass

    def judge(*args: object, **kwargs: object) -> None:
        raise Reached

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("nlgjudge.engine.Judge", judge)
    monkeypatch.setattr("nlgjudge.studies.released.import_released", lambda *a, **k: 0)
    write_summeval(tmp_path / "data")
    with pytest.raises(Reached):
        cli_main(studies(tmp_path, db="~/home.sqlite", data="~/data"))
    assert (tmp_path / "home.sqlite").exists() and not (tmp_path / "~").exists()


# --------------------------------------------------------------------------------------------
# Secrets: a server's error text is scrubbed


class Refusing(LoopbackServer):
    """A loopback server answering every request with a 401 that quotes the key it was sent."""

    def __init__(self) -> None:
        class Handler(QuietJsonHandler):
            def do_GET(self) -> None:
                sent = self.headers.get("Authorization", "")
                self.send_json(401, {"error": {"message": f"Incorrect API key provided: {sent}. api_key=sk-abcdef123456"}})

        super().__init__(Handler)


def test_a_key_quoted_in_a_server_error_is_not_printed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NLGJUDGE_SERVER_API_KEY", "sk-live-SECRET-0123456789")
    server = Refusing()
    try:
        client = ServerClient(server.url, retries=0)
        with pytest.raises(ServerError, match="HTTP 401") as caught:
            client.get("/models")
    finally:
        server.close()
    message = str(caught.value)
    assert "SECRET" not in message and "abcdef123456" not in message and "Incorrect API key provided" in message


@pytest.mark.parametrize("text", [
    "Bearer sk-proj-AbC123xyz", "Authorization: Basic dXNlcjpwYXNz", "token=abc123def", "http://bob:hunter2@host/v1",
])
def test_scrub_removes_each_kind_of_secret(text: str) -> None:
    from nlgjudge.engine.server.client import scrub

    clean = scrub(f"refused ({text}) here")
    assert "***" in clean and not any(part in clean for part in ("AbC123xyz", "dXNlcjpwYXNz", "abc123def", "hunter2"))


# --------------------------------------------------------------------------------------------
# studies commits by time


def test_a_studys_big_call_reaches_the_cache_in_steps_with_the_same_outputs(tmp_path: Path) -> None:
    from nlgjudge.engine.judge import FIRST_STEP

    requests = [ClassifyRequest(f"Question {i}: is the summary good, A or B? Answer:", (" A", " B")) for i in range(20)]
    plain = Judge(tiny_handle("qwen2"), cache=OutputCache(tmp_path / "plain.sqlite"), progress=False)
    expected = plain.label_probs(requests)
    # Every measured step "takes too long": one request per step after the first.
    judge = Judge(tiny_handle("qwen2"), cache=OutputCache(tmp_path / "stepped.sqlite"), progress=False, commit_seconds=1e-9)
    stored: list[int] = []
    real_put = judge.cache.put_many

    def put_many(entries):  # type: ignore[no-untyped-def]
        stored.append(len(entries))
        return real_put(entries)

    judge.cache.put_many = put_many  # type: ignore[method-assign]
    got = judge.label_probs(requests)
    assert stored == [FIRST_STEP] + [1] * (20 - FIRST_STEP)  # one transaction per step, not one for all 20
    assert [r.meta for r in got] == [r.meta for r in expected]
    # The same outputs (the torch runtime's float noise aside: its batches differ; llama.cpp's are the same bits).
    assert all(np.allclose(a.probs, b.probs, atol=1e-5) for a, b in zip(got, expected, strict=True))
    assert judge.label_probs(requests) and judge.last_run.computed == 0  # all cached: one call, nothing computed


def test_the_study_runner_judges_in_steps_of_seconds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner's judge stores every ~15 s (so a kill loses at most that), not every 256 requests."""
    made: dict[str, object] = {}

    class Reached(Exception):
        pass

    def judge(*args: object, **kwargs: object) -> None:
        made.update(kwargs)
        raise Reached

    monkeypatch.setattr("nlgjudge.engine.Judge", judge)
    monkeypatch.setattr("nlgjudge.studies.released.import_released", lambda *a, **k: 0)
    write_summeval(tmp_path / "data")
    with pytest.raises(Reached):
        cli_main(studies(tmp_path))
    assert isinstance(made.get("commit_seconds"), float) and 0 < made["commit_seconds"] <= 20, made


# --------------------------------------------------------------------------------------------
# What the probe found after 58dced5: one clear line, before any judge is made


@pytest.mark.parametrize(("replace", "env", "message"), [
    (("smollm2-135m-instruct", "minilm-l6"), {}, "--model minilm-l6: a sentence encoder, which cannot judge"),
    (None, {"NLGJUDGE_THREADS": "abc"}, "NLGJUDGE_THREADS='abc' is not a whole number of threads; set e.g. NLGJUDGE_THREADS=2"),
])
def test_an_encoder_or_a_bad_thread_setting_is_refused_before_a_judge(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                     monkeypatch: pytest.MonkeyPatch, replace: tuple[str, str] | None,
                                                                     env: dict[str, str], message: str) -> None:
    def no_judge(*args: object, **kwargs: object) -> None:
        raise AssertionError("a judge was made before the bad argument was refused")

    monkeypatch.setattr("nlgjudge.engine.Judge", no_judge)
    monkeypatch.setattr("nlgjudge.studies.released.import_released", lambda *a, **k: 0)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # were the hub sought, the test would fail offline, not hang
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    write_summeval(tmp_path / "data")
    argv = studies(tmp_path)
    if replace is not None:
        argv = [replace[1] if a == replace[0] else a for a in argv]
    status = cli_main(argv)
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert status == 2 and len(errors) == 1 and message in errors[0] and "Traceback" not in err, err


def test_a_data_dir_without_the_dataset_says_what_is_missing_and_the_option(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str],
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    (tmp_path / "empty").mkdir()
    status = cli_main(studies(tmp_path, data=str(tmp_path / "empty")))
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert status == 2 and len(lines) == 1 and lines[0].startswith("error: dataset 'summeval'"), err
    assert f"missing {tmp_path / 'empty' / 'summeval'}" in lines[0] and "pass --data-dir" in lines[0], lines[0]


@pytest.mark.parametrize(("options", "message"), [
    (["--templates"], "--templates is given without a number"),
    (["--backend", "server", "--server-url", "http://127.0.0.1:9/v1", "--server-tokenizer", "minilm-l6"],
     "--server-tokenizer minilm-l6: a sentence encoder, which has no chat template"),
])
def test_options_refused_before_the_hub_or_the_prompts(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch, options: list[str], message: str) -> None:
    def no_judge(*args: object, **kwargs: object) -> None:
        raise AssertionError("a judge was made before the bad argument was refused")

    monkeypatch.setattr("nlgjudge.engine.Judge", no_judge)
    monkeypatch.setattr("nlgjudge.studies.released.import_released", lambda *a, **k: 0)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    write_summeval(tmp_path / "data")
    status = cli_main(studies(tmp_path, *options))
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert status == 2 and len(errors) == 1 and message in errors[0] and "Traceback" not in err, err
