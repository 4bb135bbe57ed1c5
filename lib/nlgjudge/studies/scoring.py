"""Absolute prompt scoring (seed 000 section 4.3.2) and G-Eval, on the same candidates.

Three readings of a scoring prompt, per candidate, template and aspect:

* ``expected``: the score distribution over the score words 1..10 (each scored as a complete
  answer, so "1" is not confused with the start of "10") and its expectation;
* ``sampled``: K samples of at most 5 tokens at temperature 1 (the paper's settings), parsed to a
  score; the mean of the parsed samples. Unparseable samples are counted, never turned into scores;
* ``geval``: G-Eval's detailed SummEval prompts, read as the expected score over their own range.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from nlgjudge.data import JudgeDataset
from nlgjudge.engine import ClassifyRequest, Judge, SampleRequest
from nlgjudge.models import ModelHandle
from nlgjudge.prompts import SCORE_SUFFIX, Wording, parse_score, scoring_ending, scoring_prompt
from nlgjudge.prompts.templates import PromptEnding
from nlgjudge.studies.comparative import TEMPLATES, check_aspects, check_templates
from nlgjudge.studies.plan import N_SAMPLES
from nlgjudge.studies.prompting import answer_end, classify_request, prompt_style, sample_request
from nlgjudge.studies.registry import Check, StudyOptions

SCORING_COLUMNS = ["context_id", "candidate_id", "system", "template", "aspect"]


def _prompts(ds: JudgeDataset, aspects: Sequence[str], templates: Sequence[int]) -> tuple[list[str], pd.DataFrame]:
    wording = Wording.for_dataset(ds.info)
    texts, rows = [], []
    for context_id in ds.context_ids():
        cands = ds.candidates(context_id)
        source = str(cands["source"].iloc[0])
        for template in templates:
            for cand in cands.itertuples(index=False):
                for aspect in aspects:
                    texts.append(scoring_prompt(template, source, str(cand.text), aspect, wording))
                    rows.append((context_id, cand.candidate_id, cand.system, template, aspect))
    return texts, pd.DataFrame(rows, columns=SCORING_COLUMNS)


def expected_scores(
    judge: Judge,
    ds: JudgeDataset,
    *,
    aspects: Sequence[str] | None = None,
    templates: Sequence[int] = (1, 2),
    style: str = "auto",
    score_suffix: bool = False,
) -> pd.DataFrame:
    """Score distribution over 1..10 per candidate (prompt classification) and its expectation."""
    requests, frame = expected_requests(
        judge.handle, ds, aspects=aspects, templates=templates, style=style, score_suffix=score_suffix
    )
    ending = frame.attrs["ending_obj"]
    results = judge.label_probs(requests)
    values = np.array([float(d) for d in ending.decisions])
    probs = np.stack([r.probs for r in results]) if results else np.zeros((0, len(values)))
    frame["expected"] = probs @ values
    frame["argmax"] = values[probs.argmax(axis=1)] if len(probs) else []
    frame["probs"] = [p.tolist() for p in probs]
    frame["from_cache"] = [r.from_cache for r in results]
    frame.attrs.update(ending=ending.describe())
    del frame.attrs["ending_obj"]
    return frame


def expected_requests(
    handle: ModelHandle,
    ds: JudgeDataset,
    *,
    aspects: Sequence[str] | None = None,
    templates: Sequence[int] = (1, 2),
    style: str = "auto",
    score_suffix: bool = False,
) -> tuple[list[ClassifyRequest], pd.DataFrame]:
    """The requests of :func:`expected_scores` and a frame describing each (same order)."""
    aspects = check_aspects(ds, aspects)
    templates = check_templates(templates)
    style = prompt_style(handle, style)
    ending = scoring_ending(user_suffix=SCORE_SUFFIX if score_suffix else "")
    end = answer_end(handle, style)
    texts, frame = _prompts(ds, aspects, templates)
    requests = [
        classify_request(t, ending, style, {**row, "reading": "expected"}, label_end=end)
        for t, row in zip(texts, frame.to_dict("records"), strict=True)
    ]
    frame.attrs.update(prompt_style=style, label_end=end, ending_obj=ending)
    return requests, frame


def sampled_scores(
    judge: Judge,
    ds: JudgeDataset,
    *,
    aspects: Sequence[str] | None = None,
    templates: Sequence[int] = (1, 2),
    style: str = "auto",
    n_samples: int = N_SAMPLES,
    temperature: float = 1.0,
    max_new_tokens: int = 5,
    seed: int = 0,
) -> pd.DataFrame:
    """K sampled answers per candidate (seed 000 eq. 4), parsed to scores; unparseable ones counted.

    ``score`` is the mean of the parsed samples (NaN when none parsed: such candidates are
    reported, not filled in).
    """
    requests, frame = sampled_requests(
        judge.handle, ds, aspects=aspects, templates=templates, style=style, n_samples=n_samples,
        temperature=temperature, max_new_tokens=max_new_tokens, seed=seed,
    )
    results = judge.sample(requests)
    parsed = [[parse_score(text, 1, 10) for text in r.texts] for r in results]
    frame["samples"] = [r.texts for r in results]
    frame["n_parsed"] = [sum(v is not None for v in p) for p in parsed]
    frame["n_unparsed"] = [sum(v is None for v in p) for p in parsed]
    frame["score"] = [float(np.mean([v for v in p if v is not None])) if any(v is not None for v in p) else np.nan for p in parsed]
    frame["from_cache"] = [r.from_cache for r in results]
    frame.attrs.update(n_samples=n_samples, temperature=temperature, max_new_tokens=max_new_tokens)
    return frame


def sampled_requests(
    handle: ModelHandle,
    ds: JudgeDataset,
    *,
    aspects: Sequence[str] | None = None,
    templates: Sequence[int] = (1, 2),
    style: str = "auto",
    n_samples: int = N_SAMPLES,
    temperature: float = 1.0,
    max_new_tokens: int = 5,
    seed: int = 0,
) -> tuple[list[SampleRequest], pd.DataFrame]:
    """The requests of :func:`sampled_scores` and a frame describing each (same order).

    Each request gets its own seed, derived from ``seed`` and the row (context, candidate,
    template, aspect), so that candidates do not share one random stream.
    """
    aspects = check_aspects(ds, aspects)
    templates = check_templates(templates)
    style = prompt_style(handle, style)
    ending = PromptEnding(name="scoring[sampled]")
    texts, frame = _prompts(ds, aspects, templates)
    requests = [
        sample_request(
            t, ending, style, {**row, "reading": "sampled"},
            n_samples=n_samples, temperature=temperature, max_new_tokens=max_new_tokens, seed=row_seed(seed, row),
        )
        for t, row in zip(texts, frame.to_dict("records"), strict=True)
    ]
    frame.attrs.update(prompt_style=style)
    return requests, frame


def row_seed(seed: int, row: dict[str, object]) -> int:
    """A deterministic per-request seed: ``seed`` mixed with the row's identity (31-bit)."""
    text = "|".join([str(seed)] + [str(row[c]) for c in SCORING_COLUMNS])
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:4], "big") & 0x7FFFFFFF


def geval_scores(
    judge: Judge,
    ds: JudgeDataset,
    *,
    aspects: Sequence[str] | None = None,
    style: str = "auto",
    data_dir: str | None = None,
) -> pd.DataFrame:
    """G-Eval (Liu et al. 2023) as the paper applies it: expected score over the prompt's range."""
    requests, frame = geval_requests(judge.handle, ds, aspects=aspects, style=style, data_dir=data_dir)
    ranges = frame.attrs["score_ranges"]
    results = judge.label_probs(requests)
    frame["expected"] = [
        float(r.probs @ np.arange(ranges[a][0], ranges[a][1] + 1)) for r, a in zip(results, frame["aspect"], strict=True)
    ]
    frame["from_cache"] = [r.from_cache for r in results]
    return frame


def geval_requests(
    handle: ModelHandle,
    ds: JudgeDataset,
    *,
    aspects: Sequence[str] | None = None,
    style: str = "auto",
    data_dir: str | None = None,
) -> tuple[list[ClassifyRequest], pd.DataFrame]:
    """The requests of :func:`geval_scores` and a frame describing each (same order)."""
    from nlgjudge.prompts.geval import load_geval_prompt

    aspects = check_aspects(ds, aspects)
    style = prompt_style(handle, style)
    requests, rows = [], []
    ranges = {}
    for aspect in aspects:
        prompt = load_geval_prompt(aspect, data_dir)
        low, high = prompt.score_range
        ranges[aspect] = (low, high)
        ending = PromptEnding(
            name=f"geval[{low}-{high}]", labels=tuple(str(s) for s in range(low, high + 1)),
            decisions=tuple(str(s) for s in range(low, high + 1)),
        )
        for context_id in ds.context_ids():
            cands = ds.candidates(context_id)
            source = str(cands["source"].iloc[0])
            for cand in cands.itertuples(index=False):
                row = {"context_id": context_id, "candidate_id": cand.candidate_id, "system": cand.system, "template": 0, "aspect": aspect}
                requests.append(classify_request(prompt.fill(source, str(cand.text)), ending, style, {**row, "reading": "geval"}))
                rows.append(row)
    frame = pd.DataFrame(rows, columns=SCORING_COLUMNS)
    frame.attrs.update(prompt_style=style, score_ranges=ranges)
    return requests, frame


def prompt_scores(
    judge: Judge,
    ds: JudgeDataset,
    *,
    aspects: Sequence[str] | None = None,
    templates: Sequence[int] = (1, 2),
    n_samples: int = N_SAMPLES,
    seed: int = 0,
) -> dict[str, pd.DataFrame]:
    """The expected and the sampled reading of the same prompts, each prompt computed once."""
    with judge.sharing_prompts():  # sampling starts from the prompts the expected reading computed
        return {
            "expected": expected_scores(judge, ds, aspects=aspects, templates=templates),
            "sampled": sampled_scores(judge, ds, aspects=aspects, templates=templates, n_samples=n_samples, seed=seed),
        }


def run_scoring(
    judge: Judge,
    ds: JudgeDataset,
    *,
    aspects: Sequence[str] | None = None,
    templates: Sequence[int] = (1, 2),
    n_samples: int = N_SAMPLES,
    seed: int = 0,
    geval: bool | None = None,
    data_dir: str | None = None,
    on_context_done: Callable[[str], None] | None = None,
) -> dict[str, pd.DataFrame]:
    """Every scoring reading, context by context (for the resumable runner)."""
    geval = uses_geval(ds) if geval is None else geval
    parts: dict[str, list[pd.DataFrame]] = {"expected": [], "sampled": [], "geval": []}
    for context_id, one in ds.per_context():
        readings = prompt_scores(judge, one, aspects=aspects, templates=templates, n_samples=n_samples, seed=seed)
        parts["expected"].append(readings["expected"])
        parts["sampled"].append(readings["sampled"])
        if geval:
            parts["geval"].append(geval_scores(judge, one, aspects=aspects, data_dir=data_dir))
        if on_context_done is not None:
            on_context_done(context_id)
    return {name: pd.concat(frames, ignore_index=True) for name, frames in parts.items() if frames}


def uses_geval(ds: JudgeDataset) -> bool:
    """G-Eval's detailed prompts exist for SummEval only (the paper's Table 1)."""
    return ds.info.name == "summeval"


@dataclass(frozen=True)
class ScoringStudy:
    """The registry's ``scoring`` study: expected and sampled prompt scores, and G-Eval on SummEval."""

    name: str = "scoring"
    description: str = "absolute prompt scores 1-10 (expected and K sampled) and G-Eval (seed 000 §4.3.2)"
    operations: tuple[str, ...] = ("label_probs", "sample")
    depends_on: tuple[str, ...] = ()

    def checks(self, handle: ModelHandle, ds: JudgeDataset, options: StudyOptions) -> list[Check]:
        common = dict(aspects=options.aspects, templates=options.templates_or(TEMPLATES))
        checks: list[Check] = [
            ("label_probs", lambda one: expected_requests(handle, one, **common)[0]),
            ("sample", lambda one: sampled_requests(handle, one, n_samples=options.n_samples, seed=options.seed, **common)[0]),
        ]
        if uses_geval(ds):
            checks.append(
                ("label_probs", lambda one: geval_requests(handle, one, aspects=options.aspects, data_dir=options.data_dir)[0])
            )
        return checks

    def run_context(self, judge: Judge, ds: JudgeDataset, options: StudyOptions) -> dict[str, pd.DataFrame]:
        return run_scoring(
            judge, ds, aspects=options.aspects, templates=options.templates_or(TEMPLATES), n_samples=options.n_samples,
            seed=options.seed, data_dir=options.data_dir,
        )


STUDY = ScoringStudy()
