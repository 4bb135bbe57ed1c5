"""RoSE protocol-set loaders (rose, rose_llm) on synthetic files in the released format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nlgjudge.data import DataValidationError, load_dataset, sources
from nlgjudge.data.rose import LLM_SYSTEMS, PROTOCOL_SYSTEMS
from nlgjudge.data.sources import OnlineSource


def annotation(i: int, k: int) -> dict[str, float]:
    return {
        "prior": 1.0 + (i + k) % 5,
        "ref_free": 3.6666666666666665,
        "ref_based": 2.3333333333333335,
        "acu": ((i + k) % 7) / 6,
        "normalized_acu": ((i + k) % 7) / 8,
    }


def document(i: int, systems: tuple[str, ...], llm: bool) -> dict[str, Any]:
    record: dict[str, Any] = {
        "count_id": 1000 + i,
        "example_id": f"{i:040x}",
        "source": f"Article {i} text. More text.",
        "reference": f"Reference of article {i}.   Second highlight.",
        "system_outputs": {system: f"{system} summary of article {i}." for system in systems},
        "annotations": {system: annotation(i, k) for k, system in enumerate(systems)},
    }
    if llm:
        record["reference_acus"] = [f"fact {j} of article {i}" for j in range(5)]
        # The released file also rates the reference itself, with list-valued placeholders.
        record["annotations"]["reference"] = {"prior": 2.0, "ref_based": [], "acu": [[]], "ref_free": 3.0}
    return record


def write_rose(root: Path, mutate: Any = None, mutate_llm: Any = None) -> tuple[Path, Path]:
    folder = root / "rose"
    folder.mkdir(parents=True, exist_ok=True)
    protocol = [document(i, PROTOCOL_SYSTEMS, llm=False) for i in range(100)]
    llm = [document(i, LLM_SYSTEMS, llm=True) for i in range(100)]
    if mutate is not None:
        mutate(protocol)
    if mutate_llm is not None:
        mutate_llm(llm)
    paths = (folder / "protocol-comparison.json", folder / "protocol-comparison-llm.json")
    paths[0].write_text(json.dumps(protocol), encoding="utf-8")
    paths[1].write_text(json.dumps(llm), encoding="utf-8")
    return paths


def test_protocol_set_loads(tmp_path: Path) -> None:
    write_rose(tmp_path)
    ds = load_dataset("rose", data_dir=tmp_path)
    assert ds.frame.shape == (1200, 11) and ds.n_contexts == 100
    assert ds.aspects == ["ACU", "NACU", "PRIOR", "REF_FREE", "REF_BASED"]
    cands = ds.candidates(f"{3:040x}")
    assert cands["system"].tolist() == sorted(PROTOCOL_SYSTEMS)
    assert cands.loc[0, "references"] == ["Reference of article 3.   Second highlight."]
    assert cands.loc[0, "ACU"] == pytest.approx(((3 + 0) % 7) / 6)  # bart is system 0 in the file
    assert cands.loc[0, "text"] == "bart summary of article 3."


def test_llm_set_ignores_the_rated_reference(tmp_path: Path) -> None:
    write_rose(tmp_path)
    ds = load_dataset("rose_llm", data_dir=tmp_path)
    assert ds.frame.shape == (400, 11)
    assert set(ds.frame["system"]) == set(LLM_SYSTEMS)


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda ds: ds[5]["annotations"]["gpt3"].__setitem__("acu", 1.2), r"record 5 \(example_id 0+5\), system gpt3: acu: score 1\.2 outside"),
        (lambda ds: ds[6]["annotations"]["t0"].pop("ref_free"), r"record 6 \(example_id 0+6\), system t0: missing field 'ref_free'"),
        (lambda ds: ds[7]["system_outputs"].pop("brio"), r"record 7 \(example_id 0+7\): system_outputs has systems \['bart', 'gpt3', 't0'\]"),
        (lambda ds: ds[8]["annotations"].pop("bart"), r"record 8 \(example_id 0+8\): annotations: missing field 'bart'"),
        (lambda ds: ds[9]["system_outputs"].__setitem__("t0", ""), r"record 9 \(example_id 0+9\), system t0: system_outputs: empty text"),
        (lambda ds: ds[10].__setitem__("example_id", ds[11]["example_id"]), r"context '0+b' .*different source texts"),
    ],
)
def test_malformed_llm_records_are_errors(tmp_path: Path, mutate: Any, expected: str) -> None:
    _, path = write_rose(tmp_path, mutate_llm=mutate)
    with pytest.raises(DataValidationError, match=expected) as caught:
        load_dataset("rose_llm", data_dir=tmp_path)
    assert str(path) in str(caught.value)


def test_protocol_count_is_checked(tmp_path: Path) -> None:
    write_rose(tmp_path, mutate=lambda ds: ds.pop(0))
    with pytest.raises(DataValidationError, match="expected 100 contexts, found 99"):
        load_dataset("rose", data_dir=tmp_path)


def test_online_config_is_used_when_files_are_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[OnlineSource] = []

    def fake_hub(source: OnlineSource) -> list[dict[str, Any]]:
        seen.append(source)
        return [document(i, PROTOCOL_SYSTEMS, llm=False) for i in range(100)]

    monkeypatch.setattr(sources, "load_hub_rows", fake_hub)
    ds = load_dataset("rose", data_dir=tmp_path)
    assert seen == [OnlineSource("Salesforce/rose", "cnndm_protocol", "data")]
    assert len(ds) == 1200
