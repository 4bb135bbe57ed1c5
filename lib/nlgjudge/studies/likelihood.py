"""The narcissism chapter's evaluators (seed 003 eq. 2): how likely does a model find each summary?

For every document and every generator's summary (the released ``generation`` study, plus the
dataset's human reference when it has one), the evaluator's per-token log-probabilities of the
summary given a conditioning text:

- ``reference_free``: the source document in seed 003 Table 5's words;
- ``reference_based``: the (first) human reference in Table 6's words; only on datasets that have
  references, and without the reference itself as a hypothesis (it would be scored against itself).

Decoder-only evaluators use the paper's decoder-only row (GPT-2: ``"<document> TL;DR:"`` and
``"<reference> Paraphrase the sentence:"``) as plain text, chat models included, as GPTScore does.
Encoder-decoder evaluators given by hub id use their family's row (BART, T5, FLAN-T5).
The per-token values are released; eq. 2's mean (the score) and sum are both in the frame.

On the human-annotated benchmarks (seed 003 section 3.3: SummEval and RoSE) the generators are
the benchmark's own systems, the paper's selection of them (:data:`BENCHMARKS`), each benchmark in
the paper's setting (SummEval reference-free, RoSE reference-based); nothing is generated there.

Released as ``data/outputs/likelihood-<dataset>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from nlgjudge.data import JudgeDataset
from nlgjudge.engine import Judge, LoglikRequest
from nlgjudge.models import ModelHandle
from nlgjudge.prompts.narcissism import BASE_GENERATOR_ROW, family_prompt, likelihood_condition
from nlgjudge.studies.plan import NARCISSISM_MODELS
from nlgjudge.studies.registry import Check, StudyOptions

#: The generators whose summaries are scored: every packaged decoder-only model.
GENERATORS: tuple[str, ...] = NARCISSISM_MODELS
#: The human reference, scored as one more generator where the dataset has references.
REFERENCE = "reference"
SETTINGS = ("reference_free", "reference_based")


@dataclass(frozen=True)
class Benchmark:
    """A human-annotated benchmark whose own systems are the generators (seed 003 section 3.3)."""

    systems: dict[str, str]
    """The dataset's system ids the paper scores, with the names the paper gives them."""
    settings: tuple[str, ...]
    """The paper's setting for this benchmark."""
    human: tuple[str, ...]
    """The human scores the paper correlates with (aspects of the dataset)."""
    table: int
    """The paper's table of correlations."""
    title: str = ""
    """The benchmark's name in the paper."""


#: Seed 003: SummEval's BART, T5 and GPT-2 summaries (SummEval's M22, M17, M20), reference-free,
#: against the four expert aspects (Table 3); RoSE's BART and GPT-3 summaries (its LLM set),
#: reference-based, against ACU (Table 2). The paper's Table 1 names the same five systems.
BENCHMARKS: dict[str, Benchmark] = {
    "summeval": Benchmark({"M22": "BART", "M17": "T5", "M20": "GPT-2"}, ("reference_free",), ("COH", "CON", "FLU", "REL"), 3, "SummEval"),
    "rose_llm": Benchmark({"bart": "BART", "gpt3": "GPT-3"}, ("reference_based",), ("ACU",), 2, "RoSE"),
}
LIKELIHOOD_COLUMNS = [
    "evaluator", "dataset", "setting", "context_id", "generator", "n_tokens", "loglik_mean", "loglik_sum", "empty",
    "from_cache",
]


def evaluator_row(handle: ModelHandle) -> str:
    """Which row of seed 003 Tables 5-6 gives an evaluator its prompt words."""
    if handle.kind != "seq2seq":
        return BASE_GENERATOR_ROW
    name = handle.name.lower()
    for needle, row in (("flan", "FLANT5-Base"), ("t5", "T5-Base"), ("bart", "BART-Large")):
        if needle in name:
            return row
    raise ValueError(
        f"{handle.name}: no seed 003 prompt row for this encoder-decoder model (known families: BART, T5, FLAN-T5)"
    )


def settings_for(ds: JudgeDataset) -> tuple[str, ...]:
    """A benchmark's setting in the paper; otherwise reference-free always and reference-based only
    where the dataset has human references."""
    if ds.info.name in BENCHMARKS:
        return BENCHMARKS[ds.info.name].settings
    return SETTINGS if ds.info.has_references else SETTINGS[:1]


def benchmark_hypotheses(ds: JudgeDataset) -> pd.DataFrame:
    """The summaries of a benchmark's selected systems (:data:`BENCHMARKS`), one row per (document, system)."""
    if ds.info.name not in BENCHMARKS:
        raise ValueError(
            f"{ds.info.name} is not one of the human-annotated benchmarks ({', '.join(BENCHMARKS)}); "
            "its summaries come from the generation study"
        )
    systems = BENCHMARKS[ds.info.name].systems
    missing = sorted(set(systems) - set(ds.frame["system"]))
    if missing:
        raise ValueError(f"{ds.info.name}: systems {missing} are not in the data; the benchmark needs all of {sorted(systems)}")
    rows = ds.frame[ds.frame["system"].isin(list(systems))]
    out = pd.DataFrame({"context_id": rows["context_id"], "generator": rows["system"], "summary": rows["text"]})
    out["empty"] = out["summary"].astype(str).str.strip() == ""
    return out.reset_index(drop=True)


def _reference(ds: JudgeDataset, context_id: str) -> str:
    refs = ds.candidates(context_id)["references"].iloc[0]
    if not len(refs) or not str(refs[0]).strip():
        raise ValueError(f"{ds.info.name}: context {context_id!r} has no reference; the reference-based setting needs one")
    return str(refs[0])


def hypotheses(ds: JudgeDataset, generations: pd.DataFrame | None) -> pd.DataFrame:
    """Every (context, generator, summary) to score: the generated ones plus the reference if any;
    on a benchmark, its selected systems' summaries (``generations`` must then be None)."""
    if ds.info.name in BENCHMARKS:
        if generations is not None:
            raise ValueError(f"{ds.info.name} is a benchmark: its own systems are the generators, pass generations=None")
        return benchmark_hypotheses(ds)
    if generations is None:
        raise ValueError(f"{ds.info.name}: the generated summaries are needed (the generation study's output)")
    rows = generations[["context_id", "generator", "summary", "empty"]].copy()
    if ds.info.has_references:
        refs = pd.DataFrame(
            {"context_id": ds.context_ids(), "generator": REFERENCE, "summary": [_reference(ds, c) for c in ds.context_ids()]}
        )
        refs["empty"] = False
        rows = pd.concat([rows, refs], ignore_index=True)
    return rows.reset_index(drop=True)


def likelihood_requests(
    ds: JudgeDataset, hyps: pd.DataFrame, row: str, data_dir: str | None = None
) -> tuple[list[LoglikRequest], pd.DataFrame]:
    """One request per (setting, non-empty hypothesis) and the frame of all hypotheses per setting
    (empty ones included, with ``request`` = -1)."""
    documents = ds.frame.groupby("context_id", sort=False)["source"].first()
    requests: list[LoglikRequest] = []
    rows = []
    for setting in settings_for(ds):
        words = family_prompt(row, setting, data_dir)
        for hyp in hyps.itertuples(index=False):
            if setting == "reference_based" and hyp.generator == REFERENCE:
                continue
            index = -1
            if not hyp.empty:
                condition_text = documents[hyp.context_id] if setting == "reference_free" else _reference(ds, hyp.context_id)
                meta = {"context_id": hyp.context_id, "setting": setting, "generator": hyp.generator}
                requests.append(LoglikRequest(likelihood_condition(str(condition_text), words), str(hyp.summary), meta))
                index = len(requests) - 1
            rows.append((setting, hyp.context_id, hyp.generator, bool(hyp.empty), index))
    return requests, pd.DataFrame(rows, columns=["setting", "context_id", "generator", "empty", "request"])


def _generations(ds: JudgeDataset, cache: object, generators: Sequence[str], data_dir: str | None) -> pd.DataFrame | None:
    """The summaries to score: none on a benchmark (its systems'); otherwise the generators' from
    ``cache`` (the runner imports the released ``generation`` outputs into it first: ``depends_on``)."""
    from nlgjudge.studies.generation import read_generations

    if ds.info.name in BENCHMARKS:
        return None
    return read_generations(generators, ds, cache=cache, data_dir=data_dir)


def run_likelihood(
    judge: Judge, ds: JudgeDataset, *, generators: Sequence[str] = GENERATORS, data_dir: str | None = None,
    generations: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Eq. 2 scores of every summary of every document of ``ds`` by the judge's model, both settings."""
    if generations is None:
        generations = _generations(ds, judge.cache, generators, data_dir)
    hyps = hypotheses(ds, generations)
    requests, frame = likelihood_requests(ds, hyps, evaluator_row(judge.handle), data_dir)
    results = judge.loglikelihood(requests)
    n_tokens, means, sums, cached = [], [], [], []
    for index in frame["request"]:
        if index < 0:  # an empty summary: kept, counted, not scored
            n, mean, total, from_cache = 0, np.nan, np.nan, False
        else:
            result = results[index]
            n = int(result.token_logprobs.size)
            mean, total, from_cache = result.score(), result.score(np.ones(n)), result.from_cache
        n_tokens.append(n)
        means.append(mean)
        sums.append(total)
        cached.append(from_cache)
    out = frame.drop(columns="request")
    out.insert(0, "evaluator", judge.handle.name)
    out.insert(1, "dataset", ds.info.name)
    out["n_tokens"], out["loglik_mean"], out["loglik_sum"], out["from_cache"] = n_tokens, means, sums, cached
    return out[LIKELIHOOD_COLUMNS]


@dataclass(frozen=True)
class LikelihoodStudy:
    """The registry's ``likelihood`` study: eq. 2 scores of every generator's summaries (seed 003)."""

    name: str = "likelihood"
    description: str = "log-likelihood of every generator's summary given the document or reference (seed 003 eq. 2)"
    operations: tuple[str, ...] = ("loglikelihood",)
    depends_on: tuple[str, ...] = ("generation",)

    def checks(self, handle: ModelHandle, ds: JudgeDataset, options: StudyOptions) -> list[Check]:
        from nlgjudge.studies.released import chapter_cache

        # A coverage check reads the released summaries only: one temporary cache for all contexts.
        cache, _ = chapter_cache(True, [f"generation-{ds.info.name}"])

        def build(one: JudgeDataset) -> list[object]:
            hyps = hypotheses(one, _generations(one, cache, GENERATORS, options.data_dir))
            return list(likelihood_requests(one, hyps, evaluator_row(handle), options.data_dir)[0])

        return [("loglikelihood", build)]

    def run_context(self, judge: Judge, ds: JudgeDataset, options: StudyOptions) -> pd.DataFrame:
        return run_likelihood(judge, ds, data_dir=options.data_dir)


STUDY = LikelihoodStudy()
