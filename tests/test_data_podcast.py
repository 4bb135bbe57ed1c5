"""Podcast loader: online only, tested on records the test builds (documented online schema)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nlgjudge.data import DataNotFoundError, DataValidationError, load_dataset, sources
from nlgjudge.data.podcast import SYSTEM_SLOTS
from nlgjudge.data.sources import OnlineSource

LABELS = "BFGE"


def rows() -> list[dict[str, Any]]:
    """179 episodes x 20 systems in the hub's schema, episodes interleaved as in a shuffled split."""
    out = []
    for k, slot in enumerate(reversed(SYSTEM_SLOTS)):
        for e in range(179):
            out.append(
                {
                    "transcript": f"transcript of episode {e} ...",
                    "summary": f"summary of episode {e} by {slot}",
                    "score": LABELS[(e + k) % 4],
                    "attributes": [0, 1, 0, 1, 1, 0, 0, 1],
                    "episode_id": f"ep{e:03d}",
                    "system_id": slot,
                }
            )
    return out


@pytest.fixture
def fake_hub(monkeypatch: pytest.MonkeyPatch) -> list[OnlineSource]:
    requested: list[OnlineSource] = []

    def fetch(source: OnlineSource) -> list[dict[str, Any]]:
        requested.append(source)
        return rows()

    monkeypatch.setattr(sources, "load_hub_rows", fetch)
    return requested


def test_online_rows_load(tmp_path: Path, fake_hub: list[OnlineSource]) -> None:
    ds = load_dataset("podcast", data_dir=tmp_path)
    assert fake_hub == [OnlineSource("potsawee/podcast_summary_assessment", None, "evaluation")]
    assert ds.frame.shape == (3580, 7) and ds.n_contexts == 179
    assert ds.context_ids()[:3] == ["ep000", "ep001", "ep002"]
    cands = ds.candidates("ep002")
    assert cands["system"].tolist() == list(SYSTEM_SLOTS)  # the authors' slot order
    # A16 is first in the rows (k=0): episode 2 -> label index 2 -> "G" -> 2.0
    assert cands.set_index("system").loc["A16", "OVR"] == 2.0
    assert cands.loc[0, "source"] == "transcript of episode 2 ..."


def test_subset_of_online_data(tmp_path: Path, fake_hub: list[OnlineSource]) -> None:
    ds = load_dataset("podcast", data_dir=tmp_path, n_contexts=5, seed=1)
    assert ds.n_contexts == 5 and len(ds) == 100


def test_through_the_real_datasets_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """load_hub_rows itself: `datasets.load_dataset` returns a DatasetDict we build here."""
    import datasets

    calls: list[tuple[Any, ...]] = []

    def fake_load_dataset(*args: Any, **kwargs: Any) -> datasets.DatasetDict:
        calls.append(args)
        return datasets.DatasetDict({"evaluation": datasets.Dataset.from_list(rows())})

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # skip the network probe
    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    ds = load_dataset("podcast", data_dir=tmp_path)
    assert calls == [("potsawee/podcast_summary_assessment", None)]
    assert len(ds) == 3580


def test_manual_download_file_is_read(tmp_path: Path, fake_hub: list[OnlineSource]) -> None:
    folder = tmp_path / "podcast_summary_assessment"
    folder.mkdir()
    data = rows()
    data[0]["summary"] = "from the local file"
    (folder / "podcast_summary_assessment.json").write_text(json.dumps(data), encoding="utf-8")
    ds = load_dataset("podcast", data_dir=tmp_path)
    assert fake_hub == []
    assert ds.candidates("ep000").set_index("system").loc["A16", "text"] == "from the local file"


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda rs: rs[5].__setitem__("score", "X"), r"row 5 \(episode ep005, system A16\): score 'X' is not one of"),
        (lambda rs: rs[5].__setitem__("system_id", "Z9"), r"row 5 \(episode ep005, system Z9\): unknown system_id 'Z9'"),
        (lambda rs: rs.pop(180), r"episode ep001 .*missing system\(s\) \['A15'\]"),
        (lambda rs: rs.append(dict(rs[0])), r"row 3580 \(episode ep000, system A16\): duplicate of .*row 0 "),
        (lambda rs: rs[181].__setitem__("transcript", "another"), r"row 181 \(episode ep002, system A15\): transcript differs"),
        (lambda rs: rs[7].__setitem__("summary", ""), r"row 7 \(episode ep007, system A16\): summary: empty text"),
        (lambda rs: [r.__setitem__("episode_id", "ep000") for r in rs if r["episode_id"] == "ep178"], r"row 178 \(episode ep000, system A16\): transcript differs from the one at .* row 0"),
    ],
)
def test_malformed_rows_are_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mutate: Any, expected: str) -> None:
    data = rows()
    mutate(data)
    monkeypatch.setattr(sources, "load_hub_rows", lambda source: data)
    with pytest.raises(DataValidationError, match=expected) as caught:
        load_dataset("podcast", data_dir=tmp_path)
    assert "potsawee/podcast_summary_assessment" in str(caught.value)


def test_incomplete_dataset_count_is_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = [r for r in rows() if r["episode_id"] != "ep100"]
    monkeypatch.setattr(sources, "load_hub_rows", lambda source: data)
    with pytest.raises(DataValidationError, match="expected 179 contexts, found 178"):
        load_dataset("podcast", data_dir=tmp_path)


def test_not_found_names_the_hub_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def offline(source: OnlineSource) -> list[dict[str, Any]]:
        raise ConnectionError("no network")

    monkeypatch.setattr(sources, "load_hub_rows", offline)
    with pytest.raises(DataNotFoundError, match=r'(?s)potsawee/podcast_summary_assessment.*no network.*connect to the internet'):
        load_dataset("podcast", data_dir=tmp_path)
