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
from itertools import combinations

import numpy as np
import pandas as pd

from nlgjudge.stats import (
    DebiasThreshold,
    binned_regression,
    bradley_terry_from_wins,
    cohen_kappa,
    debias_threshold,
    elo_from_pairs,
)
from nlgjudge.stats.bias import threshold_decisions_values
from nlgjudge.stats.intervals import bootstrap_se_interval

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


def elo_order_spread(
    outcomes: pd.DataFrame, contestants: Sequence[str], n_orders: int = 200, seed: int = 0
) -> pd.DataFrame:
    """Final Elo over ``n_orders`` random visiting orders of the same judged encounters: Elo depends
    on the order, Bradley-Terry does not. Columns: contestant, median, low (2.5%), high (97.5%)."""
    judged = _judged(outcomes)
    index = {name: k for k, name in enumerate(contestants)}
    first, second = judged["first"].map(index).to_numpy(), judged["second"].map(index).to_numpy()
    y = judged["y"].to_numpy()
    rng = np.random.default_rng(seed)
    finals = np.array([
        elo_from_pairs(first, second, y, len(contestants), seed=rng, **ELO_SETTINGS).ratings for _ in range(n_orders)
    ])
    low, median, high = np.percentile(finals, [2.5, 50, 97.5], axis=0)
    return pd.DataFrame({"contestant": list(contestants), "median": median, "low": low, "high": high, "n_orders": n_orders})


def win_counts(outcomes: pd.DataFrame, contestants: Sequence[str]) -> np.ndarray:
    """``W[i, j]``: how often contestant i beat j (a tie counts half to each)."""
    judged = _judged(outcomes)
    index = {name: k for k, name in enumerate(contestants)}
    wins = np.zeros((len(contestants), len(contestants)))
    for first, second, y in zip(judged["first"].map(index), judged["second"].map(index), judged["y"], strict=True):
        wins[second, first] += y
        wins[first, second] += 1.0 - y
    return wins


def bradley_terry_table(
    outcomes: pd.DataFrame, contestants: Sequence[str], n_boot: int = 1000, seed: int = 0, alpha: float = 0.01
) -> pd.DataFrame:
    """Bradley-Terry strengths on the Elo scale (400 / ln 10 per unit of log-strength, mean 1000,
    so they read like Elo ratings), with the book's interval for a refitted estimate
    (:func:`nlgjudge.stats.intervals.bootstrap_se_interval`: strength +- t x bootstrap standard error)
    over articles (the articles are the independent units; encounters within an article share its
    text), as ``nlgjudge rank`` does. Contestants the judge never judged are left out. Columns:
    contestant, strength, ci_low, ci_high, encounters, n_boot."""
    judged = _judged(outcomes)
    present = [c for c in contestants if c in set(judged["first"]) | set(judged["second"])]
    scale = 400.0 / np.log(10.0)
    strength = bradley_terry_from_wins(win_counts(judged, present), alpha) * scale + 1000.0
    by_article = {c: part for c, part in judged.groupby("context_id", sort=False)}
    articles = list(by_article)
    rng = np.random.default_rng(seed)
    replicates = np.empty((n_boot, len(present)))
    for k in range(n_boot):
        sample = pd.concat([by_article[articles[i]] for i in rng.integers(0, len(articles), len(articles))])
        replicates[k] = bradley_terry_from_wins(win_counts(sample, present), alpha) * scale + 1000.0
    low, high = bootstrap_se_interval(strength, replicates, len(articles))
    counts = pd.concat([judged["first"], judged["second"]]).value_counts()
    return pd.DataFrame({
        "contestant": present, "strength": strength, "ci_low": low, "ci_high": high,
        "encounters": [int(counts.get(c, 0)) for c in present], "n_boot": n_boot,
    })


def kappa_table(outcomes: Mapping[str, pd.DataFrame], n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Cohen's kappa (scikit-learn) between every two judges on the encounters both decided (a tie
    or NaN on either side leaves the encounter out, counted), with a percentile bootstrap over
    articles. Columns: judge_1, judge_2, kappa, ci_low, ci_high, n_encounters, n_left_out."""
    rng = np.random.default_rng(seed)
    rows = []
    for (name_1, one), (name_2, two) in combinations(outcomes.items(), 2):
        joined = one[["encounter", "context_id", "y"]].merge(two[["encounter", "y"]], on="encounter", suffixes=("_1", "_2"))
        decided = joined[joined["y_1"].isin((0.0, 1.0)) & joined["y_2"].isin((0.0, 1.0))]
        row = {"judge_1": name_1, "judge_2": name_2, "n_encounters": len(decided), "n_left_out": len(joined) - len(decided)}
        if len(decided) < 2 or decided["y_1"].nunique() < 2 and decided["y_2"].nunique() < 2:
            rows.append({**row, "kappa": np.nan, "ci_low": np.nan, "ci_high": np.nan})
            continue
        kappa = cohen_kappa(decided["y_1"].to_numpy(), decided["y_2"].to_numpy())
        groups = [part for _, part in decided.groupby("context_id", sort=False)]
        values = []
        for _ in range(n_boot):
            sample = pd.concat([groups[i] for i in rng.integers(0, len(groups), len(groups))])
            try:
                values.append(cohen_kappa(sample["y_1"].to_numpy(), sample["y_2"].to_numpy()))
            except ValueError:  # a resample where one judge gave a single label: kappa undefined
                continue
        low, high = np.percentile(values, [2.5, 97.5]) if values else (np.nan, np.nan)
        rows.append({**row, "kappa": kappa, "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows, columns=["judge_1", "judge_2", "kappa", "ci_low", "ci_high", "n_encounters", "n_left_out"])


def rouge_difference_regression(
    outcomes: pd.DataFrame, scores: pd.DataFrame, column: str, n_bins: int = 40,
    min_selection_ratio: float = MIN_SELECTION_RATIO,
) -> pd.DataFrame:
    """Seed 004 Fig. 5: per model pair, P(model 1 chosen | R = R_2 - R_1) on ``column`` (ROUGE-L),
    binned (``n_bins``) and fitted by a count-weighted line. Model 1 is the first of the pair in
    alphabetical order. Pairs where either model is chosen in fewer than ``min_selection_ratio`` of
    their decided encounters are listed with ``fitted=False`` (the paper's 10% rule). Ties are left out.
    ``attrs["bins"]`` maps "model_1 vs model_2" of each fitted pair to its bins (bin_centre,
    proportion, count), for the figure."""
    indexed = scores.set_index(["context_id", "system"])[column]
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


def ranking_agreement(strengths: Mapping[str, pd.Series], reference: str) -> pd.DataFrame:
    """Spearman and Kendall between each judge's ranking of the contestants and ``reference``'s
    (e.g. people's), on the contestants both rank. Columns: judge, spearman, kendall, n_contestants."""
    from scipy.stats import kendalltau, spearmanr

    base = strengths[reference].dropna()
    rows = []
    for judge, values in strengths.items():
        if judge == reference:
            continue
        common = base.index.intersection(values.dropna().index)
        if len(common) < 3:
            rows.append({"judge": judge, "spearman": np.nan, "kendall": np.nan, "n_contestants": len(common)})
            continue
        rows.append({
            "judge": judge,
            "spearman": float(spearmanr(base[common], values[common]).statistic),
            "kendall": float(kendalltau(base[common], values[common]).statistic),
            "n_contestants": len(common),
        })
    return pd.DataFrame(rows)


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


# --------------------------------------------------------------------------------------------
# What to take from the chapter: the paper's claims, read from this run's tables

#: Landis and Koch's (1977) reading of kappa: "slight" up to 0.2, "fair" up to 0.4, then
#: "moderate", "substantial" and "almost perfect". The paper's claim (1) is agreement of at most "fair".
WEAK_KAPPA = 0.4
#: Fewer articles than this and the chapter states no verdict (the intervals are not to be read).
MIN_ARTICLES_FOR_A_CLAIM = 5
#: A judge that picks the same position in more than this share of its decided encounters is
#: answering by position: its one-order outcomes follow the random display order, not the summaries.
POSITION_ONLY_SHARE = 0.9


def position_a_share(outcomes: pd.DataFrame) -> float:
    """The share of decided encounters (no tie, not NaN) won by the contestant shown first (position
    A): about 0.5 for a judge that reads the summaries, near 1 (or 0) for one that answers by position."""
    decided = outcomes[outcomes["y"].isin((0.0, 1.0))]
    return float((decided["y"] == 0.0).mean()) if len(decided) else float("nan")


def claims(
    kappas: pd.DataFrame,
    table: pd.DataFrame,
    llm_judge: str,
    *,
    rouge_judge: str = "ROUGE-1",
    reference: str = "reference",
    llm_contestants: Sequence[str] = ("GPT-4", "ChatGPT", "GPT-3"),
    fine_tuned: Sequence[str] = ("BART", "PEGASUS", "BRIO"),
    n_articles: int,
    position_share: float | None = None,
) -> pd.DataFrame:
    """The paper's three claims and the "LLM summaries first" question, each read from this run:
    ``kappas`` is :func:`kappa_table`, ``table`` :func:`ratings`, ``llm_judge`` the judge's name in
    both. One row per claim: claim, evidence (the numbers, as text), holds ("yes", "no" or
    "undecided"), and the values behind them. A degenerate run (fewer than
    :data:`MIN_ARTICLES_FOR_A_CLAIM` articles, a judge that gives every contestant the same
    strength, or, when ``position_share`` (:func:`position_a_share` of a one-order run) is given, a
    judge that picks one position in more than :data:`POSITION_ONLY_SHARE` of its encounters) is
    "undecided" throughout.

    1. LLM judges agree weakly with ROUGE: Cohen's kappa with ``rouge_judge`` at most "fair"
       (:data:`WEAK_KAPPA`); "yes" when the whole 95% interval is below it, "no" when above it.
    2. They rank the systems differently from ROUGE: Kendall's tau between the two judges'
       Bradley-Terry strengths on the contestants both rank; "yes" when the orders differ.
    3. The reference is not always preferred: its Bradley-Terry rank under the judge; "yes" when not first.
    4. LLM summaries above the fine-tuned systems: how many of ``llm_contestants`` rank above every
       one of ``fine_tuned``; "yes" when all do.
    """
    from scipy.stats import kendalltau

    mine = table[table["judge"] == llm_judge].set_index("contestant")["strength"]
    rouge = table[table["judge"] == rouge_judge].set_index("contestant")["strength"]
    pair = kappas[((kappas["judge_1"] == llm_judge) & (kappas["judge_2"] == rouge_judge))
                  | ((kappas["judge_2"] == llm_judge) & (kappas["judge_1"] == rouge_judge))]
    by_position = position_share is not None and max(position_share, 1.0 - position_share) > POSITION_ONLY_SHARE
    degenerate = n_articles < MIN_ARTICLES_FOR_A_CLAIM or mine.empty or mine.nunique() <= 1 or by_position
    rows = []

    if pair.empty or not np.isfinite(pair["kappa"].iloc[0]):
        kappa = low = high = float("nan")
        n_kappa = 0
        holds = "undecided"
        evidence = "kappa is undefined on this run"
    else:
        kappa, low, high = (float(pair[c].iloc[0]) for c in ("kappa", "ci_low", "ci_high"))
        n_kappa = int(pair["n_encounters"].iloc[0])
        holds = "yes" if high < WEAK_KAPPA else "no" if low > WEAK_KAPPA else "undecided"
        evidence = f"kappa = {kappa:.2f} [{low:.2f}, {high:.2f}] on {n_kappa} encounters"
    rows.append({"claim": "LLM judges agree weakly with ROUGE (kappa at most 'fair', < 0.4)", "evidence": evidence,
                 "holds": holds, "value": kappa, "ci_low": low, "ci_high": high, "n": n_kappa})

    common = mine.dropna().index.intersection(rouge.dropna().index)
    if len(common) >= 3:
        tau = float(kendalltau(mine[common], rouge[common]).statistic)
        top_mine, top_rouge = mine[common].idxmax(), rouge[common].idxmax()
        holds = "yes" if tau < 1.0 else "no"
        evidence = (f"Kendall's tau = {tau:.2f} on {len(common)} contestants; first: {top_mine} (judge) vs "
                    f"{top_rouge} ({rouge_judge})")
    else:
        tau, holds, evidence = float("nan"), "undecided", f"fewer than 3 contestants ranked by both ({len(common)})"
    rows.append({"claim": f"LLM judges rank the systems differently from {rouge_judge}", "evidence": evidence,
                 "holds": holds, "value": tau, "ci_low": np.nan, "ci_high": np.nan, "n": len(common)})

    if reference in mine.index and np.isfinite(mine[reference]):
        place = int((mine.dropna() > mine[reference]).sum()) + 1
        holds = "yes" if place > 1 else "no"
        evidence = f"the reference ranks {place} of {int(mine.notna().sum())}"
    else:
        place, holds, evidence = 0, "undecided", "the reference is not a contestant of this run"
    rows.append({"claim": "the reference summary is not always the preferred one", "evidence": evidence,
                 "holds": holds, "value": float(place), "ci_low": np.nan, "ci_high": np.nan, "n": int(mine.notna().sum())})

    llms = [c for c in llm_contestants if c in mine.index and np.isfinite(mine[c])]
    tuned = [c for c in fine_tuned if c in mine.index and np.isfinite(mine[c])]
    if llms and tuned:
        above = [c for c in llms if mine[c] > max(mine[t] for t in tuned)]
        holds = "yes" if len(above) == len(llms) else "no"
        evidence = f"{len(above)} of {len(llms)} LLM summarizers rank above every fine-tuned system"
    else:
        above, holds, evidence = [], "undecided", "this run lacks LLM or fine-tuned contestants"
    rows.append({"claim": "the LLM judge ranks the LLMs' summaries above the fine-tuned systems", "evidence": evidence,
                 "holds": holds, "value": float(len(above)), "ci_low": np.nan, "ci_high": np.nan, "n": len(llms)})

    out = pd.DataFrame(rows)
    if degenerate:
        if n_articles < MIN_ARTICLES_FOR_A_CLAIM:
            why = f"only {n_articles} article(s)"
        elif by_position:
            why = (f"the judge picks position A in {position_share:.0%} of its decided encounters, so its outcomes "
                   "follow the random display order")
        else:
            why = "the judge gives every contestant the same strength"
        out["holds"] = "undecided"
        out["evidence"] = out["evidence"] + f" (no verdict: {why})"
    return out
