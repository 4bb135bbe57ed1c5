"""The book's one family-wise rule: Holm's step-down correction at 0.05 over a family of rows.

A chapter that counts verdicts over several cells ("supported in k of n dataset-aspects") or reads
one claim over several cells tests a *family* of hypotheses; each row's own interval is a test at
5%, so among n true nulls about 0.05 n rows would be "resolved" by chance alone. The book counts a
row as resolved in a family only when it survives Holm's correction (``statsmodels``'
``multipletests(method="holm")``) of the rows' own two-sided p-values at :data:`ALPHA`, and prints
the uncorrected count beside it where the two differ. A single row resolved against a family that
does not survive is a flag, never the family's verdict.

Pure: p-values in, decisions out; no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats

ALPHA = 0.05
RULE = "Holm's correction at 0.05 over the family's rows (their own two-sided tests)"


def holm_rejections(p_values: Sequence[float], alpha: float = ALPHA) -> np.ndarray:
    """Which rows Holm's procedure rejects at family-wise level ``alpha``. NaN p-values (rows not
    tested) are left out of the family and never rejected."""
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"p_values must be one-dimensional; got shape {p.shape}")
    finite = np.isfinite(p)
    if np.any((p[finite] < 0) | (p[finite] > 1)):
        raise ValueError("p-values must lie in [0, 1]")
    out = np.zeros(p.shape, dtype=bool)
    if finite.any():
        out[finite] = multipletests(p[finite], alpha=alpha, method="holm")[0]
    return out


def paired_t_p_value(per_unit: Sequence[float], threshold: float = 0.0) -> float:
    """Two-sided p-value of the paired (one-sample) t test of per-unit values against ``threshold``:
    the test whose 95% interval the claims tables print (it excludes the threshold iff p < 0.05)."""
    x = np.asarray(per_unit, dtype=float)
    x = x[np.isfinite(x)]
    if x.size < 2:
        return float("nan")
    if np.ptp(x) == 0:
        return 0.0 if x[0] != threshold else 1.0
    return float(stats.ttest_1samp(x, threshold).pvalue)


def share_p_value(per_unit: Sequence[float], threshold: float) -> float:
    """The p-value that goes with :func:`nlgjudge.stats.intervals.share_interval`: the paired t test,
    except when every unit sits at the same end of [0, 1], where the exact binomial test of 0 (or n)
    successes in n units against ``threshold`` matches the exact interval."""
    x = np.asarray(per_unit, dtype=float)
    x = x[np.isfinite(x)]
    if x.size >= 2 and 0.0 < threshold < 1.0 and (np.all(x == 0.0) or np.all(x == 1.0)):
        return float(stats.binomtest(int(x.size if x[0] == 1.0 else 0), int(x.size), threshold).pvalue)
    return paired_t_p_value(x, threshold)


def corrected_count(verdicts: Sequence[str], p_values: Sequence[float], verdict: str, alpha: float = ALPHA) -> tuple[int, int]:
    """(rows with ``verdict`` that survive Holm over the family, rows with ``verdict`` uncorrected)."""
    kept = holm_rejections(p_values, alpha)
    raw = [v == verdict for v in verdicts]
    return int(sum(r and k for r, k in zip(raw, kept, strict=True))), int(sum(raw))


def count_words(corrected: int, uncorrected: int) -> str:
    """"5" or "1 (5 before Holm's correction)": the corrected count with the uncorrected one beside it."""
    return str(corrected) if corrected == uncorrected else f"{corrected} ({uncorrected} before Holm's correction)"


def p_from_interval(estimate: float, low: float, high: float, n: int, threshold: float = 0.0,
                    confidence: float = 0.95) -> float:
    """The two-sided p-value of the test behind an interval ``estimate +- q x SE`` (q the t quantile,
    n - 1 degrees of freedom) against ``threshold``: it excludes the threshold exactly when p < 1 -
    confidence. For a percentile bootstrap interval (not symmetric) SE is its half-width over q, an
    approximation. NaN without a finite interval or with n < 2."""
    if n < 2 or not all(np.isfinite([estimate, low, high])):
        return float("nan")
    q = float(stats.t.ppf((1 + confidence) / 2, n - 1))
    se = (high - low) / (2.0 * q)
    if se <= 0:
        return 0.0 if estimate != threshold else 1.0
    return float(2 * stats.t.sf(abs(estimate - threshold) / se, n - 1))


def p_within_error(estimate: float, low: float, high: float, n: int, threshold: float, estimate_error: float,
                   se_error: float, z: float, confidence: float = 0.95) -> tuple[float, float]:
    """The largest and the smallest p (:func:`p_from_interval`) that random draws within ``z`` of
    their Monte Carlo errors could give this row: the estimate moved ``z x estimate_error`` toward
    (away from) the threshold, never past it, and its SE ``z x se_error`` larger (smaller). Holm's
    procedure rejects no fewer rows when any p is smaller, so a row it rejects with every row read at
    its largest p stays rejected for any such draws; one rejected at the smallest p only is the
    draws' to decide. Without an interval both are NaN."""
    if n < 2 or not all(np.isfinite([estimate, low, high])):
        return float("nan"), float("nan")
    if not (estimate_error >= 0 and se_error >= 0 and z >= 0):
        raise ValueError(f"errors and z must be finite distances >= 0; got {estimate_error}, {se_error}, {z}")
    q = float(stats.t.ppf((1 + confidence) / 2, n - 1))
    se = (high - low) / (2.0 * q)
    gap = abs(estimate - threshold)

    def p(distance: float, spread: float) -> float:
        if spread <= 0:
            return 0.0 if distance > 0 else 1.0
        return float(2 * stats.t.sf(distance / spread, n - 1))

    return (p(max(gap - z * estimate_error, 0.0), se + z * se_error),
            p(gap + z * estimate_error, max(se - z * se_error, 0.0)))
