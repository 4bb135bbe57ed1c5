"""The Elo chapter (seed 004, Harang): encounters, judges' outcomes, Elo, Bradley-Terry, kappa, Fig. 5.

One definition of an *encounter*: one article and one unordered pair of contestants. Encounters
are visited in a seeded random order, and each has a seeded random *display order* (``first``,
``second``): the order a judge that sees one order is shown, as the paper randomises it.

An *outcome* frame has one row per encounter and judge: ``y`` = 1 when ``second`` won, 0 when
``first`` won, 0.5 for a tie, NaN when the judge could not judge it (a reference-based judge
facing the reference, a contestant without a human score). Every function takes and returns
frames; nothing here calls a model or reads a file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from scipy.stats import t as t_dist

from nlgjudge.analysis.judges import whole_run_gates, whole_run_table, whole_run_words
from nlgjudge.stats import (
    DebiasThreshold,
    binned_regression,
    bradley_terry_from_wins,
    cohen_kappa,
    debias_threshold,
    elo_from_pairs,
)
from nlgjudge.analysis.people import exact_kendall_p, ranking_correlation, systems_test
from nlgjudge.stats.bias import threshold_decisions_values
from nlgjudge.stats.claims import (
    CONTRADICTED,
    NOT_RESOLVED,
    NOT_TESTED,
    SUPPORTED,
    ClaimVerdict,
    PairEvidence,
    kendall_units_needed,
    ordering_verdict,
)
from nlgjudge.register import MONTE_CARLO_Z, claim as registered_claim, units_needed_for, verdict as registered_verdict
from nlgjudge.stats.agreement import resampled_kappas, unit_tables
from nlgjudge.stats.intervals import bootstrap_end_error, bootstrap_se_interval
from nlgjudge.stats.multiplicity import count_words, holm_rejections, p_within_error

ENCOUNTER_COLUMNS = ["encounter", "context_id", "first", "second"]
OUTCOME_COLUMNS = [*ENCOUNTER_COLUMNS, "judge", "y"]
#: Seed 004's Elo settings (Annex): scale b, initial rating, step size scheduled from 50 down to 1.
ELO_SETTINGS = {"b": 400.0, "theta0": 1000.0, "step_start": 50.0, "step_end": 1.0}
#: Fig. 5's rule: a model pair is fitted only if each model is chosen in at least 10% of its encounters.
MIN_SELECTION_RATIO = 0.10


def encounters(context_ids: Sequence[str], contestants: Sequence[str], seed: int = 0) -> pd.DataFrame:
    """Every (article, unordered pair of contestants), in a seeded random order with a seeded random
    display order. Columns :data:`ENCOUNTER_COLUMNS`; ``encounter`` numbers the visiting order."""
    if isinstance(contestants, str) or len(set(contestants)) != len(contestants) or len(contestants) < 2:
        raise ValueError(f"contestants must be at least two distinct names; got {contestants!r}")
    if not context_ids:
        raise ValueError("no articles: an encounter needs an article")
    rng = np.random.default_rng(seed)
    rows = [(c, a, b) for c in context_ids for a, b in combinations(contestants, 2)]
    order = rng.permutation(len(rows))
    swap = rng.random(len(rows)) < 0.5
    out = []
    for k, index in enumerate(order):
        context_id, a, b = rows[index]
        out.append((k, context_id, *((b, a) if swap[k] else (a, b))))
    return pd.DataFrame(out, columns=ENCOUNTER_COLUMNS)


def _scored(encounters: pd.DataFrame, scores: pd.Series, judge: str) -> pd.DataFrame:
    """Outcomes of a judge that prefers the higher score (NaN scores: not judged; equal: a tie)."""
    missing = {(c, s) for c, s in zip(encounters["context_id"], encounters["first"], strict=True)} | {
        (c, s) for c, s in zip(encounters["context_id"], encounters["second"], strict=True)
    }
    absent = sorted(missing - set(scores.index))[:3]
    if absent:
        raise KeyError(f"{judge}: no score for (article, contestant) {absent}; give a NaN for 'cannot judge'")
    first = scores.reindex(pd.MultiIndex.from_frame(encounters[["context_id", "first"]])).to_numpy(dtype=float)
    second = scores.reindex(pd.MultiIndex.from_frame(encounters[["context_id", "second"]])).to_numpy(dtype=float)
    y = np.where(second > first, 1.0, np.where(second < first, 0.0, 0.5))
    y[np.isnan(first) | np.isnan(second)] = np.nan
    return encounters[ENCOUNTER_COLUMNS].assign(judge=judge, y=y)


def score_outcomes(encounters: pd.DataFrame, scores: pd.DataFrame, column: str, judge: str) -> pd.DataFrame:
    """Outcomes of a judge that picks the contestant with the higher ``column`` in ``scores`` (one
    row per article and contestant: ``context_id``, ``system``, ``column``), e.g. ROUGE-1 against the
    reference (the paper's ROUGE judge) or people's ACU score (RoSE)."""
    indexed = scores.set_index(["context_id", "system"])[column]
    if indexed.index.duplicated().any():
        raise ValueError(f"{judge}: scores has several rows for one (article, contestant)")
    return _scored(encounters, indexed, judge)


def llm_outcomes(
    encounters: pd.DataFrame, judged: pd.DataFrame, judge: str, *, both_orders: bool = False,
    threshold: DebiasThreshold | None = None,
) -> pd.DataFrame:
    """Outcomes of an LLM judge from its P(A) of every ordered pair (``judged``: context_id, first,
    second, p_a, as the elo study releases them).

    ``both_orders=False``: the paper's protocol, one prompt per encounter in its display order;
    the judge picks A when P(A) > 0.5 (0.5 exactly is a tie). ``both_orders=True``: both orders,
    each decided with the debiasing threshold ``threshold`` (eq. 10 of the first paper; default:
    fitted on all of ``judged`` so that P(A) = 0.5), averaged: a judge that contradicts itself
    across the two orders gives a tie.
    """
    p = judged.set_index(["context_id", "first", "second"])["p_a"]
    if p.index.duplicated().any():
        raise ValueError(f"{judge}: several P(A) for one ordered pair; pass one template at a time")
    shown = p.reindex(pd.MultiIndex.from_frame(encounters[["context_id", "first", "second"]])).to_numpy(dtype=float)
    if np.isnan(shown).any():
        raise KeyError(f"{judge}: {int(np.isnan(shown).sum())} encounters have no judgement in their display order")
    if not both_orders:
        y = np.where(shown < 0.5, 1.0, np.where(shown > 0.5, 0.0, 0.5))
        return encounters[ENCOUNTER_COLUMNS].assign(judge=judge, y=y)
    swapped = p.reindex(pd.MultiIndex.from_frame(encounters[["context_id", "second", "first"]].set_axis(
        ["context_id", "first", "second"], axis=1))).to_numpy(dtype=float)
    if np.isnan(swapped).any():
        raise KeyError(f"{judge}: {int(np.isnan(swapped).sum())} encounters lack the reversed order")
    fitted = threshold or debias_threshold(p.to_numpy(dtype=float))
    a_wins_shown = threshold_decisions_values(shown, fitted.tau, fitted.tie_weight)  # first is in A
    a_wins_swapped = threshold_decisions_values(swapped, fitted.tau, fitted.tie_weight)  # second is in A
    second_wins = ((1.0 - a_wins_shown) + a_wins_swapped) / 2
    return encounters[ENCOUNTER_COLUMNS].assign(judge=judge, y=second_wins)


def _judged(outcomes: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in OUTCOME_COLUMNS if c not in outcomes.columns]
    if missing:
        raise ValueError(f"an outcome frame needs columns {missing}")
    return outcomes[outcomes["y"].notna()]


def elo_trajectory(outcomes: pd.DataFrame, contestants: Sequence[str], **settings: float) -> pd.DataFrame:
    """The Annex's Elo over the judged encounters in their visiting order: one row per update and
    contestant (``update``, ``contestant``, ``elo``), update 0 being theta0. Contestants the judge
    never judged stay at theta0 (and are listed, so a reader sees it)."""
    judged = _judged(outcomes).sort_values("encounter")
    index = {name: k for k, name in enumerate(contestants)}
    unknown = sorted((set(judged["first"]) | set(judged["second"])) - set(index))
    if unknown:
        raise ValueError(f"outcomes name contestants {unknown} that are not in {list(contestants)}")
    result = elo_from_pairs(
        judged["first"].map(index).to_numpy(), judged["second"].map(index).to_numpy(), judged["y"].to_numpy(),
        len(contestants), **{**ELO_SETTINGS, **settings},
    )
    frame = pd.DataFrame(result.trajectory, columns=list(contestants))
    frame.index.name = "update"
    return frame.reset_index().melt(id_vars="update", var_name="contestant", value_name="elo")


def final_elo(outcomes: pd.DataFrame, contestants: Sequence[str], **settings: float) -> pd.Series:
    """The Elo after the last judged encounter, by contestant."""
    trajectory = elo_trajectory(outcomes, contestants, **settings)
    last = trajectory[trajectory["update"] == trajectory["update"].max()]
    return last.set_index("contestant")["elo"].reindex(list(contestants))


def order_finals(
    outcomes: pd.DataFrame, contestants: Sequence[str], n_orders: int = 200, seed: int = 0
) -> np.ndarray:
    """Final Elo of every contestant (columns) after each of ``n_orders`` random visiting orders
    (rows) of the same judged encounters."""
    judged = _judged(outcomes)
    index = {name: k for k, name in enumerate(contestants)}
    first, second = judged["first"].map(index).to_numpy(), judged["second"].map(index).to_numpy()
    y = judged["y"].to_numpy()
    rng = np.random.default_rng(seed)
    return np.array([
        elo_from_pairs(first, second, y, len(contestants), seed=rng, **ELO_SETTINGS).ratings for _ in range(n_orders)
    ])


def elo_order_spread(
    outcomes: pd.DataFrame, contestants: Sequence[str], n_orders: int = 200, seed: int = 0
) -> pd.DataFrame:
    """Final Elo over ``n_orders`` random visiting orders of the same judged encounters: Elo depends
    on the order, Bradley-Terry does not. Columns: contestant, median, low (2.5%), high (97.5%), sd."""
    finals = order_finals(outcomes, contestants, n_orders, seed)
    low, median, high = np.percentile(finals, [2.5, 50, 97.5], axis=0)
    return pd.DataFrame({"contestant": list(contestants), "median": median, "low": low, "high": high,
                         "sd": finals.std(axis=0, ddof=1), "n_orders": n_orders})


def win_counts(outcomes: pd.DataFrame, contestants: Sequence[str]) -> np.ndarray:
    """``W[i, j]``: how often contestant i beat j (a tie counts half to each)."""
    judged = _judged(outcomes)
    index = {name: k for k, name in enumerate(contestants)}
    wins = np.zeros((len(contestants), len(contestants)))
    for first, second, y in zip(judged["first"].map(index), judged["second"].map(index), judged["y"], strict=True):
        wins[second, first] += y
        wins[first, second] += 1.0 - y
    return wins


#: Bradley-Terry log-strength -> Elo points (a gap of 400 is odds of 10, as in Elo).
ELO_SCALE = 400.0 / np.log(10.0)


@dataclass(frozen=True)
class StrengthDraws:
    """One judge's Bradley-Terry strengths (Elo scale, mean 1000) and their bootstrap replicates
    over articles: row b of ``replicates`` is resample b, the same resample for every contestant,
    so a difference of two contestants' replicates is the paired bootstrap of their gap."""

    contestants: list[str]
    strength: np.ndarray
    replicates: np.ndarray
    n_articles: int

    def pair(self, higher: str, lower: str, confidence: float = 0.95) -> PairEvidence:
        """``higher``'s strength minus ``lower``'s with its paired interval (the book's interval for a
        refitted estimate) over the articles."""
        i, j = self.contestants.index(higher), self.contestants.index(lower)
        gap = float(self.strength[i] - self.strength[j])
        low, high = bootstrap_se_interval(np.array(gap), self.replicates[:, i] - self.replicates[:, j],
                                          self.n_articles, confidence)
        return PairEvidence(higher, lower, gap, float(low), float(high), self.n_articles)


def _present(judged: pd.DataFrame, contestants: Sequence[str]) -> list[str]:
    return [c for c in contestants if c in set(judged["first"]) | set(judged["second"])]


def _article_wins(judged: pd.DataFrame, present: Sequence[str], articles: Sequence[str]) -> np.ndarray:
    """``W[a, i, j]``: how often i beat j on article a (ties half each); zeros where the judge did not
    judge the article. Summing over a resample's articles gives the resample's win counts."""
    position = {c: k for k, c in enumerate(articles)}
    index = {name: k for k, name in enumerate(present)}
    wins = np.zeros((len(articles), len(present), len(present)))
    a = judged["context_id"].map(position).to_numpy()
    f, s = judged["first"].map(index).to_numpy(), judged["second"].map(index).to_numpy()
    y = judged["y"].to_numpy(dtype=float)
    np.add.at(wins, (a, s, f), y)
    np.add.at(wins, (a, f, s), 1.0 - y)
    return wins


def _article_draws(n_articles: int, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot, n_articles): how often each article is drawn in each resample (with replacement)."""
    rng = np.random.default_rng(seed)
    return np.array([np.bincount(rng.integers(0, n_articles, n_articles), minlength=n_articles) for _ in range(n_boot)])


def strength_draws(
    outcomes: pd.DataFrame, contestants: Sequence[str], n_boot: int = 1000, seed: int = 0, alpha: float = 0.01,
    articles: Sequence[str] | None = None,
) -> StrengthDraws:
    """Bradley-Terry strengths on the Elo scale with ``n_boot`` resamples of the articles (the
    independent units: encounters of one article share its texts). ``articles`` fixes the list the
    resamples draw from (give two judges the same list and seed: the same resamples for both);
    by default the judged articles in their first encounter's order."""
    judged = _judged(outcomes)
    present = _present(judged, contestants)
    if len(present) < 2:
        raise ValueError(f"fewer than two contestants judged: {present}")
    articles = list(pd.unique(judged["context_id"])) if articles is None else list(articles)
    per_article = _article_wins(judged, present, articles)
    strength = bradley_terry_from_wins(per_article.sum(axis=0), alpha) * ELO_SCALE + 1000.0
    draws = _article_draws(len(articles), n_boot, seed)
    replicates = np.array([
        bradley_terry_from_wins(np.tensordot(counts, per_article, axes=1), alpha) * ELO_SCALE + 1000.0 for counts in draws
    ]).reshape(n_boot, len(present))
    return StrengthDraws(present, strength, replicates, int(judged["context_id"].nunique()))


def bradley_terry_table(
    outcomes: pd.DataFrame, contestants: Sequence[str], n_boot: int = 1000, seed: int = 0, alpha: float = 0.01
) -> pd.DataFrame:
    """Bradley-Terry strengths on the Elo scale (400 / ln 10 per unit of log-strength, mean 1000,
    so they read like Elo ratings), with the book's interval for a refitted estimate
    (:func:`nlgjudge.stats.intervals.bootstrap_se_interval`: strength +- t x bootstrap standard error)
    over articles (the articles are the independent units; encounters within an article share its
    text), as ``nlgjudge rank`` does (:func:`strength_draws`). Contestants the judge never judged are
    left out. Columns: contestant, strength, ci_low, ci_high, encounters, n_boot."""
    judged = _judged(outcomes)
    draws = strength_draws(judged, contestants, n_boot=n_boot, seed=seed, alpha=alpha)
    low, high = bootstrap_se_interval(draws.strength, draws.replicates, draws.n_articles)
    counts = pd.concat([judged["first"], judged["second"]]).value_counts()
    return pd.DataFrame({
        "contestant": draws.contestants, "strength": draws.strength, "ci_low": low, "ci_high": high,
        "encounters": [int(counts.get(c, 0)) for c in draws.contestants], "n_boot": n_boot,
    })


def kendall_between_judges(
    one: pd.DataFrame, two: pd.DataFrame, contestants: Sequence[str], n_boot: int = 1000, seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, float]:
    """Kendall's tau between two judges' Bradley-Terry strengths on the contestants both rank, with
    a bootstrap over articles: the same resampled articles refit both judges, tau per resample;
    interval :func:`~nlgjudge.stats.intervals.bootstrap_se_interval` clipped to [-1, 1] (tau's
    range). Keys: tau, ci_low, ci_high, n_articles, n_contestants."""
    from scipy.stats import kendalltau

    judged_1, judged_2 = _judged(one), _judged(two)
    articles = list(pd.unique(pd.concat([judged_1["context_id"], judged_2["context_id"]])))
    fit_1 = strength_draws(judged_1, contestants, n_boot, seed, articles=articles)
    fit_2 = strength_draws(judged_2, contestants, n_boot, seed, articles=articles)
    common = [c for c in fit_1.contestants if c in fit_2.contestants]
    out = {"n_articles": float(len(articles)), "n_contestants": float(len(common))}
    if len(common) < 3:
        return {**out, "tau": float("nan"), "ci_low": float("nan"), "ci_high": float("nan")}
    i = [fit_1.contestants.index(c) for c in common]
    j = [fit_2.contestants.index(c) for c in common]
    tau = float(kendalltau(fit_1.strength[i], fit_2.strength[j]).statistic)
    taus = np.array([kendalltau(a[i], b[j]).statistic for a, b in zip(fit_1.replicates, fit_2.replicates, strict=True)])
    low, high = bootstrap_se_interval(np.array(tau), taus, len(articles), confidence)
    return {**out, "tau": tau, "ci_low": float(max(-1.0, low)), "ci_high": float(min(1.0, high)),
            "p_systems": exact_kendall_p(fit_1.strength[i], fit_2.strength[j])}


#: The most resamples a kappa interval is redrawn to when an end lies within its Monte Carlo error of an edge.
MOST_KAPPA_DRAWS = 64_000


def kappa_table(outcomes: Mapping[str, pd.DataFrame], n_boot: int = 1000, seed: int = 0,
                edges: Sequence[float] = ()) -> pd.DataFrame:
    """Cohen's kappa (scikit-learn) between every two judges on the encounters both decided (a tie or
    NaN on either side leaves the encounter out, counted), with kappa +- t(n_articles - 1) x bootstrap SE
    over resampled articles and ``ci_mc_se``, its ends' Monte Carlo error (from ``draws`` resamples). An
    end within three such errors of one of ``edges`` (a claim's band) is redrawn with four times the
    resamples, up to :data:`MOST_KAPPA_DRAWS`, so the draws never decide it (as subsets redraws its findings)."""
    rng = np.random.default_rng(seed)
    rows = []
    for (name_1, one), (name_2, two) in combinations(outcomes.items(), 2):
        joined = one[["encounter", "context_id", "y"]].merge(two[["encounter", "y"]], on="encounter", suffixes=("_1", "_2"))
        decided = joined[joined["y_1"].isin((0.0, 1.0)) & joined["y_2"].isin((0.0, 1.0))]
        row = {"judge_1": name_1, "judge_2": name_2, "n_encounters": len(decided), "n_left_out": len(joined) - len(decided),
               "n_articles": int(decided["context_id"].nunique())}
        if len(decided) < 2 or decided["y_1"].nunique() < 2 and decided["y_2"].nunique() < 2:
            rows.append({**row, "kappa": np.nan, "ci_low": np.nan, "ci_high": np.nan})
            continue
        kappa = cohen_kappa(decided["y_1"].to_numpy(), decided["y_2"].to_numpy())
        # Each article's 2x2 table of (judge 1, judge 2) outcomes: a resample's table is the sum of
        # its articles' tables, and kappa follows from it (the same value scikit-learn computes).
        articles = pd.unique(decided["context_id"])
        position = {c: k for k, c in enumerate(articles)}
        tables = unit_tables(decided["context_id"].map(position), decided["y_1"], decided["y_2"], len(articles))
        values = resampled_kappas(tables, n_boot, rng)
        while True:
            # A resample where both judges give one same label has no kappa: left out of the SE.
            low, high = bootstrap_se_interval(np.asarray(kappa), values, len(articles))
            mc_se = bootstrap_end_error(float(high) - kappa, int(np.isfinite(values).sum()))
            near = any(abs(end - edge) <= MONTE_CARLO_Z * mc_se for edge in edges for end in (float(low), float(high)))
            if not near or len(values) * 4 > MOST_KAPPA_DRAWS:
                break
            values = np.concatenate([values, resampled_kappas(tables, 3 * len(values), rng)])
        rows.append({**row, "kappa": kappa, "ci_low": max(float(low), -1.0), "ci_high": min(float(high), 1.0),
                     "ci_mc_se": mc_se, "draws": len(values)})
    return pd.DataFrame(rows, columns=["judge_1", "judge_2", "kappa", "ci_low", "ci_high", "ci_mc_se", "draws", "n_encounters",
                                       "n_left_out", "n_articles"])


def rouge_difference_regression(
    outcomes: pd.DataFrame, scores: pd.DataFrame, column: str, n_bins: int = 40,
    min_selection_ratio: float = MIN_SELECTION_RATIO, reference: str | None = None,
) -> pd.DataFrame:
    """Seed 004 Fig. 5: per model pair, P(model 1 chosen | R = R_2 - R_1) on ``column`` (ROUGE-Lsum),
    binned (``n_bins``) and fitted by a count-weighted line. Model 1 is the first of the pair in
    alphabetical order. Pairs where either model is chosen in fewer than ``min_selection_ratio`` of
    their decided encounters are listed with ``fitted=False`` (the paper's 10% rule). Ties are left out.
    ``reference`` names the contestant whose text is the reference: its ROUGE is that of the reference
    against itself, 1 (:func:`rouge_scores` leaves it NaN, since ROUGE cannot *judge* it); the paper's
    Fig. 5 fits its "baseline" pairs, so R must have been defined for them this way.
    ``attrs["bins"]`` maps "model_1 vs model_2" of each fitted pair to its bins (bin_centre,
    proportion, count), for the figure."""
    indexed = scores.set_index(["context_id", "system"])[column]
    if reference is not None:
        own = indexed.index.get_level_values("system") == reference
        indexed = indexed.where(~own | indexed.notna(), 1.0)
    judged = _judged(outcomes)
    judged = judged[judged["y"].isin((0.0, 1.0))]
    rows, bins = [], {}
    for pair, part in judged.groupby(judged.apply(lambda r: tuple(sorted((r["first"], r["second"]))), axis=1), sort=True):
        model_1, model_2 = pair
        r_1 = indexed.reindex(pd.MultiIndex.from_arrays([part["context_id"], [model_1] * len(part)])).to_numpy(dtype=float)
        r_2 = indexed.reindex(pd.MultiIndex.from_arrays([part["context_id"], [model_2] * len(part)])).to_numpy(dtype=float)
        winner = np.where(part["y"].to_numpy() == 1.0, part["second"].to_numpy(), part["first"].to_numpy())
        chose_1 = (winner == model_1).astype(float)
        usable = ~np.isnan(r_1) & ~np.isnan(r_2)
        ratio = float(chose_1[usable].mean()) if usable.any() else np.nan
        row = {"model_1": model_1, "model_2": model_2, "n_encounters": int(usable.sum()), "model_1_ratio": ratio}
        fitted = usable.sum() >= 2 and min(ratio, 1 - ratio) >= min_selection_ratio and np.ptp((r_2 - r_1)[usable]) > 0
        if fitted:
            fit = binned_regression((r_2 - r_1)[usable], chose_1[usable], n_bins=n_bins)
            row.update(slope=fit.slope, intercept=fit.intercept, r_squared=fit.r_squared)
            bins[f"{model_1} vs {model_2}"] = pd.DataFrame(
                {"bin_centre": fit.bin_centres, "proportion": fit.proportions, "count": fit.counts}
            )
        else:
            row.update(slope=np.nan, intercept=np.nan, r_squared=np.nan)
        rows.append({**row, "fitted": bool(fitted)})
    table = pd.DataFrame(rows)
    table.attrs["bins"] = bins
    return table


def regression_summary(table: pd.DataFrame) -> dict[str, float]:
    """What Fig. 5's fitted pairs say, for the prose: how many pairs were fitted, how many have a
    negative slope (the judge leans to the higher ROUGE), the range of r^2. Works on
    :func:`rouge_difference_regression`'s table and on the paper's (columns slope, r_squared; rows
    without a slope are not fitted)."""
    fitted = table[np.isfinite(table["slope"].astype(float))]
    r2 = fitted["r_squared"].astype(float)
    return {"pairs": float(len(table)), "fitted": float(len(fitted)), "negative": float((fitted["slope"] < 0).sum()),
            "r2_min": float(r2.min()) if len(r2) else float("nan"), "r2_max": float(r2.max()) if len(r2) else float("nan")}


def ranking_agreement(strengths: Mapping[str, pd.Series], people: pd.Series) -> pd.DataFrame:
    """Spearman and Kendall between each judge's ranking of the contestants (``strengths``: judge ->
    strength by contestant) and the people ranking (``people``: mean ACU by contestant,
    :func:`nlgjudge.analysis.people.people_ranking`), on the contestants both rank, with the claim
    rule's reading (:func:`nlgjudge.analysis.people.ranking_correlation`: over fewer than 5 systems a
    description, not a test). Columns: judge, spearman, kendall, n_contestants, verdict, reading."""
    rows = []
    for judge, values in strengths.items():
        agreement = ranking_correlation(values, people)
        rows.append({"judge": judge, "spearman": agreement["spearman"], "kendall": agreement["kendall"],
                     "n_contestants": agreement["n"], "verdict": agreement["verdict"], "reading": agreement["reading"]})
    return pd.DataFrame(rows, columns=["judge", "spearman", "kendall", "n_contestants", "verdict", "reading"])


# --------------------------------------------------------------------------------------------
# The chapter's tables


#: The paper's name of the ground truth -> ours.
PAPER_NAMES = {"Baseline": "reference", "baseline": "reference"}


def rouge_scores(baselines: pd.DataFrame, reference: str = "reference") -> pd.DataFrame:
    """ROUGE F1 per article and contestant, wide (context_id, system, ROUGE-1, ROUGE-2, ROUGE-L), from
    :func:`nlgjudge.metrics.reference.reference_baselines` on the contest. The ``reference``
    contestant gets NaN: its text *is* the reference, so ROUGE cannot judge it (the paper's
    ROUGE Elo, Fig. 3, leaves its baseline out for the same reason)."""
    missing = [c for c in ("context_id", "candidate_id", "metric", "score") if c not in baselines.columns]
    if missing:
        raise ValueError(f"baselines lacks columns {missing}; pass reference_baselines(...)'s frame")
    wide = baselines.pivot_table(index=["context_id", "candidate_id"], columns="metric", values="score", sort=False)
    wide.columns.name = None
    wide = wide.reset_index().rename(columns={"candidate_id": "system"})
    wide.loc[wide["system"] == reference, [c for c in wide.columns if c.startswith("ROUGE")]] = np.nan
    return wide


def mean_rouge(scores: pd.DataFrame, contestants: Sequence[str]) -> pd.DataFrame:
    """Fig. 1: mean ROUGE F1 x100 per contestant (long: contestant, metric, value, n_articles)."""
    metrics = [c for c in scores.columns if c.startswith("ROUGE")]
    long = scores.melt(id_vars=["context_id", "system"], value_vars=metrics, var_name="metric", value_name="score")
    grouped = long.dropna(subset=["score"]).groupby(["system", "metric"], sort=False)["score"]
    out = (grouped.mean() * 100).rename("value").to_frame().assign(n_articles=grouped.size()).reset_index()
    out = out.rename(columns={"system": "contestant"})
    order = {name: k for k, name in enumerate(contestants)}
    return out[out["contestant"].isin(order)].sort_values(["contestant", "metric"], key=lambda s: s.map(order) if s.name == "contestant" else s).reset_index(drop=True)


def ratings(
    outcomes: Mapping[str, pd.DataFrame], contestants: Sequence[str], *, n_orders: int = 200, n_boot: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """Per judge and contestant: the final Elo in the encounters' seeded order (the paper's single
    run), the range of final Elo over ``n_orders`` random orders (``order_low``/``order_high``: 2.5%
    and 97.5%), and Bradley-Terry on the Elo scale with its bootstrap interval over articles.
    Contestants a judge cannot judge are left out of its rows."""
    rows = []
    for judge, frame in outcomes.items():
        judged = _judged(frame)
        present = [c for c in contestants if c in set(judged["first"]) | set(judged["second"])]
        if len(present) < 2:
            continue
        elo = final_elo(judged, present)
        spread = elo_order_spread(judged, present, n_orders=n_orders, seed=seed).set_index("contestant")
        bt = bradley_terry_table(judged, present, n_boot=n_boot, seed=seed).set_index("contestant")
        for contestant in present:
            rows.append({
                "judge": judge, "contestant": contestant, "elo": elo[contestant],
                "order_low": spread.loc[contestant, "low"], "order_high": spread.loc[contestant, "high"],
                "strength": bt.loc[contestant, "strength"], "ci_low": bt.loc[contestant, "ci_low"],
                "ci_high": bt.loc[contestant, "ci_high"], "encounters": int(bt.loc[contestant, "encounters"]),
            })
    return pd.DataFrame(rows)


def reported_long(reported: pd.DataFrame, value_name: str = "value") -> pd.DataFrame:
    """A harang2023 table from :func:`nlgjudge.reported.load_reported` as contestant, column, judge,
    value, with the paper's "Baseline" named "reference" as here."""
    frame = reported[reported["value"].notna()]
    return pd.DataFrame({
        "contestant": frame["row"].map(lambda r: PAPER_NAMES.get(r, r)).to_numpy(),
        "column": frame["column"].to_numpy(),
        "judge": frame["judge"].fillna("").to_numpy(),
        value_name: frame["value"].astype(float).to_numpy(),
    })


# What to take from the chapter: the paper's claims, read by the book's claim rule

#: "As bad as random": kappa within +-0.2 (register ``elo.kappa``), Landis and Koch's "slight", holding the paper's values.
NEAR_ZERO_KAPPA = float(registered_claim("elo.kappa").margin or 0.0)
#: Fewer articles than this and the claim rule says "not tested" (the register's minimum for the chapter's claims).
MIN_ARTICLES_FOR_A_CLAIM = registered_claim("elo.kappa").min_units
#: Each claim key's entry in the claims register.
CLAIM_IDS = {"kappa": "elo.kappa", "tau_reversed": "elo.tau_reversed",
             "reference": "elo.reference", "llms": "elo.llms"}
#: Each claim's short name, for tables (the full wording is the ``claim`` column).
CLAIM_SHORT = {"kappa": "kappa near 0", "tau_reversed": "tau below 0",
               "reference": "reference not always first", "llms": "LLMs above fine-tuned"}
#: Per claim key: the unit of its estimate, and what its n counts (the unit of inference).
CLAIM_UNITS = {
    "kappa": ("Cohen's kappa", "articles"),
    "tau_reversed": ("Kendall's tau", "systems"),
    "reference": ("Elo points", "articles"),
    "llms": ("Elo points", "articles"),
}


def claims_view(claims_frame: pd.DataFrame) -> pd.DataFrame:
    """The claims table for the page: per judge and claim, the estimate with its interval, its unit,
    n and what n counts, the verdict and its reason (verdict first after the estimate)."""
    from nlgjudge.prose import interval_text
    from nlgjudge.register import lead_words

    units = claims_frame["key"].map(lambda key: CLAIM_UNITS.get(key, ("", ""))[0])
    counts = claims_frame["key"].map(lambda key: CLAIM_UNITS.get(key, ("", ""))[1])
    shown = claims_frame.assign(
        # A ranking correlation is tested over systems (exact p, no interval): its spread over
        # resampled articles is shown as a description only.
        # Elo points are read to the point (as the text says "+452"), kappa and tau to two decimals
        interval=[f"{e:.2f} (no interval: tested over systems)" if key.startswith("tau") and np.isfinite(e) else
                  interval_text(e, lo, hi, 0 if CLAIM_UNITS.get(key, ("",))[0] == "Elo points" else 2,
                                edges=(-NEAR_ZERO_KAPPA, NEAR_ZERO_KAPPA) if key == "kappa" else ())
                  for e, lo, hi, key in zip(claims_frame["estimate"], claims_frame["ci_low"], claims_frame["ci_high"],
                                            claims_frame["key"], strict=True)],
        reason=[f"{r}; spread over resampled articles {interval_text(e, lo, hi)} (a description)" if key.startswith("tau") else r
                for r, e, lo, hi, key in zip(claims_frame["reason"], claims_frame["estimate"], claims_frame["ci_low"],
                                             claims_frame["ci_high"], claims_frame["key"], strict=True)],
        unit=units, n_counts=counts)
    # a claim amended after its data says so beside its verdict: a lead, not a finding (the kappa's first rule first)
    shown["verdict"] = [headline_verdict(k, v, lo, hi) for k, v, lo, hi in
                        zip(shown["key"], shown["verdict"], shown["ci_low"], shown["ci_high"], strict=True)]
    return (shown.set_index(["judge", "short"])[["verdict", "interval", "unit", "n", "n_counts", "reason"]]
            .rename(columns={"interval": "estimate [95% interval]", "n_counts": "n counts"})
            .rename_axis(index=["judge", "claim"]))


def headline_verdict(key: str, verdict: str, low: float, high: float) -> str:
    """A verdict as the page states it, with its lead words; the kappa's band was chosen after its first verdict
    was read, so where the rule declared first (kappa against 0) reads otherwise, that reading leads."""
    from nlgjudge.register import lead_words
    lead = lead_words(CLAIM_IDS[key]) if key in CLAIM_IDS else ""
    if key == "kappa" and verdict == SUPPORTED and registered_claim("elo.kappa").amended_after_data and (low > 0 or high < 0):
        return (f"{CONTRADICTED} by the rule declared first, kappa against 0: {'worse' if high < 0 else 'better'} than "
                f"chance; {SUPPORTED} within +-{NEAR_ZERO_KAPPA:g} only by the band chosen after the data{lead}")
    return verdict + lead


CLAIM_COLUMNS = ["key", "short", "claim", "paper", "estimate", "ci_low", "ci_high", "n", "evidence", "verdict", "reason",
                 "articles_needed", "above_reference", "above_point"]


def judge_gates(judged: Mapping[str, pd.DataFrame]) -> dict[str, str | None]:
    """The book's judge screen (:mod:`nlgjudge.stats.degenerate`) of each LLM judge on its
    released both-order judgements of one template (context_id, first, second, p_a): pairs looked
    for within an article, one debiasing threshold over the judge's run, as the chapter debiases.
    A degenerate judge is not tested under either protocol."""
    return whole_run_gates(judged)


#: :func:`judge_gates`' test's outcome in words, and in a table, for each LLM judge (passed or not).
judge_test_words, judge_test_table = whole_run_words, whole_run_table


def position_a_share(outcomes: pd.DataFrame) -> float:
    """The share of decided encounters (no tie, not NaN) won by the contestant shown first (position
    A): about 0.5 for a judge that reads the summaries, near 1 (or 0) for one that answers by position."""
    decided = outcomes[outcomes["y"].isin((0.0, 1.0))]
    return float((decided["y"] == 0.0).mean()) if len(decided) else float("nan")


def _needed(claim_key: str, low: float, high: float, n: int) -> float:
    """Articles that would resolve the claim (:func:`nlgjudge.register.units_needed_for`)."""
    return units_needed_for(CLAIM_IDS[claim_key], low, high, n)


def _kappa_row(kappas: pd.DataFrame, llm_judge: str, rouge_judge: str, n_articles: int, degenerate: str | None) -> dict:
    from nlgjudge.prose import interval_text

    pair = kappas[((kappas["judge_1"] == llm_judge) & (kappas["judge_2"] == rouge_judge))
                  | ((kappas["judge_2"] == llm_judge) & (kappas["judge_1"] == rouge_judge))]
    row = {"key": "kappa", "paper": "kappa -0.035 (GPT-4), -0.021 (GPT-3): 'as bad as random'",
           "claim": f"the judge's outcomes agree with {rouge_judge}'s as chance would (kappa near 0, within "
                    f"+-{NEAR_ZERO_KAPPA:g})"}
    if pair.empty or not np.isfinite(pair["kappa"].iloc[0]):
        nan = float("nan")
        verdict = registered_verdict("elo.kappa", nan, nan, nan, n_articles,
                                     degenerate=degenerate or "kappa is undefined on this run")
        return {**row, "estimate": nan, "ci_low": nan, "ci_high": nan, "n": n_articles,
                "evidence": "kappa is undefined on this run", "verdict": verdict.verdict, "reason": verdict.reason,
                "articles_needed": nan}
    kappa, low, high = (float(pair[c].iloc[0]) for c in ("kappa", "ci_low", "ci_high"))
    if "n_articles" in pair.columns:  # the articles the kappa's decided encounters span (its interval's n)
        n_articles = int(pair["n_articles"].iloc[0])
    mc_se = float(pair["ci_mc_se"].iloc[0]) if "ci_mc_se" in pair.columns and np.isfinite(pair["ci_mc_se"].iloc[0]) else 0.0
    # an end within the resamples' Monte Carlo error of the band's edge is borderline, never flipped by the seed
    verdict = registered_verdict("elo.kappa", kappa, low, high, n_articles, degenerate=degenerate, monte_carlo_se=mc_se)
    reason = verdict.reason
    if verdict.verdict == CONTRADICTED:
        # two different findings, both unlike the paper's
        reason += (": systematic disagreement beyond slight, the judge prefers the summary ROUGE rejects more often "
                   "than chance would (a different finding from chance agreement)" if high < 0 else
                   ": agreement beyond slight (weak if below 0.4), not chance agreement")
    elif verdict.verdict == SUPPORTED and (low > 0 or high < 0):
        # what the claim allows, in words, and the first release's rule (kappa against 0, declared before the data)
        reason += (f"; it excludes 0 ({'a slight disagreement' if high < 0 else 'a slight agreement'}, smaller than the "
                   f"+-{NEAR_ZERO_KAPPA:g} that 'as bad as random' allows); by the plan's first rule, kappa against 0, "
                   "this row reads contradicted")
    elif verdict.verdict == NOT_RESOLVED and verdict.tested and (low > 0 or high < 0):
        # the register's secondary reading elo.kappa_sign: which side of chance, a description, no claim
        reason += ("; a description (the plan's secondary reading): the whole interval lies " + (
            "below 0, so the judge picks the summary ROUGE rejects more often than chance" if high < 0 else
            "above 0, so the judge agrees with ROUGE more often than chance"))
    needed = _needed("kappa", low, high, n_articles) if verdict.verdict == NOT_RESOLVED else float("nan")
    return {**row, "estimate": kappa, "ci_low": low, "ci_high": high, "n": n_articles,
            # an end near the band's edge is printed with the decimal that shows its side of it
            "evidence": f"kappa = {interval_text(kappa, low, high, 2, edges=(-NEAR_ZERO_KAPPA, NEAR_ZERO_KAPPA))} on "
                        f"{int(pair['n_encounters'].iloc[0])} encounters "
                        f"of {n_articles} articles" + (f"; {int(pair['draws'].iloc[0]):,} resamples, Monte Carlo error of its "
                                                       f"ends {mc_se:.4f}" if "draws" in pair.columns and mc_se else ""),
            "verdict": verdict.verdict, "reason": reason, "articles_needed": needed}


def _tau_rows(tau: Mapping[str, float], rouge_judge: str, degenerate: str | None) -> list[dict]:
    """The ranking claim, tested over the contestants (the book's one unit for a ranking correlation,
    :data:`nlgjudge.analysis.people.RANKING_UNIT`, as the people correlations are): "not positively
    related" (the paper's "radically different") by the exact permutation test of tau. Whether the
    rankings differ at all (tau below 1) is no claim: no test over systems asks about tau = 1, so the
    chapter describes it from this row's tau (the register's secondary readings). The bootstrap
    interval over articles is shown as the estimate's stability."""
    estimate, low, high = tau["tau"], tau["ci_low"], tau["ci_high"]
    n, k = int(tau["n_articles"]), int(tau["n_contestants"])
    p_systems = float(tau.get("p_systems", float("nan")))
    evidence = (f"Kendall's tau = {estimate:.2f} between the two Bradley-Terry rankings of {k} contestants "
                f"(exact permutation p over them = {p_systems:.2f}; its spread over {n} resampled articles, a description: [{low:.2f}, {high:.2f}])"
                if np.isfinite(estimate) else f"fewer than 3 contestants ranked by both ({k})")
    untested = degenerate or (None if k >= 3 else f"only {k} contestant(s) ranked by both")
    reversed_ = systems_test(estimate, p_systems, k, direction="below", degenerate=untested)
    # more articles do not add systems: no "articles needed" for a test over systems
    return [{"key": "tau_reversed", "claim": f"the judge ranks the systems radically differently from {rouge_judge}: "
             f"not positively related to its ranking (Kendall's tau below 0)",
             "paper": "'a radically different ranking' (no number given)",
             "estimate": estimate, "ci_low": low, "ci_high": high, "n": k, "evidence": evidence,
             "verdict": reversed_.verdict, "reason": reversed_.reason, "articles_needed": float("nan")}]


def _reference_row(draws: StrengthDraws | None, reference: str, degenerate: str | None) -> dict:
    row = {"key": "reference", "claim": "the reference summary is not always the preferred one (some contestant's "
           "strength above the reference's, paired interval above 0)",
           "paper": "GPT-4 rates GPT-4 and BART above the reference (1617, 1037 vs 816)"}
    nan = float("nan")
    if draws is None or reference not in draws.contestants:
        return {**row, "estimate": nan, "ci_low": nan, "ci_high": nan, "n": 0,
                "evidence": "the reference is not a contestant of this run", "verdict": "not tested",
                "reason": "the reference is not a contestant of this run", "articles_needed": nan}
    pairs = sorted((draws.pair(c, reference) for c in draws.contestants if c != reference),
                   key=lambda p: p.difference, reverse=True)
    # An existence claim ("some contestant is above the reference") over several pairs: a pair counts only
    # if its interval (an end within its resamples' Monte Carlo error of 0 is borderline) and Holm's correction
    # over the pairs (each read at the largest p that error allows, as rank does) keep it: no count hangs on the draws.
    mc = [bootstrap_end_error(p.high - p.difference, len(getattr(draws, "replicates", ()))) for p in pairs]
    verdicts = [(p, registered_verdict("elo.reference", p.difference, p.low, p.high, p.n, degenerate=degenerate,
                                       monte_carlo_se=e)) for p, e in zip(pairs, mc)]
    ends = [p_within_error(p.difference, p.low, p.high, p.n, 0.0, 0.0, e / float(t_dist.ppf(0.975, max(p.n - 1, 1))),
                           MONTE_CARLO_Z) for p, e in zip(pairs, mc)]
    kept, maybe = (holm_rejections([np.nan_to_num(end[k], nan=1.0) for end in ends]) for k in (0, 1))
    above_raw = [(p, v) for p, v in verdicts if v.verdict == SUPPORTED]
    above = [(p, v) for (p, v), k in zip(verdicts, kept, strict=True) if v.verdict == SUPPORTED and k]
    edge = [p.higher for (p, v), k, m in zip(verdicts, kept, maybe, strict=True)  # named: a reader can look at each
            if (v.verdict == SUPPORTED and m and not k) or (v.reason.startswith("borderline") and p.difference > 0)]
    if above:  # one resolved contestant settles it
        shown, verdict = above[0]
        verdict = ClaimVerdict(SUPPORTED, f"{count_words(len(above), len(above_raw))} of {len(pairs)} contestants above "
                                          f"the reference with their paired interval above 0, after Holm's correction "
                                          f"over the {len(pairs)} pairs (the row shows the strongest)"
                                          + (f"; {len(edge)} more borderline, {', '.join(f'{c} - reference' for c in edge)} "
                                             "(kept by the correction at some of the resamples' draws)" if edge else ""))
    elif all(v.verdict == CONTRADICTED for _, v in verdicts):
        shown, verdict = verdicts[0]
        verdict = ClaimVerdict(CONTRADICTED, "the reference is above every contestant, each paired interval below 0")
    elif above_raw:  # resolved on its own interval only: a flag, not the family's verdict
        shown = above_raw[0][0]
        verdict = ClaimVerdict(NOT_RESOLVED, f"0 ({len(above_raw)} before Holm's correction) of {len(pairs)} contestants "
                                             f"above the reference: a flag, not after Holm's correction over the pairs")
    else:
        shown, verdict = next(((p, v) for p, v in verdicts if v.verdict != CONTRADICTED), verdicts[0])
    needed = (_needed("reference", shown.low, shown.high, shown.n) if verdict.verdict == NOT_RESOLVED
              else float("nan"))
    return {**row, "estimate": shown.difference, "ci_low": shown.low, "ci_high": shown.high, "n": shown.n,
            "evidence": f"{shown.higher} - {reference} = {shown.difference:+.0f} [{shown.low:+.0f}, {shown.high:+.0f}] "
                        "Elo points (Bradley-Terry, paired bootstrap over articles)",
            "verdict": verdict.verdict, "reason": verdict.reason, "articles_needed": needed,
            # for the bottom line: resolved above the reference, and above it by point estimate
            "above_reference": f"{len(above)} of {len(pairs)}", "above_point": f"{sum(p.difference > 0 for p, _ in verdicts)} of {len(pairs)}"}


def _llms_row(draws: StrengthDraws | None, llm_contestants: Sequence[str], fine_tuned: Sequence[str],
              degenerate: str | None) -> dict:
    row = {"key": "llms", "claim": "the judge ranks every LLM summarizer above every fine-tuned system "
           "(each pair resolved by its paired interval)", "paper": "GPT-4 puts GPT-4's summaries first (1617)"}
    nan = float("nan")
    llms = [c for c in llm_contestants if draws is not None and c in draws.contestants]
    tuned = [c for c in fine_tuned if draws is not None and c in draws.contestants]
    if draws is None or not llms or not tuned:
        return {**row, "estimate": nan, "ci_low": nan, "ci_high": nan, "n": 0,
                "evidence": "this run lacks LLM or fine-tuned contestants", "verdict": "not tested",
                "reason": "this run lacks LLM or fine-tuned contestants", "articles_needed": nan}
    pairs = [draws.pair(a, b) for a in llms for b in tuned]
    verdict = ordering_verdict(pairs, min_n=registered_claim("elo.llms").min_units, degenerate=degenerate)
    weakest = min(pairs, key=lambda p: p.low)
    resolved = sum(p.low > 0 for p in pairs)
    # Every pair must be resolved for the claim (intersection-union): each on its own interval, no correction
    open_pairs = [p for p in pairs if p.low <= 0 <= p.high]
    needed = float("nan")
    if verdict.verdict == NOT_RESOLVED:
        counts = [_needed("llms", p.low, p.high, p.n) for p in open_pairs]
        needed = float("nan") if any(not np.isfinite(c) for c in counts) else max(counts)
    return {**row, "estimate": weakest.difference, "ci_low": weakest.low, "ci_high": weakest.high, "n": weakest.n,
            "evidence": f"{resolved} of {len(pairs)} (LLM, fine-tuned) pairs resolved by their own paired intervals (the "
                        f"claim needs every one, so no correction applies); weakest: {weakest.higher} - "
                        f"{weakest.lower} = {weakest.difference:+.0f} [{weakest.low:+.0f}, {weakest.high:+.0f}] Elo points",
            "verdict": verdict.verdict, "reason": verdict.reason, "articles_needed": needed}


def claims(
    outcomes: Mapping[str, pd.DataFrame],
    kappas: pd.DataFrame,
    llm_judge: str,
    contestants: Sequence[str],
    *,
    rouge_judge: str = "ROUGE-1",
    reference: str = "reference",
    llm_contestants: Sequence[str] = ("GPT-4", "ChatGPT", "GPT-3"),
    fine_tuned: Sequence[str] = ("BART", "PEGASUS", "BRIO"),
    judge_gate: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
) -> pd.DataFrame:
    """The paper's claims read from this run by the book's claim rule
    (:mod:`nlgjudge.stats.claims`): one row per claim with the estimate, its 95% interval over
    ``n`` articles, the verdict (supported, contradicted, not resolved, not tested) and its reason,
    and for a "not resolved" claim the articles that would resolve it (``articles_needed``,
    :data:`~nlgjudge.stats.claims.UNITS_FROM_INTERVAL_METHOD`; NaN: out of reach at the observed
    effect). ``outcomes`` are the chapter's judges' outcomes, ``kappas`` :func:`kappa_table` of them,
    ``llm_judge`` the judge read. Columns :data:`CLAIM_COLUMNS`.

    1. ``kappa``: chance agreement with ``rouge_judge`` (the paper's "as bad as random"): kappa's
       interval contains 0 and lies within +-:data:`NEAR_ZERO_KAPPA`; an interval below 0
       (systematic disagreement) or above 0 (agreement) contradicts it, and the reason says which.
    2. ``tau_reversed``: Kendall's tau between the two judges' Bradley-Terry rankings below 0 (the
       paper's "radically different": not positively related), by the exact permutation test over the
       contestants; its bootstrap over articles (:func:`kendall_between_judges`) is shown beside it.
    3. ``reference``: some contestant above the reference, its paired interval above 0.
    4. ``llms``: every (LLM, fine-tuned) pair ordered by its paired interval
       (:func:`~nlgjudge.stats.claims.ordering_verdict`).

    A degenerate run is "not tested" throughout: fewer than :data:`MIN_ARTICLES_FOR_A_CLAIM`
    articles, a judge that gives every contestant the same strength, or ``judge_gate``: the reason
    of the book's judge screen (:func:`judge_gates`, the same for both protocols).
    """
    judged = _judged(outcomes[llm_judge])
    n_articles = int(judged["context_id"].nunique())
    draws = strength_draws(judged, contestants, n_boot=n_boot, seed=seed) if len(_present(judged, contestants)) >= 2 else None
    degenerate = judge_gate
    if degenerate is None and (draws is None or np.ptp(draws.strength) < 1e-9):
        degenerate = "the judge gives every contestant the same strength"
    if rouge_judge in outcomes:
        tau = kendall_between_judges(judged, outcomes[rouge_judge], contestants, n_boot=n_boot, seed=seed)
    else:
        tau = {"tau": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"), "n_articles": float(n_articles),
               "n_contestants": 0.0}
    rows = [_kappa_row(kappas, llm_judge, rouge_judge, n_articles, degenerate), *_tau_rows(tau, rouge_judge, degenerate),
            _reference_row(draws, reference, degenerate), _llms_row(draws, llm_contestants, fine_tuned, degenerate)]
    return pd.DataFrame(rows).assign(short=lambda f: f["key"].map(CLAIM_SHORT)).reindex(columns=CLAIM_COLUMNS)


#: Claims tested over the contestants, not the articles: more articles cannot resolve them.
OVER_SYSTEMS = ("tau_reversed",)


def needed_sentence(claims_table: pd.DataFrame, available: int) -> str:
    """The "articles needed" of one judge's not-resolved claims in words, for the prose: how many
    articles would detect each claim's smallest effect that matters (the register's) with 80% power,
    and whether the contest (``available`` articles) has that many; a claim whose run already has
    them is said to leave open only a smaller effect."""
    open_rows = claims_table[claims_table["verdict"] == NOT_RESOLVED]
    if open_rows.empty:
        return "Every claim is resolved (or not tested) for this judge: no more articles are needed."
    parts = []
    for r in open_rows.itertuples(index=False):
        if getattr(r, "key", None) in OVER_SYSTEMS:
            spec = registered_claim(CLAIM_IDS[r.key])
            systems = kendall_units_needed(spec.effect_target() - spec.threshold)
            parts.append(f"\"{r.claim}\" is tested over the {r.n} systems: more articles cannot settle it; about {systems} "
                         f"systems would give an 80% chance to detect the smallest effect that matters (tau = "
                         f"{spec.effect_target():+.1f}).")
            continue
        if r.articles_needed != r.articles_needed:
            parts.append(f"\"{r.claim}\" is out of reach.")
            continue
        if r.articles_needed <= r.n:
            parts.append(f"\"{r.claim}\": its {r.n} articles are more than the {int(r.articles_needed)} that would detect the "
                         "smallest effect that matters with 80% power, so what is left open is smaller than that.")
            continue
        beyond = (f"; the contest has only {available}, so no run on it can" if r.articles_needed > available
                  else f", within the contest's {available}")
        parts.append(f"\"{r.claim}\": about {int(r.articles_needed)} articles ({r.articles_needed / r.n:.0f} times the {r.n} "
                     f"here{beyond}) would give an 80% chance to resolve it.")
    return "For this judge: " + " ".join(parts)  # one sentence per claim, each naming its claim first


def articles_needed(claims_table: pd.DataFrame) -> pd.DataFrame:
    """The "articles needed" table: each "not resolved" claim with the articles that would resolve it
    at the observed effect (NaN: out of reach). Columns: short, claim, estimate, ci_low, ci_high, n,
    articles_needed."""
    keys = claims_table["key"] if "key" in claims_table else pd.Series("", index=claims_table.index)
    open_claims = claims_table[(claims_table["verdict"] == NOT_RESOLVED) & ~keys.isin(OVER_SYSTEMS)]
    return open_claims[["short", "claim", "estimate", "ci_low", "ci_high", "n", "articles_needed"]].reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# Do the ratings converge? (the paper's Figs. 2, 6 and 7)

#: The paper's reading of its convergence figures, per judge it ran.
PAPER_CONVERGENCE = {
    "ROUGE-1": "Fig. 2: converges (one order)",
    "GPT-3": "Fig. 6: converges (one order)",
    "GPT-4": "Fig. 7: converges (one order)",
}


#: Convergence is a property of one pass of Elo over fixed encounters, not a claim, so no claim rule's words:
#: every neighbouring pair's order fixed over the visiting orders is "converged", else "order-dependent".
CONVERGED, ORDER_DEPENDENT = "converged", "order-dependent"


def _convergence_reason(verdict: ClaimVerdict, pairs: Sequence[PairEvidence]) -> str:
    """The reason in the convergence table's own words: it describes the spread over visiting orders
    (no sampling of units), so it avoids the claim rule's verdict words."""
    if not verdict.tested:
        return verdict.reason
    order_decides = [f"{p.higher} vs {p.lower}" for p in pairs if p.low <= 0 <= p.high]
    if not order_decides:
        return f"each of the {len(pairs)} neighbouring pairs keeps its order in the middle 95% of visiting orders"
    return "the visiting order decides " + ", ".join(order_decides)
CONVERGENCE_WORDS = {SUPPORTED: CONVERGED, NOT_RESOLVED: ORDER_DEPENDENT, CONTRADICTED: ORDER_DEPENDENT}


def convergence(
    outcomes: Mapping[str, pd.DataFrame], contestants: Sequence[str], n_orders: int = 200, seed: int = 0,
    paper: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Whether each judge's Elo has *converged*, defined testably: the final ratings no longer depend
    on the visiting order more than the contestants differ, i.e. for every two contestants next to
    each other in the median final ranking, the middle 95% over ``n_orders`` random visiting orders
    of their final-Elo gap excludes 0 (:func:`~nlgjudge.stats.claims.ordering_verdict` over those
    pairs, n = orders). A visiting order is the only thing that varies: the encounters and outcomes
    are the same. A pair left open is one whose order the visiting order decides: more orders do
    not settle it (they describe the same spread better). ``paper`` maps a judge to the paper's
    reading of it (e.g. :data:`PAPER_CONVERGENCE`), shown beside ours. Columns: judge, paper,
    contestants, order_sd (largest SD of a final Elo over orders), smallest_gap (smallest gap between
    neighbours' median final Elo), verdict (:data:`CONVERGED` or :data:`ORDER_DEPENDENT`; "not
    tested" without pairs), reason, n_orders."""
    rows = []
    for judge, frame in outcomes.items():
        judged = _judged(frame)
        present = _present(judged, contestants)
        if len(present) < 2:
            continue
        finals = order_finals(judged, present, n_orders, seed)
        median = np.median(finals, axis=0)
        order = np.argsort(-median)
        pairs = []
        for i, j in zip(order, order[1:]):
            gaps = finals[:, i] - finals[:, j]
            low, high = np.percentile(gaps, [2.5, 97.5])
            pairs.append(PairEvidence(present[i], present[j], float(np.median(gaps)), float(low), float(high), n_orders))
        verdict = ordering_verdict(pairs)
        rows.append({"judge": judge, "paper": (paper or {}).get(judge, "–"), "contestants": len(present), "order_sd": float(finals.std(axis=0, ddof=1).max()),
                     "smallest_gap": float(min(median[i] - median[j] for i, j in zip(order, order[1:]))),
                     "verdict": CONVERGENCE_WORDS.get(verdict.verdict, verdict.verdict),
                     "reason": _convergence_reason(verdict, pairs),
                     "n_orders": n_orders})
    return pd.DataFrame(rows, columns=["judge", "paper", "contestants", "order_sd", "smallest_gap", "verdict", "reason",
                                       "n_orders"])
