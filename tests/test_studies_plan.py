"""The released-outputs plan and its runner's command line."""

from __future__ import annotations

import pytest

from nlgjudge.data import list_datasets
from nlgjudge.models import PACKAGED_MODELS
from nlgjudge.studies import plan
from nlgjudge.studies.__main__ import _parser, main
from nlgjudge.studies.plan import (
    BACKEND,
    CHAPTER_N_CONTEXTS,
    ELO_JOBS,
    FIRST_PASS,
    JUDGE,
    LARGER_BACKEND,
    LARGER_JOBS,
    LARGER_N_CONTEXTS,
    LARGER_RELEASED,
    N_CONTEXTS,
    NARCISSISM_BENCHMARK_JOBS,
    NARCISSISM_BENCHMARKS,
    NARCISSISM_DATASETS,
    NARCISSISM_DOCUMENTS,
    NARCISSISM_JOBS,
    NARCISSISM_MODELS,
    PLAN,
    SELFPREF_JOBS,
    SMALL_JUDGES,
    TORCH_BACKEND,
)

#: The first paper's torch release, the part of the plan before the other chapters' jobs.
TORCH_RELEASE = tuple(job for job in PLAN if job.backend == TORCH_BACKEND and job.study in ("comparative", "scoring"))


def test_every_job_parses_and_names_known_datasets_and_models() -> None:
    for job in PLAN:
        args = _parser().parse_args(job.argv())
        assert args.study == job.study
        assert args.dataset in list_datasets()
        assert args.model in PACKAGED_MODELS
        if job.dataset in NARCISSISM_DATASETS:
            planned = NARCISSISM_DOCUMENTS
        elif job in NARCISSISM_BENCHMARK_JOBS:
            planned = None  # all 100 documents of each benchmark
        elif job in LARGER_JOBS:
            assert args.n_contexts in (N_CONTEXTS[job.dataset], LARGER_N_CONTEXTS[job.dataset])
            continue
        elif job in plan.EXTENDED_JOBS:
            assert args.n_contexts == plan.EXTENDED_N_CONTEXTS[job.dataset]
            continue
        elif job in plan.GAMING_JOBS or job in plan.GAMING_REFERENCE_JOBS:
            assert args.n_contexts == plan.GAMING_ARTICLES and args.aspects == list(plan.GAMING_ASPECTS)
            continue
        else:
            planned = N_CONTEXTS.get(job.dataset)
        assert args.n_contexts == planned  # None: every context (the Elo contest, the benchmarks)
        assert args.max_contexts is None or args.max_contexts <= args.n_contexts


def test_first_pass_jobs_come_before_the_jobs_that_finish_their_subset() -> None:
    """An interrupted run has covered the same first contexts for every model and study."""
    first = [k for k, job in enumerate(TORCH_RELEASE) if job.max_contexts == FIRST_PASS]
    full_summeval = [k for k, job in enumerate(TORCH_RELEASE)
                     if job.dataset == "summeval" and job.max_contexts is None and job.study in ("comparative", "scoring")]
    assert first and full_summeval and max(first) < min(full_summeval)
    # every (study, model) finished later was started in the first pass
    assert {(TORCH_RELEASE[k].study, TORCH_RELEASE[k].model) for k in full_summeval} <= {
        (TORCH_RELEASE[k].study, TORCH_RELEASE[k].model) for k in first
    }


@pytest.mark.parametrize("argv", [["plan"], ["plan", "--list"]])
def test_plan_prints_every_job_without_running(argv, capsys, monkeypatch) -> None:
    import nlgjudge.studies.__main__ as runner

    monkeypatch.setattr(runner, "_run_study", lambda job: pytest.fail(f"ran {job}"))
    assert main(argv) == 0
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == len(PLAN) + 1 and "plan --run" in printed[-1]
    assert all(line.startswith(f"job {k}/{len(PLAN)}: ") for k, line in enumerate(printed[:-1], 1))


def test_plan_run_runs_every_job_in_order(capsys, monkeypatch) -> None:
    import nlgjudge.studies.__main__ as runner

    ran = []
    monkeypatch.setattr(runner, "_run_study", lambda job: ran.append(job) or 0)
    assert main(["plan", "--run"]) == 0
    assert ran == [job.argv() for job in PLAN]


@pytest.mark.parametrize("argv", [["plan", "--lst"], ["plan", "--run", "--list"], ["plan", "run"]])
def test_plan_with_an_unknown_argument_runs_nothing_and_says_why(argv, capsys, monkeypatch) -> None:
    import nlgjudge.studies.__main__ as runner

    monkeypatch.setattr(runner, "_run_study", lambda job: pytest.fail(f"ran {job}"))
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "plan takes --run" in captured.err


def test_max_contexts_below_one_is_refused(capsys) -> None:
    assert main(["comparative", "--dataset", "summeval", "--model", "smollm2-135m-instruct", "--max-contexts", "0"]) == 2
    assert capsys.readouterr().err.startswith("error: --max-contexts 0")


def test_the_judge_finishes_summeval_with_comparative_and_scoring_in_step() -> None:
    """Stopped after any job past the first pass, the judge's two SummEval rows differ by one article at most."""
    covered = {"comparative": 0, "scoring": 0}
    for job in TORCH_RELEASE:
        if job.dataset == "summeval" and job.model == JUDGE and job.study in covered:
            covered[job.study] = max(covered[job.study], job.max_contexts or job.n_contexts or 0)
            if min(covered.values()) >= FIRST_PASS:
                assert abs(covered["comparative"] - covered["scoring"]) <= 1, job
    assert covered == {"comparative": N_CONTEXTS["summeval"], "scoring": N_CONTEXTS["summeval"]}


def test_the_elo_judges_run_after_the_first_chapters_on_every_contest_article_with_the_judge_first() -> None:
    start = PLAN.index(ELO_JOBS[0])
    assert PLAN[start:start + len(ELO_JOBS)] == ELO_JOBS and ELO_JOBS[0].model == JUDGE
    assert all(job.study == "elo" and job.n_contexts is None and job.backend == "llamacpp" for job in ELO_JOBS)


def test_the_narcissism_jobs_run_last_and_every_summary_exists_before_it_is_scored() -> None:
    tail = NARCISSISM_JOBS + NARCISSISM_BENCHMARK_JOBS + SELFPREF_JOBS + LARGER_JOBS + plan.EXTENDED_JOBS + plan.GAMING_JOBS + plan.GAMING_REFERENCE_JOBS
    assert PLAN[-len(tail):] == tail
    assert [j.model for j in SELFPREF_JOBS] == [JUDGE, "qwen2.5-coder-0.5b-instruct", "smollm2-135m-instruct"]
    assert {(j.study, j.dataset, j.model, j.n_contexts) for j in NARCISSISM_BENCHMARK_JOBS} == {
        ("likelihood", d, m, None) for d in NARCISSISM_BENCHMARKS for m in NARCISSISM_MODELS
    }
    assert all(job.backend == "llamacpp" and job.n_contexts == NARCISSISM_DOCUMENTS for job in NARCISSISM_JOBS)
    last_generation = max(k for k, job in enumerate(NARCISSISM_JOBS) if job.study == "generation")
    first_likelihood = min(k for k, job in enumerate(NARCISSISM_JOBS) if job.study == "likelihood")
    assert last_generation < first_likelihood
    for study in ("generation", "likelihood"):
        assert {(j.dataset, j.model) for j in NARCISSISM_JOBS if j.study == study} == {
            (d, m) for d in NARCISSISM_DATASETS for m in NARCISSISM_MODELS
        }


def test_the_larger_release_first_recomputes_the_torch_release_then_grows_in_step() -> None:
    """llama.cpp first computes exactly the contexts torch released (the runtime chapter pairs them),
    the judge first; then the larger nested subsets, SummEval's two studies in step."""
    assert all(job.backend == LARGER_BACKEND == "llamacpp" for job in LARGER_JOBS)
    assert LARGER_N_CONTEXTS.keys() == N_CONTEXTS.keys()
    assert all(LARGER_N_CONTEXTS[d] > N_CONTEXTS[d] for d in N_CONTEXTS)
    assert (LARGER_N_CONTEXTS["summeval"], LARGER_N_CONTEXTS["topicalchat"], LARGER_N_CONTEXTS["webnlg"]) == (16, 30, 16)
    first_larger = min(k for k, job in enumerate(LARGER_JOBS) if job.n_contexts == LARGER_N_CONTEXTS[job.dataset])
    torch_contexts = LARGER_JOBS[:first_larger]
    # every (study, dataset, model) of the torch release is recomputed on its own subset before the larger subsets
    released = {(j.study, j.dataset, j.model, j.n_contexts) for j in TORCH_RELEASE}
    assert {(j.study, j.dataset, j.model, j.n_contexts) for j in torch_contexts if j.max_contexts is None} == released
    assert all(job.model == JUDGE for job in torch_contexts[:4])
    finals = {(j.study, j.dataset, j.model) for j in LARGER_JOBS[first_larger:] if j.max_contexts is None}
    assert finals == {(s, d, JUDGE) for s in ("comparative", "scoring") for d in N_CONTEXTS} | {
        (s, "summeval", m) for s in ("comparative", "scoring") for m in SMALL_JUDGES
    }
    # the larger subset starts from the torch release's articles (cached by then), an article a job
    for subset, start, step in ((torch_contexts, 0, FIRST_PASS), (LARGER_JOBS[first_larger:], N_CONTEXTS["summeval"], 1)):
        covered = {"comparative": start, "scoring": start}
        for job in subset:
            if job.dataset == "summeval" and job.model == JUDGE:
                covered[job.study] = max(covered[job.study], job.max_contexts or job.n_contexts)
                assert abs(covered["comparative"] - covered["scoring"]) <= step, job
        assert covered["comparative"] == covered["scoring"]


#: What the first paper's chapters read, per dataset: (study, model) pairs.
CHAPTER_READS = {
    dataset: {(study, model) for study in ("comparative", "scoring") for model in (JUDGE, *(SMALL_JUDGES if dataset == "summeval" else ()))}
    for dataset in N_CONTEXTS
}


@pytest.mark.parametrize("chapters", [False, True], ids=["torch_release", "chapters"])
def test_the_chapters_read_a_runtime_whose_release_the_plan_computes_on_their_contexts(chapters: bool) -> None:
    """The first paper's chapters read BACKEND on CHAPTER_N_CONTEXTS (the runtime chapter on N_CONTEXTS):
    the judge on every dataset, the small models on SummEval, in both studies; on an extended subset
    the small models on the larger subset (released_n_contexts). Some job of the plan computes each
    of them whole."""
    def subset(dataset: str, model: str) -> int:
        return plan.released_n_contexts(dataset, model) if chapters else N_CONTEXTS[dataset]

    whole = {
        (job.study, job.dataset, job.model, job.n_contexts)
        for job in PLAN
        if job.backend == BACKEND and job.max_contexts is None
    }
    read = {(study, dataset, model, subset(dataset, model))
            for dataset, pairs in CHAPTER_READS.items() for study, model in pairs}
    assert read <= whole, sorted(read - whole)
    assert TORCH_BACKEND != BACKEND  # the runtime chapter compares the torch release with this one


def test_the_chapters_move_to_a_larger_subset_dataset_by_dataset_and_the_runtime_chapter_stays() -> None:
    from nlgjudge.chapters import get_chapter

    assert set(LARGER_RELEASED) <= set(LARGER_N_CONTEXTS) and len(set(LARGER_RELEASED)) == len(LARGER_RELEASED)
    assert set(plan.EXTENDED_RELEASED) <= set(plan.EXTENDED_N_CONTEXTS) & set(LARGER_RELEASED)
    assert CHAPTER_N_CONTEXTS == {
        d: plan.EXTENDED_N_CONTEXTS[d] if d in plan.EXTENDED_RELEASED else LARGER_N_CONTEXTS[d] if d in LARGER_RELEASED
        else N_CONTEXTS[d] for d in N_CONTEXTS
    }
    assert plan.released_n_contexts("summeval", SMALL_JUDGES[0]) == LARGER_N_CONTEXTS["summeval"]
    assert all(plan.released_n_contexts(d, JUDGE) == CHAPTER_N_CONTEXTS[d] for d in N_CONTEXTS)
    for name in ("comparative", "bias", "subsets"):
        assert get_chapter(name).defaults["n_contexts"] == CHAPTER_N_CONTEXTS, name
    assert get_chapter("runtime").defaults["n_contexts"] == N_CONTEXTS  # the contexts both runtimes computed


@pytest.mark.slow  # reads the whole release and every planned context (about 10 s)
@pytest.mark.parametrize("dataset", LARGER_RELEASED)
def test_a_dataset_moved_to_its_larger_subset_has_every_output_released(dataset: str) -> None:
    """LARGER_RELEASED and EXTENDED_RELEASED are set by hand; this checks them against data/outputs
    (released outputs only, not the user's cache), for every (study, model) the chapters read, with
    the chapters' defaults, on the contexts released_n_contexts names."""
    from nlgjudge.chapters import get_chapter
    from nlgjudge.data import DataNotFoundError, load_dataset
    from nlgjudge.engine import Judge
    from nlgjudge.studies.comparative import dataset_aspects
    from nlgjudge.studies.coverage import available_contexts
    from nlgjudge.studies.registry import StudyOptions, get_study, released_folder
    from nlgjudge.studies.released import chapter_cache

    defaults = get_chapter("comparative").defaults
    try:
        chapter_ds = load_dataset(dataset, n_contexts=CHAPTER_N_CONTEXTS[dataset], seed=defaults["seed"])
    except DataNotFoundError as error:  # pragma: no cover - depends on the machine
        pytest.skip(str(error))
    options = StudyOptions(aspects=dataset_aspects(chapter_ds, defaults["aspects"]), templates=tuple(defaults["templates"]),
                           n_samples=defaults["n_samples"], seed=defaults["seed"])
    folders = {study: released_folder(study, dataset) for study, _ in CHAPTER_READS[dataset]}
    cache, imported = chapter_cache(True, folders.values())  # each released folder imported once
    assert all(imported[folder] > 0 for folder in folders.values()), imported
    for study, model in sorted(CHAPTER_READS[dataset]):
        n = plan.released_n_contexts(dataset, model)
        ds = chapter_ds if n == chapter_ds.n_contexts else load_dataset(dataset, n_contexts=n, seed=defaults["seed"])
        assert set(ds.context_ids()) <= set(chapter_ds.context_ids())  # nested: read on the chapters' subset
        judge = Judge(model, cache=cache, study=folders[study], backend=BACKEND)
        coverage = available_contexts(judge, ds, get_study(study).checks(judge.handle, ds, options))
        assert coverage.complete, (study, model, coverage.describe())
        assert not judge.handle.is_loaded


def test_the_extended_summeval_release_grows_an_article_at_a_time_in_step_and_nests_the_released_one() -> None:
    """Issue 41: the judge's SummEval release grows from 16 to EXTENDED_N_CONTEXTS articles; each step
    adds at most one article not computed before, comparative and scoring together."""
    from nlgjudge.data.base import select_context_ids
    from nlgjudge.studies.plan import EXTENDED_JOBS, EXTENDED_N_CONTEXTS, LARGER_N_CONTEXTS

    n = EXTENDED_N_CONTEXTS["summeval"]
    ids = [f"a{k:03d}" for k in range(100)]  # SummEval has 100 articles; the subset depends only on the count
    extended, released = select_context_ids(ids, n, plan.SEED), set(select_context_ids(ids, LARGER_N_CONTEXTS["summeval"], plan.SEED))
    assert released <= set(extended)  # nested: the 16 released articles are reused
    steps = [job.max_contexts or n for job in EXTENDED_JOBS]
    assert steps == [k for k in range(1, n + 1) for _ in range(2)]
    assert [job.study for job in EXTENDED_JOBS[:2]] == ["comparative", "scoring"]
    assert all(job.model == plan.JUDGE and job.backend == plan.BACKEND and job.n_contexts == n for job in EXTENDED_JOBS)
    # then the gaming chapter's jobs, which read nothing the others release
    gaming = len(plan.GAMING_JOBS) + len(plan.GAMING_REFERENCE_JOBS)
    assert plan.PLAN[-len(EXTENDED_JOBS) - gaming:-gaming] == EXTENDED_JOBS


def test_the_gaming_release_covers_what_the_plan_says_an_article_at_a_time() -> None:
    """GAMING_RELEASED (what the chapter reads) against data/outputs: every planned request of each judge's
    first articles is released."""
    import json

    from nlgjudge.config import REPO_ROOT
    from nlgjudge.data import load_dataset
    from nlgjudge.studies.gaming import gaming_requests

    ds = load_dataset("summeval", n_contexts=plan.GAMING_ARTICLES, seed=plan.SEED)
    assert [job.max_contexts or plan.GAMING_ARTICLES for job in plan.GAMING_JOBS] == [
        k for model in plan.GAMING_JUDGES for k in range(1, plan.GAMING_RELEASED[model] + 1)]
    for model, count in plan.GAMING_RELEASED.items():
        lines = (REPO_ROOT / "data" / "outputs" / "gaming-summeval" / f"{model}__label_probs.jsonl").read_text().splitlines()
        metas = {(m["context_id"], m["aspect"], m["a"], m["b"], m["protected"])
                 for m in (json.loads(line)["meta"] for line in lines)}
        _, frame = gaming_requests(ds.first_contexts(count), aspects=list(plan.GAMING_ASPECTS))
        wanted = set(zip(frame["context_id"], frame["aspect"], frame["a"], frame["b"], frame["protected"]))
        assert wanted <= metas, f"{model}: {len(wanted - metas)} planned gaming comparisons are not released"


def test_the_reference_based_gaming_release_covers_what_the_plan_says_on_the_plain_releases_articles() -> None:
    """GAMING_REFERENCE_RELEASED against data/outputs, and its jobs stay within the articles whose plain
    attack comparisons are released (the defense is read as a paired difference on the same articles)."""
    import json

    from nlgjudge.config import REPO_ROOT
    from nlgjudge.data import load_dataset
    from nlgjudge.studies.gaming import gaming_requests

    assert [(job.model, job.max_contexts) for job in plan.GAMING_REFERENCE_JOBS] == [
        (model, k) for model in plan.GAMING_REFERENCE_JUDGES for k in range(1, plan.GAMING_RELEASED[model] + 1)]
    ds = load_dataset("summeval", n_contexts=plan.GAMING_ARTICLES, seed=plan.SEED)
    for model, count in plan.GAMING_REFERENCE_RELEASED.items():
        assert count <= plan.GAMING_RELEASED[model]
        if not count:
            continue
        file = REPO_ROOT / "data" / "outputs" / "gaming_reference-summeval" / f"{model}__label_probs.jsonl"
        metas = {(m["context_id"], m["aspect"], m["a"], m["b"]) for m in (json.loads(line)["meta"] for line in
                                                                          file.read_text().splitlines())}
        _, frame = gaming_requests(ds.first_contexts(count), aspects=list(plan.GAMING_ASPECTS), with_reference=True)
        wanted = set(zip(frame["context_id"], frame["aspect"], frame["a"], frame["b"]))
        assert wanted <= metas, f"{model}: {len(wanted - metas)} planned reference-based comparisons are not released"
