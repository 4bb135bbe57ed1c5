"""Which candidates a chapter ranks: WebNLG 2017's placeholder outputs and the book's one WebNLG
candidate set (the comparative chapter's headline reading, used by every chapter that reads WebNLG).

A candidate id names a system's output *within one context* (on WebNLG it is the team's name), so a
set of candidates to leave out holds either ids, left out in every context (a whole team), or
``(context_id, candidate_id)`` pairs, left out in that context only (one placeholder output).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

from nlgjudge.data import JudgeDataset

#: A set of candidates to leave out: ids (every context) or (context_id, candidate_id) pairs (one context).
Candidates = Iterable[object]


def _require(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise KeyError(f"{what} lacks columns {missing} (it has {list(frame.columns)})")


def held(frame: pd.DataFrame, column: str, candidates: Candidates) -> pd.Series:
    """Which rows of ``frame`` have a candidate in ``column`` that ``candidates`` names: by id in every
    context, or by (context_id, candidate_id) pair in its context only."""
    wanted = set(candidates)
    pairs = {x for x in wanted if isinstance(x, tuple)}
    ids = wanted - pairs
    hit = frame[column].isin(ids)
    if pairs:
        hit |= pd.Series(list(zip(frame["context_id"], frame[column], strict=True)), index=frame.index,
                         dtype=object).isin(pairs)
    return hit


#: Outputs that are not a system's text: WebNLG 2017's team "vietnam" printed the literal "null"
#: for most triple sets and "tilburg-pipe" left some empty; people rated them 1/1/1.
PLACEHOLDER_TEXTS = frozenset({"", "null"})


def placeholder_candidates(ds: JudgeDataset) -> pd.DataFrame:
    """The candidates of ``ds`` whose text is a placeholder (:data:`PLACEHOLDER_TEXTS`, ignoring case
    and surrounding space): context_id, candidate_id, system, text."""
    frame = ds.frame
    mask = frame["text"].astype(str).str.strip().str.lower().isin(PLACEHOLDER_TEXTS)
    return frame.loc[mask, ["context_id", "candidate_id", "system", "text"]].reset_index(drop=True)


def placeholder_outputs(ds: JudgeDataset) -> set[tuple[str, str]]:
    """The placeholder outputs of ``ds`` as (context_id, candidate_id) pairs: each left out in its own
    context only (a candidate id names a team's output in every context)."""
    found = placeholder_candidates(ds)
    return set(zip(found["context_id"], found["candidate_id"], strict=True))


def placeholder_team_candidates(ds: JudgeDataset) -> set[str]:
    """The candidate ids of the teams (systems) with at least one placeholder output in ``ds``, left out
    in every context: what the comparative chapter's headline WebNLG reading leaves out (empty when no
    output is a placeholder). The outputs they name: ``ds.frame["candidate_id"].isin(...)``."""
    teams = set(placeholder_candidates(ds)["system"])
    return set(ds.frame.loc[ds.frame["system"].isin(teams), "candidate_id"])


def drop_candidates(comparisons: pd.DataFrame, candidate_ids: Candidates) -> pd.DataFrame:
    """The comparison frame as if ``candidate_ids`` (ids or (context_id, candidate_id) pairs) had never
    been candidates: every comparison that involves one is removed and ``i``/``j`` are renumbered within
    each context, so the remaining matrices are full and their win ratios rank only the others."""
    _require(comparisons, ["context_id", "i", "j", "candidate_a", "candidate_b"], "comparisons")
    candidate_ids = set(candidate_ids)
    if not candidate_ids:
        return comparisons
    kept = comparisons[~held(comparisons, "candidate_a", candidate_ids) & ~held(comparisons, "candidate_b", candidate_ids)]
    parts = []
    for _, part in kept.groupby("context_id", sort=False):
        order = {old: new for new, old in enumerate(sorted(set(part["i"]) | set(part["j"])))}
        parts.append(part.assign(i=part["i"].map(order), j=part["j"].map(order)))
    return pd.concat(parts, ignore_index=True) if parts else kept.iloc[0:0]


def restrict_runs(
    comparisons: Mapping[tuple[str, str], pd.DataFrame],
    scores: Mapping[tuple[str, str], Mapping[str, pd.DataFrame]],
    dataset: str,
    candidate_ids: Candidates,
) -> tuple[dict[tuple[str, str], pd.DataFrame], dict[tuple[str, str], dict[str, pd.DataFrame]]]:
    """A chapter's runs (keyed by ``(dataset, model)``) with ``candidate_ids`` of ``dataset`` left out
    (:func:`drop_candidates` for comparisons; rows dropped from every scoring reading)."""
    candidate_ids = set(candidate_ids)
    kept_comparisons = {
        key: drop_candidates(frame, candidate_ids) if key[0] == dataset else frame for key, frame in comparisons.items()
    }
    kept_scores = {
        key: ({reading: frame[~held(frame, "candidate_id", candidate_ids)] for reading, frame in parts.items()}
              if key[0] == dataset else dict(parts))
        for key, parts in scores.items()
    }
    return kept_comparisons, kept_scores


#: The dataset whose candidates include placeholders; every chapter ranks it without those teams.
PLACEHOLDER_DATASET = "webnlg"


def without_candidates(ds: JudgeDataset, candidate_ids: Candidates) -> JudgeDataset:
    """``ds`` as if ``candidate_ids`` had never been candidates (same info, order kept)."""
    return JudgeDataset(ds.frame[~held(ds.frame, "candidate_id", candidate_ids)].copy(), ds.info)


def headline_reading(
    comparisons: pd.DataFrame, datasets: Mapping[str, JudgeDataset], *, dataset: str = PLACEHOLDER_DATASET
) -> tuple[pd.DataFrame, dict[str, JudgeDataset]]:
    """The book's one WebNLG candidate set, for chapters that read a comparison frame (bias,
    subsets, runtime): the comparisons and datasets without the teams that have placeholder outputs
    (:func:`placeholder_team_candidates`), exactly as the comparative chapter's headline ranks them.
    Other datasets pass unchanged. Returns the frame and the datasets to score it against."""
    if dataset not in datasets:
        return comparisons, dict(datasets)
    dropped = placeholder_team_candidates(datasets[dataset])
    if not dropped:
        return comparisons, dict(datasets)
    _require(comparisons, ["dataset"], "comparisons")
    mine = comparisons["dataset"] == dataset
    kept = pd.concat([comparisons[~mine], drop_candidates(comparisons[mine], dropped)], ignore_index=True)
    return kept, {name: without_candidates(ds, dropped) if name == dataset else ds for name, ds in datasets.items()}
