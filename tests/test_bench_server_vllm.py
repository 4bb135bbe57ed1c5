"""``python -m nlgjudge.bench server --server-url URL --model NAME`` (issue 50): a running server against
the in-process runtime on the same weights, with the timing faked (fast), and the launcher refusing a
port another process holds. The run against real vLLM shares tests/test_engine_server_vllm.py's
server (one vLLM start for both). Only 127.0.0.1 is ever contacted."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import numpy as np
import pytest

from nlgjudge import bench
from nlgjudge.bench import server

FINAL = re.compile(r"^server_vs_inprocess=\d+\.\d\d max_abs_diff=\d\.\d\de[-+]\d\d$")
URL = "http://127.0.0.1:8000/v1"


def test_a_running_server_is_benchmarked_against_torch_on_the_same_requests(monkeypatch, capsys):
    calls = []

    def fake_served(name, url, requests, path, max_concurrency, identity, tokenizer=None):
        calls.append(("served", name, url, len(requests), tokenizer))
        return 2.0, np.full(len(requests), 0.5) + 3e-6, "server prefix-cache counters: (faked)"

    def fake_inprocess(model, requests, threads, path, backend="llamacpp"):
        calls.append(("in", model, backend, len(requests)))
        return 4.0, np.full(len(requests), 0.5)

    monkeypatch.setattr(server, "judge_served", fake_served)
    monkeypatch.setattr(server, "run_inprocess", fake_inprocess)
    monkeypatch.setattr(server, "start_server", lambda *a: pytest.fail("a running server is never started"))
    assert bench.main(["server", "--server-url", URL, "--model", "smollm2-135m-instruct", "--quick"]) == 0
    out = capsys.readouterr().out.splitlines()
    # the server first (a wrong URL fails in seconds), then the torch runtime on the same 20 requests
    assert calls == [("served", "smollm2-135m-instruct", URL, 20, "smollm2-135m-instruct"),
                     ("in", "smollm2-135m-instruct", "torch", 20)]
    text = "\n".join(out)
    assert "torch in-process (fp32, same weights)" in text and "running server (HTTP)" in text
    assert re.search(r"torch in-process .* 4\.0 +5\.000", text) and re.search(r"running server \(HTTP\) +2\.0 +10\.000", text)
    assert FINAL.match(out[-1]) and out[-1] == "server_vs_inprocess=2.00 max_abs_diff=3.00e-06"


@pytest.mark.parametrize(("argv", "message"), [
    (["--server-name", "x"], "--server-name is for a running server: pass --server-url too"),
    (["--inprocess", "torch"], "--inprocess is for a running server: pass --server-url too"),
    (["--server-url", URL, "--port", "8001"], "with --server-url the server runs already"),
    (["--server-url", "ftp://x/v1"], "--server-url: server_url must be an http(s) URL"),
])
def test_bad_running_server_options_exit_2_with_one_message(argv, message, capsys):
    with pytest.raises(SystemExit) as info:
        bench.main(["server", "--quick", *argv])
    assert info.value.code == 2 and message in capsys.readouterr().err


def test_the_launcher_refuses_a_port_another_process_holds():
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
        with pytest.raises(SystemExit) as info:
            server.start_server("smollm2-135m-instruct", 1, port)
    message = str(info.value)
    assert f"port {port} on 127.0.0.1 is already held by another process" in message and "\n" not in message


def test_engine_vllm_runs_torch_then_llamacpp_then_starts_vllm_on_the_converted_folder(monkeypatch, capsys):
    calls = []

    def fake_inprocess(model, requests, threads, path, backend="llamacpp"):
        calls.append(("in", backend, len(requests)))
        return (4.0, np.full(len(requests), 0.5)) if backend == "torch" else (5.0, np.full(len(requests), 0.52))

    def fake_start(folder, name, port=None, log_path=None):
        calls.append(("start", Path(folder).name, name, port))
        return "proc", "http://127.0.0.1:1/v1"

    def fake_served(name, url, requests, path, max_concurrency, identity, tokenizer=None):
        calls.append(("served", name, Path(tokenizer).name, identity))
        return 2.5, np.full(len(requests), 0.5) + 4e-6, "server prefix-cache counters: (faked)"

    monkeypatch.setattr(server, "run_inprocess", fake_inprocess)
    monkeypatch.setattr(server, "start_vllm_server", fake_start)
    monkeypatch.setattr(server, "judge_served", fake_served)
    monkeypatch.setattr(server, "stop_server", lambda proc: calls.append(("stop", proc)))
    assert bench.main(["server", "--engine", "vllm", "--quick"]) == 0
    out = capsys.readouterr().out.splitlines()
    name = "smollm2-135m-instruct"
    # one model process at a time: both in-process runtimes first, then vLLM, stopped after
    assert calls == [("in", "torch", 20), ("in", "llamacpp", 20), ("start", name, name, None),
                     ("served", name, name, None), ("stop", "proc")]
    text = "\n".join(out)
    assert "vLLM served vs llama.cpp in-process: 2.00x" in text and "llama.cpp vs torch 2.00e-02" in text
    assert out[-1] == "server_vs_inprocess=1.60 max_abs_diff=4.00e-06"
    with pytest.raises(SystemExit) as info:
        bench.main(["server", "--no-llamacpp"])
    assert info.value.code == 2 and "--no-llamacpp is for --engine vllm" in capsys.readouterr().err


def test_vllm_prefix_cache_counters_become_one_hit_rate():
    metrics = "\n".join([
        "# HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.",
        'vllm:prefix_cache_queries_total{engine="0",model_name="smollm2-135m-instruct"} 4000.0',
        'vllm:prefix_cache_queries_created{engine="0",model_name="smollm2-135m-instruct"} 1.7958e+09',
        'vllm:prefix_cache_hits_total{engine="0",model_name="smollm2-135m-instruct"} 3000.0',
        'vllm:kv_cache_usage_perc{engine="0",model_name="smollm2-135m-instruct"} 0.01',
    ])
    assert server.vllm_prefix_cache(metrics) == \
        "server prefix cache (vLLM, since it started): 3000 of 4000 prompt tokens found cached (75.0%)"
    assert server.vllm_prefix_cache("llamacpp_kv_cache_tokens 5") is None
