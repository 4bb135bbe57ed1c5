"""``python -m nlgjudge.cache``: export, import, stats, check; failures are one line, never a traceback."""

from __future__ import annotations

import hashlib
import sqlite3
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


# -- failures at the command line: one line, non-zero exit, no traceback, nobody's file changed -------------


def run_cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nlgjudge.cache", *map(str, args)], capture_output=True, text=True, timeout=60
    )


def assert_one_line_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_stats_on_someone_elses_database_changes_nothing(tmp_path: Path) -> None:
    foreign = tmp_path / "theirs.sqlite"
    raw = sqlite3.connect(foreign)
    raw.execute("CREATE TABLE outputs (id INTEGER PRIMARY KEY, text TEXT)")
    raw.execute("INSERT INTO outputs VALUES (1, 'mine')")
    raw.commit()
    raw.close()
    before = sha256(foreign)
    for command in (["stats"], ["check"], ["export", "demo", "--out", tmp_path / "out"]):
        result = run_cli(*command, "--db", foreign)
        assert_one_line_error(result, str(foreign), "not an nlgjudge output cache")
        assert result.returncode == 2
    assert sha256(foreign) == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["theirs.sqlite"]  # no -wal/-shm, no export


@pytest.fixture()
def damaged_db(db: Path) -> Path:
    """The CLI fixture's cache with every page after the first overwritten with garbage."""
    data = bytearray(db.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    data[page_size:] = bytes((i * 151 + 7) % 256 for i in range(len(data) - page_size))
    db.write_bytes(bytes(data))
    return db


def test_a_damaged_database_is_one_clear_line(damaged_db: Path, tmp_path: Path) -> None:
    for command in (["stats"], ["export", "demo", "--out", tmp_path / "out"]):
        result = run_cli(*command, "--db", damaged_db)
        assert_one_line_error(result, f"{damaged_db} is damaged", "malformed", "move it aside", "nlgjudge.cache import")
        assert result.returncode == 2 and result.stdout == ""
    checked = run_cli("check", "--db", damaged_db)
    assert_one_line_error(checked, f"{damaged_db} is damaged", "move it aside")
    assert checked.returncode == 1


def test_check(db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--db", str(db)]) == 0
    assert capsys.readouterr().out.strip() == f"{db}: ok (5 outputs)"
    assert main(["check", "--quick", "--db", str(db)]) == 0
    capsys.readouterr()
    missing = tmp_path / "missing.sqlite"
    assert main(["check", "--db", str(missing)]) == 2
    assert f"no output cache at {missing}: it does not exist" in capsys.readouterr().err
    assert not missing.exists()


def test_import_refuses_files_without_manifest_unless_asked(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "released" / "demo"
    assert main(["export", "demo", "--out", str(out), "--db", str(db)]) == 0
    (out / "MANIFEST.json").unlink()
    capsys.readouterr()
    fresh = tmp_path / "fresh.sqlite"
    assert main(["import", str(out), "--db", str(fresh)]) == 2
    error = capsys.readouterr().err
    assert "has no MANIFEST.json beside it" in error and "--allow-unverified" in error
    assert main(["import", str(out), "--allow-unverified", "--db", str(fresh)]) == 0
    assert "imported 4 new outputs" in capsys.readouterr().out


def test_a_missing_cache_is_refused_and_not_created(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 39: `stats` on a cache that does not exist used to create an empty one and report 0 outputs."""
    missing = tmp_path / "no" / "such.sqlite"
    for command in (["stats"], ["check"], ["export", "demo"]):
        assert main([*command, "--db", str(missing)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: no output cache at {missing}") and err.count("\n") == 1
    assert not missing.exists() and not missing.parent.exists()


def test_an_unwritable_export_folder_is_refused_before_the_export_naming_out(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    for out in (str(blocker / "inside"), "/proc/self/not-a-folder"):  # a parent that is a file; /proc (root too)
        assert main(["export", "demo", "--out", out, "--db", str(db)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: --out {out}: cannot write there") and err.count("\n") == 1


def test_an_empty_db_or_out_is_refused_naming_the_option(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["stats", "--db", ""])
    assert stopped.value.code == 2 and "argument --db: is empty" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stopped:
        main(["export", "demo", "--out", " ", "--db", str(db)])
    assert stopped.value.code == 2 and "argument --out: is empty" in capsys.readouterr().err
