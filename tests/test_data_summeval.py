"""SummEval loader on synthetic files (local merged JSONL and the mteb/summeval online schema)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nlgjudge.data import DataValidationError, load_dataset, sources
from nlgjudge.data.sources import OnlineSource

MODEL_IDS = ["M0", "M1", "M2", "M5", "M8", "M9", "M10", "M11", "M12", "M13", "M14", "M15", "M17", "M20", "M22", "M23"]
FIELDS = ("coherence", "consistency", "fluency", "relevance")


def article(i: int, online: bool = False) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": f"dm-test-{i:040x}",
        "text": f"Article number {i}. It has two sentences.",
        "human_summaries": [f"reference {r} of article {i}" for r in range(11)],
        "machine_summaries": [f"summary by {m} of article {i}" for m in MODEL_IDS],
    }
    if not online:
        record["text_tokenized"] = record["text"]
        record["model_ids"] = list(MODEL_IDS)
    for f, field in enumerate(FIELDS):
        record[field] = [1.0 + ((i + k + f) % 13) / 3 for k in range(16)]
    return record


def write_summeval(root: Path, mutate: Any = None) -> Path:
    records = [article(i) for i in range(100)]
    if mutate is not None:
        mutate(records)
    folder = root / "summeval"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "summeval_merged.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_valid_file_loads_in_tidy_shape(tmp_path: Path) -> None:
    write_summeval(tmp_path)
    ds = load_dataset("summeval", data_dir=tmp_path)
    frame = ds.frame
    assert frame.shape == (1600, 10) and ds.n_contexts == 100
    first = ds.candidates(f"dm-test-{0:040x}")
    assert first["candidate_id"].tolist() == MODEL_IDS
    assert first["system"].tolist() == MODEL_IDS
    assert first["references"].iloc[0] == [f"reference {r} of article 0" for r in range(11)]
    assert first["source"].iloc[0] == "Article number 0. It has two sentences."
    assert first.loc[3, "FLU"] == pytest.approx(1.0 + ((0 + 3 + 2) % 13) / 3)


def test_subset_is_seeded(tmp_path: Path) -> None:
    write_summeval(tmp_path)
    a = load_dataset("summeval", data_dir=tmp_path, n_contexts=10, seed=4)
    b = load_dataset("summeval", data_dir=tmp_path, n_contexts=10, seed=4)
    c = load_dataset("summeval", data_dir=tmp_path, n_contexts=10, seed=5)
    assert a.context_ids() == b.context_ids() != c.context_ids()
    assert len(a.frame) == 160
    full = load_dataset("summeval", data_dir=tmp_path).context_ids()
    assert a.context_ids() == [cid for cid in full if cid in set(a.context_ids())]
    with pytest.raises(ValueError, match="exceeds the 100 contexts"):
        load_dataset("summeval", data_dir=tmp_path, n_contexts=101)


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda rs: rs[7]["coherence"].__setitem__(2, 5.5), r"line 8 \(id dm-test-0+7\), summary 2 \(M2\): coherence: score 5\.5 outside"),
        (lambda rs: rs[3]["fluency"].pop(), r"line 4 \(id dm-test-0+3\): fluency: expected 16 items, found 15"),
        (lambda rs: rs[0]["model_ids"].__setitem__(1, "M0"), r"candidate id 'M0' appears twice"),
        (lambda rs: rs[9]["machine_summaries"].__setitem__(0, " "), r"line 10 .*summary 0 \(M0\): machine_summaries: empty text"),
        (lambda rs: rs[5].pop("text"), r"line 6 \(id dm-test-0+5\): missing field 'text'"),
        (lambda rs: rs.pop(), r"expected 100 contexts, found 99"),
        (lambda rs: rs[1].__setitem__("id", rs[0]["id"]), r"not contiguous|appears twice"),
        (lambda rs: rs[2]["relevance"].__setitem__(0, "4"), r"line 3 .*relevance: expected a number, got '4'"),
    ],
)
def test_malformed_rows_are_errors(tmp_path: Path, mutate: Any, expected: str) -> None:
    path = write_summeval(tmp_path, mutate)
    with pytest.raises(DataValidationError, match=expected) as caught:
        load_dataset("summeval", data_dir=tmp_path)
    assert str(path) in str(caught.value)


def test_broken_json_line_is_reported(tmp_path: Path) -> None:
    path = write_summeval(tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[41] = lines[41][:50] + "\n"
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(DataValidationError, match=r"summeval_merged\.jsonl, line 42: not valid JSON"):
        load_dataset("summeval", data_dir=tmp_path)


def test_online_schema_is_converted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    requested: list[OnlineSource] = []

    def fake_hub(source: OnlineSource) -> list[dict[str, Any]]:
        requested.append(source)
        return [article(i, online=True) for i in range(100)]

    monkeypatch.setattr(sources, "load_hub_rows", fake_hub)
    ds = load_dataset("summeval", data_dir=tmp_path / "empty")
    assert requested == [OnlineSource("mteb/summeval", None, "test")]
    assert ds.frame.shape == (1600, 10)
    assert ds.candidates(f"dm-test-{5:040x}")["system"].tolist() == [f"S{k}" for k in range(16)]


def test_online_rows_are_validated_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [article(i, online=True) for i in range(100)]
    rows[12]["consistency"][4] = 0.0
    monkeypatch.setattr(sources, "load_hub_rows", lambda source: rows)
    with pytest.raises(DataValidationError, match=r"mteb/summeval.*row 12 .*summary 4 \(S4\): consistency: score 0 outside"):
        load_dataset("summeval", data_dir=tmp_path)
