"""The narcissism chapter (seed 003, Liu, Moosavi & Lin): generators x evaluators, length, self-bias.

Inputs are tidy frames (nothing here calls a model or reads a file):

* a *generations* frame (:data:`nlgjudge.studies.generation.GENERATION_COLUMNS`): one row per
  (generator, document) with the cleaned ``summary``, its length ``n_words`` and an ``empty`` flag;
* a *likelihood* frame (:data:`nlgjudge.studies.likelihood.LIKELIHOOD_COLUMNS`): one row per
  (evaluator, setting, document, generator) with eq. 2's ``loglik_mean`` (the score: equal weights
  w_t = 1/m, as BARTScore/T5Score/GPTScore) and ``loglik_sum`` (w_t = 1).

One definition of each quantity, used in every table of the chapter:

* *score*: eq. 2 with equal weights (the mean token log-likelihood), higher = better;
* *heatmap*: mean score over the common documents (every evaluator scored every generator's
  non-empty summary), min-max normalised per evaluator over generators (eq. 4, alpha = 1);
* *self-bias excess* and *length-controlled self-preference*: :mod:`nlgjudge.stats.self_bias`;
* *length*: words of the cleaned summary (whitespace split).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from nlgjudge.analysis.judges import whole_run_gates, whole_run_table
from nlgjudge.stats.intervals import bootstrap_end_error
from nlgjudge.stats.multiplicity import corrected_count, holm_rejections, p_from_interval, p_within_error
from nlgjudge.prose import interval_text, listing
from nlgjudge.stats import bootstrap_clustered_correlation_ci, correlation, mean_interval
from nlgjudge.stats.claims import (
    CONTRADICTED,
    NOT_RESOLVED,
    NOT_TESTED,
    SUPPORTED,
    ClaimVerdict,
    claim_verdict,
    contexts_needed_from_values,
    family_verdicts,
    units_needed_from_interval,
)
from nlgjudge.register import ALREADY_ENOUGH, MONTE_CARLO_Z, family_p
from nlgjudge.register import claim as registered_claim
from nlgjudge.register import contexts_needed_for, units_needed_for
from nlgjudge.register import verdict as registered_verdict
from nlgjudge.stats.normalisation import min_max_normalise
from nlgjudge.stats.self_bias import self_bias_bootstrap, self_bias_difference_bootstrap, self_preference_bootstrap

#: The human reference's name as a generator (the likelihood study's REFERENCE).
REFERENCE = "reference"
SCORES = {"mean": "loglik_mean", "sum": "loglik_sum"}


#: How a finished sentence ends (a closing quote or bracket may follow the full stop).
SENTENCE_ENDS = (".", "!", "?", '"', "'", ")", "”", "’")


def ends_mid_sentence(summary: str) -> bool:
    """True when a non-empty summary stops without closing its sentence (typically: it reached the
    token budget)."""
    text = summary.rstrip()
    return bool(text) and not text.endswith(SENTENCE_ENDS)


#: The written form of a tokenizer's control tokens: ChatML-like ``<|im_end|>``, snake-case markers
#: such as Gemma's ``<start_of_image>`` or ``<end_of_turn>``, and SentencePiece's ``<s>``, ``</s>``,
#: ``<unk>``, ``<pad>``. No summary of a news article contains one; a generator that writes one has
#: left text behind (Gemma-3-270m, a base model, sometimes fills its budget with ``<start_of_image>``).
#: HTML-like ``<br>`` or ``<p>`` do not match.
CONTROL_TOKEN = re.compile(r"<\|[^<>|\s]+\|>|<[a-z]+(?:_[a-z]+)+>|</?s>|<(?:unk|pad|bos|eos)>")


def has_control_token(summary: str) -> bool:
    """True when the summary contains the written form of a control token (:data:`CONTROL_TOKEN`)."""
    return CONTROL_TOKEN.search(summary) is not None


def generation_table(generations: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and generator: documents, empty summaries (counted, never dropped), summaries that
    end mid-sentence, summaries that contain a control token's text (counted and scored as they
    are), length in words."""
    frame = generations.assign(unfinished=generations["summary"].map(ends_mid_sentence),
                               control=generations["summary"].map(has_control_token))
    grouped = frame.groupby(["dataset", "generator"], sort=False)
    table = grouped.agg(
        documents=("context_id", "nunique"),
        empty=("empty", "sum"),
        mid_sentence=("unfinished", "sum"),
        control_tokens=("control", "sum"),
        mean_words=("n_words", "mean"),
        median_words=("n_words", "median"),
        min_words=("n_words", "min"),
        max_words=("n_words", "max"),
    )
    counts = ["empty", "mid_sentence", "control_tokens"]
    table[counts] = table[counts].astype(int)
    return table.round({"mean_words": 1, "median_words": 1})


def control_token_text(table: pd.DataFrame) -> str:
    """Which generators wrote control-token text, in words, from :func:`generation_table`: "3 of
    gemma's 50 summaries of rose", one clause per (dataset, generator) that has any."""
    clauses = [f"{n} of {generator}'s {n_docs} summaries of {dataset}"
               for (dataset, generator), n, n_docs in zip(table.index, table["control_tokens"], table["documents"],
                                                          strict=True) if n]
    return listing(clauses, empty="no summary does")


def _setting_rows(likelihood: pd.DataFrame, dataset: str, setting: str) -> pd.DataFrame:
    rows = likelihood[(likelihood["dataset"] == dataset) & (likelihood["setting"] == setting)]
    if rows.empty:
        known = sorted(set(zip(likelihood["dataset"], likelihood["setting"], strict=True)))
        raise KeyError(f"no likelihood scores for dataset {dataset!r} in setting {setting!r}; the frame has {known}")
    return rows


def common_documents(likelihood: pd.DataFrame, dataset: str, setting: str) -> tuple[list[str], int]:
    """Documents on which every evaluator scored every generator (no empty summary, no gap), and
    how many documents were left out for lacking one."""
    rows = _setting_rows(likelihood, dataset, setting)
    n_cells = rows["evaluator"].nunique() * rows["generator"].nunique()
    scored = rows[np.isfinite(rows["loglik_mean"])]
    per_doc = scored.groupby("context_id", sort=False).size()
    docs = list(rows["context_id"].drop_duplicates())
    keep = [d for d in docs if per_doc.get(d, 0) == n_cells]
    return keep, len(docs) - len(keep)


def score_cube(
    likelihood: pd.DataFrame, dataset: str, setting: str, evaluators: Sequence[str], generators: Sequence[str],
    score: str = "mean",
) -> tuple[np.ndarray, list[str]]:
    """``scores[d, e, g]`` on the common documents, and those documents' ids."""
    if score not in SCORES:
        raise ValueError(f"score must be one of {sorted(SCORES)}; got {score!r}")
    rows = _setting_rows(likelihood, dataset, setting)
    for name, wanted, present in (("evaluator", evaluators, rows["evaluator"]), ("generator", generators, rows["generator"])):
        missing = sorted(set(wanted) - set(present))
        if missing:
            raise KeyError(f"{dataset}/{setting}: no scores for {name}(s) {missing}; present: {sorted(set(present))}")
    docs, _ = common_documents(rows[rows["evaluator"].isin(evaluators) & rows["generator"].isin(generators)], dataset, setting)
    if not docs:
        raise ValueError(f"{dataset}/{setting}: no document has a score from every evaluator for every generator")
    pivot = rows.set_index(["context_id", "evaluator", "generator"])[SCORES[score]]
    index = pd.MultiIndex.from_product([docs, list(evaluators), list(generators)])
    cube = pivot.reindex(index).to_numpy().reshape(len(docs), len(evaluators), len(generators))
    return cube, docs


def mean_lengths(generations: pd.DataFrame, dataset: str, generators: Sequence[str], documents: Sequence[str] | None = None,
                 references: Mapping[str, str] | None = None) -> pd.Series:
    """Average summary length in words per generator (the brackets of Figs. 2, 3 and 6)."""
    rows = generations[generations["dataset"] == dataset]
    if documents is not None:
        rows = rows[rows["context_id"].isin(set(documents))]
    lengths = rows.groupby("generator")["n_words"].mean()
    if references is not None:
        texts = [t for c, t in references.items() if documents is None or c in set(documents)]
        lengths.loc[REFERENCE] = float(np.mean([len(t.split()) for t in texts]))
    return lengths.reindex(list(generators))


def heatmap_table(cube: np.ndarray, evaluators: Sequence[str], generators: Sequence[str], alpha: float = 1.0) -> pd.DataFrame:
    """Eq. 4: per evaluator (row), the mean score of each generator (column) rescaled to [0, alpha]."""
    normalised = min_max_normalise(cube.mean(axis=0), alpha=alpha, axis=1)
    return pd.DataFrame(normalised, index=pd.Index(list(evaluators), name="evaluator"), columns=pd.Index(list(generators), name="generator"))


def raw_mean_table(cube: np.ndarray, evaluators: Sequence[str], generators: Sequence[str]) -> pd.DataFrame:
    """The mean scores behind a heatmap (nats per token), before eq. 4."""
    return pd.DataFrame(cube.mean(axis=0), index=pd.Index(list(evaluators), name="evaluator"), columns=pd.Index(list(generators), name="generator"))


def summary_lengths(generations: pd.DataFrame, dataset: str, documents: Sequence[str], generators: Sequence[str],
                    references: Mapping[str, str] | None = None) -> np.ndarray:
    """``lengths[d, g]`` in words, aligned with :func:`score_cube`."""
    rows = generations[generations["dataset"] == dataset].set_index(["context_id", "generator"])["n_words"]
    out = np.empty((len(documents), len(generators)))
    for i, doc in enumerate(documents):
        for j, gen in enumerate(generators):
            if gen == REFERENCE:
                if references is None:
                    raise ValueError("the reference is a generator here; pass references={context_id: text}")
                out[i, j] = len(references[doc].split())
            else:
                out[i, j] = rows.loc[(doc, gen)]
    return out


def length_correlation_table(
    cube: np.ndarray, lengths: np.ndarray, evaluators: Sequence[str], confidence: float = 0.95,
) -> pd.DataFrame:
    """Fig. 5's question within documents (the register's estimand): per document, Spearman between
    its summaries' lengths and an evaluator's scores (one summary per generator), then the mean over
    documents with the book's t interval over them (kept inside [-1, 1]). Within a document the
    summaries share its article, so a document effect (long articles: longer summaries and higher
    scores) cannot pass for a length preference, as it can in a correlation pooled over documents.
    A document whose lengths or scores are all equal, or hold a missing value, has no correlation:
    left out and counted (``n_left_out``). ``n`` and ``n_documents`` count the documents read;
    ``per_document`` holds their correlations."""
    from nlgjudge.stats.correlation import spearman_rows

    rows = []
    for e, name in enumerate(evaluators):
        scores = cube[:, e, :]
        complete = ~(np.isnan(lengths).any(axis=1) | np.isnan(scores).any(axis=1))
        rho = spearman_rows(lengths[complete], scores[complete]) if complete.any() else np.array([])
        values = rho[np.isfinite(rho)]
        estimate = low = high = np.nan
        if values.size >= 2:
            interval = mean_interval(values, confidence, bounds=(-1.0, 1.0))
            estimate, low, high = interval.mean, interval.low, interval.high
        elif values.size == 1:
            estimate = float(values[0])
        # per_document: the values the t interval is made of, so "documents needed" is the paired-t count
        rows.append({"evaluator": name, "spearman": estimate, "ci_low": low, "ci_high": high, "n": int(values.size),
                     "n_documents": int(values.size), "n_left_out": int(cube.shape[0] - values.size),
                     "per_document": values})
    return pd.DataFrame(rows).set_index("evaluator")


def pooled_length_correlation_table(cube: np.ndarray, lengths: np.ndarray, evaluators: Sequence[str],
                                    n_boot: int = 1000, seed: int = 0, confidence: float = 0.95) -> pd.DataFrame:
    """The first release's reading of the length claim, amended in the plan: per evaluator, one Spearman
    pooled over every summary of every document, with the book's bootstrap interval over documents
    (estimate +- t x SE), so that a chapter can show which verdicts the amendment moved. Columns as
    :func:`length_correlation_table`'s (no ``per_document``)."""
    from nlgjudge.stats.intervals import bootstrap_se_interval

    rng = np.random.default_rng(seed)
    rows = []
    for e, name in enumerate(evaluators):
        scores = cube[:, e, :]
        complete = ~(np.isnan(lengths).any(axis=1) | np.isnan(scores).any(axis=1))
        x, y = lengths[complete], scores[complete]
        n = int(complete.sum())

        def pooled(docs: np.ndarray) -> float:
            return float(scipy_stats.spearmanr(x[docs].ravel(), y[docs].ravel()).statistic)

        estimate = pooled(np.arange(n)) if n >= 2 else np.nan
        low = high = np.nan
        if n >= 2:
            draws = np.array([pooled(rng.integers(0, n, n)) for _ in range(n_boot)])
            lo, hi = bootstrap_se_interval(estimate, draws, n, confidence)
            low, high = max(float(lo), -1.0), min(float(hi), 1.0)
        rows.append({"evaluator": name, "spearman": estimate, "ci_low": low, "ci_high": high, "n": n,
                     "n_documents": n, "n_left_out": int(cube.shape[0] - n)})
    return pd.DataFrame(rows).set_index("evaluator")


def own_generators(evaluators: Sequence[str], generators: Sequence[str]) -> np.ndarray:
    """Index of each evaluator's own generator (the same model name), -1 if it wrote nothing here."""
    return np.array([list(generators).index(e) if e in generators else -1 for e in evaluators], dtype=int)


def excess_at_bound(cube: np.ndarray, evaluators: Sequence[str], generators: Sequence[str],
                    minimal_effect: float | None = None) -> list[str]:
    """Per evaluator: why its eq. 4 excess cannot test the claim, or "" when it can.

    When every evaluator, its own included, rates the evaluator's generator lowest (eq. 4's floor, 0)
    or highest (its ceiling, 1), the excess is 0 however much more the own evaluator likes those
    summaries than the others do: such a row cannot test the claim (the claim rule's "degenerate").
    With ``minimal_effect`` (the claim's, from the plan), a row whose generator the other evaluators
    already rate so high that its excess could reach at most 1 minus their mean, less than that effect,
    cannot show the claim either: the ceiling leaves it no room."""
    normalised = min_max_normalise(cube.mean(axis=0), alpha=1.0, axis=1)
    reasons = []
    for e, g in enumerate(own_generators(evaluators, generators)):
        column = normalised[:, g] if g >= 0 else np.array([0.5])
        room = 1.0 - float(np.delete(column, e).mean()) if g >= 0 and len(column) > 1 else np.inf
        if g >= 0 and (column == 0).all():
            reasons.append(f"every evaluator rates {generators[g]} lowest: its excess is 0 by construction (eq. 4's floor)")
        elif g >= 0 and (column == 1).all():
            reasons.append(f"every evaluator rates {generators[g]} highest: its excess is 0 by construction (eq. 4's ceiling)")
        elif minimal_effect is not None and room < minimal_effect:
            reasons.append(f"the other evaluators rate {generators[g]} near the top already: its excess can reach at most "
                           f"{room:.3f}, less than the smallest effect that matters ({minimal_effect:g}; eq. 4's ceiling)")
        else:
            reasons.append("")
    return reasons


def self_bias_table(
    cube: np.ndarray, lengths: np.ndarray, evaluators: Sequence[str], generators: Sequence[str],
    families: Mapping[str, str], n_boot: int = 1000, seed: int = 0,
) -> pd.DataFrame:
    """Per evaluator: the eq. 4 self-bias excess and the length-controlled self-preference, each with a
    95% ``estimate +- t(n_documents - 1) x bootstrap SE`` interval over documents (the book's interval
    for a statistic recomputed on each resample), and whether self can be told from family."""
    own = own_generators(evaluators, generators)
    excess = self_bias_bootstrap(cube, own, n_boot=n_boot, seed=seed)
    bounds = excess_at_bound(cube, evaluators, generators, registered_claim("narcissism.excess").minimal_effect)
    try:
        preference = self_preference_bootstrap(cube, lengths, own, n_boot=n_boot, seed=seed)
        unidentified = ""
    except ValueError as error:  # e.g. two generators, both owned: self and generator effects coincide
        nan = np.full(len(evaluators), np.nan)
        preference = type(excess)(nan, nan, nan, excess.n_documents, n_boot, excess.confidence, n_boot)
        unidentified = str(error)
    rows = []
    for e, name in enumerate(evaluators):
        family = families.get(name, "")
        relatives = [g for g in generators if g != name and family and families.get(g) == family]
        rows.append({
            "evaluator": name,
            "own generator": generators[own[e]] if own[e] >= 0 else "none",
            "excess": excess.estimate[e], "excess_low": excess.low[e], "excess_high": excess.high[e],
            "excess at bound": bounds[e],
            "gamma": preference.estimate[e], "gamma_low": preference.low[e], "gamma_high": preference.high[e],
            "same family here": ", ".join(relatives) if relatives else "none (self = family)",
            "n": excess.n_documents,
        })
    table = pd.DataFrame(rows).set_index("evaluator")
    table.attrs.update(n_documents=excess.n_documents, n_boot=n_boot, failed_excess=excess.n_failed,
                       failed_gamma=preference.n_failed, gamma_not_identified=unidentified)
    return table


def setting_comparison_table(
    likelihood: pd.DataFrame, dataset: str, evaluators: Sequence[str], generators: Sequence[str],
    n_boot: int = 1000, seed: int = 0,
) -> pd.DataFrame:
    """Is self-bias stronger without the reference (seed 003's second finding)?

    Per evaluator that wrote summaries here: the self-bias excess in the reference-free and in the
    reference-based setting, each with its 95% bootstrap interval, and their paired difference
    (free - based) with one resample of the documents for both settings. Only documents scored in
    both settings are used, so the two excesses are of the same summaries.
    """
    free, free_docs = score_cube(likelihood, dataset, "reference_free", evaluators, generators)
    based, based_docs = score_cube(likelihood, dataset, "reference_based", evaluators, generators)
    both = set(based_docs)
    keep = [i for i, doc in enumerate(free_docs) if doc in both]
    if not keep:
        raise ValueError(f"{dataset}: no document is scored in both settings by every evaluator for every generator")
    free = free[keep]
    based = based[[based_docs.index(free_docs[i]) for i in keep]]
    own = own_generators(evaluators, generators)
    if (own < 0).all():
        raise ValueError("none of the evaluators wrote summaries here; there is no self-bias to compare")
    first = self_bias_bootstrap(free, own, n_boot=n_boot, seed=seed)
    second = self_bias_bootstrap(based, own, n_boot=n_boot, seed=seed)
    paired = self_bias_difference_bootstrap(free, based, own, n_boot=n_boot, seed=seed)
    bounds = [" and ".join(f"{setting}: {reason}" for setting, reason in (("reference-free", a), ("reference-based", b)) if reason)
              for a, b in zip(excess_at_bound(free, evaluators, generators), excess_at_bound(based, evaluators, generators),
                              strict=True)]
    rows = []
    for e, name in enumerate(evaluators):
        if own[e] < 0:
            continue
        rows.append({
            "evaluator": name,
            "reference-free": first.estimate[e], "free_low": first.low[e], "free_high": first.high[e],
            "reference-based": second.estimate[e], "based_low": second.low[e], "based_high": second.high[e],
            "free - based": paired.estimate[e], "difference_low": paired.low[e], "difference_high": paired.high[e],
            "excess at bound": bounds[e], "n": len(keep),
        })
    table = pd.DataFrame(rows).set_index("evaluator")
    table.attrs.update(n_documents=len(keep), n_boot=n_boot,
                       failed=first.n_failed + second.n_failed + paired.n_failed)
    return table


def reference_mean_scores(likelihood: pd.DataFrame, dataset: str, setting: str, evaluators: Sequence[str],
                          documents: Sequence[str]) -> pd.Series:
    """Each evaluator's mean score of the human reference over ``documents`` (nats/token).

    The reference is scored as one more generator in the reference-free setting; it stays out of
    eq. 4 so that both settings normalise over the same generators (the reference-based setting
    cannot score it).
    """
    rows = _setting_rows(likelihood, dataset, setting)
    rows = rows[(rows["generator"] == REFERENCE) & rows["context_id"].isin(set(documents))]
    if rows.empty:
        raise KeyError(f"{dataset}/{setting}: the human reference was not scored (a dataset without references?)")
    per_evaluator = rows.groupby("evaluator")
    missing = sorted(set(evaluators) - set(rows["evaluator"]))
    if missing:
        raise KeyError(f"{dataset}/{setting}: no reference scores from evaluator(s) {missing}")
    counts = per_evaluator["loglik_mean"].count()
    short = [e for e in evaluators if counts[e] != len(documents)]
    if short:
        raise ValueError(f"{dataset}/{setting}: the reference is not scored on all {len(documents)} documents by {short}")
    return per_evaluator["loglik_mean"].mean().reindex(list(evaluators)).rename(REFERENCE)


def family_preference(cube: np.ndarray, evaluators: Sequence[str], generators: Sequence[str], families: Mapping[str, str]) -> pd.DataFrame:
    """Where a family has two members: does each member prefer itself or its relative?

    Per evaluator with a relative among the generators: mean score (nats/token) of its own summaries
    minus its relative's, with a paired t interval over documents (the same documents, both scored
    by the same evaluator); ``per_document`` holds the differences the interval is made of."""
    from nlgjudge.stats.intervals import paired_difference_interval

    rows = []
    for e, name in enumerate(evaluators):
        if name not in generators:
            continue
        for relative in generators:
            if relative != name and families.get(relative) and families.get(relative) == families.get(name):
                g_own, g_rel = list(generators).index(name), list(generators).index(relative)
                interval = paired_difference_interval(cube[:, e, g_own], cube[:, e, g_rel])
                rows.append({"evaluator": name, "relative": relative, "own - relative": interval.mean,
                             "ci_low": interval.low, "ci_high": interval.high, "n": interval.n,
                             "per_document": cube[:, e, g_own] - cube[:, e, g_rel]})
    return pd.DataFrame(rows, columns=["evaluator", "relative", "own - relative", "ci_low", "ci_high", "n", "per_document"])


def human_score_table(frames: Mapping[str, tuple[pd.DataFrame, str]], systems: Mapping[str, tuple[str, str]]) -> pd.DataFrame:
    """Table 1: max/min/mean/median of the human score per benchmark system.

    ``frames``: benchmark -> (its tidy frame, the score column, e.g. the four-aspect mean or ACU);
    ``systems``: the paper's row name -> (benchmark, system id in that frame)."""
    rows = []
    for row, (benchmark, system) in systems.items():
        frame, column = frames[benchmark]
        values = frame.loc[frame["system"] == system, column]
        if values.empty:
            raise KeyError(f"{benchmark} has no system {system!r} (for the paper's row {row!r})")
        rows.append({"system": row, "benchmark": benchmark, "id here": system, "n": int(values.size),
                     "Max": values.max(), "Min": values.min(), "Mean": values.mean(), "Median": values.median()})
    return pd.DataFrame(rows).set_index("system")


def benchmark_generations(frame: pd.DataFrame, dataset: str, systems: Mapping[str, str]) -> pd.DataFrame:
    """A benchmark's selected systems' summaries (``systems``: id -> the paper's name) as a generations
    frame (generator = system id), so the lengths and tables of the generated summaries apply to them."""
    missing = sorted(set(systems) - set(frame["system"]))
    if missing:
        raise KeyError(f"{dataset} has no system(s) {missing}; it has {sorted(set(frame['system']))}")
    rows = frame[frame["system"].isin(list(systems))]
    summaries = rows["text"].astype(str).str.strip()
    return pd.DataFrame({
        "generator": rows["system"].to_numpy(), "dataset": dataset, "context_id": rows["context_id"].to_numpy(),
        "summary": summaries.to_numpy(), "n_words": summaries.str.split().str.len().to_numpy(),
        "empty": (summaries == "").to_numpy(),
    })


def human_correlation_table(
    likelihood: pd.DataFrame, human: pd.DataFrame, dataset: str, setting: str, evaluators: Sequence[str],
    aspects: Sequence[str], n_boot: int = 1000, seed: int = 0,
) -> pd.DataFrame:
    """Tables 2-3: Spearman and Kendall between each evaluator's score and each human score, over every
    scored summary (documents x systems), with 95% ``estimate +- t x bootstrap SE`` intervals from resampling documents
    (a document's summaries stay together). Where no interval can be had (fewer than 3 documents,
    degenerate resamples) its bounds are NaN.

    ``human``: the benchmark's tidy frame (``context_id``, ``system`` and the ``aspects`` columns); a
    scored summary without a human score is an error, not a silent drop."""
    rows = _setting_rows(likelihood, dataset, setting)
    rows = rows[rows["evaluator"].isin(evaluators) & np.isfinite(rows["loglik_mean"])]
    missing = sorted(set(aspects) - set(human.columns))
    if missing:
        raise KeyError(f"{dataset}: no human score column(s) {missing}; columns are {sorted(human.columns)}")
    gold = human[["context_id", "system", *aspects]].rename(columns={"system": "generator"})
    merged = rows.merge(gold, on=["context_id", "generator"], how="left", validate="many_to_one")
    unmatched = merged[list(aspects)].isna().any(axis=1)
    if unmatched.any():
        first = merged.loc[unmatched, ["context_id", "generator"]].iloc[0].tolist()
        raise ValueError(f"{dataset}: {int(unmatched.sum())} scored summaries have no human score (first: {first})")
    out = []
    for evaluator in evaluators:
        part = merged[merged["evaluator"] == evaluator]
        if part.empty:
            raise KeyError(f"{dataset}/{setting}: no scores from evaluator {evaluator!r}")
        for aspect in aspects:
            row = {"evaluator": evaluator, "aspect": aspect}
            for method in ("spearman", "kendall"):
                try:
                    ci = bootstrap_clustered_correlation_ci(part["loglik_mean"], part[aspect], part["context_id"], method,
                                                            n_boot=n_boot, seed=seed)
                    estimate, low, high = ci.estimate, ci.low, ci.high
                except ValueError:  # too few documents, or constant scores in resamples: no interval (NaN, shown)
                    estimate, low, high = correlation(part["loglik_mean"], part[aspect], method), np.nan, np.nan
                row |= {method: estimate, f"{method}_low": low, f"{method}_high": high}
            row |= {"n_summaries": len(part), "n_documents": part["context_id"].nunique()}
            out.append(row)
    return pd.DataFrame(out).set_index(["evaluator", "aspect"])


def pairwise_outcomes(judged: Mapping[str, pd.DataFrame], generators: Sequence[str]) -> pd.DataFrame:
    """Per judge, document and unordered pair (a, b) of generators (a listed first in ``generators``):
    ``a_wins``, the share of the two orders in which the judge prefers a's summary, each order decided
    with the judge's debiasing threshold (seed 000 eq. 10, fitted on all its P(A)): 0, 0.5 or 1. This is
    the Elo chapter's "both orders, debiased" outcome (:func:`nlgjudge.analysis.elo.llm_outcomes`).

    ``judged``: judge -> its frame of P(A) for ordered pairs (context_id, first, second, p_a), as the
    ``selfpref`` study releases them."""
    from nlgjudge.analysis.elo import ENCOUNTER_COLUMNS, llm_outcomes

    frames = []
    for judge, frame in judged.items():
        docs = list(dict.fromkeys(frame["context_id"]))
        pairs = [(c, a, b) for c in docs for a, b in combinations(generators, 2)]
        encounters = pd.DataFrame([(k, *pair) for k, pair in enumerate(pairs)], columns=ENCOUNTER_COLUMNS)
        out = llm_outcomes(encounters, frame, judge, both_orders=True)
        frames.append(pd.DataFrame({"judge": judge, "context_id": out["context_id"], "a": out["first"],
                                    "b": out["second"], "a_wins": 1.0 - out["y"]}))
    return pd.concat(frames, ignore_index=True)


def judge_gates(judged: Mapping[str, pd.DataFrame]) -> dict[str, str | None]:
    """The book's judge screen (:mod:`nlgjudge.stats.degenerate`) of each pairwise judge on
    its both-order P(A) (context_id, first, second, p_a): pairs looked for within a document, one
    debiasing threshold over the judge's whole run, as the chapter debiases."""
    return whole_run_gates(judged)


#: :func:`judge_gates`' test in a table, one row per judge (passed or not), for the page to show.
judge_test_table = whole_run_table


def self_preference_table(outcomes: pd.DataFrame, generators: Sequence[str], confidence: float = 0.95,
                          not_anchors: Sequence[str] = ()) -> pd.DataFrame:
    """How often each judge prefers its own summary, against what the other judges say of the same pair.

    Per judge that is also a generator, and per opponent (each other generator, then ``"all"``: the
    mean over opponents): ``own`` = mean over documents of the judge's share of wins for its own
    summary; ``others`` = the same pair's share for the judge's summary given by the judges that
    wrote neither summary (their mean: a quality anchor that involves neither author; an opponent no
    third judge has judged is skipped); ``excess`` = own - others with a
    paired t interval over documents (the same documents and pairs on both sides). ``ties`` is the
    judge's share of pairs whose two orders disagree (0.5 outcomes). Only documents every judge judged
    are used (``n``); ``per_document`` holds the per-document own - others the interval is made of.
    ``not_anchors``: judges never used as an anchor (a degenerate judge, whose verdicts follow the
    position, not the texts); their own rows are still computed (and read as not tested)."""
    judges = list(dict.fromkeys(outcomes["judge"]))
    if len(judges) < 2:
        raise ValueError(f"an anchor needs at least two judges (the others' verdicts); got {judges}")
    per_judge_docs = outcomes.groupby("judge")["context_id"].apply(set)
    docs = sorted(set.intersection(*per_judge_docs.tolist()))
    if len(docs) < 2:
        raise ValueError(f"only {len(docs)} document(s) judged by every judge; an interval needs at least 2")
    wins = outcomes[outcomes["context_id"].isin(docs)].set_index(["judge", "context_id", "a", "b"])["a_wins"]
    order = list(generators)

    def share(judge: str, own: str, other: str) -> np.ndarray:
        """``judge``'s share of wins for ``own``'s summary over ``other``'s, per document."""
        a, b = (own, other) if order.index(own) < order.index(other) else (other, own)
        values = wins.loc[judge].reindex(pd.MultiIndex.from_product([docs, [a], [b]])).to_numpy(dtype=float)
        if np.isnan(values).any():
            raise KeyError(f"{judge}: no outcome for {a} vs {b} on {int(np.isnan(values).sum())} document(s)")
        return values if a == own else 1.0 - values

    rows = []
    for judge in judges:
        if judge not in order:
            continue
        ties = float((wins.loc[judge] == 0.5).mean())
        own_all, anchor_all, used = [], [], []
        for opponent in [g for g in order if g != judge]:
            # The anchor: judges that wrote neither summary (the opponent's author would favour its own).
            neutral = [k for k in judges if k not in (judge, opponent) and k not in not_anchors]
            if not neutral:
                continue
            own = share(judge, judge, opponent)
            anchor = np.mean([share(k, judge, opponent) for k in neutral], axis=0)
            own_all.append(own)
            anchor_all.append(anchor)
            used.append(opponent)
            rows.append(_preference_row(judge, opponent, own, anchor, ties, neutral, confidence))
        if used:
            rows.append(_preference_row(judge, "all", np.mean(own_all, axis=0), np.mean(anchor_all, axis=0), ties,
                                        [f"as above, over {len(used)} opponents"], confidence))
    if not rows:
        raise ValueError("no judge is also a generator with an opponent some third judge has judged")
    table = pd.DataFrame(rows).set_index(["judge", "opponent"])
    table.attrs.update(n_documents=len(docs))
    return table


def _preference_row(judge: str, opponent: str, own: np.ndarray, anchor: np.ndarray, ties: float, others: Sequence[str],
                    confidence: float) -> dict[str, object]:
    from nlgjudge.stats.intervals import mean_interval, paired_difference_interval

    # shares of documents in [0, 1]: their intervals stay inside that range
    own_ci, anchor_ci = mean_interval(own, confidence, bounds=(0.0, 1.0)), mean_interval(anchor, confidence, bounds=(0.0, 1.0))
    excess = paired_difference_interval(own, anchor, confidence)
    return {"judge": judge, "opponent": opponent, "own": own_ci.mean, "own_low": own_ci.low, "own_high": own_ci.high,
            "others": anchor_ci.mean, "others_low": anchor_ci.low, "others_high": anchor_ci.high,
            "excess": excess.mean, "excess_low": excess.low, "excess_high": excess.high,
            "judge ties": ties, "anchor judges": ", ".join(others), "n": excess.n, "per_document": own - anchor}


# --------------------------------------------------------------------------------------------
# Claims: every verdict of the chapter from the book's claim rule (nlgjudge.stats.claims)

#: The columns of :func:`claim_rows`: one row per tested unit of a claim (an evaluator on a dataset, a judge).
CLAIM_COLUMNS = ["claim", "row", "estimate", "low", "high", "n", "verdict", "reason", "documents needed", "method", "p_value",
                 "p_family", "effect_at", "needed_threshold", "band"]
#: How a row's "documents needed" is counted: from its per-document values (a paired t power
#: calculation) or from its interval, whatever made it (the standard error scaled as 1/sqrt(n)).
FROM_VALUES, FROM_INTERVAL = "paired t", "from the interval"
#: A correlation with people counts as strong from this absolute value on (the chapter's reading of Tables 2-3).
STRONG_CORRELATION = 0.5


def not_strong_verdict(estimate: float, low: float, high: float, n: int, *, strong: float = STRONG_CORRELATION,
                       degenerate: str | None = None) -> ClaimVerdict:
    """"The correlation is not strong" (|rho| < ``strong``) by the claim rule, applied at both ends:
    supported when the interval lies inside (-strong, strong), contradicted when it lies wholly
    beyond either end, otherwise not resolved."""
    upper = claim_verdict(estimate, low, high, n, threshold=strong, direction="below", degenerate=degenerate)
    if not upper.tested:
        return upper
    lower = claim_verdict(estimate, low, high, n, threshold=-strong, direction="above")
    for side in (upper, lower):
        if side.verdict == CONTRADICTED:
            return side
    if upper.verdict == lower.verdict == SUPPORTED:
        return ClaimVerdict(SUPPORTED, f"interval inside (-{strong:g}, {strong:g})")
    return upper if upper.verdict == NOT_RESOLVED else lower


def _label(index: object) -> str:
    return " / ".join(map(str, index)) if isinstance(index, tuple) else str(index)


def claim_rows(
    table: pd.DataFrame, claim: str, value: str, low: str, high: str, n: str = "n", *, threshold: float = 0.0,
    direction: str = "above", degenerate: str | None = None, per_document: str | None = None,
    strong: float | None = None, registered: str | None = None, resamples: int | None = None,
) -> pd.DataFrame:
    """The verdict on ``claim`` for every row of ``table`` (:func:`nlgjudge.stats.claims.claim_verdict`
    on the row's ``value`` and its interval ``[low, high]`` over ``n`` documents), and for a row
    that is not resolved, how many documents would resolve it.

    ``registered``: the claim's id in the claims register (``narcissism.excess``); its threshold,
    direction, margin and minimum units then come from the register (``threshold``, ``direction``
    and ``strong`` must be left alone), and "documents needed" is counted at its minimal effect of
    interest, never at the observed effect. The chapter reads every verdict this way.
    ``degenerate``: a column holding why a row cannot test the claim ("" when it can);
    ``per_document``: a column holding the per-document values the interval is made of (the count
    is then a paired t power calculation at their spread; otherwise :func:`units_needed_from_interval` on
    the bootstrap interval's standard error); ``strong``: the claim is "not strong" (:func:`not_strong_verdict`).
    ``resamples``: the bootstrap resamples behind the intervals (estimate +- t x bootstrap SE); their
    Monte Carlo error then enters the verdict (an end within its band of a boundary is borderline,
    :func:`nlgjudge.stats.intervals.bootstrap_end_error`) and Holm's correction over a claim's rows
    reads each row's largest p within it (column ``p_family``,
    :func:`nlgjudge.stats.multiplicity.p_within_error`), so no count after the correction hangs on
    the bootstrap's seed."""
    spec = None
    if registered is not None:
        if strong is not None or threshold != 0.0 or direction != "above":
            raise ValueError("a registered claim takes its threshold, direction and margin from the register")
        spec = registered_claim(registered)
    rows = []
    for index, row in table.iterrows():
        estimate, lo, hi, units = float(row[value]), float(row[low]), float(row[high]), int(row[n])
        why = str(row[degenerate]) if degenerate and row[degenerate] else None
        end_se = se_error = 0.0
        if resamples is not None and units >= 2 and np.isfinite([estimate, lo, hi]).all():
            if spec is None:
                raise ValueError("the bootstrap's Monte Carlo error enters a registered claim's verdict; pass registered=")
            t = float(scipy_stats.t.ppf(0.975, units - 1))  # each end is t x the bootstrap SD from the estimate
            se_error = bootstrap_end_error(max(hi - estimate, estimate - lo) / t, resamples)  # the SD's own error
            end_se = t * se_error
        if spec is not None:
            verdict = registered_verdict(spec.id, estimate, lo, hi, units, degenerate=why, monte_carlo_se=end_se)
            target = spec.threshold
            effect_at = spec.effect_target()
        elif strong is None:
            verdict = claim_verdict(estimate, lo, hi, units, threshold=threshold, direction=direction,  # type: ignore[arg-type]
                                    degenerate=why)
            target = effect_at = threshold
        else:
            verdict = not_strong_verdict(estimate, lo, hi, units, strong=strong, degenerate=why)
            target = effect_at = strong if estimate >= 0 else -strong
        needed, method = None, ""
        if verdict.verdict == NOT_RESOLVED:
            if spec is not None and per_document:
                values = np.asarray(row[per_document], dtype=float)
                # the register sizes the claim (an equivalence claim by two one-sided tests)
                needed = contexts_needed_for(spec.id, float(np.std(values, ddof=1))) if values.size >= 2 else None
                method = FROM_VALUES
            elif spec is not None:
                found = units_needed_for(spec.id, lo, hi, units)
                needed, method = (None if not np.isfinite(found) else int(found)), FROM_INTERVAL
            elif per_document:
                needed, method = contexts_needed_from_values(row[per_document], threshold=target), FROM_VALUES
            else:
                needed, method = units_needed_from_interval(estimate, lo, hi, units, threshold=target), FROM_INTERVAL
        needed_threshold = target  # what a design size is counted against (a flag's too, in documents_needed_table)
        if spec is not None and verdict.tested and spec.margin is not None:
            target = min((spec.threshold - spec.margin, spec.threshold + spec.margin), key=lambda end: abs(estimate - end))
        rows.append({"claim": claim, "row": _label(index), "estimate": estimate, "low": lo, "high": hi, "n": units,
                     "verdict": verdict.verdict, "reason": verdict.reason, "documents needed": needed, "method": method,
                     "p_value": p_from_interval(estimate, lo, hi, units, target) if verdict.tested else np.nan,
                     "p_family": (p_within_error(estimate, lo, hi, units, target, 0.0, se_error, MONTE_CARLO_Z)[0]
                                  if verdict.tested else np.nan),
                     "effect_at": effect_at, "needed_threshold": needed_threshold,
                     "band": bool(spec is not None and spec.margin is not None)})  # an equivalence claim
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)


def untested_claim(claim: str, reason: str) -> pd.DataFrame:
    """A claim this run cannot test at all (e.g. it needs an evaluator none of the models is), as one row."""
    return pd.DataFrame([{"claim": claim, "row": "–", "estimate": np.nan, "low": np.nan, "high": np.nan, "n": 0,
                          "verdict": NOT_TESTED, "reason": reason, "documents needed": None, "method": "", "p_value": np.nan,
                          "p_family": np.nan}],
                        columns=CLAIM_COLUMNS)


def _short_reason(reason: object) -> str:
    """A not-tested row's reason as a clause of a summary: its first clause of several words (up to a
    colon or semicolon). A leading setting ("reference-based: ...") is kept in words, so that reasons of
    the two settings, said side by side, never read as one contradicting the other."""
    clauses = [part.strip() for part in re.split(r"[:;]", str(reason)) if part.strip()]
    text = next((part for part in clauses if " " in part), clauses[0] if clauses else "no reason recorded")
    setting = clauses[0] if clauses and clauses[0] in ("reference-free", "reference-based") else None
    return f"{setting}, {text}" if setting and text != setting else text


def overall_verdict(rows: pd.DataFrame, max_names: int = 3) -> ClaimVerdict:
    """A claim about every row ("every evaluator favours its own summaries") from its rows' verdicts:
    contradicted when any tested row is; not resolved when any is; supported when every tested row
    is. Rows that cannot test the claim are named in the reason and set aside, as long as they are
    fewer than half of the rows: a claim about every evaluator that most evaluators cannot test is
    not tested (the reason then gives the tested rows' verdicts). The reason names the rows of a
    verdict when there are at most ``max_names`` of them, and counts them otherwise."""
    if rows.empty:
        return ClaimVerdict(NOT_TESTED, "no row in this run")
    total = len(rows)

    def named(verdict: str) -> list[str]:
        return rows.loc[rows["verdict"] == verdict, "row"].tolist()

    def which(verdict: str) -> str:
        names = named(verdict)
        return listing(names) if len(names) <= max_names else f"{len(names)} row{'s' if len(names) != 1 else ''}"

    untested = named(NOT_TESTED)
    if len(untested) == total:
        return ClaimVerdict(NOT_TESTED, listing(sorted(set(rows["reason"]))))
    # the reasons in words beside the rows (the glossary: "not tested" always says why), each beside its row
    # when the rows are named, else the distinct reasons after their count
    out = rows[rows["verdict"] == NOT_TESTED]
    aside = ("" if not untested else
             "; not tested: " + listing([f"{r} ({_short_reason(why)})" for r, why in zip(out["row"], out["reason"], strict=True)])
             if len(untested) <= max_names else
             f"; not tested: {which(NOT_TESTED)} ({listing(sorted({_short_reason(r) for r in out['reason']}))})")
    supported = len(named(SUPPORTED))
    if 2 * len(untested) >= total:
        tested = rows[rows["verdict"] != NOT_TESTED]
        verdicts = ([f"{r} {v}" for r, v in zip(tested["row"], tested["verdict"], strict=True)] if len(tested) <= max_names
                    else [f"{k} {v}" for v, k in tested["verdict"].value_counts().items()])
        return ClaimVerdict(NOT_TESTED, f"only {len(tested)} of {total} rows can test it ({listing(verdicts)}){aside}")
    if "p_value" in rows.columns:  # a count over the rows is given after Holm's correction (the glossary's rule)
        after, before = corrected_count(rows["verdict"].tolist(), family_p(rows), SUPPORTED)
        head = f"supported in {after} of {total} rows after Holm's correction" + (f" ({before} before it)" if before != after else "")
    else:
        head = f"supported in {supported} of {total} rows"
    still_open = f"; not resolved: {which(NOT_RESOLVED)}" if named(NOT_RESOLVED) else ""
    against = named(CONTRADICTED)
    if against and "p_value" in rows.columns:
        # A row resolved against a claim about every row contradicts it only if it survives Holm's
        # correction over the rows (the book's family rule); otherwise it is a flag to look at.
        kept = holm_rejections(family_p(rows))
        survive = set(rows.loc[kept & (rows["verdict"] == CONTRADICTED).to_numpy(), "row"])
        flags = [r for r in against if r not in survive]
        if flags:
            flagged = listing(flags) if len(flags) <= max_names else f"{len(flags)} row{'s' if len(flags) != 1 else ''}"
            one = len(flags) == 1
            flag_text = (f"; {'a flag' if one else 'flags'}: {flagged} {'goes' if one else 'go'} against the claim on "
                         f"{'its' if one else 'their'} own interval, but not after Holm's correction over the {total} rows")
            if not survive:
                return ClaimVerdict(NOT_RESOLVED, f"{head}{still_open}{flag_text}{aside}")
            still_open += flag_text
        against = [r for r in against if r in survive]
    if against:
        names = listing(against) if len(against) <= max_names else f"{len(against)} row{'s' if len(against) != 1 else ''}"
        corrected = f" (after Holm's correction over the {total} rows)" if "p_value" in rows.columns else ""
        return ClaimVerdict(CONTRADICTED, f"{head}; contradicted{corrected}: {names}{still_open}{aside}")
    if named(NOT_RESOLVED):
        return ClaimVerdict(NOT_RESOLVED, f"{head}{still_open}{aside}")
    return ClaimVerdict(SUPPORTED, head + aside)


def row_verdict_cells(rows: pd.DataFrame) -> list[str]:
    """Each row's verdict with its reason, as the claims' tables show it: the rows of one claim are a
    family (:func:`overall_verdict` counts them after Holm's correction), so a row resolved on its own
    interval that does not survive the correction over its claim's rows reads as the family's "not
    resolved" with the flag beside it (:func:`nlgjudge.prose.verdict_after_holm`)."""
    from nlgjudge.prose import flag_words

    cells = pd.Series([f"{v} ({r})" for v, r in zip(rows["verdict"], rows["reason"], strict=True)], index=rows.index)
    if "p_value" not in rows.columns:
        return cells.tolist()
    for _, part in rows.groupby("claim", sort=False):
        after = family_verdicts(part["verdict"].tolist(), family_p(part))
        for index, verdict, kept in zip(part.index, part["verdict"], after, strict=True):
            if verdict != kept:
                cells.loc[index] = f"{NOT_RESOLVED} ({flag_words(verdict, f'the {len(part)} rows')})"
    return cells.tolist()


def claims_summary(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per claim of :func:`claim_rows` frames (concatenated): the range of its rows'
    estimates, their documents, and the claim's verdict with its reason (:func:`overall_verdict`,
    counting the rows of each verdict; the rows themselves are in the detailed table)."""
    out = []
    for claim, part in rows.groupby("claim", sort=False):
        verdict = overall_verdict(part, max_names=0 if len(part) > 1 else 1)
        tested = part[part["verdict"] != NOT_TESTED]  # a row that cannot test the claim is no estimate of it
        finite = tested["estimate"].dropna()
        out.append({
            "claim": claim,
            "verdict": verdict.verdict,
            "estimates (tested rows)": (f"{finite.min():+.2f} to {finite.max():+.2f}" if len(finite) > 1 else
                          f"{finite.iloc[0]:+.2f}" if len(finite) else "–"),
            "n (documents)": listing([str(k) for k in sorted(set(part["n"]), reverse=True)]) if part["n"].any() else "–",
            "reason": verdict.reason,
        })
    return pd.DataFrame(out).set_index("claim")


#: What "more" says of a band (equivalence) row open at its design size: the size holds for a value at
#: the band's centre; an estimate near an edge needs many more documents, and only then is settled.
NEAR_EDGE = ("still open because the estimate lies near the band's edge, where more documents settle it only slowly; "
             "this count does not say how many")


def documents_needed_table(rows: pd.DataFrame, horizon: Mapping[str, int] | int = 500) -> pd.DataFrame:
    """The rows that are not resolved, with the documents that would resolve them ("out of reach"
    beyond :data:`nlgjudge.stats.claims.MAX_UNITS` or at a zero effect), how many more that is,
    and whether it lies "within" ``horizon`` documents (the paper's scale: 500 documents a dataset;
    a mapping gives it per claim, e.g. a benchmark's own size, or per dataset, e.g. the dataset's own
    size where it has fewer than 500 documents). A flag (a row resolved on its own interval that does not
    survive Holm's correction over its claim's k rows) is open too: its documents are counted from its
    interval at alpha 0.05 / k, Holm's strictest step."""
    open_rows = []
    for _, part in rows.groupby("claim", sort=False):
        after = (family_verdicts(part["verdict"].tolist(), family_p(part)) if "p_value" in part.columns
                 else part["verdict"].tolist())
        for row, kept in zip(part.to_dict("records"), after, strict=True):
            if row["verdict"] == NOT_RESOLVED:
                open_rows.append(row)
            elif (kept == NOT_RESOLVED and row["verdict"] != NOT_RESOLVED and np.isfinite(row.get("effect_at", np.nan))
                  and row["effect_at"] != row["needed_threshold"]):  # a registered claim's minimal effect to count at
                k = len(part)
                row["documents needed"] = units_needed_from_interval(
                    row["effect_at"], row["low"], row["high"], int(row["n"]), threshold=row["needed_threshold"], alpha=0.05 / k)
                row["method"] = f"{FROM_INTERVAL}, a flag: at alpha 0.05 / {k}"
                open_rows.append(row)
    out = []
    for row in open_rows:
        needed = row["documents needed"]
        missing = needed is None or needed != needed  # None, or NaN once pandas has seen a None
        # per claim, else per dataset (a row is named "<dataset> / <evaluator>"), else the paper's 500
        dataset = str(row["row"]).split(" / ")[0]
        limit = (horizon.get(row["claim"], horizon.get(dataset, 500)) if isinstance(horizon, Mapping) else horizon)
        band = bool(row.get("band", False))  # a band's design size holds for a value at its centre only
        out.append({"claim": row["claim"], "row": row["row"],
                    "estimate [95%]": interval_text(row["estimate"], row["low"], row["high"]),
                    "n now": int(row["n"]), "documents needed": "out of reach" if missing else str(int(needed)),
                    # the design size of the claim's smallest effect: a run that has it leaves open only smaller effects
                    "more": "–" if missing else (str(int(needed) - int(row["n"])) if needed > row["n"] else
                                                 f"none at the band's centre: {NEAR_EDGE}" if band else
                                                 f"none: {ALREADY_ENOUGH}"),
                    "within": "–" if missing else f"{'yes' if needed <= limit else 'no'} ({limit})",
                    "method": row["method"]})
    columns = ["claim", "row", "estimate [95%]", "n now", "documents needed", "more", "within", "method"]
    return pd.DataFrame(out, columns=columns)

