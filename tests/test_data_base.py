"""Containers, frame validation and seeded subset selection (nlgjudge.data.base)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from nlgjudge.data.base import (
    ORIGIN_COLUMN,
    DatasetInfo,
    DataValidationError,
    ExpectedShape,
    FrameBuilder,
    JudgeDataset,
    copy_frame,
    require_score,
    select_context_ids,
    validate_frame,
)

INFO = DatasetInfo(
    name="toy",
    title="Toy",
    aspects={"COH": "coherence", "FLU": "fluency"},
    noun="summary",
    source_kind="passage",
    score_ranges={"COH": (1.0, 5.0), "FLU": (1.0, 3.0)},
    has_references=True,
    citation="nobody",
)


def build_frame(n_contexts: int = 5, n_candidates: int = 3) -> pd.DataFrame:
    builder = FrameBuilder(INFO)
    for c in range(n_contexts):
        for k in range(n_candidates):
            builder.add(
                context_id=f"c{c}",
                source=f"passage {c}",
                references=[f"ref {c}"],
                candidate_id=f"s{k}",
                system=f"sys{k}",
                text=f"summary {c}-{k}",
                scores={"COH": 1.0 + (c + k) % 5, "FLU": 1.0 + k % 3},
                origin=f"toy.jsonl, line {c + 1}, s{k}",
            )
    return builder.frame()


def toy_dataset(n_contexts: int = 5, n_candidates: int = 3) -> JudgeDataset:
    return JudgeDataset(validate_frame(build_frame(n_contexts, n_candidates), INFO, ExpectedShape(None, None)), INFO)


# ---- DatasetInfo ------------------------------------------------------------------------------


def test_info_columns_are_core_then_aspects() -> None:
    assert INFO.columns == ("context_id", "source", "references", "candidate_id", "system", "text", "COH", "FLU")


def test_info_rejects_aspects_without_ranges() -> None:
    with pytest.raises(ValueError, match="score_ranges"):
        DatasetInfo("x", "X", {"COH": "c"}, "summary", "passage", {}, False, "")


# ---- seeded subset selection ------------------------------------------------------------------


def test_select_is_deterministic_and_keeps_order() -> None:
    ids = [f"id{i:03d}" for i in range(100)]
    first = select_context_ids(ids, 10, seed=3)
    assert first == select_context_ids(ids, 10, seed=3)
    assert len(set(first)) == 10
    assert first == sorted(first, key=ids.index)  # original order preserved


def test_select_matches_numpy_default_rng() -> None:
    ids = [str(i) for i in range(20)]
    expected = sorted(np.random.default_rng(7).permutation(20)[:5].tolist())
    assert select_context_ids(ids, 5, seed=7) == [ids[i] for i in expected]


def test_select_depends_on_seed_and_all_means_everything() -> None:
    ids = [str(i) for i in range(50)]
    assert select_context_ids(ids, 10, seed=0) != select_context_ids(ids, 10, seed=1)
    assert select_context_ids(ids, 50, seed=5) == ids


@pytest.mark.parametrize("n", [0, -1, 51])
def test_select_rejects_bad_sizes(n: int) -> None:
    with pytest.raises(ValueError, match="n_contexts"):
        select_context_ids([str(i) for i in range(50)], n)


@pytest.mark.parametrize("n", [2.0, True, "3"])
def test_select_rejects_non_integers(n: object) -> None:
    with pytest.raises(TypeError):
        select_context_ids(["a", "b", "c"], n)  # type: ignore[arg-type]


# ---- JudgeDataset -------------------------------------------------------------------------------


def test_dataset_accessors() -> None:
    ds = toy_dataset()
    assert ds.context_ids() == ["c0", "c1", "c2", "c3", "c4"]
    assert len(ds) == 15 and ds.n_contexts == 5
    cands = ds.candidates("c2")
    assert cands["candidate_id"].tolist() == ["s0", "s1", "s2"]
    assert list(cands.index) == [0, 1, 2]
    assert ds.aspects == ["COH", "FLU"]
    assert ORIGIN_COLUMN not in ds.frame.columns


def test_unknown_context_is_a_clear_key_error() -> None:
    with pytest.raises(KeyError, match="unknown context_id 'nope'"):
        toy_dataset().candidates("nope")


def test_select_contexts_returns_ordered_subset() -> None:
    ds = toy_dataset(n_contexts=30)
    sub = ds.select_contexts(7, seed=11)
    assert sub.n_contexts == 7 and len(sub) == 21
    assert sub.context_ids() == select_context_ids(ds.context_ids(), 7, seed=11)
    assert sub.info is ds.info
    with pytest.raises(ValueError):
        ds.select_contexts(31)


def test_score_matrix_shape_and_values() -> None:
    ds = toy_dataset(n_contexts=4, n_candidates=3)
    matrix = ds.score_matrix("COH")
    assert matrix.shape == (4, 3)
    assert matrix[2, 1] == ds.candidates("c2")["COH"].iloc[1]
    with pytest.raises(KeyError):
        ds.score_matrix("REL")


def test_dataset_rejects_wrong_columns() -> None:
    frame = toy_dataset().frame.drop(columns=["FLU"])
    with pytest.raises(ValueError, match="columns"):
        JudgeDataset(frame, INFO)


def test_copy_frame_copies_reference_lists() -> None:
    frame = toy_dataset().frame
    copied = copy_frame(frame)
    copied["references"].iloc[0].append("extra")
    assert frame["references"].iloc[0] == ["ref 0"]


# ---- validation -------------------------------------------------------------------------------


def test_valid_frame_passes_and_drops_origin() -> None:
    frame = validate_frame(build_frame(), INFO, ExpectedShape(5, 3))
    assert list(frame.columns) == list(INFO.columns)


def _invalid(mutate: Callable[[pd.DataFrame], pd.DataFrame | None], expected: ExpectedShape | None = None) -> str:
    """The error message for a valid toy frame after ``mutate`` (in place, or returning a new frame)."""
    frame = build_frame()
    changed = mutate(frame)
    if changed is not None:
        frame = changed
    with pytest.raises(DataValidationError) as caught:
        validate_frame(frame, INFO, expected or ExpectedShape(5, 3))
    return str(caught.value)


def test_out_of_range_score_names_the_row() -> None:
    message = _invalid(lambda f: f.__setitem__("FLU", f["FLU"].where(f.index != 4, 4.0)))
    assert "toy.jsonl, line 2, s1" in message and "FLU" in message and "[1, 3]" in message


def test_nan_score_is_an_error() -> None:
    message = _invalid(lambda f: f.__setitem__("COH", f["COH"].where(f.index != 0, math.nan)))
    assert "line 1, s0" in message and "COH" in message


def test_empty_text_is_an_error_unless_allowed() -> None:
    def empty(f: pd.DataFrame) -> None:
        f.loc[3, "text"] = "  "

    assert "empty candidate text" in _invalid(empty)
    frame = build_frame()
    empty(frame)
    validate_frame(frame, INFO, ExpectedShape(5, 3, allow_empty_text=True))


def test_duplicate_candidate_id_is_an_error() -> None:
    def dup(f: pd.DataFrame) -> None:
        f.loc[1, "candidate_id"] = "s0"

    assert "candidate id 's0' appears twice in context 'c0'" in _invalid(dup)


def test_context_with_two_sources_is_an_error() -> None:
    def other(f: pd.DataFrame) -> None:
        f.loc[2, "source"] = "something else"

    assert "different source texts" in _invalid(other)


def test_non_contiguous_context_is_an_error() -> None:
    def reuse(f: pd.DataFrame) -> None:
        f.loc[14, "context_id"] = "c0"
        f.loc[14, "source"] = "passage 0"

    message = _invalid(reuse, ExpectedShape(None, None))
    assert "not contiguous" in message


def test_counts_are_checked() -> None:
    assert "expected 6 contexts, found 5" in _invalid(lambda f: None, ExpectedShape(6, 3))
    message = _invalid(lambda f: f.drop(index=4), ExpectedShape(5, 3))
    assert "context 'c1' (first row: toy.jsonl, line 2, s0): expected 3 candidates, found 2" in message


def test_all_problems_are_reported_together() -> None:
    def many(f: pd.DataFrame) -> None:
        f["COH"] = 9.0

    message = _invalid(many)
    assert "15 problem(s)" in message and "and 5 more" in message


def test_references_must_be_non_empty_strings() -> None:
    def bad(f: pd.DataFrame) -> None:
        f.at[0, "references"] = ["ok", ""]

    assert "references" in _invalid(bad)


def test_require_score_rejects_strings_bools_and_out_of_range() -> None:
    assert require_score(3, "here", (1.0, 5.0)) == 3.0
    for value in ["3", True, None, 6.0, float("inf")]:
        with pytest.raises(DataValidationError, match="here"):
            require_score(value, "here", (1.0, 5.0))


def test_subsets_of_one_seed_are_nested() -> None:
    from nlgjudge.data.base import select_context_ids

    ids = [f"c{i:03d}" for i in range(100)]
    for seed in (0, 1, 7):
        previous: set[str] = set()
        for n in (1, 2, 5, 10, 20, 50, 100):
            chosen = select_context_ids(ids, n, seed=seed)
            assert previous <= set(chosen)
            assert chosen == sorted(chosen)
            previous = set(chosen)


def test_narrowing_keeps_order_and_refuses_empty_or_unknown_selections(tiny_dataset) -> None:
    ds = tiny_dataset(n_contexts=4)
    assert ds.restrict(["ctx3", "ctx1"]).context_ids() == ["ctx1", "ctx3"]  # the dataset's order
    assert ds.only("ctx2").context_ids() == ["ctx2"] and len(ds.only("ctx2")) == 3
    assert ds.first_contexts(2).context_ids() == ["ctx0", "ctx1"]
    assert [(cid, one.context_ids()) for cid, one in ds.per_context()][:2] == [("ctx0", ["ctx0"]), ("ctx1", ["ctx1"])]
    with pytest.raises(ValueError, match="no contexts selected"):
        ds.restrict([])
    with pytest.raises(KeyError, match="unknown context id"):
        ds.restrict(["ctx0", "nope"])
    with pytest.raises(TypeError, match="single string"):
        ds.restrict("ctx0")
    with pytest.raises(ValueError, match="at least 1"):
        ds.first_contexts(0)
