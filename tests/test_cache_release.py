"""Released outputs: deterministic export, exact and idempotent import, clear errors on bad files."""

from __future__ import annotations

import json
import math
import random
import sqlite3
import struct
from pathlib import Path

import pytest

from nlgjudge.cache import CacheEntry, ImportConflictWarning, OutputCache, OutputsFormatError, StaleExportError
from nlgjudge.cache.release import MANIFEST_NAME, output_file_name, read_released_file

SECRET_PROMPT = "PROMPT-TEXT-THAT-MUST-NOT-BE-RELEASED"


def entries(n: int = 30, study: str = "demo", seed: int = 0) -> list[CacheEntry]:
    rng = random.Random(seed)
    made = []
    for i in range(n):
        model_id = ["google/flan-t5-xl", "qwen2.5-coder-1.5b-instruct"][i % 2]
        operation = ["label_probs", "sample"][(i // 2) % 2]
        request = {"prompt": f"{SECRET_PROMPT} {i}", "labels": ["A", "B"], "seed": 0}
        value = {"p": rng.random(), "logp": -rng.expovariate(0.1), "text": f"Summary {'AB'[i % 2]} é"}
        meta = {"context_id": f"doc{i // 4}", "candidates": [i, i + 1], "aspect": "COH"}
        made.append(CacheEntry.create(model_id, f"fp-{model_id}", operation, request, value, study=study, meta=meta))
    return made


@pytest.fixture()
def cache(tmp_path: Path) -> OutputCache:
    store = OutputCache(tmp_path / "a.sqlite")
    store.put_many(entries())
    yield store
    store.close()


def read_all(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_export_layout_and_content(cache: OutputCache, tmp_path: Path) -> None:
    paths = cache.export_study("demo", tmp_path / "out")
    names = [path.name for path in paths]
    assert names == [
        "google-flan-t5-xl__label_probs.jsonl",
        "google-flan-t5-xl__sample.jsonl",
        "qwen2.5-coder-1.5b-instruct__label_probs.jsonl",
        "qwen2.5-coder-1.5b-instruct__sample.jsonl",
        MANIFEST_NAME,
    ]
    by_key = {e.key: e for e in entries()}
    total = 0
    for path in paths[:-1]:
        lines = path.read_text(encoding="utf-8").splitlines()
        keys = [json.loads(line)["key"] for line in lines]
        assert keys == sorted(keys)  # sorted by key: stable diffs
        for line in lines:
            record = json.loads(line)
            assert line == json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            entry = by_key[record["key"]]
            assert record == {
                "key": entry.key,
                "model_id": entry.model_id,
                "fingerprint": entry.fingerprint,
                "operation": entry.operation,
                "meta": entry.meta,
                "value": entry.value,
            }
            assert output_file_name(entry.model_id, entry.operation) == path.name
        total += len(lines)
        assert SECRET_PROMPT not in path.read_text(encoding="utf-8")
    manifest = json.loads(paths[-1].read_text())
    assert manifest["study"] == "demo" and manifest["records"] == total == 30
    assert [f["records"] for f in manifest["files"]] == [8, 7, 8, 7]


def test_default_location_is_outputs_dir(cache: OutputCache, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NLGJUDGE_OUTPUTS_DIR", str(tmp_path / "released"))
    paths = cache.export_study("demo")
    assert all(path.parent == tmp_path / "released" / "demo" for path in paths)


def test_export_is_deterministic_and_byte_identical(cache: OutputCache, tmp_path: Path) -> None:
    first = read_all(cache.export_study("demo", tmp_path / "one")[0].parent)
    mtimes = {p: p.stat().st_mtime_ns for p in (tmp_path / "one").iterdir()}
    cache.export_study("demo", tmp_path / "one")  # unchanged files are not rewritten: same mtime
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "one").iterdir()} == mtimes
    # Another cache filled in a different order, and one filled from the export, give the same bytes.
    shuffled = entries()
    random.Random(1).shuffle(shuffled)
    other = OutputCache(tmp_path / "b.sqlite")
    for start in range(0, 30, 7):
        other.put_many(shuffled[start : start + 7])
    assert read_all(other.export_study("demo", tmp_path / "two")[0].parent) == first
    reimported = OutputCache(tmp_path / "c.sqlite")
    reimported.import_outputs(tmp_path / "one")
    assert read_all(reimported.export_study("demo", tmp_path / "three")[0].parent) == first


def test_import_is_exact_and_idempotent(cache: OutputCache, tmp_path: Path) -> None:
    cache.export_study("demo", tmp_path / "demo")
    fresh = OutputCache(tmp_path / "fresh.sqlite")
    assert fresh.import_outputs(tmp_path / "demo") == 30
    assert fresh.import_outputs(tmp_path / "demo") == 0
    assert fresh.import_outputs(tmp_path / "demo" / "google-flan-t5-xl__sample.jsonl") == 0
    assert len(fresh) == 30 and fresh.studies() == {"demo": 30}
    keys = [e.key for e in entries()]
    assert fresh.get_many(keys) == cache.get_many(keys)


def test_floats_survive_export_and_import_bit_for_bit(tmp_path: Path) -> None:
    rng = random.Random(7)
    floats = [struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0] for _ in range(3000)]
    floats = [x for x in floats if math.isfinite(x)]
    floats += [5e-324, -0.0, 0.1 + 0.2, 1 / 3, 1e-300, 1.7976931348623157e308, 123456789.12345679]
    source = OutputCache(tmp_path / "src.sqlite")
    made = [CacheEntry.create("m", "fp", "op", {"i": i}, {"x": x}, study="floats") for i, x in enumerate(floats)]
    source.put_many(made)
    source.export_study("floats", tmp_path / "floats")
    target = OutputCache(tmp_path / "dst.sqlite")
    target.import_outputs(tmp_path / "floats")
    back = target.get_many([e.key for e in made])
    assert [struct.pack("<d", back[e.key]["x"]) for e in made] == [struct.pack("<d", x) for x in floats]


def test_import_a_folder_of_studies_uses_each_manifest(cache: OutputCache, tmp_path: Path) -> None:
    cache.put_many(entries(6, study="other", seed=5))
    cache.export_study("demo", tmp_path / "released" / "demo")
    cache.export_study("other", tmp_path / "released" / "renamed_folder")
    fresh = OutputCache(tmp_path / "fresh.sqlite")
    fresh.import_outputs(tmp_path / "released")
    assert fresh.studies() == {"demo": 30, "other": 6}


def _one_file(cache: OutputCache, tmp_path: Path) -> Path:
    cache.export_study("demo", tmp_path / "demo")
    (tmp_path / "demo" / MANIFEST_NAME).unlink()  # hand-edited files would not match their manifest
    return tmp_path / "demo" / "google-flan-t5-xl__sample.jsonl"


@pytest.mark.parametrize(
    ("broken_line", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"key": "abc"}', "missing"),
        ("KEY_WITH_EXTRA", "unexpected \\['prompt'\\]"),
        ("SHORT_KEY", "not a 64-character"),
        ("NAN_VALUE", "NaN"),
        ("EMPTY_MODEL", "model_id must be a non-empty string"),
        ("DUPLICATE", "already appears on line 1"),
    ],
)
def test_malformed_lines_name_file_and_line(cache: OutputCache, tmp_path: Path, broken_line: str, message: str) -> None:
    path = _one_file(cache, tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    substitutes = {
        "KEY_WITH_EXTRA": json.dumps({**record, "prompt": "x"}),
        "SHORT_KEY": json.dumps({**record, "key": "abc123"}),
        "NAN_VALUE": json.dumps({**record, "value": float("nan")}),
        "EMPTY_MODEL": json.dumps({**record, "model_id": ""}),
        "DUPLICATE": lines[0],
    }
    lines.insert(2, substitutes.get(broken_line, broken_line))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fresh = OutputCache(tmp_path / "fresh.sqlite")
    with pytest.raises(OutputsFormatError, match=message) as raised:
        fresh.import_outputs(tmp_path / "demo", allow_unverified=True)
    assert f"{path}:3" in str(raised.value)
    assert len(fresh) == 0  # all or nothing


def test_manifest_mismatch_is_an_error(cache: OutputCache, tmp_path: Path) -> None:
    cache.export_study("demo", tmp_path / "demo")
    path = tmp_path / "demo" / "google-flan-t5-xl__sample.jsonl"
    path.write_text(path.read_text().replace('"aspect":"COH"', '"aspect":"REL"'), encoding="utf-8")
    with pytest.raises(OutputsFormatError, match="does not match .*MANIFEST.json"):
        OutputCache(tmp_path / "fresh.sqlite").import_outputs(tmp_path / "demo")
    (tmp_path / "demo" / "stray.jsonl").write_text("")
    with pytest.raises(OutputsFormatError, match="not listed in"):
        OutputCache(tmp_path / "fresh.sqlite").import_outputs(tmp_path / "demo" / "stray.jsonl")


def test_released_files_that_disagree_are_an_error(cache: OutputCache, tmp_path: Path) -> None:
    cache.export_study("demo", tmp_path / "x" / "demo")
    first = (tmp_path / "x" / "demo" / "google-flan-t5-xl__sample.jsonl").read_text().splitlines()[0]
    record = json.loads(first)
    record["value"] = {"p": 0.5}
    (tmp_path / "x" / "again").mkdir()
    (tmp_path / "x" / "again" / "copy.jsonl").write_text(json.dumps(record) + "\n")
    with pytest.raises(OutputsFormatError, match="has a different value in"):
        OutputCache(tmp_path / "fresh.sqlite").import_outputs(tmp_path / "x", allow_unverified=True)


def test_import_conflicting_with_the_cache_warns_and_keeps_the_cached_value(cache: OutputCache, tmp_path: Path) -> None:
    cache.export_study("demo", tmp_path / "demo")
    (tmp_path / "demo" / MANIFEST_NAME).unlink()
    path = tmp_path / "demo" / "google-flan-t5-xl__sample.jsonl"
    record = json.loads(path.read_text().splitlines()[0])
    path.write_text(json.dumps({**record, "value": {"p": 0.5}}) + "\n")
    with pytest.warns(ImportConflictWarning, match="1 imported output"):
        assert cache.import_outputs(path, allow_unverified=True) == 0
    assert cache.get_many([record["key"]])[record["key"]] == record["value"]


def test_export_refuses_to_drop_released_outputs_missing_from_the_cache(cache: OutputCache, tmp_path: Path) -> None:
    cache.export_study("demo", tmp_path / "demo")
    partial = OutputCache(tmp_path / "partial.sqlite")
    partial.put_many(entries()[:10])
    with pytest.raises(StaleExportError, match="would drop 5 released output.*Import them first"):
        partial.export_study("demo", tmp_path / "demo")
    partial.import_outputs(tmp_path / "demo")
    partial.export_study("demo", tmp_path / "demo")  # now complete: fine


def test_unknown_study_is_a_clear_error(cache: OutputCache, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"no outputs in .* \(studies there: demo\)"):
        cache.export_study("nope", tmp_path / "x")


def test_colliding_slugs_get_distinct_names(tmp_path: Path) -> None:
    store = OutputCache(tmp_path / "s.sqlite")
    store.put_many(
        [
            CacheEntry.create("org/model", "fp", "op", {"i": 1}, 1, study="s"),
            CacheEntry.create("org-model", "fp", "op", {"i": 2}, 2, study="s"),
        ]
    )
    names = [path.name for path in store.export_study("s", tmp_path / "s")][:-1]
    assert len(names) == 2 and len(set(names)) == 2
    assert all(name.startswith("org-model__op-") for name in names)
    assert sum(len(read_released_file(tmp_path / "s" / name)) for name in names) == 2


def test_line_separator_characters_inside_strings_do_not_split_records(tmp_path: Path) -> None:
    # ensure_ascii=False writes U+2028/U+0085 raw; str.splitlines() would cut the record there.
    tricky = "line\u2028separator\u0085next\x0cpage"
    store = OutputCache(tmp_path / "s.sqlite")
    entry = CacheEntry.create("m", "fp", "generate", {"i": 0}, tricky, study="s", meta={"note": tricky})
    store.put_many([entry])
    store.export_study("s", tmp_path / "s")
    fresh = OutputCache(tmp_path / "fresh.sqlite")
    assert fresh.import_outputs(tmp_path / "s") == 1
    assert fresh.get_many([entry.key]) == {entry.key: tricky}


def test_reimport_after_a_new_export_adds_only_the_new_outputs(tmp_path: Path) -> None:
    first, later = entries(30), entries(40)
    assert [e.key for e in later[:30]] == [e.key for e in first]
    source = OutputCache(tmp_path / "src.sqlite")
    source.put_many(first)
    source.export_study("demo", tmp_path / "demo")
    user = OutputCache(tmp_path / "user.sqlite")
    assert user.import_outputs(tmp_path / "demo") == 30
    source.put_many(later[30:])  # the study grew; its files are exported again
    source.export_study("demo", tmp_path / "demo")
    assert user.import_outputs(tmp_path / "demo") == 10
    assert user.import_outputs(tmp_path / "demo") == 0
    assert user.count("demo") == 40


def test_imported_outputs_keep_no_request_and_are_not_overwritten(cache: OutputCache, tmp_path: Path) -> None:
    cache.export_study("demo", tmp_path / "demo")
    user = OutputCache(tmp_path / "user.sqlite")
    user.import_outputs(tmp_path / "demo")
    assert user.put_many(entries()) == 0  # computing them again locally changes nothing
    raw = sqlite3.connect(user.path)
    assert raw.execute("SELECT COUNT(*) FROM outputs WHERE request IS NULL").fetchone()[0] == 30
    raw.close()


def test_files_without_a_manifest_are_refused_unless_asked(cache: OutputCache, tmp_path: Path) -> None:
    cache.export_study("demo", tmp_path / "demo")
    (tmp_path / "demo" / MANIFEST_NAME).unlink()  # e.g. an export killed before it wrote the manifest
    fresh = OutputCache(tmp_path / "fresh.sqlite")
    for path in (tmp_path / "demo", tmp_path / "demo" / "google-flan-t5-xl__sample.jsonl"):
        with pytest.raises(OutputsFormatError, match=r"has no MANIFEST.json beside it.*allow_unverified=True"):
            fresh.import_outputs(path)
    assert len(fresh) == 0
    assert fresh.import_outputs(tmp_path / "demo", allow_unverified=True) == 30


def test_a_folder_missing_a_listed_file_is_refused(cache: OutputCache, tmp_path: Path) -> None:
    cache.export_study("demo", tmp_path / "demo")
    (tmp_path / "demo" / "google-flan-t5-xl__sample.jsonl").unlink()
    fresh = OutputCache(tmp_path / "fresh.sqlite")
    with pytest.raises(OutputsFormatError, match="lists google-flan-t5-xl__sample.jsonl, which is not in"):
        fresh.import_outputs(tmp_path / "demo")
    assert fresh.import_outputs(tmp_path / "demo" / "google-flan-t5-xl__label_probs.jsonl") == 8  # one file: fine


def test_export_keeps_other_files_of_the_folder(cache: OutputCache, tmp_path: Path) -> None:
    target = tmp_path / "demo"
    cache.export_study("demo", target)
    (target / "README.md").write_text("how these were computed\n")
    cache.put_many(entries(34)[30:])  # the study grew: the folder is replaced
    cache.export_study("demo", target)
    assert (target / "README.md").read_text() == "how these were computed\n"
    assert json.loads((target / MANIFEST_NAME).read_text())["records"] == 34
    assert sorted(path.name for path in tmp_path.iterdir() if path.name.startswith(".")) == []
