"""Does the installed llama.cpp runtime run on this CPU? A smoke check in a child process.

What it guarantees: a native crash of the runtime (SIGILL) is found in a child process, kept per
CPU and library, and named with its repair, never suffered by the caller (details below).

Why: llama-cpp-python compiles llama.cpp for the machine it is built on. A build that uses an
instruction set the CPU advertises but does not grant (AMX under many hypervisors), or a wheel built
on another CPU (a shared pip cache, a copied virtual environment, a shared image), dies with SIGILL
at the first batched matrix product: a crash of the whole Python process, not an exception. So the
runtime is first run where a crash cannot hurt, in a child process: SmolLM2 (the smallest packaged
GGUF model) evaluates one batch of :data:`SMOKE_TOKENS` tokens, enough for the matrix kernels to
run, and its logits must be finite.

What it guarantees:

- :func:`check_runtime` returns a :class:`SmokeResult` (ok, or how the child died) and never
  crashes the caller; its answer is kept on disk keyed by the CPU's flags and the installed
  library's files (:func:`check_key`), so it costs nothing after its first run on a CPU, and a
  rebuilt library or another CPU is checked afresh;
- :func:`build_record` / :func:`build_summary` read what the installer (``.ci/install.py``) wrote
  about the library it built: the CMake arguments, the rung of its ladder and why, so the runtime
  can say what it was built with; a record of another library (replaced by hand) is ignored;
- ``python -m nlgjudge.engine.llamacpp.health`` runs the check and prints one line (exit 0 when the
  runtime runs, 1 when it does not, 2 when it cannot be checked); ``--smoke`` is the child's side.

Only the standard library is imported at module level: the installer imports nothing heavy.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import platform
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

#: Tokens in the smoke batch: several hundred, so that the batched matrix kernels (AMX's among them) run.
SMOKE_TOKENS = 384
#: The packaged model the smoke check runs (the smallest GGUF one).
SMOKE_MODEL = "smollm2-135m-instruct"
#: Seconds a smoke run may take before it counts as failed (a hung library is not a working one).
SMOKE_TIMEOUT = 300.0
#: The file, in the virtual environment, where the installer records how it built the library.
BUILD_RECORD_NAME = "nlgjudge-llama-cpp-build.json"
#: The folder, in the virtual environment, holding the checks' answers (one small JSON file each).
CHECKS_DIR_NAME = "nlgjudge-runtime-checks"
#: The command that rebuilds the runtime for this machine (what a failed check tells the user).
REBUILD_COMMAND = "make install-backend"
CHECK_VERSION = 1


@dataclass(frozen=True)
class SmokeResult:
    """One smoke run's outcome: ``ok``, or the signal or exit status the child ended with."""

    ok: bool
    returncode: int | None
    seconds: float
    detail: str  # one line: what ran, or how it failed
    checked: bool = True  # False when it could not be checked (no library, no smoke model)

    @property
    def signal_name(self) -> str | None:
        if self.returncode is not None and self.returncode < 0:
            try:
                return signal.Signals(-self.returncode).name
            except ValueError:
                return f"signal {-self.returncode}"
        return None


def cpu_flags() -> tuple[str, ...]:
    """The CPU's feature flags as the kernel lists them (``/proc/cpuinfo``), sorted; () elsewhere."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ()
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in ("flags", "Features"):
            return tuple(sorted(set(value.split())))
    return ()


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else :func:`platform.processor`."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            name, _, value = line.partition(":")
            if name.strip() == "model name":
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def is_installed() -> bool:
    """True when llama-cpp-python is installed (found without importing it)."""
    return _package_folder() is not None


def _package_folder() -> Path | None:
    """The installed ``llama_cpp`` package's folder (found without importing it), or None."""
    try:
        spec = importlib.util.find_spec("llama_cpp")
    except (ValueError, ImportError):  # blocked in sys.modules, or a broken install
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def build_digest(folder: Path | None = None) -> str | None:
    """A digest of the native libraries' contents: another build is another identity, the same wheel
    installed again is the same one (memoised per file by size and modification time)."""
    folder = folder if folder is not None else _package_folder()
    if folder is None:
        return None
    digest = hashlib.sha256()
    found = False
    for path in sorted(folder.rglob("*")):
        if path.suffix in (".so", ".dylib", ".dll") or ".so." in path.name:
            found = True
            digest.update(f"{path.relative_to(folder)}|{_file_digest(path)}\n".encode())
    return digest.hexdigest()[:16] if found else None


_DIGESTS: dict[tuple[str, int, int], str] = {}


def _file_digest(path: Path) -> str:
    stat = path.stat()
    memo = (str(path), stat.st_size, stat.st_mtime_ns)
    if memo not in _DIGESTS:
        digest = hashlib.sha256()
        with open(path, "rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
        _DIGESTS[memo] = digest.hexdigest()
    return _DIGESTS[memo]


def check_key(flags: tuple[str, ...] | None = None, identity: str | None = None) -> str:
    """The key of a check's answer: the CPU's flags, the machine type and the library's identity."""
    flags = cpu_flags() if flags is None else flags
    identity = build_digest() if identity is None else identity
    text = f"v{CHECK_VERSION}|{platform.machine()}|{' '.join(flags)}|{identity}"
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _checks_dirs() -> list[Path]:
    """Where answers are kept: the virtual environment (shared by every cache folder a test sets),
    else the user cache when the environment cannot be written."""
    from nlgjudge import config

    return [Path(sys.prefix) / CHECKS_DIR_NAME, config.cache_dir() / "runtime-checks"]


def _read_answer(key: str) -> SmokeResult | None:
    for folder in _checks_dirs():
        path = folder / f"llamacpp-{key}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return SmokeResult(**{k: data[k] for k in ("ok", "returncode", "seconds", "detail")})
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return None


def _write_answer(key: str, result: SmokeResult) -> None:
    for folder in _checks_dirs():
        try:
            folder.mkdir(parents=True, exist_ok=True)
            tmp = folder / f".llamacpp-{key}.{os.getpid()}.tmp"
            tmp.write_text(json.dumps({**asdict(result), "cpu": cpu_model()}) + "\n", encoding="utf-8")
            os.replace(tmp, folder / f"llamacpp-{key}.json")
            return
        except OSError:
            continue


def smoke_command() -> list[str]:
    """The child's command line: this module with ``--smoke``."""
    return [sys.executable, "-m", "nlgjudge.engine.llamacpp.health", "--smoke"]


def run_smoke(timeout: float = SMOKE_TIMEOUT, command: list[str] | None = None) -> SmokeResult:
    """Run the smoke evaluation in a child process; never raises for what the child does."""
    start = time.monotonic()
    env = dict(os.environ)
    env.setdefault("NLGJUDGE_THREADS", str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1))
    try:
        child = subprocess.run(command or smoke_command(), capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return SmokeResult(False, None, time.monotonic() - start, f"the smoke evaluation did not finish in {timeout:.0f} s")
    seconds = time.monotonic() - start
    lines = [line for line in (child.stdout + "\n" + child.stderr).splitlines() if line.strip()]
    if child.returncode == 0:
        return SmokeResult(True, 0, seconds, lines[-1] if lines else "ran")
    if child.returncode == 3:  # the child could not check (no library or no smoke model): not a crash
        return SmokeResult(False, 3, seconds, lines[-1] if lines else "could not be checked", checked=False)
    result = SmokeResult(False, child.returncode, seconds, "")
    if result.signal_name:
        why = "an instruction this CPU does not run" if result.signal_name == "SIGILL" else "a crash of the native library"
        detail = f"killed by {result.signal_name} ({why})"
    else:
        detail = f"exited with status {child.returncode}: {lines[-1][:200] if lines else 'no output'}"
    return SmokeResult(False, child.returncode, seconds, detail)


def check_runtime(*, refresh: bool = False, timeout: float = SMOKE_TIMEOUT) -> SmokeResult:
    """Whether the installed llama.cpp runtime runs here: the kept answer for this CPU and library,
    else a smoke run in a child process (its answer then kept)."""
    identity = build_digest()
    if identity is None:
        return SmokeResult(False, None, 0.0, "llama-cpp-python is not installed", checked=False)
    key = check_key(identity=identity)
    if not refresh:
        kept = _read_answer(key)
        if kept is not None:
            return kept
    result = run_smoke(timeout)
    if result.checked:
        _write_answer(key, result)
    return result


def auto_backend(name: str) -> str:
    """``backend="auto"`` for the packaged GGUF model ``name``: "llamacpp", unless the installed runtime
    fails its check here, then "torch" with a one-line warning. Not installed at all: "llamacpp" still,
    so that cached outputs are read and a computation says how to install it."""
    import logging

    if not is_installed():
        return "llamacpp"
    result = check_runtime()
    if result.checked and not result.ok:
        logging.getLogger("nlgjudge.engine.judge").warning(
            "%s: using the torch runtime instead, since %s", name, failure_message(result))
        return "torch"
    return "llamacpp"


def failure_message(result: SmokeResult) -> str:
    """One line for a runtime that failed its check: which runtime, how, and the command that rebuilds it."""
    built = build_summary()
    what = f"the llama.cpp runtime installed here (llama-cpp-python{', ' + built if built else ''})"
    return (f"{what} fails its check on this CPU ({cpu_model()}): the smoke evaluation was {result.detail}; "
            f"rebuild it for this machine with `{REBUILD_COMMAND}` (or `python .ci/install.py --backend-only`), "
            "or use backend='torch'")


# ---- what the installer recorded -------------------------------------------------------------
def build_record_path() -> Path:
    return Path(sys.prefix) / BUILD_RECORD_NAME


def build_record() -> dict[str, object] | None:
    """The installer's record of the installed library (None: none, or one of another library)."""
    try:
        record = json.loads(build_record_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("build_digest") != build_digest():
        return None
    return record


def build_summary() -> str | None:
    """``built <rung> (<CMake arguments>)`` from the record, or None without one."""
    record = build_record()
    if record is None:
        return None
    return f"built {record.get('rung', 'unknown build')} ({record.get('cmake_args', '')})"


# ---- the child's side ------------------------------------------------------------------------
def _smoke_in_this_process() -> int:
    """Load SmolLM2 and evaluate one batch of :data:`SMOKE_TOKENS` tokens; 0 when the logits are finite."""
    if not is_installed():
        print("cannot check: llama-cpp-python is not installed")
        return 3
    from nlgjudge.models.packaged import PACKAGED_MODELS, gguf_path

    try:
        path = gguf_path(PACKAGED_MODELS[SMOKE_MODEL])
    except Exception as error:  # noqa: BLE001 - any reason the smoke model is missing: cannot check
        print(f"cannot check: the smoke model {SMOKE_MODEL} is not available ({error})")
        return 3
    import math

    from llama_cpp import Llama

    start = time.monotonic()
    llm = Llama(model_path=str(path), n_ctx=SMOKE_TOKENS + 64, n_batch=SMOKE_TOKENS, n_ubatch=SMOKE_TOKENS,
                verbose=False, logits_all=False)
    vocab = llm.n_vocab()
    tokens = [(17 + 7919 * i) % (vocab - 300) + 100 for i in range(SMOKE_TOKENS)]
    llm.eval(tokens)
    row = llm.scores[llm.n_tokens - 1]
    if not all(math.isfinite(float(v)) for v in row[:: max(1, vocab // 512)]):
        print("the smoke evaluation gave non-finite logits")
        return 4
    print(f"ran: {SMOKE_TOKENS} tokens in one batch on {SMOKE_MODEL} in {time.monotonic() - start:.2f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m nlgjudge.engine.llamacpp.health",
                                     description="Check that the installed llama.cpp runtime runs on this CPU.")
    parser.add_argument("--smoke", action="store_true", help="run the smoke evaluation in this process (the child's side)")
    parser.add_argument("--refresh", action="store_true", help="run the check again even if an answer is kept")
    args = parser.parse_args(argv)
    if args.smoke:
        return _smoke_in_this_process()
    result = check_runtime(refresh=args.refresh)
    if not result.checked:
        print(f"llama.cpp runtime not checked: {result.detail}")
        return 2
    if not result.ok:
        print(failure_message(result))
        return 1
    built = build_summary()
    print(f"llama.cpp runtime runs on this CPU ({result.detail}){'; ' + built if built else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
