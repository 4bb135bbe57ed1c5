"""The released-outputs plan and its runner's command line."""

from __future__ import annotations

import pytest

from nlgjudge.data import list_datasets
from nlgjudge.models import PACKAGED_MODELS
from nlgjudge.studies.__main__ import _parser, main
from nlgjudge.studies.plan import (
    ELO_JOBS,
    FIRST_PASS,
    JUDGE,
    N_CONTEXTS,
    NARCISSISM_DATASETS,
    NARCISSISM_DOCUMENTS,
    NARCISSISM_JOBS,
    NARCISSISM_MODELS,
    PLAN,
)


def test_every_job_parses_and_names_known_datasets_and_models() -> None:
    for job in PLAN:
        args = _parser().parse_args(job.argv())
        assert args.study == job.study
        assert args.dataset in list_datasets()
        assert args.model in PACKAGED_MODELS
        planned = NARCISSISM_DOCUMENTS if job.dataset in NARCISSISM_DATASETS else N_CONTEXTS.get(job.dataset)
        assert args.n_contexts == planned  # None: every context (the Elo contest)
        assert args.max_contexts is None or args.max_contexts <= args.n_contexts


def test_first_pass_jobs_come_before_the_jobs_that_finish_their_subset() -> None:
    """An interrupted run has covered the same first contexts for every model and study."""
    first = [k for k, job in enumerate(PLAN) if job.max_contexts == FIRST_PASS]
    full_summeval = [k for k, job in enumerate(PLAN) if job.dataset == "summeval" and job.max_contexts is None]
    assert first and full_summeval and max(first) < min(full_summeval)
    # every (study, model) finished later was started in the first pass
    assert {(PLAN[k].study, PLAN[k].model) for k in full_summeval} <= {(PLAN[k].study, PLAN[k].model) for k in first}


def test_plan_list_prints_every_job_without_running(capsys) -> None:
    assert main(["plan", "--list"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == len(PLAN)
    assert all(line.startswith(f"job {k}/{len(PLAN)}: ") for k, line in enumerate(printed, 1))


def test_max_contexts_below_one_is_refused() -> None:
    with pytest.raises(SystemExit, match="at least 1"):
        main(["comparative", "--dataset", "summeval", "--model", "smollm2-135m-instruct", "--max-contexts", "0"])


def test_the_judge_finishes_summeval_with_comparative_and_scoring_in_step() -> None:
    """Stopped after any job past the first pass, the judge's two SummEval rows differ by one article at most."""
    covered = {"comparative": 0, "scoring": 0}
    for job in PLAN:
        if job.dataset == "summeval" and job.model == JUDGE:
            covered[job.study] = max(covered[job.study], job.max_contexts or job.n_contexts or 0)
            if min(covered.values()) >= FIRST_PASS:
                assert abs(covered["comparative"] - covered["scoring"]) <= 1, job
    assert covered == {"comparative": N_CONTEXTS["summeval"], "scoring": N_CONTEXTS["summeval"]}


def test_the_elo_judges_run_after_the_first_chapters_on_every_contest_article_with_the_judge_first() -> None:
    start = PLAN.index(ELO_JOBS[0])
    assert PLAN[start:start + len(ELO_JOBS)] == ELO_JOBS and ELO_JOBS[0].model == JUDGE
    assert all(job.study == "elo" and job.n_contexts is None and job.backend == "llamacpp" for job in ELO_JOBS)


def test_the_narcissism_jobs_run_last_and_every_summary_exists_before_it_is_scored() -> None:
    assert PLAN[-len(NARCISSISM_JOBS):] == NARCISSISM_JOBS
    assert all(job.backend == "llamacpp" and job.n_contexts == NARCISSISM_DOCUMENTS for job in NARCISSISM_JOBS)
    last_generation = max(k for k, job in enumerate(NARCISSISM_JOBS) if job.study == "generation")
    first_likelihood = min(k for k, job in enumerate(NARCISSISM_JOBS) if job.study == "likelihood")
    assert last_generation < first_likelihood
    for study in ("generation", "likelihood"):
        assert {(j.dataset, j.model) for j in NARCISSISM_JOBS if j.study == study} == {
            (d, m) for d in NARCISSISM_DATASETS for m in NARCISSISM_MODELS
        }
