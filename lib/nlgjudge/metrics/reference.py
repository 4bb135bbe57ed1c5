"""ROUGE and BERTScore against references: the first paper's baselines (seed 000 §4.3), reused
by every study that needs a reference-based score.

* ROUGE-1/2/L F1 with Google's ``rouge-score`` package (Porter stemming on, as in its usual use).
  Two ROUGE-L variants, named apart: ``rougeL`` ("ROUGE-L", sentence-level: one longest common
  subsequence over the whole text) and ``rougeLsum`` ("ROUGE-Lsum", summary-level: the union of
  the LCSs of each reference sentence against every candidate sentence, sentences being lines).
  ROUGE-Lsum is what papers' "R-L" on CNN/DM usually is (e.g. seed 004's 34.4 beside R-1 36.6);
  the texts are split into sentences here (:func:`sentence_lines`, offline, no nltk data) because
  rouge-score splits only on newlines;
* BERTScore F1 with the ``bert-score`` library on the packaged MiniLM encoder (all-MiniLM-L6-v2,
  offline): ``bert_score`` accepts a local Hugging Face folder as ``model_type``; the layer must
  then be given (``num_layers``, default all 6 layers) because its table of tuned layers only knows
  hub names. No baseline rescaling (its rescaling files exist only for hub models).

A candidate with several references gets, per metric, the **best** F1 over its references by default
(``aggregate="max"``, what ``rouge_score.score_multi`` and ``bert_score`` do), or their mean
(``aggregate="mean"``). Datasets without references raise an error saying so.

Scores are kept in an in-process memo (per metric settings, candidate and reference), so rerunning
a notebook cell does not recompute them; nothing is written to disk.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

from nlgjudge.data import JudgeDataset

#: The ROUGE types computed by default (every chapter's baselines).
ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
#: Every ROUGE type this module computes: the defaults and the summary-level ROUGE-Lsum.
KNOWN_ROUGE_TYPES = (*ROUGE_TYPES, "rougeLsum")
ROUGE_NAMES = {"rouge1": "ROUGE-1", "rouge2": "ROUGE-2", "rougeL": "ROUGE-L", "rougeLsum": "ROUGE-Lsum"}
# A sentence ends at . ! or ? (possibly followed by a closing quote or bracket) before white space.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[.!?][\"'\u2019\u201d)\]])\s+")
BERTSCORE_MODEL = "minilm-l6"
BERTSCORE_LAYERS = 6
AGGREGATES = ("max", "mean")
BASELINE_COLUMNS = ["context_id", "candidate_id", "metric", "implementation", "score", "n_references"]

_rouge_memo: dict[tuple[Any, ...], dict[str, float]] = {}
_bertscore_memo: dict[tuple[Any, ...], float] = {}


def sentence_lines(text: str) -> str:
    """``text`` with one sentence per line, as ROUGE-Lsum reads it (rouge-score splits on newlines
    only). A rule, not a model: a sentence ends at ``.``, ``!`` or ``?`` (and a closing quote) before
    white space, so an abbreviation such as "U.S. officials" splits too; existing line breaks stay."""
    lines = []
    for line in str(text).splitlines():
        lines += [part.strip() for part in _SENTENCE_END.split(line) if part.strip()]
    return "\n".join(lines)


def _check_aggregate(aggregate: str) -> None:
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {AGGREGATES} (over a candidate's references), got {aggregate!r}")


def _combine(values: Sequence[float], aggregate: str) -> float:
    return float(np.max(values)) if aggregate == "max" else float(np.mean(values))


@cache
def _rouge_scorer(types: tuple[str, ...], stemmer: bool) -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(list(types), use_stemmer=stemmer)


def rouge_f1(
    candidate: str,
    references: Sequence[str],
    *,
    rouge_types: Sequence[str] = ROUGE_TYPES,
    aggregate: str = "max",
    use_stemmer: bool = True,
) -> dict[str, float]:
    """ROUGE F1 of one candidate against its references, best (or mean) over the references."""
    _check_aggregate(aggregate)
    unknown = [t for t in rouge_types if t not in KNOWN_ROUGE_TYPES]
    if unknown:
        raise ValueError(f"unknown ROUGE type(s) {unknown}; choose from {list(KNOWN_ROUGE_TYPES)}")
    if not references:
        raise ValueError("ROUGE needs at least one reference for the candidate")
    scorer = _rouge_scorer(tuple(rouge_types), use_stemmer)
    per_reference: dict[str, list[float]] = {t: [] for t in rouge_types}
    for reference in references:
        key = (tuple(rouge_types), use_stemmer, candidate, reference)
        if key not in _rouge_memo:
            if "rougeLsum" in rouge_types:  # the other types ignore line breaks
                scores = scorer.score(sentence_lines(reference), sentence_lines(candidate))  # (target, prediction)
            else:
                scores = scorer.score(reference, candidate)  # rouge-score takes (target, prediction)
            _rouge_memo[key] = {t: float(scores[t].fmeasure) for t in rouge_types}
        for t in rouge_types:
            per_reference[t].append(_rouge_memo[key][t])
    return {t: _combine(v, aggregate) for t, v in per_reference.items()}


def minilm_folder() -> str:
    """The local folder of the packaged MiniLM encoder, its weights' checksum verified."""
    from nlgjudge.models import PACKAGED_MODELS, resolve_model
    from nlgjudge.models.packaged import check_sha256, part_files, sha256_of_files

    handle = resolve_model(BERTSCORE_MODEL)
    spec = PACKAGED_MODELS[handle.location]
    weights = part_files(spec)
    check_sha256(spec, sha256_of_files(weights))
    return str(weights[0].parent)


@cache
def _bert_scorer(folder: str, num_layers: int) -> Any:
    from bert_score import BERTScorer

    # bert_score picks special loaders when the name contains "t5" or starts with "scibert".
    if "t5" in folder.lower() or folder.lower().startswith("scibert"):
        raise ValueError(f"bert_score would misread the folder name {folder!r}; move the model to another path")
    from transformers.utils import logging as transformers_logging

    # transformers draws a "Loading weights" progress bar on stderr, which would land in the book's pages.
    transformers_logging.disable_progress_bar()
    return BERTScorer(model_type=folder, num_layers=num_layers, rescale_with_baseline=False, idf=False, device="cpu")


def bertscore_f1(
    candidates: Sequence[str],
    references: Sequence[Sequence[str]],
    *,
    aggregate: str = "max",
    folder: str | None = None,
    num_layers: int = BERTSCORE_LAYERS,
    batch_size: int = 64,
) -> np.ndarray:
    """BERTScore F1 of each candidate against its references (best or mean over them)."""
    _check_aggregate(aggregate)
    if len(candidates) != len(references):
        raise ValueError(f"{len(candidates)} candidates but {len(references)} reference lists")
    empty = [k for k, refs in enumerate(references) if not refs]
    if empty:
        raise ValueError(f"BERTScore needs at least one reference per candidate; candidate {empty[0]} has none")
    folder = folder or minilm_folder()
    pairs = [(c, r) for c, refs in zip(candidates, references, strict=True) for r in refs]
    todo = sorted({p for p in pairs if (folder, num_layers, *p) not in _bertscore_memo})
    if todo:
        scorer = _bert_scorer(folder, num_layers)
        _, _, f1 = scorer.score([c for c, _ in todo], [r for _, r in todo], batch_size=batch_size)
        for pair, value in zip(todo, f1.tolist(), strict=True):
            _bertscore_memo[(folder, num_layers, *pair)] = float(value)
    return np.array(
        [
            _combine([_bertscore_memo[(folder, num_layers, c, r)] for r in refs], aggregate)
            for c, refs in zip(candidates, references, strict=True)
        ]
    )


def reference_baselines(
    ds: JudgeDataset,
    *,
    aspects: Sequence[str] | None = None,
    aggregate: str = "max",
    bertscore: bool = True,
    rouge_types: Sequence[str] = ROUGE_TYPES,
) -> pd.DataFrame:
    """Every reference-based baseline for every candidate of ``ds`` (one row per candidate and metric).

    ``attrs["aspects"]`` records the aspects to correlate with (all of the dataset's by default) and
    ``attrs["aggregate"]`` how multiple references were combined.
    """
    _check_aggregate(aggregate)
    if not ds.info.has_references:
        raise ValueError(f"{ds.info.name} has no references: reference-based baselines do not apply to it")
    frame = ds.frame
    no_refs = frame[frame["references"].map(len) == 0]
    if len(no_refs):
        raise ValueError(
            f"{len(no_refs)} candidate(s) of {ds.info.name} have no reference (first: context "
            f"{no_refs['context_id'].iloc[0]!r}); reference-based baselines need one for every candidate"
        )
    texts = frame["text"].astype(str).tolist()
    refs = [list(map(str, r)) for r in frame["references"]]
    columns: dict[tuple[str, str], np.ndarray] = {}
    rouge = [rouge_f1(t, r, rouge_types=rouge_types, aggregate=aggregate) for t, r in zip(texts, refs, strict=True)]
    for t in rouge_types:
        columns[(ROUGE_NAMES[t], "rouge-score")] = np.array([s[t] for s in rouge])
    if bertscore:
        columns[("BERTScore", f"bert-score, {BERTSCORE_MODEL}")] = bertscore_f1(texts, refs, aggregate=aggregate)
    parts = []
    for (metric, implementation), values in columns.items():
        parts.append(
            pd.DataFrame(
                {
                    "context_id": frame["context_id"].to_numpy(),
                    "candidate_id": frame["candidate_id"].to_numpy(),
                    "metric": metric,
                    "implementation": implementation,
                    "score": values,
                    "n_references": [len(r) for r in refs],
                }
            )
        )
    out = pd.concat(parts, ignore_index=True)[BASELINE_COLUMNS]
    out.attrs["aspects"] = list(ds.info.aspects) if aspects is None else list(aspects)
    out.attrs["aggregate"] = aggregate
    return out
