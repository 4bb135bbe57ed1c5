"""The memo of model file checksums (``file_sha256.json`` in the cache folder) when it is damaged
(issue 48): only a memo, it is rebuilt with a warning naming it, instead of a model that "cannot be
loaded" with advice about model names."""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

import pytest

from nlgjudge.models.packaged import cached_file_sha256


@pytest.mark.parametrize("damaged", ['{"/x": {"stamp": [1, 2], "sha', "[1, 2, 3]", '{"/x": 7}', "\udcff"])
def test_a_damaged_memo_is_rebuilt_with_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  caplog: pytest.LogCaptureFixture, damaged: str) -> None:
    monkeypatch.setenv("NLGJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    memo = tmp_path / "cache" / "file_sha256.json"
    memo.parent.mkdir()
    memo.write_bytes(damaged.encode("utf-8", "surrogateescape"))
    weights = tmp_path / "weights.gguf"
    weights.write_bytes(b"weights" * 100)
    with caplog.at_level(logging.WARNING, logger="nlgjudge.models.packaged"):
        assert cached_file_sha256(weights) == hashlib.sha256(weights.read_bytes()).hexdigest()
    assert any(str(memo) in r.getMessage() and "damaged" in r.getMessage() for r in caplog.records), caplog.text
    rebuilt = json.loads(memo.read_text())
    assert rebuilt[str(weights)]["sha256"] == hashlib.sha256(weights.read_bytes()).hexdigest()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="nlgjudge.models.packaged"):
        cached_file_sha256(weights)  # the rebuilt memo is read without a warning
    assert not caplog.records
