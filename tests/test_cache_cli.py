"""``python -m nlgjudge.cache``: export, import, stats."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from nlgjudge.cache import CacheEntry, OutputCache
from nlgjudge.cache.__main__ import main


@pytest.fixture()
def db(tmp_path: Path) -> Path:
    path = tmp_path / "cli.sqlite"
    cache = OutputCache(path)
    cache.put_many(
        [CacheEntry.create("tiny", "fp", "label_probs", {"prompt": f"p{i}"}, {"p": i / 3}, study="demo") for i in range(4)]
        + [CacheEntry.create("tiny", "fp", "sample", {"prompt": "q"}, "A", study=None)]
    )
    cache.close()
    return path


def test_export_import_stats(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "released" / "demo"
    assert main(["export", "demo", "--out", str(out), "--db", str(db)]) == 0
    assert "exported 4 outputs of study 'demo'" in capsys.readouterr().out
    assert sorted(path.name for path in out.iterdir()) == ["MANIFEST.json", "tiny__label_probs.jsonl"]

    fresh = tmp_path / "fresh.sqlite"
    assert main(["import", str(out), "--db", str(fresh)]) == 0
    assert "imported 4 new outputs" in capsys.readouterr().out
    assert main(["import", str(out), "--db", str(fresh)]) == 0
    assert "imported 0 new outputs" in capsys.readouterr().out

    assert main(["stats", "--db", str(db)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(": 5 outputs")
    assert lines[1:] == ["  (no study)\ttiny\tsample\t1", "  demo\ttiny\tlabel_probs\t4"]


def test_errors_exit_with_status_2_and_a_message(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "missing_study", "--out", str(tmp_path / "x"), "--db", str(db)]) == 2
    assert "error: study 'missing_study' has no outputs" in capsys.readouterr().err
    assert main(["import", str(tmp_path / "nowhere"), "--db", str(db)]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_runs_as_a_module(db: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "nlgjudge.cache", "stats", "--db", str(db)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].endswith(": 5 outputs")
