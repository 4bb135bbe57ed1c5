"""The gaming chapter's win rates and defenses, on a fake judge whose answers are known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nlgjudge.analysis.gaming import ALL_ASPECTS, per_article_wins, win_rate_table


def _frame(p_first: float, p_second: float, *, articles: int = 4, opponents: int = 3,
           attacks: tuple[str, ...] = ("null",), aspects: tuple[str, ...] = ("COH",), unprotected: float | None = None) -> pd.DataFrame:
    """P(A) = ``p_first`` with the attack first, ``p_second`` with it second (so the attack's own
    probability there is 1 - p_second)."""
    rows = []
    for c in range(articles):
        for aspect in aspects:
            for attack in attacks:
                readings = [(True, p_first, p_second)]
                if attack == "control" and unprotected is not None:
                    readings.append((False, unprotected, 1 - unprotected))
                for protected, first, second in readings:
                    for o in range(opponents):
                        for attack_first, p in ((True, first), (False, second)):
                            rows.append({"context_id": f"c{c}", "aspect": aspect, "attack": attack, "protected": protected,
                                         "opponent": f"M{o}", "attack_first": attack_first, "p_a": p})
    return pd.DataFrame(rows)


def test_a_judge_that_always_answers_a_gives_the_attack_half_over_both_orders() -> None:
    per = per_article_wins({"j": _frame(0.9, 0.9)})
    table = win_rate_table(per)
    row = table[(table["aspect"] == "COH")].iloc[0]
    assert row["first"] == 1.0 and row["second"] == 0.0 and row["both"] == 0.5
    assert row["articles"] == 4
    assert set(table["aspect"]) == {"COH", ALL_ASPECTS}


def test_an_attack_the_judge_prefers_in_both_orders_wins_everywhere_with_an_honest_interval() -> None:
    per = per_article_wins({"j": _frame(0.8, 0.3, articles=6)})
    row = win_rate_table(per).iloc[0]
    assert row["both"] == 1.0 and row["both_high"] == 1.0
    assert row["both_low"] == pytest.approx(0.025 ** (1 / 6))  # exact binomial bound, not a zero-width interval
    assert row["p_both_vs_half"] == pytest.approx(2 * 0.5 ** 6)  # exact binomial, 6 of 6


def test_a_comparison_recorded_twice_is_an_error_not_silently_collapsed() -> None:
    frame = _frame(0.6, 0.4)
    with pytest.raises(ValueError, match="recorded twice"):
        per_article_wins({"j": pd.concat([frame, frame.iloc[:1]], ignore_index=True)})


def test_a_pair_missing_one_order_is_an_error_not_a_silent_drop() -> None:
    frame = _frame(0.6, 0.4)
    with pytest.raises(ValueError, match="both"):
        per_article_wins({"j": frame[~((frame["context_id"] == "c0") & (frame["opponent"] == "M0") & ~frame["attack_first"])]})


def test_exact_ties_count_half_a_win() -> None:
    per = per_article_wins({"j": _frame(0.5, 0.5)})
    assert np.allclose(per[["first", "second", "both"]].to_numpy(), 0.5)


def test_the_claims_read_the_register_and_correct_each_family() -> None:
    from nlgjudge.analysis.gaming import gaming_claims

    frame = _frame(0.9, 0.2, articles=10, attacks=("null", "persuasive", "format", "control", "padded"), unprotected=0.95)
    claims = gaming_claims(per_article_wins({"j": frame, "k": frame}))
    assert set(claims["claim"]) == {"gaming.attack_wins", "gaming.position_share", "gaming.protection", "gaming.length"}
    wins = claims[(claims["claim"] == "gaming.attack_wins") & (claims["judge"] == "j")]
    assert len(wins) == 4 and (wins["verdict"] == "supported").all() and (wins["family_verdict"] == "supported").all()
    # every article at 1: the exact bound 0.025 ** (1/10) = 0.69 lies above one half, and the exact p
    # 2 / 2 ** 10 survives Holm over four attacks
    assert wins["low"].iloc[0] == pytest.approx(0.025 ** (1 / 10))
    few = gaming_claims(per_article_wins({"j": frame[frame["context_id"].isin(["c0", "c1", "c2", "c3", "c4", "c5"])]}))
    few_wins = few[few["claim"] == "gaming.attack_wins"]
    # 6 of 6 articles: each row alone is supported (p = 1/32), but not after Holm over four (the flag)
    assert (few_wins["verdict"] == "supported").all() and (few_wins["family_verdict"] == "not resolved").all()
    screened = gaming_claims(per_article_wins({"j": frame}), screens={"j": "answers by position"})
    assert (screened["verdict"] == "not tested").all() and screened["p_value"].isna().all()


def test_a_difference_without_spread_is_bounded_by_its_two_shares_not_a_zero_width_interval() -> None:
    from nlgjudge.analysis.gaming import gaming_claims

    protected = _frame(0.9, 0.1, articles=8, attacks=("control",))  # the attack wins in both orders, everywhere
    frame = pd.concat([protected, protected.assign(protected=False)], ignore_index=True)  # the same unprotected
    claims = gaming_claims(per_article_wins({"j": frame}))
    row = claims[claims["claim"] == "gaming.protection"].iloc[0]
    assert row["estimate"] == 0.0 and row["low"] < 0.0 < row["high"]  # not [0, 0]
    assert row["verdict"] == "not resolved"


def test_a_protection_with_nothing_to_take_away_is_not_tested_and_says_why() -> None:
    from nlgjudge.analysis.gaming import NOTHING_TO_TAKE, gaming_claims

    protected = _frame(0.1, 0.9, articles=8, attacks=("control",))  # the attack loses in both orders, everywhere
    frame = pd.concat([protected, protected.assign(protected=False)], ignore_index=True)  # the same unprotected
    row = gaming_claims(per_article_wins({"j": frame})).query("claim == 'gaming.protection'").iloc[0]
    assert row["verdict"] == "not tested" and NOTHING_TO_TAKE in row["reason"] and np.isnan(row["p_value"])
    screened = gaming_claims(per_article_wins({"j": frame}), screens={"j": "answers by position"})
    assert "answers by position" in screened.query("claim == 'gaming.protection'").iloc[0]["reason"]  # the screen's reason first


def _leaderboard_inputs(p_attack: float, *, articles: int = 5, systems: int = 4) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Real systems M0 > M1 > ... (a lower index wins every comparison, in both orders) and an attack
    whose probability of being preferred is ``p_attack`` against every one of them, in both orders."""
    real, attack = [], []
    for c in range(articles):
        for i in range(systems):
            for j in range(systems):
                if i != j:
                    real.append({"model": "j", "context_id": f"c{c}", "template": 1, "aspect": "CON",
                                 "candidate_a": f"M{i}", "candidate_b": f"M{j}", "p_a": 0.9 if i < j else 0.1})
            for attack_first in (True, False):
                a, b = ("null", f"M{i}") if attack_first else (f"M{i}", "null")
                attack.append({"context_id": f"c{c}", "aspect": "CON", "attack": "null", "protected": True, "a": a, "b": b,
                               "opponent": f"M{i}", "attack_first": attack_first,
                               "p_a": p_attack if attack_first else 1 - p_attack})
    return pd.DataFrame(attack), pd.DataFrame(real)


@pytest.mark.parametrize(("p_attack", "place", "below"), [(0.95, 1, 4), (0.05, 5, 0)])
def test_an_attacks_place_in_the_leaderboard_follows_what_the_judge_prefers(p_attack: float, place: int, below: int) -> None:
    from nlgjudge.analysis.gaming import leaderboard_places

    attack, real = _leaderboard_inputs(p_attack)
    row = leaderboard_places({"j": attack}, real, template=1, n_boot=20).iloc[0]
    assert (row["place"], row["systems"], row["real_below"], row["articles"]) == (place, 5, below, 5)
    assert row["score_low"] <= row["score"] <= row["score_high"]


def test_a_leaderboard_reads_only_the_articles_both_frames_hold_and_the_gaming_prompt() -> None:
    from nlgjudge.analysis.gaming import leaderboard_places

    attack, real = _leaderboard_inputs(0.95)
    other_prompt = real.assign(template=2)
    assert leaderboard_places({"j": attack}, other_prompt, template=1, n_boot=20).empty
    fewer = real[real["context_id"].isin(["c0", "c1", "c2"])]
    assert leaderboard_places({"j": attack}, fewer, template=1, n_boot=20).iloc[0]["articles"] == 3


def test_the_screen_as_a_defense_reads_real_minus_attack_agreement_per_article() -> None:
    from nlgjudge.analysis.gaming import gaming_claims, screen_differences

    # the real summaries agree with themselves in both orders; the attack's P(A) is high against odd
    # opponents and low against even ones whatever its slot, so after debiasing its two orders always disagree
    attack, real = _leaderboard_inputs(0.95, articles=6)
    attack["p_a"] = [(0.9 if first else 0.8) if int(opp[1:]) % 2 else (0.6 if first else 0.3)
                     for first, opp in zip(attack["attack_first"], attack["opponent"], strict=True)]
    pairs = screen_differences({"j": attack}, real, template=1)
    assert list(pairs["attack"].unique()) == ["null"] and len(pairs) == 6
    assert (pairs["real_agreement"] == 1.0).all() and (pairs["attack_agreement"] == 0.0).all()
    rows = gaming_claims(per_article_wins({"j": attack}), screen_pairs=pairs).query("claim == 'gaming.screen'")
    assert len(rows) == 1 and rows.iloc[0]["estimate"] == 1.0 and rows.iloc[0]["verdict"] == "supported"
    assert gaming_claims(per_article_wins({"j": attack})).query("claim == 'gaming.screen'").empty  # no pairs, no row
    assert screen_differences({"j": attack}, real.assign(template=2), template=1).empty


def test_length_control_reads_each_attacks_outcomes_against_its_length_difference() -> None:
    from nlgjudge.analysis.gaming import gaming_claims, length_control_rows

    attack, _ = _leaderboard_inputs(0.95, articles=8, systems=6)
    rng = np.random.default_rng(0)
    lengths = {(f"c{c}", f"M{i}"): int(rng.integers(40, 400)) for c in range(8) for i in range(6)}
    # the judge prefers the attack (400 characters) exactly when its opponent is shorter than 220 characters
    prefers = {key: length < 220 for key, length in lengths.items()}
    attack["p_a"] = [(0.8 if prefers[(c, o)] else 0.2) if first else (0.2 if prefers[(c, o)] else 0.8)
                     for c, o, first in zip(attack["context_id"], attack["opponent"], attack["attack_first"], strict=True)]
    rows = length_control_rows({"j": attack}, lengths, {"null": 400})
    assert list(rows["claim"]) == ["gaming.length_control"] and rows.iloc[0]["n"] == 8
    assert rows.iloc[0]["raw"] == pytest.approx(np.mean(list(prefers.values())))
    assert "separates" in rows.iloc[0]["reason"]  # a preference set by length alone: no finite fit, said so
    assert rows.iloc[0]["verdict"] == "not tested"
    claimed = gaming_claims(per_article_wins({"j": attack}), length_rows=rows).query("claim == 'gaming.length_control'")
    assert len(claimed) == 1 and claimed.iloc[0]["family_verdict"] == "not tested"


def test_the_judge_screen_reads_only_the_real_summaries_pairs() -> None:
    from nlgjudge.analysis.gaming import NO_REAL_PAIRS, judge_screens, real_pairs

    # the attack's pairs agree perfectly, the real summaries' never: the screen must see only the latter
    attack, real = _leaderboard_inputs(0.95, articles=8)  # 8 all-agreeing articles: the exact bound clears 4-candidate chance
    consistent = real.assign(p_a=[0.9 if a < b else 0.1 for a, b in zip(real["candidate_a"], real["candidate_b"], strict=True)])
    contrary = real.assign(p_a=0.9)  # always "A": after debiasing every decision ties, agreement one half
    assert judge_screens(real_pairs({"j": attack}, consistent, template=1)) == {"j": None}
    assert judge_screens(real_pairs({"j": attack}, contrary, template=1))["j"] is not None
    assert judge_screens(real_pairs({"j": attack}, None, template=1)) == {"j": NO_REAL_PAIRS}
    assert judge_screens(real_pairs({"j": attack}, consistent.assign(template=2), template=1)) == {"j": NO_REAL_PAIRS}


def test_the_reference_defense_reads_plain_minus_reference_win_rates_on_the_articles_both_hold() -> None:
    from nlgjudge.analysis.gaming import gaming_claims, reference_rows

    rows, shown = [], []
    for c in range(6):  # the attack beats three of four summaries with the plain prompt; with the reference, fewer
        for o in range(4):
            for attack_first in (True, False):
                p_plain = 0.8 if o < 3 else 0.2
                rows.append({"context_id": f"c{c}", "aspect": "CON", "attack": "null", "protected": True, "opponent": f"M{o}",
                             "attack_first": attack_first, "p_a": p_plain if attack_first else 1 - p_plain})
                if c < 5:  # c5 has no reference-based judgments: not paired, not read
                    win = o < (c % 3)
                    p_attack = 0.7 if win else 0.3
                    shown.append({"context_id": f"c{c}", "aspect": "CON", "attack": "null", "protected": True,
                                  "opponent": f"M{o}", "attack_first": attack_first,
                                  "p_a": p_attack if attack_first else 1 - p_attack})
    plain = per_article_wins({"j": pd.DataFrame(rows)})
    with_reference = per_article_wins({"j": pd.DataFrame(shown)})
    found = reference_rows(plain, with_reference).iloc[0]
    expected = 0.75 - np.array([0, 1, 2, 0, 1]) / 4.0
    assert found["claim"] == "gaming.reference" and found["n"] == 5 and found["estimate"] == pytest.approx(expected.mean())
    half = found["estimate"] - found["low"]
    from scipy import stats

    assert half == pytest.approx(stats.t.ppf(0.975, 4) * expected.std(ddof=1) / np.sqrt(5))
    assert found["verdict"] == "supported"  # the whole interval above 0
    # a judge that fails the screen is not tested, and the claim joins its own family in gaming_claims
    gated = reference_rows(plain, with_reference, {"j": "fails the judge screen: answers by position"}).iloc[0]
    assert gated["verdict"] == "not tested"
    claims = gaming_claims(plain, reference=reference_rows(plain, with_reference))
    assert (claims["claim"] == "gaming.reference").sum() == 1


def test_an_exploratory_claims_rows_carry_the_books_one_lead_qualifier() -> None:
    from nlgjudge.analysis.gaming import claim_counts, claims_view, lead_words

    claims = pd.DataFrame({"claim": ["gaming.screen", "gaming.screen", "gaming.attack_wins"], "judge": ["j", "j", "j"],
                           "attack": ["null", "format", "null"], "estimate": [0.2, -0.1, 0.7], "low": [0.1, -0.2, 0.6],
                           "high": [0.3, 0.05, 0.8], "n": [8, 8, 8], "verdict": ["supported", "not resolved", "supported"],
                           "family_verdict": ["supported", "not resolved", "supported"],
                           "reason": ["interval above 0", "interval contains 0", "interval above 0.5"],
                           "contexts_needed": [np.nan, 30.0, np.nan]})
    said = claim_counts(claims, "gaming.screen")
    assert said.startswith("supported in 1 of 2 rows") and "not resolved in 1" in said
    assert said.endswith("; each tested row is a lead: declared after related data were shown")
    assert claim_counts(claims, "gaming.attack_wins").startswith("supported in 1 of 1 row")
    assert "lead" not in claim_counts(claims, "gaming.attack_wins")
    view = claims_view(claims, {}, {})
    assert view["verdict"].iloc[0].startswith("supported (a lead: declared after related data were shown)")
    assert view["verdict"].iloc[2].startswith("supported") and "lead" not in view["verdict"].iloc[2]
    assert lead_words("not tested: too few articles") == "not tested: too few articles"


def test_a_count_of_rows_not_tested_gives_their_reasons_in_words() -> None:
    from nlgjudge.analysis.gaming import NOTHING_TO_TAKE, claim_counts

    claims = pd.DataFrame({"claim": ["gaming.protection"] * 3, "verdict": ["not tested", "not tested", "supported"],
                           "family_verdict": ["not tested", "not tested", "supported"],
                           "reason": ["fails the judge screen: its two orders agree on 12 of 30 contexts", NOTHING_TO_TAKE,
                                      "interval above 0"]})
    said = claim_counts(claims, "gaming.protection")
    assert said.startswith("supported in 1 of 3 rows") and "not tested in 2 (1 row: fails the judge screen; 1 row: without the protection" in said
    assert "12 of 30" not in said and "standing first" not in said  # the first clause of each reason, not its detail


def test_rows_not_tested_for_different_reasons_are_counted_per_reason() -> None:
    from nlgjudge.analysis.gaming import claim_counts

    claims = pd.DataFrame({"claim": ["gaming.protection"] * 3, "family_verdict": ["not tested"] * 3, "verdict": ["not tested"] * 3,
                           "reason": ["fails the judge screen: 54% of pairs agree", "fails the judge screen: 50%",
                                      "without the protection the forged turns win no comparison in any article"]})
    said = claim_counts(claims, "gaming.protection")
    assert said.endswith("not tested in 3 (2 rows: fails the judge screen; 1 row: without the protection the forged turns "
                         "win no comparison in any article)")
    one = claim_counts(claims.iloc[:2], "gaming.protection")
    assert one.endswith("not tested in 2 (fails the judge screen)")


def test_the_answer_boxs_grid_names_each_judge_and_attack_with_its_verdict() -> None:
    """The answer box's table: one row per attack (and the repeated summary), one column per judge, the
    win rate with its verdict after Holm's correction, and a row not tested with its reason's first clause."""
    from nlgjudge.analysis.gaming import answer_grid

    claims = pd.DataFrame({
        "claim": ["gaming.attack_wins", "gaming.attack_wins", "gaming.attack_wins", "gaming.length", "gaming.position_share"],
        "judge": ["a", "b", "a", "a", "a"], "attack": ["null", "null", "praise", "padded", "null"],
        "estimate": [0.15, 0.5, 0.66, 1.0, 0.5], "low": [0.05, 0.4, 0.43, 0.63, 0.3], "high": [0.25, 0.6, 0.9, 1.0, 0.7],
        "n": [8] * 5, "verdict": ["contradicted", "not tested", "supported", "supported", "supported"],
        "family_verdict": ["contradicted", "not tested", "not resolved", "supported", "supported"],
        "reason": ["interval below 0.5", "fails the judge screen: answers by position (0.5 agree)", "x", "y", "z"],
        "contexts_needed": [np.nan] * 5})
    grid = answer_grid(claims, {"a": "Judge A", "b": "Judge B"}, {"null": "irrelevant text", "praise": "self-praise"})
    assert list(grid.columns) == ["Judge A", "Judge B"]
    assert list(grid.index) == ["irrelevant text: wins against the real summaries", "self-praise: wins against the real summaries",
                                "a summary repeated twice wins against itself"]
    assert grid.loc["irrelevant text: wins against the real summaries", "Judge A"] == "0.15, contradicted"
    assert grid.loc["irrelevant text: wins against the real summaries", "Judge B"] == "not tested: fails the judge screen"
    assert grid.loc["self-praise: wins against the real summaries", "Judge A"].startswith("0.66, not resolved")
    assert grid.loc["self-praise: wins against the real summaries", "Judge B"] == "–"  # no such row: never a verdict
