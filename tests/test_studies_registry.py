"""The study registry: studies are found by name, run context by context, and listed."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field

import pytest

from nlgjudge.studies.plan import PLAN
from nlgjudge.studies.registry import (
    BUILTIN_STUDIES,
    Study,
    StudyOptions,
    UnknownStudyError,
    get_study,
    list_studies,
    released_folder,
    run_study,
    study_names,
)


def test_every_registered_study_satisfies_the_protocol_under_its_own_name() -> None:
    studies = list_studies()
    assert [s.name for s in studies] == list(BUILTIN_STUDIES) == study_names()
    for study in studies:
        assert isinstance(study, Study)
        assert study.description and study.operations
        assert set(study.operations) <= {"label_probs", "sample", "loglikelihood", "generate"}
        assert set(study.depends_on) <= set(BUILTIN_STUDIES)


def test_an_unknown_study_is_an_error_that_lists_the_registered_ones() -> None:
    with pytest.raises(UnknownStudyError, match="registered studies are: comparative, scoring, elo"):
        get_study("narcisism")


def test_the_plan_names_registered_studies_only() -> None:
    assert {job.study for job in PLAN} <= set(study_names())


def test_released_folders_are_study_then_dataset() -> None:
    assert released_folder("comparative", "summeval") == "comparative-summeval"
    assert released_folder(get_study("scoring"), "webnlg") == "scoring-webnlg"


@dataclass
class _Recorder:
    """A study that records which one-context datasets it was given (no model)."""

    name: str = "recorder"
    description: str = "records its calls"
    operations: tuple[str, ...] = ("label_probs",)
    depends_on: tuple[str, ...] = ()
    seen: list[list[str]] = field(default_factory=list)

    def checks(self, handle, ds, options):  # noqa: ANN001 - protocol signature
        return []

    def run_context(self, judge, ds, options):  # noqa: ANN001
        self.seen.append(ds.context_ids())
        return ds.n_contexts


def test_run_study_goes_context_by_context_and_reports_each(tiny_dataset) -> None:
    ds = tiny_dataset(n_contexts=3)
    study, done = _Recorder(), []
    results = run_study(study, judge=None, ds=ds, options=StudyOptions(), on_context_done=done.append)
    assert study.seen == [["ctx0"], ["ctx1"], ["ctx2"]]
    assert done == ["ctx0", "ctx1", "ctx2"] and results == [1, 1, 1]


def test_a_study_may_take_several_contexts_per_call_and_each_is_still_reported(tiny_dataset) -> None:
    ds = tiny_dataset(n_contexts=5)
    study, done = _Recorder(), []
    study.contexts_per_call = 2
    results = run_study(study, judge=None, ds=ds, options=StudyOptions(), on_context_done=done.append)
    assert study.seen == [["ctx0", "ctx1"], ["ctx2", "ctx3"], ["ctx4"]] and results == [2, 2, 1]
    assert done == ["ctx0", "ctx1", "ctx2", "ctx3", "ctx4"]
    study.contexts_per_call = 0
    with pytest.raises(ValueError, match="contexts_per_call must be at least 1"):
        run_study(study, judge=None, ds=ds, options=StudyOptions())


def test_the_command_line_lists_one_line_per_study_starting_with_its_name() -> None:
    result = subprocess.run([sys.executable, "-m", "nlgjudge.studies", "list"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines] == study_names()


def test_the_command_line_refuses_an_unknown_study_without_a_traceback() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "nlgjudge.studies", "narcissism", "--dataset", "summeval", "--model", "x"],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 2
    assert "invalid choice: 'narcissism'" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["comparative", "--dataset", "nosuch", "--model", "x"], "invalid choice: 'nosuch'"),
        (["comparative", "--dataset", "summeval", "--model", "no-such-model"], "error: Unknown model 'no-such-model'"),
    ],
)
def test_the_runner_refuses_bad_input_in_one_line(argv: list[str], message: str, tmp_path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "nlgjudge.studies", *argv, "--db", str(tmp_path / "c.sqlite"), "--no-export"],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 2 and message in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "c.sqlite").exists()
