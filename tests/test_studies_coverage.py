"""Coverage: which contexts already have every output, decided without loading a model."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from nlgjudge.engine.judge import Judge
from nlgjudge.models import resolve_model
from nlgjudge.studies.coverage import Coverage, available_contexts, study_subset, usable_subset
from nlgjudge.studies.registry import StudyOptions, get_study


@dataclass
class _FakeJudge:
    """Answers cached_mask from a set of cached request keys; never loads or computes anything."""

    cached: set[str] = field(default_factory=set)
    handle: object = field(default_factory=lambda: resolve_model("smollm2-135m-instruct"))
    asked: list[str] = field(default_factory=list)

    def cached_mask(self, operation, requests):  # noqa: ANN001 - the Judge method's signature
        keys = [f"{operation}|{r.meta['context_id']}|{r.meta.get('a', r.meta.get('candidate_id'))}" for r in requests]
        self.asked.append(operation)
        return [k in self.cached for k in keys]


def _cache_everything_of(judge: _FakeJudge, study: str, ds, options: StudyOptions) -> None:  # noqa: ANN001
    for operation, build in get_study(study).checks(judge.handle, ds, options):
        for request in build(ds):
            judge.cached.add(f"{operation}|{request.meta['context_id']}|{request.meta.get('a', request.meta.get('candidate_id'))}")


def test_only_contexts_with_every_output_are_available(tiny_dataset) -> None:
    ds = tiny_dataset(n_contexts=3)
    judge = _FakeJudge()
    options = StudyOptions(aspects=["COH"], templates=(1,))
    _cache_everything_of(judge, "comparative", ds.restrict(["ctx0", "ctx2"]), options)
    checks = get_study("comparative").checks(judge.handle, ds, options)
    coverage = available_contexts(judge, ds, checks)
    assert coverage == Coverage("tiny", ["ctx0", "ctx1", "ctx2"], ["ctx0", "ctx2"])
    assert coverage.describe() == "tiny: 2 of 3 planned contexts have every output" and not coverage.complete


def test_scoring_needs_both_of_its_operations(tiny_dataset) -> None:
    ds = tiny_dataset(n_contexts=2)
    judge = _FakeJudge()
    options = StudyOptions(aspects=["COH"], templates=(1,), n_samples=2)
    _cache_everything_of(judge, "scoring", ds, options)
    judge.cached = {k for k in judge.cached if not (k.startswith("sample|ctx1"))}  # ctx1 lacks its samples
    part, message = study_subset("scoring", judge, ds, options, released_only=True)
    assert part is not None and part.context_ids() == ["ctx0"]
    # said in reader words: the model's and the dataset's names, what the study computed, no code names
    from nlgjudge.reader_names import DATASET_NAMES

    assert message == (f"SmolLM2-135M-Instruct's scores on {DATASET_NAMES.get(ds.info.name, ds.info.title)}: 1 of 2 planned "
                       "contexts have every output (released or cached)")
    assert set(judge.asked) == {"label_probs", "sample"}


def test_nothing_cached_gives_no_dataset_and_released_only_false_uses_everything(tiny_dataset) -> None:
    ds = tiny_dataset(n_contexts=2)
    judge = _FakeJudge()
    options = StudyOptions(aspects=["COH"], templates=(1,))
    part, message = study_subset("comparative", judge, ds, options, released_only=True, what="x")
    assert part is None and message.startswith("x: 0 of 2")
    part, message = study_subset("comparative", judge, ds, options, released_only=False, what="x")
    assert part is ds and "missing outputs are computed" in message
    assert judge.asked == ["label_probs", "label_probs"]  # released_only=False asked nothing


def test_no_checks_is_an_error(tiny_dataset) -> None:
    with pytest.raises(ValueError, match="no coverage checks"):
        usable_subset(_FakeJudge(), tiny_dataset(), [], released_only=True, what="x")


def test_a_real_judge_answers_from_the_cache_without_loading_weights(tiny_dataset, tmp_path) -> None:
    from nlgjudge.cache import OutputCache

    judge = Judge("smollm2-135m-instruct", cache=OutputCache(tmp_path / "c.sqlite"))
    ds = tiny_dataset(n_contexts=1)
    checks = get_study("comparative").checks(judge.handle, ds, StudyOptions(aspects=["COH"], templates=(1,)))
    assert available_contexts(judge, ds, checks).available == []
    assert not judge.handle.is_loaded
