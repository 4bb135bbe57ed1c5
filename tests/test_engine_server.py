"""The served runtime (Judge backend="server"): failures against a stub server on loopback, and
label probabilities / log-likelihoods against a real llama-cpp-python server (slow).

Only 127.0.0.1 is ever contacted."""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from nlgjudge.cache import OutputCache
from nlgjudge.engine import ClassifyRequest, Judge, LoglikRequest
from nlgjudge.engine.server import ServerError, ServerUnavailableError
from nlgjudge.engine.server.local import free_port

TOKENIZER = "smollm2-135m-instruct"


class Stub:
    """A tiny OpenAI-compatible stub: serves model 'stub', answers every completion with ' A'."""

    def __init__(self, *, logprobs: bool = True, delay: float = 0.0) -> None:
        self.logprobs, self.delay = logprobs, delay
        self.fail_after: int | None = None  # completions answered before every further one is a 500
        self.completions = 0
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _send(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except BrokenPipeError:  # the client gave up (the timeout test)
                    pass

            def do_GET(self):
                self._send(200, {"object": "list", "data": [{"id": "stub", "object": "model", "created": time.time()}]})

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                time.sleep(stub.delay)
                stub.completions += 1
                if stub.fail_after is not None and stub.completions > stub.fail_after:
                    return self._send(500, {"error": {"message": "boom"}})
                lp = {"tokens": [" A"], "text_offset": [0], "token_logprobs": [-0.5],
                      "top_logprobs": [{" A": -0.5, " B": -1.25}]} if stub.logprobs else None
                self._send(200, {"choices": [{"text": " A", "index": 0, "logprobs": lp, "finish_reason": "length"}]})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stub():
    s = Stub()
    yield s
    s.close()


def requests(n):
    return [ClassifyRequest(f"Question {i}: A or B? Answer:", (" A", " B")) for i in range(n)]


def judge(url, cache=False, **kw):
    kw.setdefault("request_retries", 1)
    return Judge("stub", backend="server", server_url=url, server_tokenizer=TOKENIZER, cache=cache,
                 progress=False, **kw)


def test_stub_label_probs_from_top_k_and_keys_name_the_server(stub, tmp_path, monkeypatch):
    monkeypatch.setenv("NLGJUDGE_SERVER_API_KEY", "sekret-key")
    j = judge(stub.url)
    result = j.label_probs(requests(1))[0]
    assert np.allclose(result.logprobs, [-0.5, -1.25])
    assert j.fingerprint == "served:stub|runtime=server"  # no timestamp, URL, user or key
    assert "sekret" not in j.runtime_description() and "pw" not in j.runtime_description()
    inproc = Judge(TOKENIZER, backend="llamacpp", cache=False)
    assert j.request_keys("label_probs", requests(1)) != inproc.request_keys("label_probs", requests(1))


def test_server_not_running():
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ServerUnavailableError, match="no inference server answers at http://127.0.0.1") as err:
        judge(url).label_probs(requests(1))
    assert "\n" not in str(err.value)


def test_wrong_model_name(stub):
    j = Judge("not-served", backend="server", server_url=stub.url, server_tokenizer=TOKENIZER, cache=False)
    with pytest.raises(ServerError, match="serves 'stub', not 'not-served'"):
        j.label_probs(requests(1))


def test_server_without_logprobs_is_refused_in_one_line():
    s = Stub(logprobs=False)
    try:
        with pytest.raises(ServerError, match="returns no log-probabilities") as err:
            judge(s.url).label_probs(requests(1))
        assert "\n" not in str(err.value)
    finally:
        s.close()


def test_timeout_gives_one_line_after_retries():
    s = Stub(delay=1.0)
    try:
        j = judge(s.url, request_timeout=0.2, request_retries=1)
        with pytest.raises(ServerUnavailableError, match="failed after 2 tries: no answer within the 0.2 s timeout"):
            j.label_probs(requests(1))
    finally:
        s.close()


def test_500_mid_run_then_the_rerun_resumes_without_duplicates(stub, tmp_path):
    with OutputCache(tmp_path / "c.sqlite") as cache:
        # The stub reports no identity: with a cache the judge needs one stated (else refused: test_engine_server_vllm_keys.py).
        j = judge(stub.url, cache=cache, chunk_size=2, max_concurrency=1, server_identity="stub")
        j._server.capabilities()  # the probe's requests are not counted below
        stub.completions, stub.fail_after = 0, 5  # chunks of 2 requests: the third chunk fails
        with pytest.raises(ServerUnavailableError, match="HTTP 500"):
            j.label_probs(requests(8))
        stub.fail_after = None
        stub.completions = 0
        again = judge(stub.url, cache=cache, chunk_size=2, max_concurrency=1, server_identity="stub")
        out = again.label_probs(requests(8))
        assert again.last_run.from_cache == 4 and again.last_run.computed == 4
        assert sum(r.from_cache for r in out) == 4 and all(np.allclose(r.logprobs, [-0.5, -1.25]) for r in out)
        assert again.label_probs(requests(8)) and again.last_run.computed == 0


def test_concurrency_keeps_order(stub):
    out = judge(stub.url, max_concurrency=4).label_probs(requests(6))
    assert [r.meta for r in out] == [{}] * 6 and len(out) == 6


# ---- against llama-cpp-python's own server ---------------------------------------------------------
@pytest.fixture(scope="module")
def llama_server():
    pytest.importorskip("llama_cpp")
    pytest.importorskip("uvicorn")
    from nlgjudge.engine.server.local import start_llama_cpp_server, stop_server

    proc, url = start_llama_cpp_server(TOKENIZER, threads=1, n_ctx=2048, timeout=60)
    yield url
    stop_server(proc)


#: Both sides run llama.cpp on the same GGUF file; only batch shapes differ, so log-probabilities
#: agree to float32 rounding (measured here: largest |difference| 2.6e-7 in log-probability, 1.3e-8 in P, 5 prompts).
#: 1e-4 leaves room for other thread counts while still catching any real misreading (the
#: misaligned echo values the workaround corrects are off by several nats).
TOLERANCE = 1e-4


@pytest.mark.slow
def test_real_server_matches_in_process_llamacpp(llama_server):
    served = Judge(TOKENIZER, backend="server", server_url=llama_server, cache=False, progress=False)
    local = Judge(TOKENIZER, backend="llamacpp", cache=False, progress=False, threads=1)
    caps = served._server.capabilities()
    assert caps.logprobs and caps.forced_raw and caps.echo_shift == 1  # the server's bug, detected
    reqs = [ClassifyRequest([{"role": "user", "content": f"Summary {i}: the cat sat. Which is better, A or B?"}],
                            (" A", " B"), response_prefix="Answer:") for i in range(3)]
    reqs += [ClassifyRequest([{"role": "user", "content": "Rate this from 1 to 10."}], ("1", "10"),
                             response_prefix="Score: ", label_end="\n"),
             ClassifyRequest("Is the sky green? Answer:", (" zebra", " no"))]  # " zebra": outside the top-k
    a, b = served.label_probs(reqs), local.label_probs(reqs)
    diff = max(float(np.max(np.abs(x.logprobs - y.logprobs))) for x, y in zip(a, b))
    pdiff = max(float(np.max(np.abs(x.probs - y.probs))) for x, y in zip(a, b))
    print(f"largest |log-prob difference| {diff:.2e}, largest |P difference| {pdiff:.2e} over {len(reqs)} prompts")
    assert diff <= TOLERANCE
    # The echo workaround, against the in-process values the issue quotes (" cat" -14.00, " sat" -8.95, ...).
    got = served.loglikelihood([LoglikRequest("The", " cat sat on the mat")])[0].token_logprobs
    want = local.loglikelihood([LoglikRequest("The", " cat sat on the mat")])[0].token_logprobs
    assert np.max(np.abs(got - want)) <= TOLERANCE
    assert np.allclose(got, [-14.00, -8.95, -1.14, -1.53, -5.22], atol=0.01)
