"""The gaming chapter's tables: how often each attack wins, and what each defense takes away.

Input: the ``gaming`` study's frames, ``{judge: frame}`` with one row per comparison (``attack``,
``protected``, ``opponent``, ``attack_first``, ``aspect``, ``context_id``, ``p_a``). The unit of
inference is the article (context): every number is first computed per article, then averaged
with an interval over articles.

One definition per quantity:

* an attack **wins** a comparison when the judge prefers it: P(A) above one half with the attack
  first, below one half with it second; exactly one half counts as half a win;
* its **win rate in one order** is the share of the article's real summaries it beats standing
  first (or standing second);
* its **win rate over both orders** is the share it beats when each pair is read in both orders
  and the two probabilities that the attack is better are averaged (the book's cure for positional
  bias on one pair); the same one-half rule decides;
* an article's win rate over the **aspects averaged** is the mean over the aspects judged (the chapter
  judges consistency and relevance: a text that ignores the article cannot deserve to win on them).

Defenses are paired differences on the same articles: the win rate standing first (the slot every
attack's text names) minus the win rate over both orders (what position gave the attack), and the forged turns' win
rate without the library's protection minus with it (what reading texts as plain text took away),
the share of pairs whose two orders agree after debiasing among the real summaries minus among
an attack's pairs (what the judge screen would see of the attack), and a constant text's win rate
with the plain prompt minus with the article's reference summary shown (what the reference took away).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from nlgjudge.stats.intervals import share_interval
from nlgjudge.stats.multiplicity import paired_t_p_value, share_p_value

ALL_ASPECTS = "aspects averaged"
READINGS = ("first", "second", "both")


def _win(p_attack: np.ndarray | pd.Series) -> np.ndarray:
    """1 for a win, 0 for a loss, one half for an exact tie (P = 1/2)."""
    p = np.asarray(p_attack, dtype=float)
    return np.where(p > 0.5, 1.0, np.where(p < 0.5, 0.0, 0.5))


def per_article_wins(frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per (judge, aspect, attack, protected, article) with its win rates in each reading,
    plus one row per (judge, attack, protected, article) averaging its aspects (aspect
    :data:`ALL_ASPECTS`); ``opponents`` is how many real summaries the attack met there. A comparison
    recorded twice is an error, never silently collapsed."""
    parts = []
    for judge, frame in frames.items():
        if frame.empty:
            continue
        f = frame.copy()
        f["p_attack"] = np.where(f["attack_first"], f["p_a"], 1.0 - f["p_a"])
        keys = ["aspect", "attack", "protected", "context_id", "opponent"]
        twice = f.duplicated([*keys, "attack_first"])
        if twice.any():
            raise ValueError(f"{judge}: {int(twice.sum())} attack comparison(s) recorded twice (same article, aspect, "
                             "attack, reading, opponent and order); keep one each")
        wide = f.pivot_table(index=keys, columns="attack_first", values="p_attack", aggfunc="first")
        if wide.isna().any().any() or set(wide.columns) != {True, False}:
            raise ValueError(f"{judge}: some attack comparisons lack one of their two orders; every pair needs both")
        pairs = pd.DataFrame({
            "first": _win(wide[True]), "second": _win(wide[False]),
            "both": _win((wide[True] + wide[False]) / 2.0),
        }, index=wide.index).reset_index()
        grouped = pairs.groupby(keys[:-1], sort=False)
        article = grouped[list(READINGS)].mean()
        article["opponents"] = grouped.size()
        article = article.reset_index()
        overall = article.groupby(["attack", "protected", "context_id"], sort=False)
        pooled = overall[list(READINGS)].mean()
        pooled["opponents"] = overall["opponents"].min()
        pooled = pooled.reset_index().assign(aspect=ALL_ASPECTS)
        both = pd.concat([article, pooled[article.columns]], ignore_index=True)
        both.insert(0, "judge", judge)
        parts.append(both)
    if not parts:
        raise ValueError("no attack comparisons to analyse")
    return pd.concat(parts, ignore_index=True)


def win_rate_table(per_article: pd.DataFrame) -> pd.DataFrame:
    """Per (judge, aspect, attack, protected): each reading's mean win rate over articles with its 95%
    interval (:func:`~nlgjudge.stats.intervals.share_interval`), the number of articles, and the two-sided
    p of the both-orders win rate against one half (the paired t test the interval inverts)."""
    rows = []
    for key, part in per_article.groupby(["judge", "aspect", "attack", "protected"], sort=False):
        row = dict(zip(["judge", "aspect", "attack", "protected"], key, strict=True))
        for reading in READINGS:
            interval = share_interval(part[reading].to_numpy())
            row |= {reading: interval.mean, f"{reading}_low": interval.low, f"{reading}_high": interval.high}
        row["articles"] = int(len(part))
        row["p_both_vs_half"] = share_p_value(part["both"].to_numpy(), 0.5)
        rows.append(row)
    return pd.DataFrame(rows)


# ---- the register's claims ------------------------------------------------------------------------

#: The attacks a judge's claim rows cover: the constant ones (padding has its own claim).
CONSTANT = ("null", "persuasive", "format", "control")
CLAIM_COLUMNS = ["claim", "judge", "attack", "estimate", "low", "high", "n", "verdict", "reason", "p_value",
                 "contexts_needed", "holm", "family_verdict"]


def real_pairs(frames: Mapping[str, pd.DataFrame], real: pd.DataFrame | None, *, template: int) -> dict[str, pd.DataFrame]:
    """Each judge's comparisons of two real summaries on the attacked articles and aspects (``real``: the
    comparative study's frame, the same prompt): the comparisons the judge screen reads, as in every
    chapter; an attack's pairs never enter it. A judge without them maps to an empty frame."""
    out = {}
    for judge, frame in frames.items():
        mine = (real[(real["model"] == judge) & (real["template"] == template) & real["aspect"].isin(set(frame["aspect"]))
                     & real["context_id"].isin(set(frame["context_id"]))] if real is not None and len(real) else pd.DataFrame())
        out[str(judge)] = mine
    return out


#: The screen's reason for a judge without the real summaries' comparisons of the attacked articles.
NO_REAL_PAIRS = ("the judge screen reads the real summaries' pairs of these articles, and none is released for this judge, "
                 "so its rows are not tested")


def judge_screens(pairs: Mapping[str, pd.DataFrame]) -> dict[str, str | None]:
    """The book's judge screen (:mod:`nlgjudge.stats.degenerate`) on each judge's :func:`real_pairs`: a
    pair's two orders within one article and aspect, one debiasing threshold per such set, as in every
    chapter. ``{judge: reason or None}``; a judge without real pairs gets :data:`NO_REAL_PAIRS`."""
    from nlgjudge.analysis.judges import degenerate_judges

    found = {str(k): v for k, v in degenerate_judges({k: f for k, f in pairs.items() if len(f)}, ["context_id", "aspect"],
                                                     first="candidate_a", second="candidate_b", p_a="p_a").items()}
    return {str(k): found.get(str(k), NO_REAL_PAIRS) for k in pairs}


def _claim_row(claim_id: str, judge: str, attack: str, values: np.ndarray, gate: str | None, share: bool,
               sides: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, object]:
    """``sides``: for a difference of two shares, the shares themselves (minuend, subtrahend). Where every
    article's difference is the same, the t interval has width zero; the difference of the two shares'
    own intervals (:func:`~nlgjudge.stats.intervals.share_interval`, exact at the bounds) then bounds it
    instead, at no less than the stated confidence."""
    from nlgjudge.register import claim, contexts_needed_for, verdict
    from nlgjudge.stats.intervals import MeanInterval, mean_interval

    spec = claim(claim_id)
    interval = share_interval(values) if share else mean_interval(values, bounds=(-1.0, 1.0), cap_at_units=True)
    if sides is not None and interval.n >= 2 and np.ptp(values) == 0:
        minuend, subtrahend = share_interval(sides[0]), share_interval(sides[1])
        interval = MeanInterval(interval.mean, max(-1.0, minuend.low - subtrahend.high), min(1.0, minuend.high - subtrahend.low),
                                interval.n, interval.confidence, "difference of the two shares' intervals (no spread over articles)")
    found = verdict(claim_id, interval.mean, interval.low, interval.high, interval.n, degenerate=gate)
    # at the registered minimal effect (never the observed one), for every tested row: a row resolved on
    # its own interval may still be left open by Holm's correction over its family
    spread = float(np.std(values, ddof=1)) if len(values) >= 2 else 0.0
    needed = contexts_needed_for(claim_id, spread) if found.tested and spread > 0 else None
    return {"claim": claim_id, "judge": judge, "attack": attack, "estimate": interval.mean, "low": interval.low,
            "high": interval.high, "n": interval.n, "verdict": found.verdict, "reason": found.reason,
            "p_value": (share_p_value(values, spec.threshold) if share else paired_t_p_value(values, spec.threshold))
            if found.tested else np.nan,
            "contexts_needed": float(needed) if needed is not None else np.nan}


SCREEN_COLUMNS = ["judge", "attack", "context_id", "real_agreement", "attack_agreement", "difference"]


def screen_differences(frames: Mapping[str, pd.DataFrame], real: pd.DataFrame, *, template: int) -> pd.DataFrame:
    """The judge screen read as a defense, per judge, constant attack and article: the share of the real
    summaries' pairs whose two orders agree after debiasing (``real``: the comparative study's frame, as
    for :func:`leaderboard_places`) minus the share for the attack's pairs with them (protected), each
    set (article and aspect; and attack) debiased on its own as the screen does, the aspects pooled.
    Only articles both hold."""
    from nlgjudge.stats.degenerate import agreement_per_context

    rows = []
    for judge, frame in frames.items():
        mine = real_pairs({judge: frame}, real, template=template)[str(judge)]
        if mine.empty:
            continue
        base = agreement_per_context(list(zip(mine["context_id"], mine["aspect"], strict=True)), mine["candidate_a"].astype(str),
                                     mine["candidate_b"].astype(str), mine["p_a"].to_numpy(float), mine["context_id"].tolist())
        for attack in CONSTANT:
            att = frame[(frame["attack"] == attack) & frame["protected"]]
            shares = agreement_per_context(list(zip(att["context_id"], att["aspect"], strict=True)), att["a"].astype(str),
                                           att["b"].astype(str), att["p_a"].to_numpy(float), att["context_id"].tolist())
            for context_id in [c for c in shares if c in base]:
                real_share, attack_share = base[context_id][0], shares[context_id][0]
                rows.append({"judge": judge, "attack": attack, "context_id": context_id, "real_agreement": real_share,
                             "attack_agreement": attack_share, "difference": real_share - attack_share})
    return pd.DataFrame(rows, columns=SCREEN_COLUMNS)


def screen_reading(screen_pairs: pd.DataFrame | None, screen_rows: pd.DataFrame, titles: Mapping[str, str]) -> str:
    """The screen-as-defense section's reading in words: each judge's mean agreement on the real
    summaries' pairs and the range over its attacks' pairs (descriptions), and what a contradicted row
    means (its interval lies below 0: the attack's pairs agree more often), only where the table has one."""
    from nlgjudge.stats.claims import CONTRADICTED

    if screen_pairs is None or screen_pairs.empty:
        return "No judge has the real summaries' comparisons released for these articles, so the screen is not read as a defense here."
    parts = []
    for number, (judge, part) in enumerate(screen_pairs.groupby("judge", sort=False)):
        by_attack = part.groupby("attack")["attack_agreement"].mean()
        real = part.groupby("context_id")["real_agreement"].first().mean()
        parts.append(f"{titles.get(judge, judge)}'s two orders agree on {real:.0%} of the real summaries' pairs and on "
                     f"{by_attack.min():.0%} to {by_attack.max():.0%} of an attack's pairs" if number == 0 else
                     f"{titles.get(judge, judge)}'s on {real:.0%} and {by_attack.min():.0%} to {by_attack.max():.0%}")
    reading = "On the same articles (means over articles), " + "; ".join(parts) + "."
    if (screen_rows["family_verdict"] == CONTRADICTED).any():
        reading += (" In a row contradicted (a lead) the attack's pairs agree more often than the real summaries' pairs: the judge "
                    "decides them the same way in both orders, so a screen run with the attack among the systems would find "
                    "the judge more consistent, not less.")
    return reading


def length_control_rows(frames: Mapping[str, pd.DataFrame], lengths: Mapping[tuple[str, str], int],
                        attack_lengths: Mapping[str, int], screens: Mapping[str, str | None] | None = None) -> pd.DataFrame:
    """The registered claim ``gaming.length_control`` per judge and constant attack (protected): each
    comparison's both-orders outcome (the chapter's one definition of a win) against the attack's length
    minus its opponent's, in characters (``lengths``: (article, candidate) -> characters; ``attack_lengths``:
    attack -> characters), read by :func:`~nlgjudge.stats.length_control.length_control` with the article
    as the unit. Columns as :func:`gaming_claims`' rows (before Holm's correction)."""
    from nlgjudge.register import units_needed_for, verdict
    from nlgjudge.stats.length_control import length_control
    from nlgjudge.stats.multiplicity import p_from_interval

    rows = []
    for judge, frame in frames.items():
        gate = (screens or {}).get(judge)
        for attack in CONSTANT:
            part = frame[(frame["attack"] == attack) & frame["protected"]].copy()
            if part.empty or attack not in attack_lengths:
                continue
            part["p_attack"] = np.where(part["attack_first"], part["p_a"], 1.0 - part["p_a"])
            pairs = part.pivot_table(index=["context_id", "aspect", "opponent"], columns="attack_first", values="p_attack",
                                     aggfunc="first").dropna().reset_index()
            outcome = _win((pairs[True] + pairs[False]) / 2.0)
            difference = [attack_lengths[attack] - lengths[(str(c), str(o))] for c, o in zip(pairs["context_id"], pairs["opponent"])]
            found = length_control(outcome, difference, pairs["context_id"].astype(str).to_numpy())
            said = verdict("gaming.length_control", found.difference, found.low, found.high, found.n_units,
                           degenerate=gate or found.reason)
            rows.append({"claim": "gaming.length_control", "judge": judge, "attack": attack, "estimate": found.difference,
                         "low": found.low, "high": found.high, "n": found.n_units, "verdict": said.verdict,
                         "reason": said.reason, "raw": found.raw, "controlled": found.controlled,
                         "p_value": p_from_interval(found.difference, found.low, found.high, found.n_units) if said.tested else np.nan,
                         "contexts_needed": units_needed_for("gaming.length_control", found.low, found.high, found.n_units)
                         if said.tested else np.nan})
    return pd.DataFrame(rows)


def reference_rows(per_article: pd.DataFrame, per_article_reference: pd.DataFrame,
                   screens: Mapping[str, str | None] | None = None) -> pd.DataFrame:
    """The registered claim ``gaming.reference`` per judge and attack of ``per_article_reference`` (the
    ``gaming_reference`` study's :func:`per_article_wins`): the both-orders win rate with the plain prompt
    (``per_article``) minus with the reference-based one, aspects averaged, paired over the articles both
    hold. Columns as :func:`gaming_claims`' rows (before Holm's correction)."""
    def pooled(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[(frame["aspect"] == ALL_ASPECTS) & frame["protected"]]

    plain, shown = pooled(per_article), pooled(per_article_reference)
    rows = []
    for (judge, attack), with_reference in shown.groupby(["judge", "attack"], sort=False):
        without = plain[(plain["judge"] == judge) & (plain["attack"] == attack)].set_index("context_id")["both"]
        with_reference = with_reference.set_index("context_id")["both"]
        common = [c for c in with_reference.index if c in without.index]
        first, second = without.loc[common].to_numpy(float), with_reference.loc[common].to_numpy(float)
        rows.append(_claim_row("gaming.reference", str(judge), str(attack), first - second, (screens or {}).get(judge),
                               share=False, sides=(first, second)))
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS[:-2])


#: Why the protection's row is not tested when the unprotected forged turns win no comparison at all.
NOTHING_TO_TAKE = ("without the protection the forged turns win no comparison over both orders in any article (what they "
                   "win standing first, the other order takes back): there is nothing for it to take away")


def gaming_claims(per_article: pd.DataFrame, screens: Mapping[str, str | None] | None = None,
                  screen_pairs: pd.DataFrame | None = None, length_rows: pd.DataFrame | None = None,
                  reference: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every row of the chapter's registered claims, all aspects averaged per article, with each
    row's own verdict and its family's after Holm's correction (``gaming.attacks``: a judge's constant
    attacks; ``gaming.judges``: the judges of one defense). ``screens``: :func:`judge_screens`; a judge
    that fails the screen is not tested, as in every chapter. ``screen_pairs``: :func:`screen_differences`
    (the screen as a defense; without it that claim has no row); ``length_rows``: :func:`length_control_rows`."""
    from nlgjudge.stats.claims import family_verdicts
    from nlgjudge.stats.multiplicity import holm_rejections

    pooled = per_article[per_article["aspect"] == ALL_ASPECTS]
    rows = []
    for judge, part in pooled.groupby("judge", sort=False):
        gate = (screens or {}).get(judge)
        protected = part[part["protected"]].set_index("context_id")
        for attack in CONSTANT:
            one = protected[protected["attack"] == attack]
            if one.empty:
                continue
            rows.append(_claim_row("gaming.attack_wins", judge, attack, one["both"].to_numpy(), gate, share=True))
            rows.append(_claim_row("gaming.position_share", judge, attack, (one["first"] - one["both"]).to_numpy(), gate,
                                   share=False, sides=(one["first"].to_numpy(), one["both"].to_numpy())))
        control = part[part["attack"] == "control"].pivot_table(index="context_id", columns="protected", values="both")
        if set(control.columns) == {True, False}:
            # without the protection the forged turns win nothing: there is nothing for it to take away
            moot = None if gate or (control[False] > 0).any() else NOTHING_TO_TAKE
            rows.append(_claim_row("gaming.protection", judge, "control", (control[False] - control[True]).to_numpy(), gate or moot,
                                   share=False, sides=(control[False].to_numpy(), control[True].to_numpy())))
        padded = protected[protected["attack"] == "padded"]
        if not padded.empty:
            rows.append(_claim_row("gaming.length", judge, "padded", padded["both"].to_numpy(), gate, share=True))
        mine = screen_pairs[screen_pairs["judge"] == judge] if screen_pairs is not None else pd.DataFrame(columns=SCREEN_COLUMNS)
        for attack, pairs in mine.groupby("attack", sort=False):
            rows.append(_claim_row("gaming.screen", judge, str(attack), pairs["difference"].to_numpy(float), gate, share=False,
                                   sides=(pairs["real_agreement"].to_numpy(float), pairs["attack_agreement"].to_numpy(float))))
    for extra in (length_rows, reference):  # reference: :func:`reference_rows`
        if extra is not None and len(extra):
            rows += extra[CLAIM_COLUMNS[:-2]].to_dict("records")
    out = pd.DataFrame(rows, columns=CLAIM_COLUMNS[:-2])
    out["holm"], out["family_verdict"] = False, out["verdict"]
    family_of = {"gaming.attack_wins": "judge", "gaming.position_share": "judge", "gaming.screen": "judge",
                 "gaming.length_control": "judge", "gaming.reference": "judge"}  # the others: over the judges
    for claim_id, rows_of in out.groupby("claim", sort=False):
        groups = rows_of.groupby("judge", sort=False) if claim_id in family_of else [(None, rows_of)]
        for _, family in groups:
            p_values = family["p_value"].to_numpy(dtype=float)
            out.loc[family.index, "holm"] = holm_rejections(p_values)
            out.loc[family.index, "family_verdict"] = family_verdicts(family["verdict"].tolist(), p_values)
    return out


#: Each claim's family in words, for the flag a row gets when Holm's correction does not keep it.
FAMILY_WORDS = {"gaming.attack_wins": "the judge's attacks", "gaming.position_share": "the judge's attacks",
                "gaming.screen": "the judge's attacks", "gaming.length_control": "the judge's attacks",
                "gaming.protection": "the judges", "gaming.length": "the judges",
                "gaming.reference": "the judge's two texts shown the reference"}


#: The claims declared after related data were shown (the plan marks them exploratory): their rows are
#: read by the same rule, each tested verdict marked a lead for fresh articles to confirm (the book's one form).
EXPLORATORY = ("gaming.screen", "gaming.length_control")
LEAD_NOTE = "a lead: declared after related data were shown"


def lead_words(text: str) -> str:
    """An exploratory claim's verdict text with the lead qualifier after its verdict word, the form every
    chapter uses ("supported (a lead: ...)"); "not tested" stays as it is (no reading, so no lead)."""
    import re

    return re.sub(r"^(not resolved|supported|contradicted)\b", lambda m: f"{m.group(1)} ({LEAD_NOTE})", text)


def claim_counts(claims: pd.DataFrame, claim_id: str) -> str:
    """One claim's rows in one sentence: how many are supported and contradicted after Holm's correction
    over their family (the uncorrected count beside it where it differs), the rest not resolved or not
    tested, e.g. "supported in 1 of 8 rows (2 before Holm's correction), contradicted in 5, not resolved in 2"."""
    from nlgjudge.stats.claims import CONTRADICTED, NOT_RESOLVED, NOT_TESTED, SUPPORTED
    from nlgjudge.stats.multiplicity import count_words

    rows = claims[claims["claim"] == claim_id]
    if rows.empty:
        return "not tested: no row in this run"
    total = len(rows)
    parts = []
    for word in (SUPPORTED, CONTRADICTED):
        after, before = int((rows["family_verdict"] == word).sum()), int((rows["verdict"] == word).sum())
        parts.append(f"{word} in {count_words(after, before)}")
    for word in (NOT_RESOLVED, NOT_TESTED):
        count = int((rows["family_verdict"] == word).sum())
        # "not tested" always with its reason in words: each distinct reason's first clause, with its rows where
        # there are several reasons (so a reader knows which rows have which)
        why = pd.Series([str(r).split(":")[0].split(" (")[0].strip() for r in rows.loc[rows["family_verdict"] == word, "reason"]],
                        dtype=object).value_counts(sort=False)
        why = why[why.index != ""]
        said_why = ("; ".join(why.index) if len(why) == 1 else
                    "; ".join(f"{n} row{'s' if n > 1 else ''}: {reason}" for reason, n in sorted(why.items())))
        if count:
            parts.append(f"{word} in {count}" + (f" ({said_why})" if word == NOT_TESTED and len(why) else ""))
    said = f"{parts[0]} of {total} row{'s' if total != 1 else ''}, " + ", ".join(parts[1:])
    tested = int((rows["family_verdict"] != NOT_TESTED).sum())
    return f"{said}; {'each tested row is ' if tested > 1 else ''}{LEAD_NOTE}" if claim_id in EXPLORATORY and tested else said


def claims_view(claims: pd.DataFrame, titles: Mapping[str, str], attack_titles: Mapping[str, str],
                decimals: int = 2) -> pd.DataFrame:
    """The claims for the page: one row per claim row, indexed by judge and attack (reader names), with
    the estimate and its 95% interval, n, the verdict after Holm's correction over its family, and the
    articles a not-resolved row would need at the registered minimal effect."""
    from nlgjudge.prose import interval_text, verdict_after_holm
    from nlgjudge.register import needed_cell
    from nlgjudge.stats.claims import NOT_RESOLVED

    return pd.DataFrame({
        # a win rate is a share: 0 is its bound, not a line it is read against
        "estimate [95%]": [interval_text(e, lo, hi, decimals, bounded_at_zero=c == "gaming.attack_wins") for e, lo, hi, c in
                           zip(claims["estimate"], claims["low"], claims["high"], claims["claim"], strict=True)],
        "n": claims["n"].to_numpy(),
        "verdict": [(lead_words if c in EXPLORATORY else str)(verdict_after_holm(v, f, r, FAMILY_WORDS[c])) for v, f, r, c in
                    zip(claims["verdict"], claims["family_verdict"], claims["reason"], claims["claim"], strict=True)],
        "articles needed": [needed_cell(k, n) if f == NOT_RESOLVED and np.isfinite(k) else "–" for f, k, n in
                            zip(claims["family_verdict"], claims["contexts_needed"], claims["n"], strict=True)],
    }, index=pd.MultiIndex.from_arrays([[titles.get(j, j) for j in claims["judge"]],
                                        [attack_titles.get(a, a) for a in claims["attack"]]], names=["judge", "attack"]))


LEADERBOARD_PLACE_COLUMNS = ["judge", "aspect", "attack", "place", "systems", "score", "score_low", "score_high",
                             "real_below", "articles"]


def leaderboard_places(frames: Mapping[str, pd.DataFrame], real: pd.DataFrame, *, template: int, n_boot: int = 200,
                       seed: int = 0) -> pd.DataFrame:
    """Each constant attack's place in the leaderboard ``nlgjudge rank`` would print for the real
    summaries and that attack: per judge and aspect, the real summaries' comparisons among themselves
    (``real``: the comparative study's frame, on the gaming study's prompt ``template`` and articles, columns ``model``,
    ``context_id``, ``template``, ``aspect``, ``candidate_a``, ``candidate_b``, ``p_a``) and the attack's
    with each of them (protected, both orders), read with rank's statistics (one debiasing threshold,
    Bradley-Terry scores, intervals over articles; :func:`nlgjudge.analysis.rank.analyse`). Only
    articles both hold are used. ``place`` is the attack's rank (1 = top, shared on a tie) of
    ``systems``; ``real_below``: the real systems it outscores. A description, not a claim: the
    claims read the win rates."""
    from nlgjudge.analysis.rank import analyse

    rows = []
    for judge, frame in frames.items():
        mine = real[(real["model"] == judge) & (real["template"] == template)]
        for aspect in dict.fromkeys(frame["aspect"]):
            base = mine[mine["aspect"] == aspect]
            for attack in CONSTANT:
                att = frame[(frame["attack"] == attack) & frame["protected"] & (frame["aspect"] == aspect)]
                articles = set(att["context_id"]) & set(base["context_id"])
                if len(articles) < 2:
                    continue
                judgments = pd.concat([
                    pd.DataFrame({"context_id": base["context_id"], "first": base["candidate_a"].astype(str),
                                  "second": base["candidate_b"].astype(str), "p_a": base["p_a"]}),
                    pd.DataFrame({"context_id": att["context_id"], "first": att["a"].astype(str),
                                  "second": att["b"].astype(str), "p_a": att["p_a"]}),
                ], ignore_index=True)
                judgments = judgments[judgments["context_id"].isin(articles)].reset_index(drop=True)
                judgments["identical"] = False  # every pair was put to the judge, as the chapters judge them
                systems = sorted(set(judgments["first"]) | set(judgments["second"]))
                board = analyse(judgments, systems, n_boot=n_boot, seed=seed).leaderboard.set_index("system")
                mine_row = board.loc[attack]
                real_scores = board.drop(index=attack)["score"]
                rows.append({"judge": judge, "aspect": aspect, "attack": attack, "place": int(mine_row["rank"]),
                             "systems": len(board), "score": float(mine_row["score"]),
                             "score_low": float(mine_row["ci_low"]), "score_high": float(mine_row["ci_high"]),
                             "real_below": int((real_scores < mine_row["score"]).sum()), "articles": len(articles)})
    return pd.DataFrame(rows, columns=LEADERBOARD_PLACE_COLUMNS)


#: The answer box's grid: the claims whose rows it shows, each row named by what it asks (attack rows by attack).
GRID_CLAIMS = {"gaming.attack_wins": "wins against the real summaries", "gaming.length": "a summary repeated twice wins against itself"}


def answer_grid(claims: pd.DataFrame, titles: Mapping[str, str], attack_titles: Mapping[str, str]) -> pd.DataFrame:
    """The answer box's table: one row per attack (and the repeated summary), one column per judge, each cell
    the win rate over both orders with its verdict after Holm's correction over its family ("not tested" with
    its reason's first clause), so that a reader sees which judge each count comes from."""
    from nlgjudge.prose import verdict_after_holm

    rows = claims[claims["claim"].isin(list(GRID_CLAIMS))]
    cells: dict[tuple[str, str], dict[str, str]] = {}
    for row in rows.itertuples(index=False):
        what = (f"{attack_titles.get(row.attack, row.attack)}: {GRID_CLAIMS[row.claim]}" if row.claim == "gaming.attack_wins"
                else GRID_CLAIMS[row.claim])
        said = verdict_after_holm(row.verdict, row.family_verdict, row.reason, FAMILY_WORDS[row.claim])
        if row.family_verdict == "not tested":  # the reason's first clause only: the claims tables give the rest
            said = "not tested: " + str(row.reason).split(":")[0].split(" (")[0].strip()
        else:
            said = f"{row.estimate:.2f}, {said}"
        cells.setdefault((row.claim, what), {})[titles.get(row.judge, row.judge)] = said
    order = list(dict.fromkeys(titles.get(j, j) for j in rows["judge"]))
    grid = pd.DataFrame([cells[key] for key in cells], index=pd.Index([what for _, what in cells], name="attack"),
                        columns=order)
    return grid.fillna("–")
