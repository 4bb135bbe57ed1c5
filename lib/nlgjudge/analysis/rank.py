"""The statistics half of ``nlgjudge rank``: judgments in, leaderboard, intervals and warnings out.

Input is the judging half's frame (:func:`nlgjudge.studies.rank.judge_comparisons`): one row per
comparison, ``first`` in position A, its P(A), and ``identical`` for two equal texts (a tie, 0.5).
Everything here is the book's, under the book's names:

* **Debiasing** (seed 000 eq. 10, the "pooled" scope of :data:`nlgjudge.analysis.bias.THRESHOLD_SCOPES`):
  one threshold tau fitted on all the run's model comparisons, so that P(A) = 0.5 after it; a
  comparison's decision is 1 (first wins) above tau, 0 below, the exact tie split at tau.
* **Score**: the Bradley-Terry log-strength fitted by choix on the debiased decisions (mean 0 over
  the systems; a difference of 1 means odds of e = 2.7 to 1).
* **Interval**: contexts are the independent units, so the whole analysis (threshold included) is
  redone on contexts resampled with replacement; the interval is ``score +- t_{n-1} x`` the bootstrap
  standard error, with n the number of contexts (valid at small n where a percentile interval is
  too narrow, and always containing the score).
* **Resolved order**: two systems next to each other in the ranking are "resolved" when the same
  interval of their score *difference*, computed on the same resamples (paired), lies above zero:
  the book's claim rule (:func:`nlgjudge.stats.claims.claim_verdict`) says "supported".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from nlgjudge.safety import markdown_text
from nlgjudge.analysis.judges import whole_run_agreement
from nlgjudge.stats.degenerate import degenerate_reason, outcome_words
from nlgjudge.stats.multiplicity import holm_rejections, p_within_error
from nlgjudge.prose import verdict_after_holm
from nlgjudge.analysis.people import people_ranking, ranking_correlation
from nlgjudge.stats import bradley_terry_from_wins, debias_threshold
from nlgjudge.stats.bias import threshold_decisions_values
from nlgjudge.register import MONTE_CARLO_Z
from nlgjudge.register import verdict as registered_verdict
from nlgjudge.stats.claims import NOT_RESOLVED, SUPPORTED
from nlgjudge.stats.intervals import BOOTSTRAP_SE_METHOD, SMALL_N, bootstrap_end_error, bootstrap_se_interval

LEADERBOARD_COLUMNS = ["system", "rank", "score", "ci_low", "ci_high", "wins", "comparisons", "win_rate", "contexts"]
#: |P(A) - 0.5| above this before debiasing is called a strong positional bias.
STRONG_BIAS = 0.15
#: |p - 0.5| below this is a tie; more than TIE_SHARE of the comparisons tied is "many ties".
TIE_MARGIN, TIE_SHARE = 0.01, 0.2
INTERVAL_METHOD = f"{BOOTSTRAP_SE_METHOD} (contexts resampled, the debiasing threshold refitted in each resample)"


@dataclass(frozen=True)
class RankAnalysis:
    """Everything a ranking run reports."""

    leaderboard: pd.DataFrame
    judgments: pd.DataFrame
    """The judging frame with the debiased ``decision`` (1 = ``first`` wins) added."""
    win_rates: pd.DataFrame
    """Systems x systems: the share of their comparisons the row system won (debiased); NaN if never compared."""
    adjacent: pd.DataFrame
    """Each system against the next in the ranking: score difference, its paired interval, resolved."""
    tau: float
    p_a_before: float
    p_a_after: float
    n_contexts: int
    n_model_comparisons: int
    n_identical: int
    n_ties: int
    confidence: float
    n_boot: int
    n_boot_failed: int = 0
    """Resamples whose Bradley-Terry fit does not exist (left out of the intervals, and warned about)."""
    judge_gate: str | None = None
    """The book's judge screen's reason (:mod:`nlgjudge.stats.degenerate`), None for a judge that passes."""
    judge_test: str = "not run: no comparison was judged by the model"
    """The test's outcome in words for any judge (:func:`nlgjudge.stats.degenerate.outcome_words`)."""
    warnings: list[str] = field(default_factory=list)


def debiased(judgments: pd.DataFrame) -> tuple[np.ndarray, float, float, float]:
    """Debiased decisions for every row (identical texts: 0.5), tau, P(A) before and after."""
    judged = ~judgments["identical"].to_numpy(bool)
    values = judgments["p_a"].to_numpy(float)
    decisions = np.full(len(judgments), 0.5)
    if not judged.any():
        return decisions, float("nan"), float("nan"), float("nan")
    threshold = debias_threshold(values[judged])
    decisions[judged] = threshold_decisions_values(values[judged], threshold.tau, threshold.tie_weight)
    return decisions, threshold.tau, threshold.p_a_before, threshold.p_a_after


def _wins(first: np.ndarray, second: np.ndarray, decisions: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    wins = np.zeros((n, n))
    counts = np.zeros((n, n))
    np.add.at(wins, (first, second), decisions)
    np.add.at(wins, (second, first), 1.0 - decisions)
    np.add.at(counts, (first, second), 1.0)
    np.add.at(counts, (second, first), 1.0)
    return wins, counts


def _scores(first: np.ndarray, second: np.ndarray, decisions: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """Bradley-Terry scores of the systems that took part (NaN for the others), mean 0 over those."""
    wins, counts = _wins(first, second, decisions, n)
    present = np.nonzero(counts.sum(1) > 0)[0]
    scores = np.full(n, np.nan)
    if present.size >= 2:
        scores[present] = bradley_terry_from_wins(wins[np.ix_(present, present)], alpha)
    return scores


def analyse(
    judgments: pd.DataFrame,
    systems: Sequence[str],
    *,
    n_boot: int = 500,
    confidence: float = 0.95,
    seed: int = 0,
    alpha: float = 0.01,
) -> RankAnalysis:
    """Leaderboard, win rates, paired adjacent intervals and warnings from a run's judgments."""
    systems = list(systems)
    if len(judgments) == 0:
        raise ValueError("no comparisons to rank")
    index = {name: k for k, name in enumerate(systems)}
    unknown = sorted(set(judgments["first"]).union(judgments["second"]) - set(index))
    if unknown:
        raise ValueError(f"judgments name systems not in the list: {unknown}")
    n = len(systems)
    first = judgments["first"].map(index).to_numpy(int)
    second = judgments["second"].map(index).to_numpy(int)
    decisions, tau, p_a_before, p_a_after = debiased(judgments)
    scores = _scores(first, second, decisions, n, alpha)

    # Bootstrap over contexts: the threshold, decisions and fit are redone on every resample.
    contexts = judgments["context_id"].to_numpy()
    names, context_index = np.unique(contexts, return_inverse=True)
    rows_of = [np.nonzero(context_index == c)[0] for c in range(len(names))]
    rng = np.random.default_rng(seed)
    replicates = np.full((n_boot, n), np.nan)
    failed = 0
    for b in range(n_boot):
        picked = np.concatenate([rows_of[c] for c in rng.integers(0, len(names), len(names))])
        sample = judgments.iloc[picked]
        sample_decisions, *_ = debiased(sample)
        try:
            replicates[b] = _scores(first[picked], second[picked], sample_decisions, n, alpha)
        except ValueError:
            # A resample can separate the systems perfectly (possible with alpha = 0): it has no
            # estimate. It is counted, reported, and left out of the standard error (never replaced).
            failed += 1
    low, high = bootstrap_se_interval(scores, replicates, len(names), confidence)

    wins, counts = _wins(first, second, decisions, n)
    context_count = judgments.melt(id_vars="context_id", value_vars=["first", "second"]).groupby("value")["context_id"].nunique()
    # a system judged in one context only has no spread over contexts to resample: no interval (the resamples
    # that hold it all hold the same context, so their spread would pass for a precision it does not have)
    single = np.array([context_count.get(s, 0) < 2 for s in systems])
    low, high = np.where(single, np.nan, low), np.where(single, np.nan, high)
    board = pd.DataFrame({
        "system": systems, "score": scores, "ci_low": low, "ci_high": high,
        "wins": wins.sum(1), "comparisons": counts.sum(1).astype(int),
        "contexts": [int(context_count.get(s, 0)) for s in systems],
    })
    board["win_rate"] = np.where(board["comparisons"] > 0, board["wins"] / board["comparisons"].clip(lower=1), np.nan)
    board = board.sort_values(["score", "system"], ascending=[False, True], na_position="last").reset_index(drop=True)
    board["rank"] = tied_ranks(board["score"].to_numpy(float))
    board = board[LEADERBOARD_COLUMNS]

    with np.errstate(invalid="ignore", divide="ignore"):
        rates = np.where(counts > 0, wins / np.where(counts > 0, counts, 1), np.nan)
    win_rates = pd.DataFrame(rates, index=systems, columns=systems)
    order = [s for s in board["system"] if np.isfinite(scores[index[s]])]
    model_judged = judgments[~judgments["identical"].to_numpy(bool)]
    test = whole_run_agreement(model_judged) if len(model_judged) else None
    gate = degenerate_reason(test) if test is not None else None
    adjacent = _adjacent(order, index, scores, replicates, len(names), confidence, gate)

    out = judgments.copy()
    out["decision"] = decisions
    judged = ~judgments["identical"].to_numpy(bool)
    n_ties = int((np.abs(judgments["p_a"].to_numpy(float)[judged] - 0.5) < TIE_MARGIN).sum())
    analysis = RankAnalysis(
        leaderboard=board, judgments=out, win_rates=win_rates, adjacent=adjacent, tau=tau,
        p_a_before=p_a_before, p_a_after=p_a_after, n_contexts=len(names),
        n_model_comparisons=int(judged.sum()), n_identical=int((~judged).sum()), n_ties=n_ties,
        confidence=confidence, n_boot=n_boot, n_boot_failed=failed, judge_gate=gate,
        judge_test=outcome_words(test) if test is not None else RankAnalysis.judge_test,
    )
    analysis.warnings.extend(statistical_warnings(analysis))
    return analysis


def _adjacent(order: list[str], index: dict[str, int], scores: np.ndarray, replicates: np.ndarray, n_units: int,
              confidence: float, gate: str | None = None) -> pd.DataFrame:
    """Each ranked system against the next: the score difference and its interval on the same resamples (paired)."""
    rows = []
    p_largest, p_smallest = [], []
    for upper, lower in zip(order, order[1:]):
        i, j = index[upper], index[lower]
        gap = np.array(scores[i] - scores[j])
        resampled = replicates[:, i] - replicates[:, j]
        low, high = bootstrap_se_interval(gap, resampled, n_units, confidence)
        # the registered claim "upper above lower" (rank.neighbours: its threshold and minimum contexts);
        # an end within the resamples' Monte Carlo error of 0 is borderline, never decided by the seed
        mc_se = bootstrap_end_error(float(high) - float(gap), int(np.isfinite(resampled).sum()))
        verdict = registered_verdict("rank.neighbours", float(gap), float(low), float(high), n_units, degenerate=gate,
                                     monte_carlo_se=mc_se)
        # the p-values Holm's correction reads: the largest and smallest that resamples within three Monte
        # Carlo errors of the bootstrap SE could give (the estimate is the full data's, no draw moves it)
        se_error = mc_se / float(scipy_stats.t.ppf((1 + confidence) / 2, max(n_units - 1, 1)))
        p_high, p_low = p_within_error(float(gap), float(low), float(high), n_units, 0.0, 0.0, se_error, MONTE_CARLO_Z,
                                       confidence)
        rows.append({"higher": upper, "lower": lower, "difference": float(gap), "ci_low": float(low), "ci_high": float(high),
                     "verdict": verdict.verdict, "resolved": verdict.verdict == SUPPORTED,
                     "p_value": _interval_p_value(float(gap), float(low), float(high), n_units, confidence)})
        p_largest.append(p_high)
        p_smallest.append(p_low)
    frame = pd.DataFrame(rows, columns=["higher", "lower", "difference", "ci_low", "ci_high", "verdict", "resolved", "p_value"])
    # The neighbouring pairs are one family of questions: Holm's correction (the book's one rule), each
    # pair read at the largest p its resamples' Monte Carlo error allows, so no count hangs on the seed;
    # a pair kept only at its smallest p is borderline: the resamples, not the data, would decide it.
    surely = holm_rejections(np.nan_to_num(np.asarray(p_largest, dtype=float), nan=1.0))
    maybe = holm_rejections(np.nan_to_num(np.asarray(p_smallest, dtype=float), nan=1.0))
    frame["resolved_after_holm"] = frame["resolved"] & surely
    borderline = frame["resolved"] & maybe & ~surely
    # ``verdict`` is the family's (what the leaderboard claims); a pair its own interval resolves but
    # the correction does not is a flag, said in words; ``row_verdict`` keeps the pair's own.
    frame["row_verdict"] = frame["verdict"]
    frame["verdict"] = [(f"{NOT_RESOLVED} ({HOLM_BORDERLINE})" if edge else verdict_after_holm(own, NOT_RESOLVED))
                        if own == SUPPORTED and not kept else own
                        for own, kept, edge in zip(frame["row_verdict"], frame["resolved_after_holm"], borderline, strict=True)]
    # what more contexts would settle a pair left open: at the register's minimal effect, never the observed one
    # (a flag, resolved on its own interval but not after Holm's correction, at Holm's strictest step 0.05 / k)
    frame["contexts_needed"] = [_contexts_needed(low, high, n_units, 0.05 / len(frame) if own == SUPPORTED else 0.05)
                                if str(v).startswith(NOT_RESOLVED) else np.nan
                                for v, own, low, high in zip(frame["verdict"], frame["row_verdict"], frame["ci_low"],
                                                             frame["ci_high"], strict=True)]
    return frame[["higher", "lower", "verdict", "difference", "ci_low", "ci_high", "p_value", "contexts_needed", "row_verdict",
                  "resolved", "resolved_after_holm"]]


#: A pair that Holm's correction keeps at the smallest p its resamples allow, and not at the largest.
HOLM_BORDERLINE = ("borderline: Holm's correction keeps it on some resamples' draws and not on others; "
                   "more resamples (--bootstrap) settle it")


def _contexts_needed(low: float, high: float, n_units: int, alpha: float = 0.05) -> float:
    """Contexts for the pair's interval to leave 0 with 80% power if the true difference were the
    register's minimal effect (:func:`nlgjudge.register.units_needed_for`; NaN: out of reach)."""
    from nlgjudge.register import units_needed_for

    return units_needed_for("rank.neighbours", low, high, n_units, alpha=alpha)


def _interval_p_value(estimate: float, low: float, high: float, n_units: int, confidence: float) -> float:
    """The two-sided p-value of the test behind an ``estimate +- t x SE`` interval (it excludes 0
    exactly when p < 1 - confidence)."""
    from scipy import stats

    if not all(map(np.isfinite, (estimate, low, high))) or n_units < 2:
        return float("nan")
    se = (high - low) / (2.0 * float(stats.t.ppf((1 + confidence) / 2, n_units - 1)))
    if se <= 0:
        return 0.0 if estimate != 0 else 1.0
    return float(2 * stats.t.sf(abs(estimate) / se, n_units - 1))


#: Scores closer than this are equal: differences of the fit's convergence, not of the judge. choix's
#: ILSR stops when its scores move by under 1e-8 an iteration, so two systems tied in theory (equal wins
#: in a balanced design) can differ by a few 1e-9; 1e-6 of log-strength is odds of 1.000001 to 1.
SCORE_NOISE = 1e-6


def tied_ranks(scores: np.ndarray) -> pd.Series:
    """Competition ranks (1, 2, 2, 4) of ``scores`` sorted high to low, systems within
    :data:`SCORE_NOISE` of the one above sharing its rank; NaN scores get no rank."""
    ranks: list[object] = []
    previous, previous_rank = None, 0
    for position, value in enumerate(scores, start=1):
        if not np.isfinite(value):
            ranks.append(pd.NA)
            continue
        if previous is None or abs(previous - value) > SCORE_NOISE * max(1.0, abs(previous)):
            previous_rank = position
        previous = value
        ranks.append(previous_rank)
    return pd.array(ranks, dtype="Int64")


#: Fewer bootstrap resamples than this and the report says its intervals move with the seed.
FEW_RESAMPLES = 200


def statistical_warnings(analysis: RankAnalysis) -> list[str]:
    """What a reader of the leaderboard must know: positional bias, ties, a degenerate judge,
    unresolved orders, too few contexts, systems never compared."""
    notes = []
    if analysis.n_model_comparisons == 0:
        notes.append(f"no comparison was possible: in every context the systems' outputs are identical, so all "
                     f"{analysis.n_identical} ordered pairs are ties by definition and nothing was sent to the judge; the scores "
                     "(0) and intervals ([0, 0]) of the leaderboard say only that, not that the systems were measured equal")
    values = analysis.judgments.loc[~analysis.judgments["identical"], "p_a"].to_numpy(float)
    if analysis.judge_gate:  # the book's judge screen, not passed: its rows are not tested
        notes.append(f"{analysis.judge_gate}; the ranking carries no information from the judge (every order is 'not tested')")
    if np.isfinite(analysis.p_a_before) and abs(analysis.p_a_before - 0.5) > STRONG_BIAS:
        notes.append(f"strong positional bias: position A won {analysis.p_a_before:.0%} of the comparisons before "
                     f"debiasing (threshold tau = {analysis.tau:.3f} brings it to {analysis.p_a_after:.0%}); "
                     "an order-blind judge would be at 50%")
    if values.size and analysis.n_ties / values.size > TIE_SHARE:
        notes.append(f"many ties: {analysis.n_ties} of {values.size} comparisons have |P(A) - 0.5| < {TIE_MARGIN}")
    if analysis.n_contexts < SMALL_N:
        notes.append(f"only {analysis.n_contexts} context(s): the intervals are honest but very wide (or undefined below 2)")
    if analysis.n_boot < FEW_RESAMPLES:
        notes.append(f"only {analysis.n_boot} bootstrap resamples: a standard error from so few moves with the seed, so the "
                     f"intervals and which orders they settle are unstable; use at least {FEW_RESAMPLES} (the default is 500)")
    if analysis.n_boot_failed:
        notes.append(f"{analysis.n_boot_failed} of {analysis.n_boot} bootstrap resamples had no Bradley-Terry estimate "
                     "(perfect separation); the intervals use the other resamples; a regularising alpha > 0 avoids this")
    board = analysis.leaderboard
    finite = board[np.isfinite(board["ci_low"].to_numpy(float)) & np.isfinite(board["ci_high"].to_numpy(float))]
    if analysis.n_model_comparisons and len(finite) > 1 and ((finite["ci_high"] - finite["ci_low"]).abs() < SCORE_NOISE).all():
        notes.append("every interval has zero width: the judge's decisions do not vary across the resampled contexts "
                     "(a judge that answers every comparison alike gives this), so the zero widths are not precision")
    shared = board.groupby("rank", dropna=True)["system"].apply(list)
    shared = shared[shared.map(len) > 1]
    if len(shared):
        notes.append("tied (scores equal within the fit's precision, one rank shared): "
                     + "; ".join(", ".join(names) for names in shared))
    never = analysis.leaderboard.loc[analysis.leaderboard["comparisons"] == 0, "system"].tolist()
    if never:
        notes.append(f"never compared (no score): {', '.join(never)}; raise the budget")
    unresolved = analysis.adjacent[~analysis.adjacent["resolved_after_holm"]]
    if len(unresolved):
        pairs = ", ".join(f"{a} vs {b}" for a, b in zip(unresolved["higher"], unresolved["lower"]))
        flagged = int(analysis.adjacent["resolved"].sum() - analysis.adjacent["resolved_after_holm"].sum())
        extra = (f"; {flagged} of them {'is a flag' if flagged == 1 else 'are flags'} (supported on "
                 f"{'its' if flagged == 1 else 'their'} own interval, not after Holm's correction over the "
                 f"{len(analysis.adjacent)} neighbouring pairs)" if flagged else "")
        notes.append(f"order not resolved ({analysis.confidence:.0%} paired interval of the score difference includes 0, "
                     f"or the pair does not survive Holm's correction): {pairs}{extra}")
    return notes


def _words(name: str) -> set[str]:
    return {w for w in re.split(r"[^a-z0-9]+", name.lower()) if w}


def family_warnings(judge_name: str, family: str, systems: Sequence[str]) -> list[str]:
    """Warn when the judge is one of the contestants or of a contestant's model family (self-preference:
    see the narcissism chapter). Matches the judge's name or its family as words of a system's name."""
    notes = []
    judge_key = judge_name.lower().rsplit("/", 1)[-1]
    family_key = family.lower().strip()
    for system in systems:
        lowered = system.lower()
        if judge_key and judge_key in lowered:
            notes.append(f"the judge {judge_name} is the system {system!r} itself: it may prefer its own outputs "
                         "(self-preference); confirm with a judge of another family")
        elif family_key and any(w.startswith(family_key) for w in _words(system)):
            notes.append(f"the judge {judge_name} is of the {family} family, like the system {system!r}: it may prefer "
                         "its family's outputs; confirm with a judge of another family")
    return notes


def pair_records(analysis: RankAnalysis, systems: Sequence[str]) -> pd.DataFrame:
    """One row per context and unordered pair: both orders' P(A) (None where that order was not
    judged) and debiased decisions, and the pair's debiased preference for ``system_1``."""
    order = {name: k for k, name in enumerate(systems)}
    frame = analysis.judgments
    rows: dict[tuple[str, str, str], dict[str, object]] = {}
    for record in frame.itertuples(index=False):
        one, two = sorted((record.first, record.second), key=order.__getitem__)
        row = rows.setdefault((record.context_id, one, two), {
            "context_id": record.context_id, "system_1": one, "system_2": two, "identical": bool(record.identical),
            "p_a_1_first": None, "p_a_2_first": None, "decision_1_first": None, "decision_2_first": None,
        })
        suffix = "1_first" if record.first == one else "2_first"
        row[f"p_a_{suffix}"] = None if record.identical else float(record.p_a)
        row[f"decision_{suffix}"] = float(record.decision)
    out = pd.DataFrame(list(rows.values()))
    if out.empty:
        return out
    # P(system_1 preferred) from the orders judged: y when it is first, 1 - y when it is second.
    first_side = out["decision_1_first"].astype(float)
    second_side = 1.0 - out["decision_2_first"].astype(float)
    out["preference_1"] = pd.concat([first_side, second_side], axis=1).mean(axis=1)
    return out


def report_markdown(
    analysis: RankAnalysis, *, judge: str, runtime: str, prompt: str, budget: float, planned: int, possible: int,
    extra_warnings: Sequence[str] = (), seed: int | None = None,
) -> str:
    """The run's ``report.md`` (``seed``: the run's, which it names so that the report can be reproduced)."""
    board = analysis.leaderboard
    widths = (board["ci_high"] - board["ci_low"]).dropna()
    lines = [
        "# Ranking report", "",
        f"- Judge: {markdown_text(judge)} ({markdown_text(runtime)})",
        f"- Prompt: {markdown_text(prompt)}",
        f"- Contexts: {analysis.n_contexts}; systems: {len(board)}",
        f"- Comparisons: {analysis.n_model_comparisons} judged by the model of {possible} ordered pairs of different outputs "
        f"(budget {budget:g}: {analysis.n_model_comparisons / possible:.1%} used)" if possible
        else "- Comparisons: none possible (every context's outputs are identical; see the warnings)",
        f"- Identical outputs (ties, not judged): {analysis.n_identical}",
        *([f"- Seed: {seed} (it draws the pairs a budget judges and the bootstrap's resamples: the same seed, the same report)"]
          if seed is not None else []),
        f"- The judge {analysis.judge_test} (the book's judge screen, the same for every run: do a pair's two orders "
        "agree more often than chance after debiasing, with the whole interval over contexts above the chance level?)",
        f"- P(A) before debiasing: {analysis.p_a_before:.3f}; after: {analysis.p_a_after:.3f} (threshold tau = {analysis.tau:.4f}, "
        "fitted on all this run's comparisons)",
        f"- Score: Bradley-Terry log-strength (mean 0) on the debiased decisions; interval: {INTERVAL_METHOD}, "
        f"{analysis.confidence:.0%}, {analysis.n_boot} resamples",
        f"- Interval width: median {widths.median():.3f}, max {widths.max():.3f}" if len(widths) else "- Interval width: undefined",
        "", "## Leaderboard", "", _markdown_table(board), "",
        "## Adjacent systems (paired interval of the score difference)", "",
        _markdown_table(analysis.adjacent) if len(analysis.adjacent) else "(fewer than two ranked systems)", "",
        "## Warnings", "",
    ]
    notes = list(extra_warnings) + analysis.warnings
    lines += [f"- {markdown_text(note)}" for note in notes] if notes else ["- none"]
    if planned != analysis.n_model_comparisons:
        lines.append(f"- planned {planned} comparisons but made {analysis.n_model_comparisons}")
    from nlgjudge.data.aimed_at_judge import COVERAGE  # what the text checks look for, said whatever they found

    lines += ["", "## What the checks of the texts cannot see", "",
              f"Before judging, every output, source and shown reference was searched for {COVERAGE}. These checks are "
              "patterns: a text can still speak to the judge in words or a disguise they do not know, so read a sample "
              "of the outputs of any system that wins more than you expect before trusting its place."]
    return "\n".join(lines) + "\n"


def _markdown_table(frame: pd.DataFrame) -> str:
    def cell(value: object) -> str:
        if isinstance(value, (float, np.floating)):
            return "" if np.isnan(value) else f"{value:.3f}"
        return "" if value is pd.NA else markdown_text(value)

    header = "| " + " | ".join(markdown_text(c) for c in frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *body])


# --------------------------------------------------------------------------------------------
# The "Rank your own outputs" chapter's tables


def compare_with_people(leaderboard: pd.DataFrame, people: pd.DataFrame, column: str = "ACU") -> pd.DataFrame:
    """The judge's leaderboard beside the book's people ranking
    (:func:`nlgjudge.analysis.people.people_ranking`: mean ``column`` per system over the articles
    annotated for all of them; ``people``: context_id, system, ``column``, NaN where a system was not
    annotated; pass the rows of the contexts the leaderboard ranked). Columns: system, rank, score,
    people_mean, people_contexts, people_rank."""
    ranking = people_ranking(people, list(leaderboard["system"]), column).set_index("system")
    table = leaderboard[["system", "rank", "score"]].copy()
    table["people_mean"] = table["system"].map(ranking["people_mean"])
    table["people_contexts"] = table["system"].map(ranking["people_articles"]).fillna(0).astype(int)
    table["people_rank"] = table["people_mean"].rank(ascending=False, method="min").astype("Int64")
    return table


def rank_agreement(table: pd.DataFrame) -> dict[str, object]:
    """Kendall's tau and Spearman's rho between the judge's scores and the people ranking's means, on
    the systems both rank (``n``; NaN below 3), with ``verdict`` and ``reading`` from
    :func:`nlgjudge.analysis.people.ranking_correlation` (a description, not a test, over few systems)."""
    indexed = table.set_index("system")
    return ranking_correlation(indexed["score"], indexed["people_mean"])


def budget_table(full: RankAnalysis, runs: dict[float, RankAnalysis]) -> pd.DataFrame:
    """Each budget's run against the full one: comparisons made, median interval width, Kendall's tau
    of its scores with the full run's, whether its top system is the full run's, and how many
    neighbouring pairs are resolved after Holm's correction (the uncorrected count beside it)."""
    reference = full.leaderboard.set_index("system")["score"]
    top = full.leaderboard["system"].iloc[0]
    rows = []
    for budget, run in sorted({1.0: full, **runs}.items(), reverse=True):
        board = run.leaderboard.set_index("system")
        common = reference.dropna().index.intersection(board["score"].dropna().index)
        tau = scipy_stats.kendalltau(reference[common], board.loc[common, "score"]).statistic if len(common) >= 3 else np.nan
        rows.append({
            "budget": budget, "comparisons": run.n_model_comparisons,
            "median_interval_width": float((board["ci_high"] - board["ci_low"]).median()),
            "kendall_with_full": float(tau), "top_system": run.leaderboard["system"].iloc[0],
            "same_top": bool(run.leaderboard["system"].iloc[0] == top),
            # counted as the leaderboard counts them: after Holm's correction, the uncorrected count beside
            "resolved_adjacent": int(run.adjacent["resolved_after_holm"].sum()),
            "resolved_adjacent_uncorrected": int(run.adjacent["resolved"].sum()), "adjacent_pairs": len(run.adjacent),
        })
    return pd.DataFrame(rows)
