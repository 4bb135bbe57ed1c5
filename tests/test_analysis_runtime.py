"""The runtime chapter's tables: two runtimes' comparison frames, side by side (known answers)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nlgjudge.analysis import runtime as rt


def _frame(synthetic_comparisons, ds, **kwargs) -> pd.DataFrame:
    frame = synthetic_comparisons(ds, **kwargs)
    frame["candidate_a"] = frame["context_id"] + "-" + frame["i"].astype(str)
    frame["candidate_b"] = frame["context_id"] + "-" + frame["j"].astype(str)
    return frame


@pytest.fixture
def setup(tiny_dataset, synthetic_comparisons):
    ds = tiny_dataset(n_contexts=4, n_candidates=4)
    frame = _frame(synthetic_comparisons, ds, pull=0.3, sharpness=0.8, templates=(1, 2))
    return ds, frame


def test_identical_runtimes_agree_exactly(setup) -> None:
    ds, frame = setup
    paired = rt.pair_runtimes(frame, frame.copy())
    assert len(paired.frame) == len(frame) and paired.only.empty
    diff = rt.difference_table(paired).iloc[0]
    assert diff["max_abs"] == 0 and diff["mean_difference"] == 0
    assert (diff["mean_difference_low"], diff["mean_difference_high"]) == (0, 0)
    agree = rt.decision_agreement_table(paired).iloc[0]
    assert agree["agreement"] == 1 and agree["n_flipped"] == 0 and np.isnan(agree["flipped_margin_max"])
    ranks = rt.ranking_agreement_table(paired).iloc[0]
    assert ranks["spearman"] == pytest.approx(1.0) and ranks["same_top"] == 1 and ranks["n_undefined"] == 0
    humans = rt.human_agreement_table(paired, {"tiny": ds})
    assert len(humans) == 2 and (humans["difference"] == 0).all() and not humans["excludes_zero"].any()
    assert (humans["reference"] == humans["other"]).all() and (humans["n_contexts"] == 4).all()
    bias = rt.bias_comparison_table(paired)
    assert len(bias) == 4 and (bias["difference"] == 0).all() and (bias["reference"] == bias["other"]).all()
    values = rt.summary_values(rt.difference_table(paired), rt.decision_agreement_table(paired),
                               rt.ranking_agreement_table(paired), humans, bias)
    assert values["n_human_changed"] == "0" and "does not change" in values["verdict"]
    assert values["flips"] == "no decision flipped" and values["ranking_spearman_min"] == "1.00"


def test_a_planted_flip_is_counted_with_its_margin(setup) -> None:
    _, frame = setup
    other = frame.copy()
    row = other.index[(other["p_a"] > 0.5) & (other["p_a"] < 0.9)][0]
    before = float(other.loc[row, "p_a"])
    other.loc[row, "p_a"] = 0.5  # eq. 2: exactly 0.5 is a decision for B
    paired = rt.pair_runtimes(frame, other)
    agree = rt.decision_agreement_table(paired).iloc[0]
    assert agree["n_flipped"] == 1
    assert agree["flipped_margin_max"] == pytest.approx(before - 0.5)
    diff = rt.difference_table(paired).iloc[0]
    assert diff["max_abs"] == pytest.approx(before - 0.5)
    assert diff["mean_abs"] == pytest.approx((before - 0.5) / len(frame))
    # the per-context agreement of the flipped context drops by one comparison out of its set
    per_context = len(frame) / 4
    assert agree["agreement"] == pytest.approx(1 - 1 / per_context / 4)
    assert agree["agreement_low"] < agree["agreement"] and agree["agreement_high"] == 1.0  # t interval clipped to the range


def test_a_systematic_lean_shows_in_the_mean_difference_and_the_bias(setup) -> None:
    ds, frame = setup
    other = frame.assign(p_a=np.clip(frame["p_a"] + 0.05, 0, 1))
    paired = rt.pair_runtimes(frame, other)
    diff = rt.difference_table(paired).iloc[0]
    assert diff["mean_difference"] == pytest.approx(0.05, abs=1e-3)
    bias = rt.bias_comparison_table(paired)
    assert (bias["difference"] >= 0).all()


def test_contexts_of_one_runtime_only_are_counted_not_paired(setup) -> None:
    _, frame = setup
    other = frame[frame["context_id"] != "ctx3"]
    paired = rt.pair_runtimes(frame, other)
    assert set(paired.frame["context_id"]) == {"ctx0", "ctx1", "ctx2"}
    only = paired.only.iloc[0]
    assert (only["runtime"], only["n_contexts"], only["n_comparisons"]) == ("torch", 1, int((frame["context_id"] == "ctx3").sum()))
    assert rt.missing_datasets(paired, ["tiny", "summeval"]) == [
        "summeval: no context computed by both runtimes; left out of every table"
    ]


def test_a_runtime_that_ties_everything_leaves_rankings_undefined(setup) -> None:
    _, frame = setup
    always_a = frame.assign(p_a=0.9)
    paired = rt.pair_runtimes(frame, always_a)
    per_ranking = rt.ranking_agreement(paired)
    assert per_ranking["spearman"].isna().all()
    table = rt.ranking_agreement_table(paired).iloc[0]
    assert table["n_undefined"] == table["n_rankings"] == 4 * 2 * 2 and np.isnan(table["spearman"])
    ds_free = rt.summary_values(rt.difference_table(paired), rt.decision_agreement_table(paired),
                                rt.ranking_agreement_table(paired), pd.DataFrame({"excludes_zero": [], "difference": []}),
                                pd.DataFrame({"excludes_zero": []}), "torch")
    assert ds_free["ranking_spearman_min"].startswith("undefined") and "nan" not in " ".join(ds_free.values())
    assert ds_free["flips"].startswith("the ") and ds_free["flips"].endswith("under torch")


def test_frames_that_do_not_match_are_refused(setup) -> None:
    _, frame = setup
    with pytest.raises(ValueError, match="same model"):
        rt.pair_runtimes(frame, frame.assign(model="other"))
    with pytest.raises(ValueError, match="other candidates"):
        rt.pair_runtimes(frame, frame.assign(candidate_a="x"))
    with pytest.raises(ValueError, match="no comparison in common"):
        rt.pair_runtimes(frame, frame.assign(context_id=frame["context_id"] + "-elsewhere",
                                             candidate_a="x", candidate_b="y"))
    with pytest.raises(ValueError, match="the llama.cpp frame"):
        rt.pair_runtimes(frame, frame.drop(columns=["p_a"]))


def test_a_change_on_too_few_contexts_is_flagged_not_counted(tiny_dataset, synthetic_comparisons) -> None:
    ds = tiny_dataset(n_contexts=2, n_candidates=4)
    frame = _frame(synthetic_comparisons, ds, pull=0.3, sharpness=0.8)
    lean = frame.assign(p_a=np.clip(frame["p_a"] + 0.3, 0, 1))  # the same shift of P(A) in both contexts
    bias = rt.bias_comparison_table(rt.pair_runtimes(frame, lean))
    assert (bias["difference"] > 0).all() and bias["small_n"].all() and not bias["excludes_zero"].any()
    assert rt.resolved_words(bias) == ["n < 5"] * len(bias)
    assert rt.resolved_words(pd.DataFrame({"small_n": [False, False], "excludes_zero": [True, False]})) == ["yes", "no"]


def test_interval_text() -> None:
    assert rt.interval_text(0.5, 0.25, 0.75) == "0.50 [0.25, 0.75]"
    assert rt.interval_text(0.5, np.nan, np.nan) == "0.50 [n < 2]"
    assert rt.interval_text(np.nan, np.nan, np.nan) == "–"
