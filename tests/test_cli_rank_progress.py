"""`nlgjudge rank` judges in small steps that reach the cache as they finish, and says before a run how
many comparisons it will make and how long they should take at the rate measured here (issue 39)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from engine_utils import tiny_handle

from nlgjudge.cache import OutputCache
from nlgjudge.cli import main as cli_main
from nlgjudge.data.user_outputs import check_user_outputs
from nlgjudge.engine import Judge
from nlgjudge.prompts.ranking import RankPrompt
from nlgjudge.studies.rank import judge_comparisons


def rows(n_contexts: int, systems: tuple[str, ...] = ("alpha", "beta", "gamma"), tag: str = "") -> list[dict[str, str]]:
    return [{"context_id": f"c{c}", "source": f"Article {c}{tag}: the council met on Monday .", "system": s,
             "output": f"{s} says {c}{tag} ."} for c in range(n_contexts) for s in systems]


class RecordingJudge(Judge):
    """The tiny judge, recording which contexts each call judged and how many outputs the cache held before it."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.calls: list[tuple[set[str], int]] = []

    def label_probs(self, requests):  # type: ignore[no-untyped-def]
        self.calls.append(({r.meta["context_id"] for r in requests}, self.cache.count()))
        return super().label_probs(requests)


def test_each_context_reaches_the_cache_before_the_next_is_judged(tmp_path: Path) -> None:
    judge = RecordingJudge(tiny_handle("qwen2"), cache=OutputCache(tmp_path / "c.sqlite"), study="rank", progress=False)
    steps = []
    frame = judge_comparisons(judge, check_user_outputs(pd.DataFrame(rows(4))), ["alpha", "beta", "gamma"], RankPrompt(), on_step=steps.append)
    assert len(frame) == 24
    assert [contexts for contexts, _ in judge.calls] == [{f"c{c}"} for c in range(4)]  # one context per step
    assert [stored for _, stored in judge.calls] == [0, 6, 12, 18]  # each step committed before the next began
    assert [s.done for s in steps] == [6, 12, 18, 24] and all(s.total == 24 for s in steps)  # the bar's updates
    assert steps[-1].computed == 24 and steps[-1].computed_seconds > 0


def test_a_long_context_is_split_into_steps_of_a_few_seconds(tmp_path: Path) -> None:
    systems = tuple(f"s{k}" for k in range(5))  # 20 ordered pairs in one context
    judge = RecordingJudge(tiny_handle("qwen2"), cache=OutputCache(tmp_path / "c.sqlite"), study="rank", progress=False)
    steps = []
    judge_comparisons(judge, check_user_outputs(pd.DataFrame(rows(1, systems))), list(systems), RankPrompt(), on_step=steps.append,
                      batch_seconds=1e-9)  # every measured step "takes too long": one comparison per step after the first
    assert [s.done for s in steps] == [8, *range(9, 21)]
    assert [stored for _, stored in judge.calls] == [0, *range(8, 20)]


def tiny_cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """`nlgjudge rank` with the tiny judge (no real model) and its own cache and rates file."""
    monkeypatch.setenv("NLGJUDGE_OUTPUT_CACHE", str(tmp_path / "outputs.sqlite"))
    monkeypatch.setattr("nlgjudge.ranking._load_judge", lambda model, backend, truncate: Judge(
        tiny_handle("qwen2"), cache=OutputCache(tmp_path / "outputs.sqlite"), study="rank", progress=False, truncate=truncate))


def test_the_command_says_how_many_comparisons_and_how_long_before_judging(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    tiny_cli(monkeypatch, tmp_path)
    first = tmp_path / "first.jsonl"
    first.write_text("".join(json.dumps(r) + "\n" for r in rows(3)))
    assert cli_main(["rank", str(first), "--model", "smollm2-135m-instruct", "--out", str(tmp_path / "a"), "--bootstrap", "20"]) == 0
    err = capsys.readouterr().err
    assert "rank: 18 comparisons to make (3 contexts; 0 already in the output cache)." in err
    assert "no rate of tiny-qwen2-0 measured on this machine yet" in err
    # Per-context steps of 6: the rate is told once 8 comparisons are measured, i.e. after the second context.
    assert re.search(r"rank: measured [0-9.e-]+ s per comparison over the first 12 on this machine: the other 6 should "
                     r"take about \d+ s\.\n", err), err
    assert err.index("comparisons to make") < err.index("rank: measured") < err.index("wrote")
    stored = json.loads((tmp_path / "rank-rates.json").read_text())
    assert stored["written_by"] == "nlgjudge rank"  # its mark: a file without it is a user's, never replaced
    (entry,) = stored["rates"].values()
    assert entry["comparisons"] == 18 and entry["seconds_per_comparison"] > 0
    # The next run (other texts) announces its duration from that measurement, before judging.
    second = tmp_path / "second.jsonl"
    second.write_text("".join(json.dumps(r) + "\n" for r in rows(2, tag="b")))
    assert cli_main(["rank", str(second), "--model", "smollm2-135m-instruct", "--out", str(tmp_path / "b"), "--bootstrap", "20"]) == 0
    err = capsys.readouterr().err
    assert "rank: 12 comparisons to make (2 contexts; 0 already in the output cache). At " in err
    assert "measured on this machine by an earlier run of tiny-qwen2-0, over 18 comparisons on" in err
    assert "rank: measured" not in err


def test_a_long_run_is_told_about_the_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from nlgjudge.ranking import RunEstimate

    monkeypatch.setenv("NLGJUDGE_OUTPUT_CACHE", str(tmp_path / "outputs.sqlite"))
    judge = Judge(tiny_handle("qwen2"), cache=OutputCache(tmp_path / "outputs.sqlite"), study="rank", progress=False)
    frame = check_user_outputs(pd.DataFrame(rows(700)))
    probe = RunEstimate(judge, frame, RankPrompt(), 1.0, stream=io.StringIO())
    (tmp_path / "rank-rates.json").write_text(json.dumps({"written_by": "nlgjudge rank", "rates": {
        probe.key: {"seconds_per_comparison": 1.0, "comparisons": 50, "measured_on": "2026-11-27"}}}))
    said = io.StringIO()
    RunEstimate(judge, frame, RankPrompt(), 1.0, stream=said).announce()
    text = said.getvalue()
    assert text.startswith("rank: 4200 comparisons to make (700 contexts; 0 already in the output cache). At 1 s per comparison")
    assert "should take about 70 min. That is long: --budget 0.1 judges 700 of the comparisons" in text
    assert "(about 12 min)" in text
    # A short run is not told.
    quiet = io.StringIO()
    RunEstimate(judge, check_user_outputs(pd.DataFrame(rows(10))), RankPrompt(), 1.0, stream=quiet).announce()
    assert "--budget" not in quiet.getvalue() and "about 60 s" in quiet.getvalue()
