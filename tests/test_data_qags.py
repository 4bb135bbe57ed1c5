"""QAGS CNN/DM and XSum loaders on synthetic files in the UniEval format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nlgjudge.data import DataValidationError, load_dataset

COUNTS = {"qags_cnndm": 235, "qags_xsum": 239}


def write_qags(root: Path, name: str, mutate: Any = None) -> Path:
    records = [
        {
            "doc_id": i,
            "system_id": 0,
            "source": f"Article {i} .",
            "reference": f"Article {i} .",
            "system_output": f"Summary {i} .",
            "scores": {"consistency": (i % 4) / 3 if i % 4 != 3 else 1.0},
        }
        for i in range(COUNTS[name])
    ]
    if mutate is not None:
        mutate(records)
    folder = root / "qags_cnndm_xsum"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["qags_cnndm", "qags_xsum"])
def test_valid_file_loads(tmp_path: Path, name: str) -> None:
    write_qags(tmp_path, name)
    ds = load_dataset(name, data_dir=tmp_path)
    assert ds.frame.shape == (COUNTS[name], 7) and ds.n_contexts == COUNTS[name]
    assert ds.aspects == ["CON"]
    row = ds.candidates("doc002").iloc[0]
    assert row["text"] == "Summary 2 ." and row["source"] == "Article 2 ." and row["references"] == []
    assert row["CON"] == pytest.approx(2 / 3) and row["system"] == "system0"


def test_scores_as_python_literal_string(tmp_path: Path) -> None:
    write_qags(tmp_path, "qags_xsum", lambda rs: rs[4].__setitem__("scores", "{'consistency': 0.0}"))
    assert load_dataset("qags_xsum", data_dir=tmp_path).candidates("doc004").iloc[0]["CON"] == 0.0


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda rs: rs[9].__setitem__("scores", {"consistency": -0.5}), r"record 9 \(doc_id 9\): consistency: score -0\.5 outside"),
        (lambda rs: rs[9].__setitem__("scores", {"relevance": 1.0}), r"record 9 \(doc_id 9\): scores: missing field 'consistency'"),
        (lambda rs: rs[9].__setitem__("scores", "not a dict"), r"record 9 \(doc_id 9\): scores 'not a dict' is not a readable mapping"),
        (lambda rs: rs[9].__setitem__("system_output", ""), r"record 9 \(doc_id 9\): system_output: empty text"),
        (lambda rs: rs[9].__setitem__("doc_id", "9"), r"record 9: doc_id must be an integer"),
        (lambda rs: rs[9].__setitem__("doc_id", 8), r"record 9 \(doc_id 8\): candidate id 'system0' appears twice in context 'doc008'"),
        (lambda rs: rs.append(dict(rs[0], doc_id=999)), r"expected 235 contexts, found 236"),
    ],
)
def test_malformed_records_are_errors(tmp_path: Path, mutate: Any, expected: str) -> None:
    path = write_qags(tmp_path, "qags_cnndm", mutate)
    with pytest.raises(DataValidationError, match=expected) as caught:
        load_dataset("qags_cnndm", data_dir=tmp_path)
    assert str(path) in str(caught.value)
