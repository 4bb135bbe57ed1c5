"""A released study folder is replaced as one set: an export killed at any moment leaves either the old
folder or the new one, never files of one with the manifest of the other, and the next run finishes the job.

The kill is real: a forked child runs the export and leaves with ``os._exit`` (no ``finally``, no
``except``) just before its k-th call of a file-system step that matters (fsync, rename, replace,
rmtree), for every k until the export completes.
"""

from __future__ import annotations

import itertools
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_cache_release import entries

from nlgjudge.cache import OutputCache, OutputsFormatError
from nlgjudge.cache.release import MANIFEST_NAME

KILLED = 77


def released(folder: Path) -> dict[str, bytes]:
    """The released files of a folder (JSONL files and manifest), as bytes."""
    names = sorted(path.name for path in folder.glob("*.jsonl"))
    if (folder / MANIFEST_NAME).exists():
        names.append(MANIFEST_NAME)
    return {name: (folder / name).read_bytes() for name in names}


def hidden(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.name.startswith("."))


def export_killed_at(step: int, db: Path, target: Path) -> int:
    """Export in a forked child that dies just before its ``step``-th fsync/rename/replace/rmtree; its exit code."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            calls = itertools.count(1)

            def dying(original: Callable[..., Any]) -> Callable[..., Any]:
                def call(*args: Any, **kwargs: Any) -> Any:
                    if next(calls) == step:
                        os._exit(KILLED)
                    return original(*args, **kwargs)

                return call

            for name in ("fsync", "rename", "replace"):
                setattr(os, name, dying(getattr(os, name)))
            shutil.rmtree = dying(shutil.rmtree)  # type: ignore[assignment]
            OutputCache(db).export_study("demo", target)
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


@pytest.fixture()
def caches(tmp_path: Path) -> tuple[Path, Path]:
    """A cache with the released version of the study (30 outputs) and one where it grew (40)."""
    old, new = tmp_path / "old.sqlite", tmp_path / "new.sqlite"
    with OutputCache(old) as cache:
        cache.put_many(entries(30))
    with OutputCache(new) as cache:
        cache.put_many(entries(40))
    return old, new


def test_an_export_killed_at_any_step_leaves_one_whole_version(caches: tuple[Path, Path], tmp_path: Path) -> None:
    old_db, new_db = caches
    OutputCache(old_db).export_study("demo", tmp_path / "clean-old" / "demo")
    OutputCache(new_db).export_study("demo", tmp_path / "clean-new" / "demo")
    old_files, new_files = released(tmp_path / "clean-old" / "demo"), released(tmp_path / "clean-new" / "demo")
    assert old_files != new_files

    for step in itertools.count(1):
        root = tmp_path / f"step{step}"
        target = root / "demo"
        OutputCache(old_db).export_study("demo", target)
        (target / "README.md").write_text("notes kept with the study\n")
        code = export_killed_at(step, new_db, target)
        if code == 0:
            break
        assert code == KILLED, f"step {step}: the export failed instead of being killed"

        # What any reader finds, before anything repairs it: one whole version.
        if target.exists():
            assert released(target) in (old_files, new_files), f"step {step}: files and manifest of two exports"
        else:  # killed between the two renames: the old version waits beside it
            (old_copy,) = [root / name for name in hidden(root) if name.startswith(".demo.old-")]
            assert released(old_copy) == old_files

        # An import repairs first and reads one version; the resumed export then finishes the job.
        fresh = OutputCache(root / "fresh.sqlite")
        assert fresh.import_outputs(target) in (30, 40)
        assert hidden(root) == []
        OutputCache(new_db).export_study("demo", target)
        assert released(target) == new_files, f"step {step}"
        assert (target / "README.md").read_text() == "notes kept with the study\n"
        assert hidden(root) == []
    assert step > 6  # every file write and both renames were interrupted once


def test_an_unchanged_export_touches_nothing(caches: tuple[Path, Path], tmp_path: Path) -> None:
    _, new_db = caches
    target = tmp_path / "out" / "demo"
    OutputCache(new_db).export_study("demo", target)
    stamps = {path.name: path.stat().st_ino for path in target.iterdir()} | {".": target.stat().st_ino}
    assert export_killed_at(1, new_db, target) == 0  # no fsync, rename or delete at all
    assert {path.name: path.stat().st_ino for path in target.iterdir()} | {".": target.stat().st_ino} == stamps
    assert hidden(target.parent) == []


def test_leftovers_in_hidden_folders_are_never_imported(caches: tuple[Path, Path], tmp_path: Path) -> None:
    old_db, _ = caches
    root = tmp_path / "outputs"
    OutputCache(old_db).export_study("demo", root / "demo")
    (root / ".scratch").mkdir()
    shutil.copy(root / "demo" / "google-flan-t5-xl__sample.jsonl", root / ".scratch" / "copy.jsonl")  # no manifest
    fresh = OutputCache(tmp_path / "fresh.sqlite")
    assert fresh.import_outputs(root) == 30 and fresh.studies() == {"demo": 30}
    with pytest.raises(OutputsFormatError, match="no MANIFEST.json"):  # named on purpose, it is still checked
        fresh.import_outputs(root / ".scratch" / "copy.jsonl")
