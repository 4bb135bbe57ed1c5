"""The cache a chapter reads: exactly the released outputs, or the user's cache plus them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nlgjudge.cache import CacheEntry, OutputCache
from nlgjudge.studies.registry import released_folder as study_name
from nlgjudge.studies.released import chapter_cache, export_released


def _entry(i: int, study: str) -> CacheEntry:
    return CacheEntry.create("m", "fp-m", "label_probs", {"prompt": f"p{i}"}, {"logprobs": [-0.1, -2.3]}, study=study)


@pytest.fixture()
def released_root(tmp_path: Path) -> Path:
    study = study_name("comparative", "toy")
    source = OutputCache(tmp_path / "source.sqlite")
    source.put_many([_entry(i, study) for i in range(3)])
    root = tmp_path / "outputs"
    export_released(study, source, root)
    source.close()
    return root


def test_released_only_reads_exactly_the_released_outputs(released_root: Path, tmp_path, monkeypatch) -> None:
    study = study_name("comparative", "toy")
    user = tmp_path / "user.sqlite"
    monkeypatch.setenv("NLGJUDGE_OUTPUT_CACHE", str(user))
    mine = OutputCache()
    mine.put_many([_entry(i, study) for i in range(3, 5)])  # outputs of an earlier run, never released
    mine.close()

    private, imported = chapter_cache(True, [study, study], root=released_root)
    assert imported == {study: 3}
    assert private.count(study) == 3 and private.path != user

    shared, imported = chapter_cache(False, [study], root=released_root)
    assert shared.path == user
    assert imported == {study: 3} and shared.count(study) == 5


def test_a_study_without_released_outputs_imports_nothing(tmp_path: Path) -> None:
    cache, imported = chapter_cache(True, ["comparative-nothing"], root=tmp_path)
    assert imported == {"comparative-nothing": 0} and cache.count() == 0


def test_a_study_folder_left_half_swapped_by_a_killed_export_is_put_back(released_root: Path) -> None:
    study = study_name("comparative", "toy")
    before = {path.name: path.read_bytes() for path in (released_root / study).iterdir()}
    # What an export killed between its two renames leaves: the old folder moved aside, the new one unfinished.
    os.rename(released_root / study, released_root / f".{study}.old-k1ll3d00")
    (released_root / f".{study}.tmp-k1ll3d00").mkdir()
    (released_root / f".{study}.tmp-k1ll3d00" / "half.jsonl").write_text('{"key":')
    cache, imported = chapter_cache(True, [study], root=released_root)
    assert imported == {study: 3} and cache.count(study) == 3  # the chapter sees the released outputs
    assert {path.name: path.read_bytes() for path in (released_root / study).iterdir()} == before
    assert sorted(path.name for path in released_root.iterdir()) == [study]
