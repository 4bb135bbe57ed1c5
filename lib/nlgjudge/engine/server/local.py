"""A llama-cpp-python server on this machine's loopback, for the tests and the server benchmark.

What it guarantees: :func:`start_llama_cpp_server` starts llama-cpp-python's own OpenAI-compatible
server on ``127.0.0.1`` only (a free port unless one is given), serving a packaged GGUF model under
its packaged name, and returns once ``/v1/models`` answers, or stops the process and raises
:class:`~nlgjudge.engine.server.client.ServerUnavailableError` in one line; :func:`stop_server`
ends it. It contacts no other address.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time

from nlgjudge.engine.server.client import ServerUnavailableError

LOOPBACK = "127.0.0.1"


def free_port() -> int:
    """A port nothing listens on at the moment, on the loopback interface."""
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def start_llama_cpp_server(
    model: str, *, threads: int = 1, port: int | None = None, n_ctx: int = 4096, timeout: float = 90.0
) -> tuple[subprocess.Popen[bytes], str]:
    """llama-cpp-python's server on ``127.0.0.1:port`` serving the packaged ``model`` under its name;
    returns the process and the base URL (``http://127.0.0.1:PORT/v1``)."""
    import httpx

    from nlgjudge.models.packaged import PACKAGED_MODELS, gguf_path

    port = port or free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path(PACKAGED_MODELS[model])),
         "--model_alias", model, "--host", LOOPBACK, "--port", str(port), "--n_threads", str(threads),
         "--n_ctx", str(n_ctx), "--verbose", "False"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://{LOOPBACK}:{port}/v1"
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(url + "/models", timeout=2).status_code == 200:
                return proc, url
        except httpx.TransportError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_server(proc)
            raise ServerUnavailableError(
                f"llama_cpp.server did not start on {LOOPBACK}:{port} within {timeout:.0f} s "
                "(is llama-cpp-python's server extra installed? `make install-backend`)")
        time.sleep(0.3)


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    """End a server started by :func:`start_llama_cpp_server` (terminate, then kill)."""
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)
