"""Finding datasets: data directory resolution, online fallback, not-found messages, caching."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import nlgjudge.data as data
from nlgjudge.data import DataNotFoundError, DataValidationError, dataset_info, list_datasets, load_dataset
from nlgjudge.data import sources
from nlgjudge.data.sources import OnlineSource, read_jsonl, read_lines, resolve_data_dir

CONTRACT_NAMES = ["summeval", "topicalchat", "webnlg", "rose", "rose_llm", "sumllm", "qags_cnndm", "qags_xsum", "cnndm_contest", "podcast"]


@pytest.fixture
def no_env_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NLGJUDGE_DATA_DIR", raising=False)


@pytest.fixture
def hub_down(monkeypatch: pytest.MonkeyPatch) -> list[OnlineSource]:
    """Replace the online loader by one that fails like a machine without network; records calls."""
    calls: list[OnlineSource] = []

    def fail(source: OnlineSource) -> list[dict[str, Any]]:
        calls.append(source)
        raise ConnectionError(f"Couldn't reach '{source.hub_id}' on the Hub (simulated)")

    monkeypatch.setattr(sources, "load_hub_rows", fail)
    return calls


# ---- registry ---------------------------------------------------------------------------------


def test_list_datasets_is_the_contract() -> None:
    assert list_datasets() == CONTRACT_NAMES


def test_dataset_info_reads_no_files(no_env_data_dir: None) -> None:
    info = dataset_info("summeval")
    assert list(info.aspects) == ["COH", "CON", "FLU", "REL"]
    assert info.noun == "summary" and info.source_kind == "passage"
    assert info.score_ranges["REL"] == (1.0, 5.0)
    assert list(dataset_info("topicalchat").aspects) == ["COH", "CNT", "ENG", "NAT"]
    assert dataset_info("topicalchat").noun == "response"
    assert list(dataset_info("webnlg").aspects) == ["FLU", "GRA", "SEM"]
    assert dataset_info("webnlg").source_kind == "triples"
    assert dataset_info("sumllm").aspects == {}


def test_every_dataset_has_consistent_info() -> None:
    for name in list_datasets():
        info = dataset_info(name)
        assert info.name == name and info.citation and info.title
        assert set(info.aspects) == set(info.score_ranges)


def test_unknown_dataset_lists_the_valid_names() -> None:
    with pytest.raises(ValueError, match="unknown dataset 'summeva'.*summeval, topicalchat"):
        load_dataset("summeva")


# ---- data directory resolution ----------------------------------------------------------------


def test_argument_overrides_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NLGJUDGE_DATA_DIR", "/somewhere/else")
    assert resolve_data_dir(tmp_path) == (tmp_path, "the data_dir argument")
    assert resolve_data_dir(None) == (Path("/somewhere/else"), "$NLGJUDGE_DATA_DIR")


def test_unset_directory(no_env_data_dir: None) -> None:
    assert resolve_data_dir(None) == (None, "")


# ---- not-found messages -----------------------------------------------------------------------


def test_wrong_data_dir_names_dataset_places_and_fix(tmp_path: Path, hub_down: list[OnlineSource]) -> None:
    wrong = tmp_path / "nowhere"
    with pytest.raises(DataNotFoundError) as caught:
        load_dataset("summeval", data_dir=wrong)
    message = str(caught.value)
    assert "dataset 'summeval'" in message
    assert f"{wrong} (from the data_dir argument) does not exist" in message
    assert 'datasets.load_dataset("mteb/summeval")["test"] failed: ConnectionError' in message
    assert "NLGJUDGE_DATA_DIR=/path/to/data" in message and "data_dir=" in message
    assert "summeval/summeval_merged.jsonl" in message
    assert "connect to the internet" in message
    assert [call.hub_id for call in hub_down] == ["mteb/summeval"]


def test_existing_dir_without_the_files(tmp_path: Path, hub_down: list[OnlineSource]) -> None:
    with pytest.raises(DataNotFoundError, match=r"missing .*summeval_merged\.jsonl \(data directory"):
        load_dataset("summeval", data_dir=tmp_path)


def test_environment_variable_is_named_as_the_origin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hub_down: list[OnlineSource]
) -> None:
    monkeypatch.setenv("NLGJUDGE_DATA_DIR", str(tmp_path))
    with pytest.raises(DataNotFoundError, match=r"from \$NLGJUDGE_DATA_DIR"):
        load_dataset("rose")


def test_dataset_folder_instead_of_parent_gets_a_hint(tmp_path: Path, hub_down: list[OnlineSource]) -> None:
    (tmp_path / "usr_topical_chat.json").write_text("[]")
    with pytest.raises(DataNotFoundError, match="looks like the topicalchat_usr/ folder itself: point at its parent"):
        load_dataset("topicalchat", data_dir=tmp_path)


def test_offline_only_dataset_says_there_is_no_online_copy(tmp_path: Path, hub_down: list[OnlineSource]) -> None:
    with pytest.raises(DataNotFoundError) as caught:
        load_dataset("webnlg", data_dir=tmp_path)
    message = str(caught.value)
    assert "no public online copy" in message
    assert "webnlg2017_human_eval/all_data_final_averaged.csv" in message
    assert "gitlab.com/webnlg" in message
    assert hub_down == []  # nothing to try online


def test_no_data_dir_at_all(no_env_data_dir: None, hub_down: list[OnlineSource]) -> None:
    with pytest.raises(DataNotFoundError, match="no data directory set"):
        load_dataset("qags_xsum")


def test_real_online_attempt_fails_fast_offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With HF_HUB_OFFLINE=1 and an empty HF cache, the real `datasets` call fails and is reported."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # read at import; harmless if already imported
    with pytest.raises(DataNotFoundError, match=r"online: datasets\.load_dataset\(\"Salesforce/rose\", \"cnndm_protocol_gpt3\"\)"):
        load_dataset("rose_llm", data_dir=tmp_path)


def test_unreachable_hub_is_detected_without_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # discard port: connection refused at once
    with pytest.raises(ConnectionError, match="unreachable"):
        sources.load_hub_rows(OnlineSource("mteb/summeval", None, "test"))


# ---- readers ----------------------------------------------------------------------------------


def test_read_lines_splits_on_newline_only(tmp_path: Path) -> None:
    path = tmp_path / "x.txt"
    path.write_text("a\u2028b\nc\n", encoding="utf-8")
    assert read_lines(path) == ["a\u2028b", "c"]


def test_read_jsonl_reports_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps({"a": 1}) + "\n{broken\n", encoding="utf-8")
    with pytest.raises(DataValidationError, match=r"x\.jsonl, line 2: not valid JSON"):
        read_jsonl(path)


# ---- cache ------------------------------------------------------------------------------------


def write_qags_xsum(root: Path, first_score: float = 0.0) -> None:
    """A complete synthetic qags_xsum.json (239 one-summary articles)."""
    folder = root / "qags_cnndm_xsum"
    folder.mkdir(exist_ok=True)
    records = [
        {
            "doc_id": i,
            "system_id": 0,
            "source": f"article {i}",
            "reference": f"article {i}",
            "system_output": f"summary {i}",
            "scores": {"consistency": first_score if i == 0 else 1.0},
        }
        for i in range(239)
    ]
    (folder / "qags_xsum.json").write_text(json.dumps(records), encoding="utf-8")


def test_cached_frames_are_independent_copies(tmp_path: Path) -> None:
    write_qags_xsum(tmp_path)
    first = load_dataset("qags_xsum", data_dir=tmp_path)
    first.frame.loc[0, "text"] = "changed"
    second = load_dataset("qags_xsum", data_dir=tmp_path)
    assert second.frame.loc[0, "text"] != "changed"


def test_cache_notices_changed_files(tmp_path: Path) -> None:
    write_qags_xsum(tmp_path)
    assert load_dataset("qags_xsum", data_dir=tmp_path).frame.loc[0, "CON"] == 0.0
    write_qags_xsum(tmp_path, first_score=1.0)
    assert load_dataset("qags_xsum", data_dir=tmp_path).frame.loc[0, "CON"] == 1.0
    data.clear_cache()
    assert load_dataset("qags_xsum", data_dir=tmp_path).frame.loc[0, "CON"] == 1.0


def test_the_getting_the_data_table_names_every_folder_once_with_its_files_and_sources() -> None:
    from nlgjudge.analysis.datasets import sources_table
    from nlgjudge.data import dataset_locations

    locations = dataset_locations()
    table = sources_table(locations)
    files = {(loc.local.folder, tuple(loc.local.files)) for loc in locations}
    assert len(table) == len(files)
    assert table.loc["SummEval", "folder/ and files"] == "summeval/ summeval_merged.jsonl"  # a path, not a reader name
    assert table.loc["SummEval", "where to get them"].startswith("online copy: mteb/summeval; by hand: ")
    assert table.loc["TopicalChat", "where to get them"].startswith("by hand only: ")
    assert not table["where to get them"].str.contains("mirror").any()  # the mirror's notes are not the reader's
