"""The released-outputs plan: which study runs on which data with which model, in order.

The chapters' default parameters read their subsets from here, so the book's defaults are
exactly what ``make outputs`` computes (and what is committed under ``data/outputs``).
Sizes are chosen for a 2-core CPU. Measured with the 1.5B judge (prefix sharing, fp32): one
SummEval article takes about 24 minutes comparative (240 ordered pairs x 4 aspects x 2 templates,
1.3 comparisons a second) and 9 minutes of prompt scoring (expected score, 10 samples per
prompt sharing the expected score's prompt computation, and G-Eval; 11 minutes without
sharing); a TopicalChat dialogue about 2.2 minutes comparative; SmolLM2-135M does a SummEval
article in about 2 minutes. The whole plan is about 7 CPU-hours. Jobs are ordered so
that an interrupted run has released the most useful outputs first. Readers with a GPU or more
time raise a chapter's ``n_contexts`` parameter (subsets are nested, so released outputs are
reused); the chapters' defaults are :data:`CHAPTER_N_CONTEXTS`.

The first paper's release was computed with the torch runtime (:data:`TORCH_BACKEND`);
:data:`LARGER_JOBS` (issue 12) recompute it with llama.cpp, first on exactly the torch release's
contexts (so that the runtime chapter compares the two runtimes on the same comparisons), then on
the larger nested subsets :data:`LARGER_N_CONTEXTS`. The chapters read :data:`BACKEND` (llama.cpp,
since its release covers the torch release's contexts for every model) on :data:`CHAPTER_N_CONTEXTS`:
a dataset's extended subset once the judge's release covers it (:data:`EXTENDED_JOBS`, issue 41;
:data:`EXTENDED_RELEASED`), else its larger subset once the release covers it
(:data:`LARGER_RELEASED`), else :data:`N_CONTEXTS`.
"""

from __future__ import annotations

from dataclasses import dataclass

JUDGE = "qwen2.5-coder-1.5b-instruct"
#: The runtime of the first paper's first release (the jobs of the plan before :data:`ELO_JOBS`).
TORCH_BACKEND = "torch"
#: The runtime the first paper's chapters read their released outputs with (``Judge(backend=...)``;
#: outputs of different runtimes never share a cache key): llama.cpp's recomputation of the torch
#: release (issue 12), complete for every model on :data:`N_CONTEXTS`. The runtime chapter reads both.
BACKEND = "llamacpp"
#: The runtime of the Elo chapter's released judgements (computed after the llama.cpp backend landed).
ELO_BACKEND = "llamacpp"
SMALL_JUDGES = ("qwen2.5-coder-0.5b-instruct", "smollm2-135m-instruct")
#: The narcissism chapter's generators and evaluators: every packaged decoder-only model.
NARCISSISM_MODELS = (JUDGE, *SMALL_JUDGES, "gemma-3-270m")
#: Its documents: seeded, nested subsets of the QAGS test articles (the paper drew 500 of each), and
#: of RoSE's CNN/DM test articles, whose human references the reference-based setting needs (Fig. 3).
NARCISSISM_DATASETS = ("qags_cnndm", "qags_xsum", "rose")
NARCISSISM_DOCUMENTS = 100

#: Default context subsets (seeded, nested: smaller subsets of one seed are inside larger ones).
N_CONTEXTS = {"summeval": 6, "topicalchat": 10, "webnlg": 6}
#: SummEval jobs first compute only the first contexts of the planned subset (in the subset's
#: order), so every model and study covers the same articles early; later jobs finish the rest.
FIRST_PASS = 3
SEED = 0
#: Answers drawn per prompt by prompt scoring's sampled reading (its K), in the released outputs and
#: every chapter that reads them.
N_SAMPLES = 10


@dataclass(frozen=True)
class Job:
    study: str  # "comparative" | "scoring"
    dataset: str
    model: str
    n_contexts: int | None
    seed: int = SEED
    max_contexts: int | None = None
    """Stop after this many contexts of the subset (the rest is left to a later job)."""
    backend: str = TORCH_BACKEND
    aspects: tuple[str, ...] | None = None
    """The aspects judged (None: the study's default, every aspect of the dataset)."""

    def argv(self) -> list[str]:
        args = [self.study, "--dataset", self.dataset, "--model", self.model, "--seed", str(self.seed)]
        args += ["--backend", self.backend]
        if self.aspects is not None:
            args += ["--aspects", *self.aspects]
        if self.n_contexts is not None:
            args += ["--n-contexts", str(self.n_contexts)]
        if self.max_contexts is not None:
            args += ["--max-contexts", str(self.max_contexts)]
        return args


_SE = N_CONTEXTS["summeval"]

PLAN: tuple[Job, ...] = (
    Job("comparative", "summeval", JUDGE, _SE, max_contexts=FIRST_PASS),
    Job("scoring", "summeval", JUDGE, _SE, max_contexts=FIRST_PASS),
    Job("comparative", "summeval", SMALL_JUDGES[1], _SE, max_contexts=FIRST_PASS),
    Job("comparative", "topicalchat", JUDGE, N_CONTEXTS["topicalchat"]),
    Job("comparative", "webnlg", JUDGE, N_CONTEXTS["webnlg"]),
    Job("comparative", "summeval", SMALL_JUDGES[0], _SE, max_contexts=FIRST_PASS),
    Job("scoring", "topicalchat", JUDGE, N_CONTEXTS["topicalchat"]),
    Job("scoring", "webnlg", JUDGE, N_CONTEXTS["webnlg"]),
    Job("scoring", "summeval", SMALL_JUDGES[1], _SE, max_contexts=FIRST_PASS),
    Job("scoring", "summeval", SMALL_JUDGES[0], _SE, max_contexts=FIRST_PASS),
    # The judge then finishes SummEval one article at a time, comparative and scoring together,
    # so that whenever the run stops both of its rows cover the same articles.
    *(
        Job(study, "summeval", JUDGE, _SE, max_contexts=k if k < _SE else None)
        for k in range(FIRST_PASS + 1, _SE + 1)
        for study in ("comparative", "scoring")
    ),
    Job("comparative", "summeval", SMALL_JUDGES[1], _SE),
    Job("comparative", "summeval", SMALL_JUDGES[0], _SE),
    Job("scoring", "summeval", SMALL_JUDGES[1], _SE),
    Job("scoring", "summeval", SMALL_JUDGES[0], _SE),
)
#: The Elo chapter's LLM judges on all 99 contest articles (every ordered pair of contestants:
#: 42 comparisons an article), on llama.cpp: the judge first, then the small models.
ELO_JOBS: tuple[Job, ...] = tuple(
    Job("elo", "cnndm_contest", model, None, backend=ELO_BACKEND) for model in (JUDGE, *SMALL_JUDGES)
)
PLAN = PLAN + ELO_JOBS
#: The narcissism chapter (seed 003), on llama.cpp: every model writes its summaries (all datasets),
#: then every model scores everyone's (the likelihood study reads the released summaries).
NARCISSISM_JOBS: tuple[Job, ...] = tuple(
    Job(study, dataset, model, NARCISSISM_DOCUMENTS, backend=ELO_BACKEND)
    for study in ("generation", "likelihood")
    for dataset in NARCISSISM_DATASETS
    for model in NARCISSISM_MODELS
)
PLAN = PLAN + NARCISSISM_JOBS
#: Its human-annotated benchmarks (seed 003 section 3.3): every model scores the benchmarks' own
#: systems' summaries (``likelihood.BENCHMARKS``), all 100 documents of each; RoSE's short
#: reference-based prompts first.
NARCISSISM_BENCHMARKS = ("rose_llm", "summeval")
NARCISSISM_BENCHMARK_JOBS: tuple[Job, ...] = tuple(
    Job("likelihood", dataset, model, None, backend=ELO_BACKEND)
    for dataset in NARCISSISM_BENCHMARKS
    for model in NARCISSISM_MODELS
)
PLAN = PLAN + NARCISSISM_BENCHMARK_JOBS
#: Beyond seed 003: the instruct models as pairwise judges of every two generators' summaries of
#: the CNN/DM documents (own-summary preference), after every summary exists.
SELFPREF_DATASET = "qags_cnndm"
SELFPREF_JOBS: tuple[Job, ...] = tuple(
    Job("selfpref", SELFPREF_DATASET, model, NARCISSISM_DOCUMENTS, backend=ELO_BACKEND) for model in (JUDGE, *SMALL_JUDGES)
)
PLAN = PLAN + SELFPREF_JOBS

#: Issue 60, the gaming chapter: every attack against every real summary of seeded SummEval articles,
#: both orders, on the aspects a text that ignores the article cannot deserve to win. The small judges
#: first (measured on this 2-core CPU, nothing else running: SmolLM2-135M 2.9 min for one article with
#: all four aspects, 624 distinct prompts; about 1.5 min with two), an article at a time, SmolLM2 first;
#: then the main judge on the 0.5B judge's articles (2026-12-01, its rows declared in the plan before any
#: of its judgments: about 4.5 min an article, 312 distinct prompts, and 1.7 min for the reference-based ones).
GAMING_JUDGES = (SMALL_JUDGES[1], SMALL_JUDGES[0], JUDGE)
GAMING_ASPECTS = ("CON", "REL")
GAMING_ARTICLES = 12
GAMING_RELEASED = {SMALL_JUDGES[1]: 12, SMALL_JUDGES[0]: 8, JUDGE: 8}
"""Articles of the seeded subset each judge's release covers (the first ones, in the subset's order)."""
GAMING_JOBS: tuple[Job, ...] = tuple(
    Job("gaming", "summeval", model, GAMING_ARTICLES, max_contexts=k if k < GAMING_ARTICLES else None,
        backend=BACKEND, aspects=GAMING_ASPECTS)
    for model in GAMING_JUDGES for k in range(1, GAMING_RELEASED[model] + 1)
)

#: Issue 12's larger release of the first paper's studies, on llama.cpp: nested supersets of
#: N_CONTEXTS (seeded subsets of one seed are nested; their order differs, hence the two steps).
#: The chapters' runtime (one definition): they move to the larger subsets once its release covers them.
LARGER_BACKEND = BACKEND
LARGER_N_CONTEXTS = {"summeval": 16, "topicalchat": 30, "webnlg": 16}
#: Datasets whose larger subset the release already covers, for both studies and every model the
#: chapters read on them (the judge; on SummEval the small models too). Extended by hand as
#: ``make outputs`` finishes a dataset; tests/test_studies_plan.py checks it against data/outputs.
LARGER_RELEASED: tuple[str, ...] = ("summeval", "topicalchat", "webnlg")


def _larger_jobs() -> tuple[Job, ...]:
    jobs: list[Job] = []
    add = jobs.append
    judge = dict(model=JUDGE, backend=LARGER_BACKEND)
    # 1. The torch release's contexts again, the judge first: the runtime chapter's comparisons.
    add(Job("comparative", "topicalchat", n_contexts=N_CONTEXTS["topicalchat"], **judge))
    add(Job("comparative", "webnlg", n_contexts=N_CONTEXTS["webnlg"], **judge))
    for k in range(FIRST_PASS, _SE + 1):  # SummEval an article at a time, both studies in step
        for study in ("comparative", "scoring"):
            add(Job(study, "summeval", n_contexts=_SE, max_contexts=k if k < _SE else None, **judge))
        if k == FIRST_PASS:
            add(Job("scoring", "topicalchat", n_contexts=N_CONTEXTS["topicalchat"], **judge))
            add(Job("scoring", "webnlg", n_contexts=N_CONTEXTS["webnlg"], **judge))
    for model in reversed(SMALL_JUDGES):  # the small models on the torch release's SummEval articles
        for study in ("comparative", "scoring"):
            add(Job(study, "summeval", model, _SE, backend=LARGER_BACKEND))
    # 2. The larger subsets: the judge on every dataset, then the small models on SummEval.
    for dataset in ("topicalchat", "webnlg"):
        for study in ("comparative", "scoring"):
            add(Job(study, dataset, n_contexts=LARGER_N_CONTEXTS[dataset], **judge))
    larger = LARGER_N_CONTEXTS["summeval"]
    for k in range(_SE + 1, larger + 1):
        for study in ("comparative", "scoring"):
            add(Job(study, "summeval", n_contexts=larger, max_contexts=k if k < larger else None, **judge))
    for model in reversed(SMALL_JUDGES):
        for study in ("comparative", "scoring"):
            add(Job(study, "summeval", model, larger, backend=LARGER_BACKEND))
    return tuple(jobs)


LARGER_JOBS: tuple[Job, ...] = _larger_jobs()
PLAN = PLAN + LARGER_JOBS

#: Issue 41, "what more data would settle": the judge's SummEval release grows to the articles that
#: the paper's main claim on SummEval needs where more articles can settle it at all (FLU: 30 at 80%
#: power, at the gap and per-article spread of the 16-article run; the comparative chapter's
#: "contexts needed" table; the subsets chapter's "debiasing helps with all comparisons" needs 31),
#: comparative and scoring in step, an article at a time (a step computes at most one new article;
#: the 16 already released cost nothing). Measured over the first 8 new articles (quiet machine):
#: a median 10.4 min (comparative) + 7.6 min (scoring) an article, about 4.2 CPU-hours for the 14.
#: The chapters move to it once the release covers the whole subset (EXTENDED_RELEASED).
#: Read its result knowing how it was chosen: FLU was picked because its interval only just reached
#: 0 on 16 articles, so a re-test on all 30 is optional stopping; the chapter is to report the verdict
#: on the 14 new articles alone (a fresh sample) beside the 30. And the 80% rests on the observed gap
#: (13.8): at half of it 30 articles give about 29% power (stats.claims.t_test_power).
EXTENDED_N_CONTEXTS = {"summeval": 30}
#: The claim the extension is for, and the subset it was chosen on: the extended subset's articles
#: outside that one are the fresh sample the comparative chapter reads the claim on alone.
EXTENSION_CLAIM = ("summeval", "FLU")
EXTENSION_CHOSEN_ON = {"summeval": 16}


def _extended_jobs() -> tuple[Job, ...]:
    n = EXTENDED_N_CONTEXTS["summeval"]
    return tuple(
        Job(study, "summeval", JUDGE, n, max_contexts=k if k < n else None, backend=LARGER_BACKEND)
        for k in range(1, n + 1)
        for study in ("comparative", "scoring")
    )


EXTENDED_JOBS: tuple[Job, ...] = _extended_jobs()
PLAN = PLAN + EXTENDED_JOBS
#: Datasets whose extended subset the judge's release covers in both studies. Extended by hand as
#: EXTENDED_JOBS finish; tests/test_studies_plan.py checks it against data/outputs.
EXTENDED_RELEASED: tuple[str, ...] = ("summeval",)

#: The subsets the first paper's chapters read (their default ``n_contexts``): the extended one where
#: the judge's release covers it, else the larger one where the release covers it, else
#: :data:`N_CONTEXTS`. The small judges were released on the larger subset only, and the extended
#: subset nests it. So on an extended subset the chapters read them on the larger subset's
#: contexts, and their coverage lines say so. The runtime chapter stays on N_CONTEXTS, the
#: contexts torch released.
CHAPTER_N_CONTEXTS = {
    d: EXTENDED_N_CONTEXTS[d] if d in EXTENDED_RELEASED else LARGER_N_CONTEXTS[d] if d in LARGER_RELEASED else k
    for d, k in N_CONTEXTS.items()
}


def released_n_contexts(dataset: str, model: str) -> int:
    """How many of the chapters' contexts of ``dataset`` the release holds for ``model`` (the first
    paper's studies): :data:`CHAPTER_N_CONTEXTS`, except for the small judges on an extended subset,
    whose release is the larger subset nested in it."""
    if dataset in EXTENDED_RELEASED and model != JUDGE:
        return LARGER_N_CONTEXTS[dataset]
    return CHAPTER_N_CONTEXTS[dataset]


PLAN = PLAN + GAMING_JOBS

#: Issue 60's reference-based defense: the null model and self-praise judged again with each article's
#: reference summary in the prompt, by the judge whose attack rows are tested (the 0.5B model; SmolLM2
#: fails the judge screen on these articles), on the articles its plain release covers, an article at a
#: time. Its claim (gaming.reference) was declared before any of these judgments was made.
GAMING_REFERENCE_JUDGES = (SMALL_JUDGES[0], JUDGE)
GAMING_REFERENCE_RELEASED = {SMALL_JUDGES[0]: 8, JUDGE: 8}
"""Articles of the seeded subset each judge's reference-based release covers (the first ones)."""
GAMING_REFERENCE_JOBS: tuple[Job, ...] = tuple(
    Job("gaming_reference", "summeval", model, GAMING_ARTICLES, max_contexts=k, backend=BACKEND, aspects=GAMING_ASPECTS)
    for model in GAMING_REFERENCE_JUDGES for k in range(1, GAMING_RELEASED[model] + 1)
)
PLAN = PLAN + GAMING_REFERENCE_JOBS
