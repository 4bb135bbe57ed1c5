"""A served judge against servers that answer badly (issue 59): every malformed log-probability is one
ServerError line naming the server and the field; a server that echoes the API key into its identity
has it neither stored nor printed. Stub servers on 127.0.0.1 only."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from loopback_server import LoopbackServer, QuietJsonHandler

from nlgjudge.cache import OutputCache
from nlgjudge.engine import ClassifyRequest, Judge
from nlgjudge.engine.server import ServerError
from nlgjudge.engine.server.scoring import check_logprobs

TOKENIZER = "smollm2-135m-instruct"
GOOD_LP = {"tokens": [" A"], "text_offset": [0], "token_logprobs": [-0.5], "top_logprobs": [{" A": -0.5, " B": -1.25}]}


class Stub(LoopbackServer):
    """Serves model 'judge'; every completion answers with ``logprobs`` (a function of the request count,
    so the capability probe may see good answers first) and ``system`` as its system_fingerprint
    (``"echo-key"``: the Authorization header it was sent)."""

    def __init__(self, logprobs, system: str | None = "stub-1") -> None:
        stub, self.calls = self, 0

        class Handler(QuietJsonHandler):
            def do_GET(self):
                self.send_json(200, {"object": "list", "data": [{"id": "judge", "object": "model", "created": time.time()}]})

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                stub.calls += 1
                body = {"choices": [{"text": " A", "index": 0, "logprobs": logprobs(stub.calls), "finish_reason": "length"}]}
                body["system_fingerprint"] = self.headers.get("Authorization", "") if system == "echo-key" else system
                self.send_json(200, body)

        super().__init__(Handler)


def judge(url: str, cache=False, **kw) -> Judge:
    return Judge("judge", backend="server", server_url=url, server_tokenizer=TOKENIZER, cache=cache, progress=False,
                 request_retries=0, max_concurrency=1, **kw)


REQUEST = [ClassifyRequest("Question: A or B? Answer:", (" A", " B"))]


@pytest.mark.parametrize(("bad", "field"), [
    ({**GOOD_LP, "top_logprobs": [{" A": float("nan"), " B": -1.0}]}, "top_logprobs[0][' A']: expected a finite number"),
    ({**GOOD_LP, "top_logprobs": [{" A": "-0.5", " B": -1.0}]}, "expected a number, got str '-0.5'"),
    ({**GOOD_LP, "top_logprobs": [[" A", -0.5]]}, "top_logprobs[0]: expected an object"),
    ({**GOOD_LP, "top_logprobs": {" A": -0.5}}, "top_logprobs: expected a list"),
    ({**GOOD_LP, "token_logprobs": [float("inf")]}, "token_logprobs[0]: expected a finite number"),
    ({**GOOD_LP, "top_logprobs": [{" A": 3.0, " B": -1.0}]}, "expected a log-probability (at most 0)"),
])
def test_a_malformed_answer_is_one_line_naming_the_server_and_the_field(bad: dict, field: str) -> None:
    with pytest.raises(ServerError) as error:
        check_logprobs(bad, "http://127.0.0.1:9/v1")
    assert field in str(error.value) and "http://127.0.0.1:9/v1/completions" in str(error.value)
    assert "\n" not in str(error.value)


def test_a_huge_answer_is_summarised() -> None:
    with pytest.raises(ServerError) as error:
        check_logprobs({"top_logprobs": "x" * 300_000}, "http://127.0.0.1:9/v1")
    assert len(str(error.value)) < 400 and "300,002 characters" in str(error.value)


def test_the_judge_refuses_a_servers_nan_in_one_line() -> None:
    bad = [False]  # the capability probe sees good answers; the judging request gets NaN
    stub = Stub(lambda n: {**GOOD_LP, "top_logprobs": [{" A": float("nan"), " B": -1.0}]} if bad[0] else GOOD_LP)
    try:
        served = judge(stub.url)
        served.load()
        bad[0] = True
        with pytest.raises(ServerError) as error:
            served.label_probs(REQUEST)
        assert "malformed logprobs" in str(error.value) and "\n" not in str(error.value)
    finally:
        stub.close()


def test_a_server_that_echoes_the_api_key_into_its_identity_has_it_neither_stored_nor_printed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-0123456789abcdef"
    monkeypatch.setenv("NLGJUDGE_SERVER_API_KEY", secret)
    stub = Stub(lambda n: GOOD_LP, system="echo-key")
    try:
        with OutputCache(tmp_path / "c.sqlite") as cache:
            with pytest.raises(ServerError) as error:
                judge(stub.url, cache).label_probs(REQUEST)
            assert secret not in str(error.value) and "looks like a credential" in str(error.value)
            assert len(cache) == 0
        assert secret.encode() not in (tmp_path / "c.sqlite").read_bytes()
    finally:
        stub.close()


@pytest.mark.parametrize(("key", "words"), [("sk-abc\ndef-123", "line break or control character at character 7"),
                                           ("sk-abc\u2013def-123", "outside printable ASCII at character 7")])
def test_an_api_key_that_cannot_travel_is_named_without_its_value(key: str, words: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from nlgjudge.engine.server import ServerClient

    monkeypatch.setenv("NLGJUDGE_SERVER_API_KEY", key)
    with pytest.raises(ServerError) as error:
        ServerClient("http://127.0.0.1:9/v1")
    assert words in str(error.value) and "abc" not in str(error.value) and "NLGJUDGE_SERVER_API_KEY" in str(error.value)


@pytest.mark.parametrize(("first", "words"), [
    ({**GOOD_LP, "top_logprobs": [{" A": "likely", " B": [1]}]}, "expected a number, got str 'likely'"),
    ({**GOOD_LP, "top_logprobs": [[" A", -0.4]]}, "top_logprobs[0]: expected an object"),
    ("yes", "malformed logprobs: expected an object"),
])
def test_the_capability_probe_checks_the_first_answer_as_strictly_as_every_later_one(first, words: str) -> None:
    # the probe is a run's first request: a malformed answer there is the same one line, not a traceback
    stub = Stub(lambda n: first)
    try:
        with pytest.raises(ServerError) as error:
            judge(stub.url).load()
        assert words in str(error.value) and "/completions" in str(error.value) and "\n" not in str(error.value)
    finally:
        stub.close()


def test_choices_that_are_not_a_list_of_objects_are_one_line() -> None:
    from nlgjudge.engine.server.answers import check_choices

    for answer, words in (({"choices": {"text": " A"}}, "malformed choices: expected a non-empty list"),
                          ({"choices": ["A"]}, "malformed choices[0]: expected an object"),
                          (["choices"], "expected a JSON object with choices")):
        with pytest.raises(ServerError, match="http://127.0.0.1:9/v1/completions") as error:
            check_choices(answer, "http://127.0.0.1:9/v1")
        assert words in str(error.value)


def test_log_probabilities_whose_probabilities_sum_above_one_are_refused() -> None:
    impossible = {**GOOD_LP, "top_logprobs": [{" A": -0.01, " B": -0.01, "A": -0.01, "B": -0.01}]}
    with pytest.raises(ServerError, match=r"top_logprobs\[0\]: expected log-probabilities of one distribution.*sum to 3.96"):
        check_logprobs(impossible, "http://127.0.0.1:9/v1")
    check_logprobs({**GOOD_LP, "top_logprobs": [{" A": -0.6931, " B": -0.6931}]}, "http://127.0.0.1:9/v1")  # 1.00: fine


def test_a_piece_of_the_api_key_a_server_quotes_is_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    from nlgjudge.engine.server.client import scrub

    monkeypatch.setenv("NLGJUDGE_SERVER_API_KEY", "sk-ENVKEYsecret0987654321")
    shown = scrub("HTTP 401 (key sk-ENVKEYsecret0987654321 invalid; first half ENVKEYsec, last 0987654321)")
    assert "0987654321" not in shown and "ENVKEYsec" not in shown and "654321" not in shown
    assert scrub("model qwen2.5 is not served") == "model qwen2.5 is not served"  # words that are not the key stay


@pytest.mark.parametrize("segment", ["key=Pw4short", "token:abc", "api_key=x1"])
def test_a_short_named_secret_in_a_url_path_is_never_printed(segment: str) -> None:
    from nlgjudge.engine.server.client import holds_secret, redact

    url = f"http://127.0.0.1:9/{segment}/v1"
    assert segment not in redact(url) and redact(url) == "http://127.0.0.1:9/***/v1" and holds_secret(url)
    assert redact("http://127.0.0.1:9/models/qwen-7b/v1") == "http://127.0.0.1:9/models/qwen-7b/v1"


def test_a_stated_identity_that_holds_a_credential_is_refused_as_the_users_not_the_servers() -> None:
    from nlgjudge.engine.server.runtime import check_identity

    with pytest.raises(ValueError) as error:
        check_identity("sk-IDENTITYsecret1234567890")
    assert "server identity looks like it holds a credential" in str(error.value) and "IDENTITY" not in str(error.value)
    assert "have the server stop" not in str(error.value)
    sha = "sha256:" + "ab" * 32 + " n_ctx=4096"
    assert check_identity(sha) == sha  # what the option is for passes
