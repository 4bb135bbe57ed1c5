"""A rerun shows the released build's verdicts beside its own (nlgjudge.released, nlgjudge.prose)."""

from __future__ import annotations

import json
from pathlib import Path

from nlgjudge import prose
from nlgjudge.chapters import get_chapter
from nlgjudge.released import compare_with_released, glued_values, is_default_run, released_values


def _record(name: str, text: str) -> dict:
    return {"output_type": "display_data", "metadata": {"scrapbook": {"name": name, "mime_prefix": "application/papermill.record/"}},
            "data": {"application/papermill.record/text/plain": repr(text)}}


def _page(tmp_path: Path, parameters: dict, values: dict[str, str]) -> None:
    notebook = {"metadata": {"papermill": {"parameters": parameters}},
                "cells": [{"cell_type": "code", "source": "", "outputs": [_record(k, v) for k, v in values.items()]}]}
    (tmp_path / "book").mkdir(exist_ok=True)
    (tmp_path / "book" / "bias.ipynb").write_text(json.dumps(notebook), encoding="utf-8")


def test_a_changed_verdict_carries_the_released_one_and_an_unchanged_one_does_not() -> None:
    previous = {"claim_kappa_verdict": "contradicted", "claim_n_supported": "1 (4 before Holm's correction)",
                "take_c_x": "summeval 1.0 [0.2, 1.8], supported (n = 30); webnlg 0.1 [-1, 1], not resolved (n = 16)",
                "judge": "qwen"}
    assert prose.with_previous("claim_kappa_verdict", "not resolved", previous) == "not resolved (was: contradicted)"
    assert prose.with_previous("claim_kappa_verdict", "contradicted", previous) == "contradicted"
    assert prose.with_previous("claim_n_supported", "2", previous) == "2 (was: 1 (4 before Holm's correction))"
    assert prose.with_previous("take_c_x", "summeval 0.5 [-0.2, 1.2], not resolved (n = 8); webnlg 0.1 [-1, 1], not resolved (n = 8)",
                               previous).endswith("(was: supported, not resolved)")
    assert prose.with_previous("judge", "smollm2", previous) == "smollm2 (was: qwen)"  # every change is marked
    assert prose.with_previous("judge", "qwen", previous) == "qwen"
    long_before = {"sentence": "the ranking puts BRIO first and the reference last, over 99 articles and 6 pairs"}
    assert prose.with_previous("sentence", "the ranking puts BRIO first and GPT-3 last, over 99 articles and 5 pairs",
                               long_before).endswith("(changed since the released build)")
    assert prose.with_previous("previous_build_time", "51 s", {"previous_build_time": "13 s"}) == "51 s"
    assert prose.with_previous("rank_resolved", "1", {"rank_resolved": "2 (4 before Holm's correction)"}) == \
        "1 (was: 2 (4 before Holm's correction))"
    assert prose.with_previous("new_name", "supported", previous) == "supported"
    assert prose.with_previous("claim_kappa_verdict", "not resolved", None) == "not resolved"


def test_released_values_come_from_the_default_build_and_are_kept_for_later_reruns(tmp_path: Path) -> None:
    defaults = get_chapter("bias").parameters()
    _page(tmp_path, defaults, {"relation_verdict": "not resolved"})
    assert released_values("bias", tmp_path) == {"relation_verdict": "not resolved"}
    # The first rerun replaced the page; the second still compares with the released build.
    _page(tmp_path, {**defaults, "seed": 7}, {"relation_verdict": "supported"})
    assert released_values("bias", tmp_path) == {"relation_verdict": "not resolved"}
    assert not is_default_run("bias", {**defaults, "seed": 7}) and is_default_run("bias", defaults)


def test_a_default_run_marks_nothing_and_a_rerun_without_a_released_build_neither(tmp_path: Path) -> None:
    defaults = get_chapter("bias").parameters()
    _page(tmp_path, defaults, {"relation_verdict": "not resolved"})
    try:
        assert compare_with_released("bias", defaults, tmp_path) is False
        assert compare_with_released("bias", {**defaults, "seed": 3}, tmp_path) is True
        assert prose.with_previous("relation_verdict", "supported", prose._previous_values) == "supported (was: not resolved)"
        assert compare_with_released("bias", {**defaults, "seed": 3}, tmp_path / "elsewhere") is False
    finally:
        prose.set_previous_values(None)


def test_glued_values_read_back_what_glue_all_wrote() -> None:
    notebook = {"cells": [{"cell_type": "code", "outputs": [_record("a", "+0.2"), _record("b", "not tested")]}]}
    assert glued_values(notebook) == {"a": "+0.2", "b": "not tested"}


def test_the_previous_build_time_is_read_from_the_page(tmp_path: Path) -> None:
    from nlgjudge.released import previous_build_time

    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "bias.ipynb").write_text(json.dumps({"metadata": {"papermill": {"duration": 75.2}}, "cells": []}))
    assert previous_build_time("bias", tmp_path) == "1 min 15 s"
    assert previous_build_time("elo", tmp_path) == "unknown"
