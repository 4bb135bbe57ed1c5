"""Every loader against the real public data found through $NLGJUDGE_DATA_DIR.

Skipped when the variable is unset (a user without the data), but a failure when ``CI=true``:
in CI a missing mirror must not pass silently.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nlgjudge import config
from nlgjudge.data import JudgeDataset, dataset_info, load_dataset


@pytest.fixture(scope="module")
def mirror() -> Path:
    """The data directory, or skip (fail under CI=true) when it is not configured."""
    root = config.data_dir()
    if root is None or not root.is_dir():
        reason = f"${config.DATA_DIR_ENV} does not point at a data directory (value: {root})"
        if os.environ.get("CI", "").strip().lower() == "true":
            pytest.fail(f"{reason}; CI=true, so the public data mirror is required")
        pytest.skip(reason)
    return root


def shape(ds: JudgeDataset) -> tuple[int, int, set[int]]:
    sizes = ds.frame.groupby("context_id", sort=False).size()
    return len(ds.frame), ds.n_contexts, set(sizes.tolist())


def assert_scores_in_range(ds: JudgeDataset) -> None:
    for aspect, (low, high) in ds.info.score_ranges.items():
        values = ds.frame[aspect]
        assert values.notna().all() and values.between(low, high).all(), aspect


def test_summeval(mirror: Path) -> None:
    ds = load_dataset("summeval", data_dir=mirror)
    assert shape(ds) == (1600, 100, {16})
    assert ds.aspects == ["COH", "CON", "FLU", "REL"]
    assert_scores_in_range(ds)
    assert ds.frame["references"].map(len).eq(11).all()
    first = ds.candidates("dm-test-8764fb95bfad8ee849274873a92fb8d6b400eee2")
    assert first["system"].tolist()[:4] == ["M0", "M1", "M2", "M5"]
    assert first.loc[0, "COH"] == pytest.approx(8 / 3) and first.loc[0, "REL"] == pytest.approx(2.0)
    assert first.loc[0, "source"].startswith("Paul Merson has restarted his row with Andros Townsend")
    # Every aspect uses the whole 1-5 scale on this data.
    assert ds.frame[ds.aspects].min().eq(1.0).all() and ds.frame[ds.aspects].max().eq(5.0).all()


def test_summeval_through_the_environment_variable(mirror: Path) -> None:
    assert config.data_dir() == mirror
    assert len(load_dataset("summeval")) == 1600


def test_topicalchat(mirror: Path) -> None:
    ds = load_dataset("topicalchat", data_dir=mirror)
    assert shape(ds) == (360, 60, {6})
    assert ds.aspects == ["COH", "CNT", "ENG", "NAT"]
    assert_scores_in_range(ds)
    first = ds.candidates("dialogue00")
    # Annotators: Understandable [1, 1, 1], Maintains Context [3, 3, 1] for the ground truth.
    assert first.loc[0, "system"] == "Original Ground Truth"
    assert first.loc[0, "COH"] == pytest.approx(1.0) and first.loc[0, "CNT"] == pytest.approx(7 / 3)
    assert first.loc[0, "source"].startswith("so , i 'm reading the latest film from studio ghibli")
    assert first.loc[0, "source"].count("\n") == 4  # five turns


def test_webnlg(mirror: Path) -> None:
    ds = load_dataset("webnlg", data_dir=mirror)
    assert shape(ds) == (2230, 223, {10})
    assert ds.aspects == ["FLU", "GRA", "SEM"]
    assert_scores_in_range(ds)
    assert set(ds.frame["system"]) >= {"webnlg", "adapt", "tilburg-pipe"}
    first = ds.candidates("mr000")
    assert first.loc[0, "source"] == "(29075)_1950_DA | discoverer | Carl_A._Wirtanen"
    assert first.loc[0, "system"] == "adapt" and first.loc[0, "FLU"] == pytest.approx(5 / 3)
    assert (ds.frame["text"] == "").sum() == 25
    nulls = ds.frame[ds.frame["text"] == "null"]  # vietnam's failed outputs, rated 1/1/1
    assert len(nulls) == 168 and set(nulls["system"]) == {"vietnam"} and nulls[ds.aspects].eq(1.0).all().all()


def test_rose_protocol(mirror: Path) -> None:
    ds = load_dataset("rose", data_dir=mirror)
    assert shape(ds) == (1200, 100, {12})
    assert_scores_in_range(ds)
    assert {"bart", "brio", "pegasus", "gold"} <= set(ds.frame["system"])
    assert ds.frame["references"].map(len).eq(1).all()


def test_rose_llm(mirror: Path) -> None:
    ds = load_dataset("rose_llm", data_dir=mirror)
    assert shape(ds) == (400, 100, {4})
    assert_scores_in_range(ds)
    assert set(ds.frame["system"]) == {"bart", "brio", "gpt3", "t0"}
    # Same documents as the 12-system protocol set.
    assert set(ds.context_ids()) == set(load_dataset("rose", data_dir=mirror).context_ids())


def test_sumllm(mirror: Path) -> None:
    ds = load_dataset("sumllm", data_dir=mirror)
    assert shape(ds) == (1200, 100, {12})
    assert ds.aspects == [] and dataset_info("sumllm").has_references
    with_reference = ds.frame.drop_duplicates("context_id")["references"].map(len)
    assert with_reference.tolist().count(1) == 99
    assert ds.context_ids()[38] == "line038"
    # The joined ids are RoSE's: the articles really are the RoSE documents.
    rose_ids = set(load_dataset("rose_llm", data_dir=mirror).context_ids())
    assert len(set(ds.context_ids()) & rose_ids) == 99
    assert {"gpt4", "bart", "brio.gpt4"} <= set(ds.frame["system"])


@pytest.mark.parametrize(("name", "n"), [("qags_cnndm", 235), ("qags_xsum", 239)])
def test_qags(mirror: Path, name: str, n: int) -> None:
    ds = load_dataset(name, data_dir=mirror)
    assert shape(ds) == (n, n, {1})
    assert ds.aspects == ["CON"]
    assert_scores_in_range(ds)


def test_subsets_on_real_data_are_deterministic(mirror: Path) -> None:
    a = load_dataset("summeval", data_dir=mirror, n_contexts=10, seed=0)
    b = load_dataset("summeval", data_dir=mirror, n_contexts=10, seed=0)
    assert a.context_ids() == b.context_ids()
    assert a.frame.equals(b.frame) and len(a) == 160
    full_order = load_dataset("summeval", data_dir=mirror).context_ids()
    positions = [full_order.index(cid) for cid in a.context_ids()]
    assert positions == sorted(positions)
