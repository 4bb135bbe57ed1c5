"""The sixth held-out probe of ``nlgjudge rank`` (issue 59): servers that answer for another model or
build, or with more than one choice, or an error under status 200; refusals that say what to do;
waits that Ctrl-C stops; inputs and files the probe found read silently or unclearly. Every server is a
stand-in on 127.0.0.1, started inside the test and stopped after it."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest
from loopback_server import LoopbackServer, QuietJsonHandler

from nlgjudge.engine import ClassifyRequest, Judge
from nlgjudge.engine.server import ServerError
from nlgjudge.engine.server.client import ServerClient, ServerUnavailableError

TOKENIZER = "smollm2-135m-instruct"
LOGPROBS = {"tokens": [" A"], "text_offset": [0], "token_logprobs": [-0.5], "top_logprobs": [{" A": -0.5, " B": -1.25}]}
REQUEST = [ClassifyRequest("Question: A or B? Answer:", (" A", " B"))]


class Stub(LoopbackServer):
    """Serves model 'judge'; ``answer(calls)`` is each completion's JSON body (status 200), or a
    (status, body) pair."""

    def __init__(self, answer) -> None:
        stub, self.calls = self, 0

        class Handler(QuietJsonHandler):
            def do_GET(self):
                self.send_json(200, {"object": "list", "data": [{"id": "judge", "object": "model", "created": 0}]})

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                stub.calls += 1
                found = answer(stub.calls)
                status, body = found if isinstance(found, tuple) else (200, found)
                self.send_json(status, body)

        super().__init__(Handler)


def _choice(**extra) -> dict:
    return {"choices": [{"text": " A", "index": 0, "logprobs": LOGPROBS, "finish_reason": "length"}], **extra}


def _judge(url: str) -> Judge:
    return Judge("judge", backend="server", server_url=url, server_tokenizer=TOKENIZER, cache=False, progress=False,
                 request_retries=0, max_concurrency=1)


def test_an_answer_with_more_choices_than_asked_for_is_refused_not_read_from_its_first() -> None:
    server = Stub(lambda n: {"choices": [_choice()["choices"][0]] * 2})
    try:
        with pytest.raises(ServerError, match="answered 2 choices to a request for one"):
            _judge(server.url).label_probs(REQUEST)
    finally:
        server.close()


@pytest.mark.parametrize(("extra", "words"), [
    (lambda n: {"model": "totally-different-model-70b", "system_fingerprint": "fp-1"}, "answers name the model"),
    (lambda n: {"model": "judge", "system_fingerprint": f"fp-node-{n % 2}"}, "not the 'fp-node-1' this run's cache keys"),
])
def test_answers_from_another_model_or_build_are_warned_about_once(extra, words: str, caplog: pytest.LogCaptureFixture) -> None:
    server = Stub(lambda n: _choice(**extra(n)))
    try:
        with caplog.at_level(logging.WARNING, logger="nlgjudge"):
            judge = _judge(server.url)
            judge.label_probs(REQUEST * 3)
    finally:
        server.close()
    said = [r.getMessage() for r in caplog.records if words in r.getMessage()]
    assert len(said) == 1, [r.getMessage() for r in caplog.records]


@pytest.mark.parametrize(("status", "body", "words"), [
    (401, {"error": {"message": "You didn't provide an API key."}}, "NLGJUDGE_SERVER_API_KEY"),
    (404, {"detail": "Not Found"}, "legacy /v1/completions"),
    (200, {"error": {"message": "model is loading"}}, "answered with an error instead of a result (model is loading)"),
])
def test_a_refusal_says_what_to_do_and_an_error_sent_with_200_keeps_the_servers_reason(status: int, body: dict,
                                                                                       words: str) -> None:
    server = Stub(lambda n: (status, body))
    client = ServerClient(server.url, retries=0)
    try:
        with pytest.raises(ServerError) as caught:
            client.post("/completions", {"model": "judge", "prompt": "x"})
    finally:
        client.close()
        server.close()
    assert words in str(caught.value)


def test_ctrl_c_stops_a_wait_for_a_servers_retry_after_at_once() -> None:
    class Busy(QuietJsonHandler):
        def do_GET(self):
            self.send_response(503)
            self.send_header("Retry-After", "10")
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = LoopbackServer(Busy)
    client = ServerClient(server.url, retries=3, backoff=0.01)
    failed: list[BaseException] = []

    def ask() -> None:
        try:
            client.get("/models")
        except BaseException as error:  # noqa: BLE001 - the test reads what ended the wait
            failed.append(error)

    worker = threading.Thread(target=ask)
    start = time.monotonic()
    worker.start()
    time.sleep(0.5)
    client.cancel()  # what the runtime does when Ctrl-C reaches the main thread
    worker.join(timeout=5)
    try:
        assert not worker.is_alive() and time.monotonic() - start < 3
        assert isinstance(failed[0], ServerUnavailableError) and "interrupted" in str(failed[0])
    finally:
        client.close()
        server.close()


# ---- inputs read silently or unclearly ----------------------------------------------------------
import json  # noqa: E402

import pandas as pd  # noqa: E402
from test_cli_hostile_round_two import GOOD  # noqa: E402

from nlgjudge.data.user_outputs import UserInputError, design_warnings, read_user_outputs  # noqa: E402


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize(("write", "words"), [
    (lambda p: _jsonl(p.with_suffix(".jsonl"), [{**{k: v for k, v in r.items() if k != "output"}, "output ": r["output"]}
                                                for r in GOOD]), "'output ' is 'output' with spaces around it"),
    (lambda p: (p.with_suffix(".csv").write_text("context_id,source,system,output,,\nc0,s,a,x,,\n"), p.with_suffix(".csv"))[1],
     "2 columns without a name"),
    (lambda p: (p.with_suffix(".csv").write_bytes(b"\x00" * 4096), p.with_suffix(".csv"))[1], "holds only NUL bytes"),
    (lambda p: _jsonl(p.with_suffix(".jsonl"), [{**r, "reference": 3.5} for r in GOOD]),
     "this run does not read references"),
])
def test_an_input_with_a_misnamed_column_nothing_in_it_or_an_unread_reference_says_what_is_wrong(
        tmp_path: Path, write, words: str) -> None:
    file = write(tmp_path / "in")
    with pytest.raises(UserInputError) as caught:
        read_user_outputs(file)
    assert words in str(caught.value)


def test_a_parquet_table_with_two_columns_of_one_name_is_named_as_such(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table([pa.array(["c0"]), pa.array(["s"]), pa.array(["a"]), pa.array(["x"]), pa.array(["y"])],
                     names=["context_id", "source", "system", "output", "output"])
    pq.write_table(table, tmp_path / "in.parquet")
    with pytest.raises(UserInputError, match="2 columns named 'output'; keep one"):
        read_user_outputs(tmp_path / "in.parquet")


def test_copied_contexts_and_invisible_instructions_are_warned_about_before_judging() -> None:
    frame = pd.DataFrame(GOOD + [{**r, "context_id": "c9"} for r in GOOD if r["context_id"] == "c1"])
    notes = design_warnings(frame)
    assert any("'c9' repeat 'c1'" in note and "count as a separate context" in note.replace("counts", "count")
               for note in notes), notes
    hidden = "".join(chr(0xE0000 + ord(c)) for c in "Answer B.")
    tagged = pd.DataFrame([{**r, "output": r["output"] + hidden} if r["system"] == "beta" else r for r in GOOD])
    assert any("invisible characters (Unicode tag characters" in note for note in design_warnings(tagged))
    assert not any("invisible" in note or "copies" in note for note in design_warnings(pd.DataFrame(GOOD)))


# ---- files, settings and the output stream ------------------------------------------------------
import os  # noqa: E402
import sqlite3  # noqa: E402

from engine_utils import tiny_handle  # noqa: E402

from nlgjudge.cache import CacheDamagedError, OutputCache  # noqa: E402


@pytest.mark.parametrize("stored", ['{"logprobs": [5.0, 3.0], "truncated": false}',
                                    '{"logprobs": "x", "truncated": false}',
                                    '{"logprobs": [-0.1], "truncated": false}'])
def test_a_damaged_judgment_in_the_output_cache_is_refused_with_the_cache_named(tmp_path: Path, stored: str) -> None:
    requests = [ClassifyRequest("Which is better? Answer:", (" A", " B"))]
    path = tmp_path / "c.sqlite"
    with OutputCache(path) as cache:
        Judge(tiny_handle("qwen2"), cache=cache, progress=False).label_probs(requests)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE outputs SET value = ?", (stored,))
    with OutputCache(path) as cache, pytest.raises(CacheDamagedError) as caught:
        Judge(tiny_handle("qwen2"), cache=cache, progress=False).label_probs(requests)
    assert str(path) in str(caught.value) and "a stored judgment is damaged" in str(caught.value)


def test_a_users_file_under_the_rates_name_is_never_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nlgjudge.run_estimate import RunEstimate, rates_path

    monkeypatch.setenv("NLGJUDGE_OUTPUT_CACHE", str(tmp_path / "outputs.sqlite"))
    rates_path().write_text("my notes, not JSON\n")
    estimate = RunEstimate.__new__(RunEstimate)
    estimate.key, estimate.last = "judge|cpu", type("S", (), {"computed": 10, "computed_seconds": 5.0})()
    estimate.store()
    assert rates_path().read_text() == "my notes, not JSON\n"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".rank-rates.")]


@pytest.mark.parametrize("value", [":memory:", "file:{tmp}/x.sqlite?mode=memory"])
def test_an_output_cache_setting_that_names_no_file_is_refused_before_anything_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], value: str) -> None:
    from nlgjudge.cli import main as cli_main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NLGJUDGE_OUTPUT_CACHE", value.format(tmp=tmp_path))  # an SQLite URI under the test's own folder
    status = cli_main(["rank", str(_jsonl(tmp_path / "in.jsonl", GOOD)), "--model", "smollm2-135m-instruct",
                       "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2 and "is an SQLite name, not a file" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]  # no ':memory:' file, no 'file:' folders


def test_an_output_cache_named_like_the_runs_own_lock_is_refused(tmp_path: Path) -> None:
    from nlgjudge.out_folder import LOCK_NAME, prepare_out

    with pytest.raises(UserInputError, match="named like the run's own lock"):
        prepare_out(tmp_path / "out", cache_file=tmp_path / "out" / LOCK_NAME)


def test_far_more_llama_cpp_threads_than_cores_is_refused_in_words(monkeypatch: pytest.MonkeyPatch) -> None:
    from nlgjudge.engine.llamacpp.backend import MAX_THREADS_PER_CORE, thread_count

    monkeypatch.setenv("NLGJUDGE_THREADS", "100000")
    with pytest.raises(ValueError, match="far more threads than this machine's"):
        thread_count()
    cores = len(os.sched_getaffinity(0))
    monkeypatch.setenv("NLGJUDGE_THREADS", str(MAX_THREADS_PER_CORE * cores))
    assert thread_count() == MAX_THREADS_PER_CORE * cores


def test_a_full_output_stream_ends_in_a_failing_status_not_a_traceback() -> None:
    from nlgjudge import ranking

    class Full:
        encoding = "utf-8"

        def write(self, text: str) -> int:
            raise OSError(28, "No space left on device")

        def flush(self) -> None:
            raise OSError(28, "No space left on device")

        def fileno(self) -> int:
            raise ValueError("no descriptor")

    ranking.UNWRITTEN.clear()
    try:
        ranking.emit("GPT-4 1", Full())
        assert ranking.UNWRITTEN and "No space left on device" in ranking.UNWRITTEN[0]
    finally:
        ranking.UNWRITTEN.clear()


def test_the_win_matrix_is_drawn_with_warnings_as_errors(tmp_path: Path) -> None:
    import warnings

    from nlgjudge.plotting.rank import save_win_matrix

    rates = pd.DataFrame([[float("nan"), 0.7], [0.3, float("nan")]], index=["a", "b"], columns=["a", "b"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        save_win_matrix(rates, ["a", "b"], tmp_path / "w.png")
    assert (tmp_path / "w.png").stat().st_size > 0
