"""The server client against a busy or redirecting server (issue 59): Retry-After is honoured up to a
bound, a longer one ends the run at once with its message, and a redirect is named, not read as
"not JSON". Stub servers on 127.0.0.1 only."""

from __future__ import annotations

import time

import pytest
from loopback_server import LoopbackServer, QuietJsonHandler

from nlgjudge.engine.server.client import MAX_RETRY_AFTER_S, ServerClient, retry_after
from nlgjudge.engine.server.client import ServerError, ServerUnavailableError


class Busy(LoopbackServer):
    """Answers ``status`` with ``headers`` to the first ``busy`` requests, then 200 with a model list."""

    def __init__(self, status: int, headers: dict[str, str], busy: int = 1) -> None:
        stub, self.times = self, []

        class Handler(QuietJsonHandler):
            def do_GET(self):
                stub.times.append(time.monotonic())
                if len(stub.times) <= busy:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_json(200, {"object": "list", "data": []})

        super().__init__(Handler)


def message_of(error: type[Exception], client: ServerClient, *servers: object, path: str = "/models", call=None) -> str:
    """The one-line message ``error`` carries when ``client`` asks ``path`` (or runs ``call``); the
    client and the stub servers are closed whatever happens."""
    try:
        with pytest.raises(error) as caught:
            (call or (lambda: client.get(path)))()
    finally:
        client.close()
        for server in servers:
            server.close()
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_retry_after_is_waited_for_instead_of_the_backoff() -> None:
    server = Busy(503, {"Retry-After": "1"})
    client = ServerClient(server.url, retries=2, backoff=0.01)
    try:
        assert client.get("/models") == {"object": "list", "data": []}
    finally:
        client.close()
        server.close()
    assert len(server.times) == 2 and server.times[1] - server.times[0] >= 0.95  # not the 0.01 s backoff


def test_a_retry_after_beyond_the_bound_ends_at_once_with_its_message() -> None:
    server = Busy(429, {"Retry-After": "3600"}, busy=5)
    client = ServerClient(server.url, retries=3, backoff=0.01)
    started = time.monotonic()
    message = message_of(ServerUnavailableError, client, server)
    assert time.monotonic() - started < MAX_RETRY_AFTER_S and len(server.times) == 1
    assert "asks to be asked again in 3,600 s" in message and "run the same command later" in message


def test_a_redirect_is_named_with_its_target_not_read_as_garbage() -> None:
    server = Busy(307, {"Location": "http://user:secret@10.0.0.9:8000/v1/models?key=abc"}, busy=5)
    message = message_of(ServerError, ServerClient(server.url, retries=0), server)
    assert "redirects (HTTP 307) to http://10.0.0.9:8000/v1/models" in message and "server_url" in message
    assert "secret" not in message and "key=abc" not in message and "not JSON" not in message


@pytest.mark.parametrize(("header", "expected"), [("7", 7.0), (None, None), ("soon", None), ("-3", None),
                                                  ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0)])
def test_retry_after_reads_seconds_and_dates(header: str | None, expected: float | None) -> None:
    assert retry_after(header) == expected


@pytest.mark.parametrize("token", ["k7Qz9fLx2Rv8TmW4pNs3Yb1H", "2d9cf788f2fd7eaa6d57776d37c1dc71", "hf_abcdefghijklmnop",
                                   "eyJhbGciOiJIUzI1NiJ9"])
def test_a_token_in_a_url_path_is_never_printed(token: str) -> None:
    from nlgjudge.engine.server.client import holds_secret, redact

    url = f"http://127.0.0.1:9/gateway/{token}/v1"
    assert redact(url) == "http://127.0.0.1:9/gateway/***/v1" and holds_secret(url)
    message = message_of(ServerUnavailableError, ServerClient(url, retries=0))  # nothing listens on port 9
    assert token not in message and "http://127.0.0.1:9/gateway/***/v1" in message


@pytest.mark.parametrize("path", ["/v1", "/openai/v1", "/api/v1/Qwen2.5-Coder-1.5B-Instruct", "/meta-llama-3-8b-instruct/v1",
                                  "/serving-endpoints/summarizer-judge-production/v1"])
def test_route_and_model_names_in_a_url_path_are_kept(path: str) -> None:
    from nlgjudge.engine.server.client import holds_secret, redact

    assert redact(f"http://127.0.0.1:8000{path}") == f"http://127.0.0.1:8000{path}"
    assert not holds_secret(f"http://127.0.0.1:8000{path}")


class Models(LoopbackServer):
    """Answers /models with ``body``."""

    def __init__(self, body: object) -> None:
        class Handler(QuietJsonHandler):
            def do_GET(self):
                self.send_json(200, body)

        super().__init__(Handler)


def test_a_server_with_twenty_thousand_models_is_summarised_in_one_short_line() -> None:
    from nlgjudge.engine.server.capabilities import served_entry

    ids = [f"org{k}/model-{k}" for k in range(20_000)] + ["qwen2.5-coder-1.5b", "x" * 300_000]
    server = Models({"object": "list", "data": [{"id": i, "object": "model"} for i in ids]})
    client = ServerClient(server.url, retries=0)
    message = message_of(ServerError, client, server, call=lambda: served_entry(client, "qwen2.5-coder-1.5b-instruct"))
    assert len(message) < 600
    assert "serves 20,002 models ('qwen2.5-coder-1.5b'" in message and "and 19,997 more" in message


@pytest.mark.parametrize("body", [[{"id": "judge"}], {"object": "list"}, {"data": "judge"}])
def test_a_models_answer_that_is_no_model_list_is_named(body: object) -> None:
    from nlgjudge.engine.server.capabilities import served_entry

    server = Models(body)
    client = ServerClient(server.url, retries=0)
    assert "without a 'data' list of models" in message_of(ServerError, client, server,
                                                           call=lambda: served_entry(client, "judge"))


def test_a_stalled_server_is_said_to_be_waited_for_after_its_first_timeout(caplog: pytest.LogCaptureFixture) -> None:
    class Stalled(LoopbackServer):
        def __init__(self) -> None:
            class Handler(QuietJsonHandler):
                def do_GET(self):
                    time.sleep(1.5)
                    self.send_json(200, {"data": []})

            super().__init__(Handler)

    server = Stalled()
    with caplog.at_level("WARNING", logger="nlgjudge"):
        message = message_of(ServerUnavailableError, ServerClient(server.url, timeout=0.3, retries=1, backoff=0.01), server)
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(said) == 1 and "no answer within the 0.3 s timeout (try 1 of 2); waiting for it and asking again" in said[0]
    assert "failed after 2 tries: no answer within the 0.3 s timeout" in message


@pytest.mark.parametrize(("head", "body"), [
    (b"Transfer-Encoding: chunked\r\n", b"ZZZ\r\nnot a chunk\r\n"),
    (b"Content-Encoding: gzip\r\nContent-Length: 12\r\n", b"not gzip at!"),
], ids=["garbage-chunked-body", "body-not-in-its-encoding"])
def test_a_broken_http_answer_is_named_as_such_not_as_a_failed_connection(head: bytes, body: bytes) -> None:
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve() -> None:
        for _ in range(2):
            connection, _ = listener.accept()
            connection.recv(65536)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + head + b"\r\n" + body)
            connection.close()

    threading.Thread(target=serve, daemon=True).start()
    client = ServerClient(f"http://127.0.0.1:{listener.getsockname()[1]}/v1", retries=1, backoff=0.01)
    message = message_of(ServerUnavailableError, client, listener)
    assert "answered with a broken HTTP response" in message and "cannot connect" not in message
