"""vLLM's CPU build (``make install-vllm``) serving the packaged SmolLM2 for the served runtime's tests.

What the fixtures guarantee: a real vLLM server from ``.venv-vllm`` (``python -m
vllm.entrypoints.openai.api_server``) on a free 127.0.0.1 port, serving the folder the torch runtime
converts the packaged GGUF file into (``NLGJUDGE_CACHE_DIR/models/<name>``: fp32 safetensors,
tokenizer, chat template) under the packaged name, with the settings the docs give
(``VLLM_CPU_KVCACHE_SPACE=2 --dtype float32 --max-model-len 4096 --enable-prefix-caching
--enforce-eager``), stopped after with its whole process group. Module-scoped: one server serves a
module's tests. Where ``.venv-vllm`` is missing the tests are skipped, except in CI (``CI=true``),
where ``make test`` has built it and its absence is a failure. The server's log is kept in the
test's temporary folder and its last line quoted when it fails to start."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

MODEL = "smollm2-135m-instruct"
#: Starting vLLM takes 40-60 s on 2 quiet cores (eager, no compilation); more on a busy machine.
START_TIMEOUT = 420.0


def require_vllm() -> None:
    """Skip (fail in CI) where vLLM's environment is not built."""
    from nlgjudge.engine.server.local import vllm_python

    if not vllm_python().exists():
        message = f"vLLM's CPU build is not installed ({vllm_python()} missing): run `make install-vllm`"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def served_folder(name: str = MODEL) -> Path:
    """The torch runtime's converted folder of the packaged ``name``, converted now if it is not yet."""
    from nlgjudge.models import MissingPackageError, resolve_model
    from nlgjudge.models.handle import converted_dir
    from nlgjudge.models.packaged import PACKAGED_MODELS

    folder = converted_dir(PACKAGED_MODELS[name])
    if not (folder / "SOURCE_SHA256").is_file():
        try:
            resolve_model(name).load()  # converts once (GGUF -> fp32 safetensors, tokenizer, chat template)
        except MissingPackageError as error:
            pytest.skip(str(error))
    return folder


class VllmServer:
    """One vLLM server process that a test can stop and start again with the same settings."""

    def __init__(self, folder: Path, name: str, log_dir: Path, dtype: str = "float32") -> None:
        self.folder, self.name, self.log_dir, self.dtype = folder, name, log_dir, dtype
        self.proc = None
        self.url = ""
        self.starts = 0

    def start(self) -> str:
        from nlgjudge.engine.server.local import start_vllm_server

        self.starts += 1
        log = self.log_dir / f"vllm-{self.dtype}-{self.starts}.log"
        self.proc, self.url = start_vllm_server(self.folder, self.name, dtype=self.dtype, timeout=START_TIMEOUT,
                                                log_path=log)
        return self.url

    def stop(self) -> None:
        from nlgjudge.engine.server.local import stop_server

        if self.proc is not None:
            stop_server(self.proc)
            self.proc = None


def running_server(tmp_path_factory: pytest.TempPathFactory, dtype: str = "float32") -> Iterator[VllmServer]:
    require_vllm()
    server = VllmServer(served_folder(), MODEL, tmp_path_factory.mktemp(f"vllm-{dtype}"), dtype)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def vllm_fp32(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmServer]:
    """vLLM serving SmolLM2's converted folder in float32 (the torch runtime's dtype) on loopback."""
    yield from running_server(tmp_path_factory, "float32")
