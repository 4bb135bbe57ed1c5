"""Inference servers on this machine's loopback, for the tests and the server benchmark.

What it guarantees: :func:`start_llama_cpp_server` starts llama-cpp-python's own OpenAI-compatible
server, :func:`start_vllm_server` vLLM's (from the environment ``make install-vllm`` builds),
each on ``127.0.0.1`` only, on a free port unless one is given, and returns once ``/v1/models``
answers *and* the process it started is still alive -- a port another process already holds is
refused before anything starts, so an answer from some other server is never taken for its own --
or stops what it started and raises
:class:`~nlgjudge.engine.server.client.ServerUnavailableError` in one line. :func:`stop_server`
ends a server with every process it spawned (its own process group). It contacts no other address.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from nlgjudge.engine.server.client import ServerUnavailableError

LOOPBACK = "127.0.0.1"
#: The environment ``make install-vllm`` builds (vLLM pins its own transformers, so not .venv).
VLLM_VENV_ENV = "NLGJUDGE_VLLM_VENV"
VLLM_SERVER_MODULE = "vllm.entrypoints.openai.api_server"
#: The settings the tests and docs use for vLLM's CPU build: float32 (the torch runtime's dtype,
#: so P(A) agrees), eager (compiling takes 136-294 s on 2 cores, again at every restart), prefix
#: caching (the judge's prompts share long prefixes).
VLLM_CPU_ARGS = ("--max-model-len", "4096", "--enable-prefix-caching", "--enforce-eager")
VLLM_KV_CACHE_GB = "2"


def free_port() -> int:
    """A port nothing listens on at the moment, on the loopback interface."""
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def port_is_taken(port: int) -> bool:
    """True when some process already holds ``port`` on the loopback interface."""
    with socket.socket() as s:
        try:
            s.bind((LOOPBACK, port))
        except OSError:
            return True
    return False


def refuse_taken_port(port: int, what: str) -> None:
    """One line when ``port`` is held: a server started there could not bind, and the one already
    listening would answer in its place."""
    if port_is_taken(port):
        raise ServerUnavailableError(
            f"port {port} on {LOOPBACK} is already held by another process, so {what} cannot listen there "
            "(whatever answers there is not the server this would start): choose another port or leave it out "
            "for a free one; to use a server that is already running, pass its URL instead")


def wait_until_serving(proc: subprocess.Popen[bytes], url: str, timeout: float, what: str, hint: str = "") -> None:
    """Return once ``url``/models answers while ``proc`` is alive; otherwise stop ``proc`` and raise."""
    import httpx

    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            stop_server(proc)
            raise ServerUnavailableError(f"{what} exited with status {proc.returncode} before serving at {url}{hint}")
        try:
            if httpx.get(url + "/models", timeout=2, trust_env=False).status_code == 200 and proc.poll() is None:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            stop_server(proc)
            raise ServerUnavailableError(f"{what} did not serve at {url} within {timeout:.0f} s{hint}")
        time.sleep(0.5)


def start_llama_cpp_server(
    model: str, *, threads: int = 1, port: int | None = None, n_ctx: int = 4096, timeout: float = 90.0
) -> tuple[subprocess.Popen[bytes], str]:
    """llama-cpp-python's server on ``127.0.0.1:port`` serving the packaged ``model`` under its name;
    returns the process and the base URL (``http://127.0.0.1:PORT/v1``)."""
    from nlgjudge.engine.llamacpp.loading import require_working_runtime
    from nlgjudge.models.packaged import PACKAGED_MODELS, gguf_path

    require_working_runtime()  # a library that crashes on this CPU is named, not started as a server
    if port is not None:
        refuse_taken_port(port, "llama_cpp.server")
    port = port or free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path(PACKAGED_MODELS[model])),
         "--model_alias", model, "--host", LOOPBACK, "--port", str(port), "--n_threads", str(threads),
         "--n_ctx", str(n_ctx), "--verbose", "False"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    url = f"http://{LOOPBACK}:{port}/v1"
    wait_until_serving(proc, url, timeout, "llama_cpp.server",
                       " (is llama-cpp-python's server extra installed? `make install-backend`)")
    return proc, url


def vllm_python() -> Path:
    """The interpreter of vLLM's environment: ``$NLGJUDGE_VLLM_VENV`` or the repository's ``.venv-vllm``."""
    from nlgjudge.config import REPO_ROOT

    venv = Path(os.environ.get(VLLM_VENV_ENV) or Path(REPO_ROOT) / ".venv-vllm").expanduser()
    return venv / "bin" / "python"


def vllm_command(folder: str | os.PathLike[str], served_name: str, port: int, *, dtype: str = "float32",
                 extra: Sequence[str] = VLLM_CPU_ARGS) -> list[str]:
    """The command line that serves the Hugging Face ``folder`` as ``served_name`` on 127.0.0.1:``port``."""
    return [str(vllm_python()), "-m", VLLM_SERVER_MODULE, "--model", str(folder), "--served-model-name", served_name,
            "--host", LOOPBACK, "--port", str(port), "--dtype", dtype, *extra]


def start_vllm_server(
    folder: str | os.PathLike[str], served_name: str, *, port: int | None = None, dtype: str = "float32",
    extra: Sequence[str] = VLLM_CPU_ARGS, timeout: float = 300.0, log_path: str | os.PathLike[str] | None = None,
) -> tuple[subprocess.Popen[bytes], str]:
    """vLLM's OpenAI-compatible server (CPU build, ``make install-vllm``) on ``127.0.0.1:port`` serving
    ``folder`` as ``served_name``; returns the process and the base URL. Its log goes to ``log_path``
    (default: discarded); a failure names the log's last line."""
    python = vllm_python()
    if not python.exists():
        raise ServerUnavailableError(f"vLLM's environment is missing ({python} not found): run `make install-vllm` "
                                     f"or set ${VLLM_VENV_ENV} to an environment with vllm-cpu")
    if port is not None:
        refuse_taken_port(port, "vLLM")
    port = port or free_port()
    env = dict(os.environ)
    env.setdefault("VLLM_CPU_KVCACHE_SPACE", VLLM_KV_CACHE_GB)
    env.setdefault("HF_HUB_OFFLINE", "1")  # a local folder: nothing to fetch
    env.pop("PYTHONPATH", None)  # the project's environment must not leak into vLLM's
    log = open(log_path, "wb") if log_path is not None else subprocess.DEVNULL  # noqa: SIM115 - closed below
    try:
        proc = subprocess.Popen(vllm_command(folder, served_name, port, dtype=dtype, extra=extra), stdout=log,
                                stderr=subprocess.STDOUT, env=env, start_new_session=True)
    finally:
        if log_path is not None:
            log.close()  # the child keeps its own descriptor
    url = f"http://{LOOPBACK}:{port}/v1"
    try:
        wait_until_serving(proc, url, timeout, "vLLM")
    except ServerUnavailableError as error:
        raise ServerUnavailableError(f"{error}{_last_line(log_path)}") from None
    return proc, url


def _last_line(log_path: str | os.PathLike[str] | None) -> str:
    if log_path is None:
        return ""
    lines = [x for x in Path(log_path).read_text(errors="replace").splitlines() if x.strip()]
    return f"; its log ({log_path}) ends: {lines[-1].strip()[:300]}" if lines else f"; its log ({log_path}) is empty"


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    """End a server started here and every process it spawned (its process group): terminate, then kill."""
    try:
        group = os.getpgid(proc.pid)
    except ProcessLookupError:
        group = None
    if group is not None and group == proc.pid:  # started in a session of its own
        _signal_group(group, signal.SIGTERM)
    else:
        proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)
    if group is not None and group == proc.pid:
        _signal_group(group, signal.SIGKILL)  # children that outlived their parent (vLLM's engine core)


def _signal_group(group: int, sig: int) -> None:
    try:
        os.killpg(group, sig)
    except (ProcessLookupError, PermissionError):
        pass
