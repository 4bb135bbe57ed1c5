"""``python -m nlgjudge.bench server`` (issue 40): argument handling and the final line with the
timing faked (fast), and one ``--quick`` run against a real llama-cpp-python server (slow)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from nlgjudge import bench
from nlgjudge.bench import server

FINAL = re.compile(r"^server_vs_inprocess=\d+\.\d\d max_abs_diff=\d\.\d\de[-+]\d\d$")


def test_final_line_is_the_rate_ratio_and_the_largest_difference():
    line = server.final_line(10.0, 12.5, np.array([0.9, 0.2, 0.5]), np.array([0.9, 0.23, 0.49]))
    assert line == "server_vs_inprocess=0.80 max_abs_diff=3.00e-02"
    assert FINAL.match(line)
    with pytest.raises(ValueError, match="judged 3 and 2"):
        server.final_line(1.0, 1.0, np.zeros(3), np.zeros(2))


def test_main_ends_with_exactly_the_final_line_with_timing_faked(monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(server, "run_inprocess", lambda model, requests, threads, path: calls.append(("in", model, len(requests)))
                        or (4.0, np.full(len(requests), 0.5)))
    monkeypatch.setattr(server, "run_library_path", lambda model, requests, threads: calls.append(("lib", model, len(requests)))
                        or (4.5, np.full(len(requests), 0.5) + 0.002, 0))
    monkeypatch.setattr(server, "run_served", lambda model, requests, threads, path, port, max_concurrency=4: calls.append(("srv", model, len(requests)))
                        or (5.0, np.full(len(requests), 0.5) + 0.001, "server prefix-cache reuse: not reported (faked)"))
    assert bench.main(["--server", "--quick", "--threads", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [c[0] for c in calls] == ["in", "lib", "srv"]  # one model process at a time, in-process first
    assert calls[0][1:] == calls[1][1:] == calls[2][1:] == ("smollm2-135m-instruct", 20)  # 5 candidates: 20 pairs, COH
    text = "\n".join(out)
    assert "prefix-cache reuse" in text
    # the decomposition: 4.0 / 4.5 is the library's share, 4.5 / 5.0 the HTTP side's
    assert "in-process runtime = 0.89" in text and "served / its library path = 0.90" in text
    assert "library path vs in-process 2.00e-03, served vs library path 1.00e-03" in text
    assert out[-1] == "server_vs_inprocess=0.80 max_abs_diff=1.00e-03"


def test_no_library_path_runs_two_sides_only(monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(server, "run_inprocess", lambda model, requests, threads, path: calls.append("in")
                        or (4.0, np.full(len(requests), 0.5)))
    monkeypatch.setattr(server, "run_library_path", lambda *a: calls.append("lib") or (1.0, np.zeros(0), 0))
    monkeypatch.setattr(server, "run_served", lambda model, requests, threads, path, port, max_concurrency=4: calls.append("srv")
                        or (8.0, np.full(len(requests), 0.5), "reuse (faked)"))
    assert bench.main(["--server", "--quick", "--threads", "1", "--no-library-path"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert calls == ["in", "srv"] and "where the server's time goes" not in "\n".join(out)
    assert out[-1] == "server_vs_inprocess=0.50 max_abs_diff=0.00e+00"


@pytest.mark.parametrize(("argv", "message"), [
    (["--candidates", "1"], "--candidates must be at least 2"),
    (["--threads", "0"], "--threads must be at least 1"),
    (["--max-concurrency", "0"], "--max-concurrency must be at least 1"),
    (["--model", "minilm-l6"], "--model must be a packaged GGUF model"),
])
def test_bad_arguments_exit_2_with_one_message(argv, message, capsys):
    with pytest.raises(SystemExit) as info:
        bench.main(["server", *argv])
    assert info.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.slow
def test_quick_run_against_a_real_server(capsys):
    pytest.importorskip("llama_cpp")
    pytest.importorskip("uvicorn")
    assert server.main(["--quick", "--candidates", "3", "--threads", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert FINAL.match(out[-1]), out[-1]
    assert any(line.startswith("where the server's time goes") for line in out)
    # the same GGUF on both sides: P(A) agrees far inside the goal of 0.02
    assert float(out[-1].split("max_abs_diff=")[1]) <= 0.02
