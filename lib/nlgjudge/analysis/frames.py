"""The comparison frame: one row per ordered comparison, shared by every chapter that ranks.

:func:`nlgjudge.studies.comparative.run_comparative` returns it; the bias, subsets and
comparative chapters read it. Columns: ``model``, ``dataset``, then :data:`COMPARISON_COLUMNS`
and ``p_a`` (the judge's probability for position A). A *comparison set* is one model, dataset,
prompt template and aspect (:data:`SET_KEYS`): one debiasing threshold, one P(A).

Matrices follow :mod:`nlgjudge.stats`: ``P[i, j]`` = P(candidate i preferred | i in position A),
NaN where the comparison was not made.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from nlgjudge.data import JudgeDataset

#: The columns that describe one comparison (besides model, dataset and p_a).
COMPARISON_COLUMNS = ["context_id", "template", "aspect", "i", "j", "candidate_a", "candidate_b"]
#: The columns that identify one comparison set (one tau, one P(A)).
SET_KEYS = ["model", "dataset", "template", "aspect"]
REQUIRED_COLUMNS = [*SET_KEYS, "context_id", "i", "j", "p_a"]


def check_comparisons(comparisons: pd.DataFrame) -> None:
    """Raise a clear error unless ``comparisons`` is a comparative frame with at least one row."""
    missing = [c for c in REQUIRED_COLUMNS if c not in comparisons.columns]
    if missing:
        raise ValueError(
            f"the comparison frame lacks columns {missing}; pass the frame returned by run_comparative "
            f"(it has {list(comparisons.columns)})"
        )
    if comparisons.empty:
        raise ValueError("the comparison frame is empty: no comparisons to analyse")
    bad = comparisons["p_a"].isna() | ~comparisons["p_a"].between(0.0, 1.0)
    if bad.any():
        raise ValueError(f"{int(bad.sum())} comparison(s) have P(A) outside [0, 1] or missing")
    duplicated = comparisons.duplicated([*SET_KEYS, "context_id", "i", "j"])
    if duplicated.any():
        raise ValueError(f"{int(duplicated.sum())} comparison(s) appear twice; concatenate each judge's run once")


def pair_matrix(i: np.ndarray, j: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``P[i, j] = value`` of each comparison (candidate i in position A), NaN for pairs not compared."""
    n = int(max(i.max(), j.max())) + 1
    matrix = np.full((n, n), np.nan)
    matrix[i, j] = values
    return matrix


def comparison_matrices(comparisons: pd.DataFrame) -> dict[tuple[str, int, str], np.ndarray]:
    """``{(context_id, template, aspect): P}`` with ``P[i, j]`` = P(A) for i in position A, NaN unseen."""
    out: dict[tuple[str, int, str], np.ndarray] = {}
    for (context_id, template, aspect), group in comparisons.groupby(["context_id", "template", "aspect"], sort=False):
        matrix = pair_matrix(group["i"].to_numpy(), group["j"].to_numpy(), group["p_a"].to_numpy())
        out[(str(context_id), int(template), str(aspect))] = matrix
    return out


def comparison_sets(comparisons: pd.DataFrame) -> dict[tuple[str, str, int, str], dict[str, np.ndarray]]:
    """``{(model, dataset, template, aspect): {context_id: P}}`` (P as in :func:`comparison_matrices`)."""
    check_comparisons(comparisons)
    out: dict[tuple[str, str, int, str], dict[str, np.ndarray]] = {}
    for (model, dataset), group in comparisons.groupby(["model", "dataset"], sort=False):
        for (context_id, template, aspect), matrix in comparison_matrices(group).items():
            out.setdefault((str(model), str(dataset), template, aspect), {})[context_id] = matrix
    return out


def gold_scores(ds: JudgeDataset, aspect: str) -> dict[str, np.ndarray]:
    """Human scores per context, in the candidates' order (the order used by the matrices)."""
    return {cid: ds.candidates(cid)[aspect].to_numpy(dtype=float) for cid in ds.context_ids()}
