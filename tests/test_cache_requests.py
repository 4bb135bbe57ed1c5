"""One released line per request: outputs shared by several requests keep every requester's meta."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from nlgjudge.cache import CacheEntry, OutputCache, OutputsFormatError, StaleExportError
from nlgjudge.cache.release import MANIFEST_NAME
from nlgjudge.cache.store import _SCHEMA, SCHEMA_VERSION

STUDY = "elo-toy"


def _entry(prompt: str, meta: dict, study: str | None = STUDY) -> CacheEntry:
    return CacheEntry.create("m", "fp", "label_probs", {"prompt": prompt}, {"logprobs": [-0.25, -1.5]}, study=study, meta=meta)


def _lines(folder: Path) -> list[dict]:
    return [json.loads(line) for path in sorted(folder.glob("*.jsonl")) for line in path.read_text().splitlines()]


@pytest.fixture()
def shared(tmp_path: Path) -> OutputCache:
    """Two requests with identical inputs (GPT-3's and GPT-4's identical summaries) and one other."""
    cache = OutputCache(tmp_path / "a.sqlite")
    gpt3, other = _entry("same text", {"a": "GPT-3", "b": "BART"}), _entry("other text", {"a": "BART", "b": "GPT-3"})
    cache.put_many([gpt3, other])
    assert cache.record_requests(STUDY, [(gpt3.key, {"a": "GPT-4", "b": "BART"}), (gpt3.key, {"a": "GPT-3", "b": "BART"})]) == 1
    yield cache
    cache.close()


def test_a_shared_output_is_stored_once_and_released_once_per_request(shared: OutputCache, tmp_path: Path) -> None:
    assert len(shared) == 2 and shared.count(STUDY) == 2
    shared.export_study(STUDY, tmp_path / "out")
    lines = _lines(tmp_path / "out")
    metas = sorted((line["meta"]["a"], line["meta"]["b"]) for line in lines)
    assert metas == [("BART", "GPT-3"), ("GPT-3", "BART"), ("GPT-4", "BART")]
    keys = [line["key"] for line in lines]
    assert len(set(keys)) == 2 and keys == sorted(keys)
    manifest = json.loads((tmp_path / "out" / MANIFEST_NAME).read_text())
    assert manifest["records"] == 3


def test_import_is_idempotent_and_keeps_each_output_once(shared: OutputCache, tmp_path: Path) -> None:
    shared.export_study(STUDY, tmp_path / "out")
    fresh = OutputCache(tmp_path / "fresh.sqlite")
    assert fresh.import_outputs(tmp_path / "out") == 2  # two outputs, three lines
    assert fresh.import_outputs(tmp_path / "out") == 0
    assert len(fresh) == 2 and fresh.check() == []
    before = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()}
    fresh.export_study(STUDY, tmp_path / "out")  # the same three lines again: nothing to write
    assert {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()} == before
    fresh.export_study(STUDY, tmp_path / "again")
    assert {p.name: p.read_bytes() for p in (tmp_path / "again").iterdir()} == before


def test_a_repeated_request_or_a_key_with_two_values_is_refused(shared: OutputCache, tmp_path: Path) -> None:
    shared.export_study(STUDY, tmp_path / "out")
    path = next((tmp_path / "out").glob("*.jsonl"))
    lines = path.read_text().splitlines()
    for broken, message in ((lines[0], "with this meta already appears"),
                            (lines[0].replace("-0.25", "-0.5").replace('"GPT', '"X'), "with another output")):
        bad = tmp_path / f"bad-{len(message)}.jsonl"
        bad.write_text("\n".join([*lines, broken]) + "\n")
        with pytest.raises(OutputsFormatError, match=message):
            OutputCache(tmp_path / f"b{len(message)}.sqlite").import_outputs(bad, allow_unverified=True)


def test_export_refuses_to_drop_a_released_request_unless_told(shared: OutputCache, tmp_path: Path) -> None:
    shared.export_study(STUDY, tmp_path / "out")
    gpt3_key = next(line["key"] for line in _lines(tmp_path / "out") if line["meta"]["a"] == "GPT-4")
    assert shared.drop_requests(STUDY, [(gpt3_key, {"a": "GPT-4", "b": "BART"})]) == 1
    with pytest.raises(StaleExportError, match="would drop 1 released output"):
        shared.export_study(STUDY, tmp_path / "out")
    shared.export_study(STUDY, tmp_path / "out", drop_released=True)
    assert len(_lines(tmp_path / "out")) == 2
    # Dropping an output's last request takes it out of the study (it stays in the cache).
    assert shared.drop_requests(STUDY, [(gpt3_key, {"a": "GPT-3", "b": "BART"})]) == 1
    assert shared.count(STUDY) == 1 and len(shared) == 2


def test_a_version_1_cache_is_upgraded_and_exports_as_before(tmp_path: Path) -> None:
    path = tmp_path / "v1.sqlite"
    raw = sqlite3.connect(path)
    for statement in _SCHEMA:
        if "study_requests" not in statement:
            raw.execute(statement)
    raw.execute("PRAGMA user_version = 1")
    entry = _entry("same text", {"a": "GPT-3", "b": "BART"})
    raw.execute("INSERT INTO outputs VALUES (?, 'm', 'fp', 'label_probs', ?, ?, 'now', NULL)",
                (entry.key, json.dumps({"logprobs": [-0.25, -1.5]}, separators=(",", ":")), '{"a":"GPT-3","b":"BART"}'))
    raw.execute("INSERT INTO study_outputs VALUES (?, ?)", (STUDY, entry.key))
    raw.commit()
    raw.close()
    cache = OutputCache(path)
    cache.record_requests(STUDY, [(entry.key, {"a": "GPT-4", "b": "BART"})])
    cache.export_study(STUDY, tmp_path / "out")
    assert sorted(line["meta"]["a"] for line in _lines(tmp_path / "out")) == ["GPT-3", "GPT-4"]  # the old line stays
    assert cache.check() == []
    cache.close()
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2


def test_recording_a_request_for_an_output_not_in_the_cache_is_an_error(shared: OutputCache) -> None:
    with pytest.raises(KeyError, match="not in the cache"):
        shared.record_requests(STUDY, [("0" * 64, {"a": "x"})])
