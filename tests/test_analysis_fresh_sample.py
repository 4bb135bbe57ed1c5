"""The fresh-sample reading of a claim (known answers on hand-built claim rows)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nlgjudge.analysis import fresh_sample
from nlgjudge.analysis.comparative import SCORING_EXPECTED
from nlgjudge.stats.claims import NOT_RESOLVED, NOT_TESTED, SUPPORTED


def test_fresh_sample_claims_read_the_same_claim_on_the_new_contexts_alone() -> None:
    gaps = {"a": 10.0, "b": 20.0, "c": 30.0, "d": -50.0, "e": 40.0}
    claim = pd.DataFrame([
        {"model": "m", "dataset": "tiny", "aspect": "FLU", "comparator_method": SCORING_EXPECTED,
         "per_context_gap": gaps, "per_context_scores": {c: (g + 5.0, 5.0) for c, g in gaps.items()},
         "n_tied_cells": 0, "n_cells": 10},
        {"model": "tied", "dataset": "tiny", "aspect": "FLU", "comparator_method": SCORING_EXPECTED,
         "per_context_gap": gaps, "n_tied_cells": 9, "n_cells": 10,
         "degenerate_judge": "fails the judge screen: its two orders agree on 50% of 90 pairs after debiasing"},
    ])
    fresh = fresh_sample.fresh_sample_claims(claim, ["a", "b", "c", "e"]).set_index("model")
    # gaps 10, 20, 30, 40: mean 25, t_{3, 0.975} = 3.1824 x sd 12.91 / 2 = 20.54 -> [4.46, 45.54]: above 0
    half = 3.182446305284263 * np.std([10.0, 20.0, 30.0, 40.0], ddof=1) / 2
    assert fresh.loc["m", "gap"] == pytest.approx(25.0) and fresh.loc["m", "n_paired"] == 4
    assert fresh.loc["m", "gap_low"] == pytest.approx(25.0 - half) and fresh.loc["m", "gap_high"] == pytest.approx(25.0 + half)
    assert fresh.loc["m", "verdict"] == SUPPORTED
    # the two methods' means on the same contexts: their difference is the gap
    assert (fresh.loc["m", "comparative"], fresh.loc["m", "comparator_score"]) == (pytest.approx(30.0), pytest.approx(5.0))
    # a degenerate judge (the book's one test, read on every context) stays not tested on any sample
    assert fresh.loc["tied", "verdict"] == NOT_TESTED and fresh.loc["tied", "reason"].startswith("fails the judge screen")
    # three contexts: mean 20, t_{2} x 10 / sqrt(3) = 24.8 -> the interval contains 0
    assert fresh_sample.fresh_sample_claims(claim.iloc[:1], ["a", "b", "c"])["verdict"].iloc[0] == NOT_RESOLVED
    two = fresh_sample.fresh_sample_claims(claim.iloc[:1], ["a", "b", "zzz"]).iloc[0]
    assert two["verdict"] == NOT_TESTED and two["n_paired"] == 2 and two["reason"] == "n = 2 < 3"
    with pytest.raises(ValueError, match="no contexts given"):
        fresh_sample.fresh_sample_claims(claim, [])


def test_fresh_sample_table_and_sentence_put_the_added_contexts_beside_every_context() -> None:
    gaps = {"a": 10.0, "b": 20.0, "c": 30.0, "e": 40.0}
    claim = pd.DataFrame([{"model": "m", "dataset": "tiny", "aspect": "FLU", "comparator_method": SCORING_EXPECTED,
                           "per_context_gap": gaps, "n_tied_cells": 0, "n_cells": 8, "gap": 25.0, "gap_low": 4.46,
                           "gap_high": 45.54, "n_paired": 4, "verdict": SUPPORTED, "reason": "interval above 0"}])
    fresh = fresh_sample.fresh_sample_claims(claim, ["c", "e"])  # 2 contexts: not tested
    chosen = fresh_sample.fresh_sample_claims(claim, ["a", "b"])
    table = fresh_sample.fresh_sample_table(claim, fresh, chosen, registered=("m", "tiny", "FLU"))
    row = ("m", "tiny", "FLU", "expected")  # the index names the reading every gap is taken against
    assert table.index.get_level_values("contexts").tolist() == [
        fresh_sample.CHOSEN_ON, fresh_sample.ADDED_ONLY, fresh_sample.EVERY_CONTEXT]
    assert table.loc[(*row, fresh_sample.EVERY_CONTEXT), "gap [paired 95%]"] == "25.0 [4.5, 45.5]"
    assert table.loc[(*row, fresh_sample.ADDED_ONLY), "n"] == 2
    assert table.loc[(*row, fresh_sample.ADDED_ONLY), fresh_sample.READING_COLUMN] == "not tested: n = 2 < 3"
    # the readings that are not the registered claim say where their interval lies, without a verdict word
    assert table.loc[(*row, fresh_sample.EVERY_CONTEXT), fresh_sample.READING_COLUMN] == "interval above 0"
    assert "interval" in fresh_sample.fresh_sample_table(claim, fresh, chosen).loc[(*row, fresh_sample.ADDED_ONLY),
                                                                                   fresh_sample.READING_COLUMN]
    assert table.loc[(*row, fresh_sample.CHOSEN_ON), "gap [paired 95%]"].startswith("15.0 [")  # mean of 10 and 20
    assert len(fresh_sample.fresh_sample_table(claim, fresh)) == 2  # without the chosen-on reading
    assert fresh_sample.claim_sentence(chosen, "m", "tiny", "COH") is None
    sentence = fresh_sample.fresh_sample_prose(claim, fresh, "m", "tiny", "FLU")
    assert sentence.startswith("35.0 [") and "over 2 contexts (not tested: n = 2 < 3) on the added contexts alone" in sentence
    assert sentence.endswith("against 25.0 [4.5, 45.5] over 4 contexts (a description: interval above 0) on every context")
    assert fresh_sample.fresh_sample_prose(claim, None, "m", "tiny", "FLU").startswith("not read on this run")
    assert fresh_sample.fresh_sample_prose(claim, fresh, "m", "tiny", "COH").startswith("not read on this run")


def test_the_headline_reads_a_claim_chosen_for_more_data_on_its_fresh_sample():
    from nlgjudge.analysis.fresh_sample import headline_claim

    claim = pd.DataFrame([{"model": "m", "dataset": "d", "aspect": "FLU", "gap": 13.5, "gap_low": 3.6, "gap_high": 23.4,
                           "n_paired": 30, "verdict": "supported", "reason": "interval above 0", "p_value": 0.009,
                           "holm": True, "family_verdict": "supported"},
                          {"model": "m", "dataset": "d", "aspect": "COH", "gap": 9.0, "gap_low": 1.0, "gap_high": 17.0,
                           "n_paired": 30, "verdict": "supported", "reason": "interval above 0", "p_value": 0.04,
                           "holm": True, "family_verdict": "supported"}])  # Holm over (0.009, 0.04) keeps both
    fresh = pd.DataFrame([{"model": "m", "dataset": "d", "aspect": "FLU", "gap": 13.2, "gap_low": -3.0, "gap_high": 29.3,
                           "n_paired": 14, "verdict": "not resolved", "reason": "interval contains 0", "p_value": 0.1,
                           "contexts_needed": 38.0}])
    out = headline_claim(claim, fresh, "m", "d", "FLU")
    flu = out[out["aspect"] == "FLU"].iloc[0]
    assert flu["verdict"] == flu["family_verdict"] == "not resolved"
    # the row shows the fresh sample's interval and n, the reading on every context beside it, labelled
    assert (flu["gap"], flu["gap_low"], flu["gap_high"], flu["n_paired"], flu["contexts_needed"]) == (13.2, -3.0, 29.3, 14, 38.0)
    assert (flu["pooled_gap"], flu["pooled_n_paired"], flu["pooled_verdict"]) == (13.5, 30, "supported")
    assert flu["reason"] == ("fresh sample of 14 added contexts: interval contains 0; every context: 13.5 [3.6, 23.4] "
                             "over 30 (a description, interval above 0: optional stopping)")
    assert flu["headline_note"] == "fresh sample of 14 added contexts; every context: 13.5 [3.6, 23.4], n = 30, a description, interval above 0"
    # Holm is redone with the fresh p-value: over (0.1, 0.04) the smaller, 0.04, must be below 0.05 / 2: COH is now a flag
    coh = out[out["aspect"] == "COH"].iloc[0]
    assert not coh["holm"] and coh["family_verdict"] == "not resolved" and coh["gap"] == 9.0
    assert claim.iloc[0]["verdict"] == "supported"  # the input is not modified
    assert headline_claim(claim, None, "m", "d", "FLU").equals(claim)


def test_a_fresh_rows_two_methods_are_read_on_the_fresh_sample_so_that_their_difference_is_its_gap():
    from nlgjudge.analysis.comparative import COMPARATIVE, SCORING_EXPECTED, model_claim_table
    from nlgjudge.analysis.fresh_sample import headline_claim

    claim = pd.DataFrame([{"model": "m", "dataset": "d", "aspect": a, COMPARATIVE: 18.4, "comparator_score": 4.9,
                           "comparator_method": SCORING_EXPECTED, "gap": 13.5, "gap_low": 3.6, "gap_high": 23.4, "n_paired": 30,
                           "verdict": "supported", "reason": "interval above 0", "p_value": 0.009, "holm": True,
                           "family_verdict": "supported"} for a in ("FLU", "COH")])
    fresh = pd.DataFrame([{"model": "m", "dataset": "d", "aspect": "FLU", "comparative": 17.0, "comparator_score": 3.8,
                           "gap": 13.2, "gap_low": -3.0, "gap_high": 29.3,
                           "n_paired": 14, "verdict": "not resolved", "reason": "interval contains 0", "p_value": 0.1}])
    shown = model_claim_table(headline_claim(claim, fresh, "m", "d", "FLU"))
    assert shown["comparative"].tolist() == ["17.0 (added contexts)", "18.4"]
    assert shown["prompt scoring"].tolist() == ["3.8 (expected; added contexts)", "4.9 (expected)"]
    assert shown["gap [paired 95%]"].tolist() == ["13.2 [-3.0, 29.3]", "13.5 [3.6, 23.4]"] and shown["n"].tolist() == [14, 30]


def test_the_family_on_the_chosen_contexts_redoes_holm_with_those_rows() -> None:
    from nlgjudge.analysis.fresh_sample import family_on_chosen, kept_rows

    claim = pd.DataFrame({
        "model": ["m"] * 3, "dataset": ["a", "a", "b"], "aspect": ["X", "Y", "Z"],
        "gap": [10.0, 1.0, 9.0], "gap_low": [5.0, -3.0, 4.0], "gap_high": [15.0, 5.0, 14.0], "n_paired": [30, 30, 30],
        "verdict": ["supported", "not resolved", "supported"], "p_value": [0.001, 0.6, 0.002]})
    chosen = pd.DataFrame({"aspect": ["X", "Y"], "gap": [1.0, 12.0], "gap_low": [-4.0, 6.0], "gap_high": [6.0, 18.0],
                           "n_paired": [16, 16], "verdict": ["not resolved", "supported"], "p_value": [0.7, 0.001]})
    planned, first = family_on_chosen(claim, None, "m", "a"), family_on_chosen(claim, chosen, "m", "a")
    assert kept_rows(planned, {"a": "A"}) == ["A X", "b Z"]
    assert kept_rows(first, {"a": "A"}) == ["A Y", "b Z"]  # which rows survive moves with the contexts read
    assert first.loc[first["aspect"] == "Y", "n_paired"].iloc[0] == 16
