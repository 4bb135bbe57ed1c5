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
    assert values["n_human_changed"] == "0" and "no change is detected" in values["verdict"]
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
    # near the top of the range: the score interval, asymmetric and below 1 (not the t interval cut at 1)
    assert agree["agreement_low"] < agree["agreement"] < agree["agreement_high"] < 1.0


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
    assert ds_free["flips"].startswith("the ") and ds_free["flips"].endswith("under torch (a description)")


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
    assert (bias["difference"] > 0).all() and bias["too_few"].all() and not bias["excludes_zero"].any()
    assert rt.resolved_words(bias) == ["n < 3"] * len(bias)
    two = pd.DataFrame({"difference": [1.0, 0.1, 0.5], "difference_low": [0.5, -0.2, 0.01], "difference_high": [1.5, 0.4, 0.99],
                        "n_contexts": [30, 30, 30], "excludes_zero": [True, False, True], "too_few": [False, False, False]})
    # the third row's own interval excludes 0 (p just under 0.05), but not after Holm over the three rows: a flag
    words = rt.resolved_words(two)
    assert words[:2] == ["detected", "not detected"]
    assert words[2] == "not detected (a flag: excludes 0 on its own interval, not after Holm's correction over the 3 rows)"


# ---- section 5: the scoring readings and the paper's claim under both runtimes ----------------------
def _scores(ds, noise: float, seed: int) -> dict[str, pd.DataFrame]:
    """Both prompt-scoring readings of a judge whose score is the human COH/FLU plus Gaussian noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for template in (1, 2):
        for aspect in ds.info.aspects:
            for row in ds.frame.itertuples():
                score = getattr(row, aspect) + noise * rng.standard_normal()
                rows.append({"context_id": row.context_id, "candidate_id": row.candidate_id, "template": template,
                             "aspect": aspect, "expected": score, "score": score, "n_parsed": 10, "n_unparsed": 0})
    frame = pd.DataFrame(rows)
    return {"expected": frame, "sampled": frame.copy()}


def _claim(comparisons, scores, ds):
    from nlgjudge.analysis import comparative

    tables, _ = comparative.chapter_correlations(comparisons, scores, {}, {"tiny": ds})
    return tables["tiny"], comparative.comparative_vs_scoring(tables["tiny"])


@pytest.fixture
def six(tiny_dataset, synthetic_comparisons):
    ds = tiny_dataset(n_contexts=6, n_candidates=5)
    frame = _frame(synthetic_comparisons, ds, pull=0.0, sharpness=2.0, templates=(1, 2))
    return ds, frame, _scores(ds, noise=1.5, seed=1)


def test_shared_context_runs_keep_only_the_contexts_every_frame_has(six) -> None:
    ds, frame, scores = six
    key = ("tiny", "toy")
    short = {reading: part[part["context_id"] != "ctx5"] for reading, part in scores.items()}
    comparisons = {"a": {key: frame}, "b": {key: frame, ("tiny", "other"): frame}}
    runs = {"a": {key: scores}, "b": {key: short}}
    kept_c, kept_s, counts = rt.shared_context_runs(comparisons, runs)
    assert set(kept_c["a"][key]["context_id"]) == {f"ctx{c}" for c in range(5)}
    assert set(kept_s["a"][key]["sampled"]["context_id"]) == set(kept_s["b"][key]["expected"]["context_id"])
    assert ("tiny", "other") not in kept_c["b"]
    row = counts.set_index("model").loc["toy"]
    assert (row["n_shared"], row["n_left_out"], row["missing"]) == (5, 1, "")
    assert counts.set_index("model").loc["other", "missing"] == "a comparative, a scoring, b scoring"
    with pytest.raises(ValueError, match="same runtimes"):
        rt.shared_context_runs(comparisons, {"a": runs["a"]})


def test_scoring_agreement_of_identical_runtimes_does_not_change(six) -> None:
    ds, frame, scores = six
    table, _ = _claim({("tiny", "toy"): frame}, {("tiny", "toy"): scores}, ds)
    rows = rt.method_agreement_table(table, table.copy(), ["prompt scoring (expected)", "comparative"])
    assert len(rows) == 4 and set(rows["method"]) == {"prompt scoring (expected)", "comparative"}
    assert (rows["difference"] == 0).all() and not rows["excludes_zero"].any() and (rows["n_contexts"] == 6).all()
    means = table[(table["template"] == "mean")].set_index(["method", "aspect"])["spearman"]
    for r in rows.itertuples():
        assert r.reference == pytest.approx(means[(r.method, r.aspect)])


def test_a_runtime_that_worsens_scoring_is_resolved(six) -> None:
    ds, frame, scores = six
    table, _ = _claim({("tiny", "toy"): frame}, {("tiny", "toy"): scores}, ds)
    worse, _ = _claim({("tiny", "toy"): frame}, {("tiny", "toy"): _scores(ds, noise=6.0, seed=2)}, ds)
    rows = rt.method_agreement_table(table, worse, ["prompt scoring (expected)"])
    assert (rows["difference"] < 0).all() and rows["excludes_zero"].any()
    # the shown means are over the same contexts as the difference, so they subtract to it
    assert np.allclose(rows["other"] - rows["reference"], rows["difference"])


def test_rows_of_one_runtime_only_and_different_context_sets_are_kept_visible(six) -> None:
    ds, frame, scores = six
    table, _ = _claim({("tiny", "toy"): frame}, {("tiny", "toy"): scores}, ds)
    fewer = table.copy()
    fewer["per_context"] = [{c: v for c, v in d.items() if c not in ("ctx0", "ctx1", "ctx2", "ctx3")} for d in fewer["per_context"]]
    fewer = fewer[fewer["method"] != "prompt scoring (sampled)"]
    rows = rt.method_agreement_table(table, fewer, ["prompt scoring (expected)", "prompt scoring (sampled)"])
    expected = rows[rows["method"] == "prompt scoring (expected)"]
    assert (expected["n_contexts"] == 2).all() and expected["too_few"].all() and (expected["difference"] == 0).all()
    sampled = rows[rows["method"] == "prompt scoring (sampled)"]
    assert len(sampled) == 2 and (sampled["n_contexts"] == 0).all() and sampled["other"].isna().all()


def test_the_runtime_chapter_reads_the_comparative_chapters_verdicts(six) -> None:
    """One claim rule: the runtime chapter's verdict on a row is the comparative chapter's."""
    ds, frame, scores = six
    table, _ = _claim({("tiny", "toy"): frame}, {("tiny", "toy"): scores}, ds)
    claims = rt.claim_table(table, table.copy())
    from nlgjudge.analysis.comparative import comparative_vs_scoring
    assert list(claims["ref_verdict"]) == list(comparative_vs_scoring(table)["verdict"])


def test_claim_table_finds_a_verdict_that_flips_between_runtimes(six) -> None:
    ds, frame, scores = six
    key = ("tiny", "toy")
    same, _ = _claim({key: frame}, {key: scores}, ds)
    identical = rt.claim_table(same, same.copy())
    assert identical["same_verdict"].all() and (identical["ref_verdict"] == "supported").all()
    assert (identical["ref_best"] == "prompt scoring (sampled)").all()  # the registered comparator, never the best reading
    assert (identical["gap_change"] == 0).all() and not identical["change_excludes_zero"].any()
    assert (identical["n_change"] == 6).all()
    # the other runtime ranks every context backwards: comparative now falls below scoring
    flipped, _ = _claim({key: frame.assign(p_a=1 - frame["p_a"])}, {key: scores}, ds)
    claims = rt.claim_table(same, flipped)
    assert not claims["same_verdict"].any() and (claims["oth_verdict"] == "contradicted").all()
    assert (claims["gap_change"] < -100).all() and claims["change_excludes_zero"].all()
    words = rt.claim_values(claims)
    assert words["n_claim_rows"] == "2" and words["n_claim_compared"] == "2" and words["n_claim_same"] == "0"
    # the claim is the registered equivalence: the change of the gap, tested as a difference, is far
    # beyond the +-5-point margin in both rows, so "the runtime leaves the gap alone" is contradicted
    assert words["n_gap_within"] == "0" and words["n_gap_beyond"] == "2"
    assert "within ±5 points" in words["claim_sentence"] and "contradicted in 2 of the 2 rows" not in words["claim_sentence"]
    assert "contradicted in 2 and" in words["claim_sentence"]
    # whether the runtimes give the paper's claim the same words is counted (n_claim_same), never said as the reading
    assert "same verdict words" not in words["claim_sentence"]
    reading = rt.gap_equivalence(claims)
    assert (reading["family_verdict"] == "contradicted").all() and reading["contexts_needed"].isna().all()
    # identical runtimes: every change is exactly 0 on 6 contexts, a zero-width interval inside the band
    same_words = rt.claim_values(identical)
    assert same_words["n_gap_within"] == "2" and "is supported in 2 of the 2 rows" in same_words["claim_sentence"]
    nothing = rt.claim_values(rt.EMPTY_CLAIMS)
    assert nothing["claim_sentence"].startswith("No (dataset, aspect)")
    assert list(claims.columns) == list(rt.EMPTY_CLAIMS.columns)


def test_small_or_tied_runs_are_shown_but_not_counted_as_agreeing(tiny_dataset, synthetic_comparisons) -> None:
    ds = tiny_dataset(n_contexts=2, n_candidates=5)
    key = ("tiny", "toy")
    frame = _frame(synthetic_comparisons, ds, pull=0.0, sharpness=2.0, templates=(1, 2))
    table, _ = _claim({key: frame}, {key: _scores(ds, noise=1.5, seed=1)}, ds)
    claims = rt.claim_table(table, table.copy())
    assert (claims["ref_verdict"] == "not tested").all() and not claims["verdicts_compared"].any()
    assert not claims["same_verdict"].any() and claims["change_too_few"].all()
    words = rt.claim_values(claims)
    assert words["n_claim_compared"] == "0" and "not tested in 2" in words["claim_sentence"]
    # a judge that always answers A ties every candidate: no verdict, whatever the gap
    six = tiny_dataset(n_contexts=6, n_candidates=5)
    always_a = _frame(synthetic_comparisons, six, pull=0.0, sharpness=0.0, templates=(1, 2)).assign(p_a=0.9)
    tied, _ = _claim({key: always_a}, {key: _scores(six, noise=1.5, seed=1)}, six)
    assert (rt.claim_table(tied, tied)["ref_verdict"] == "not tested").all()


def test_summary_counts_scoring_changes_in_the_verdict(six) -> None:
    ds, frame, scores = six
    paired = rt.pair_runtimes(frame, frame.copy())
    tables = (rt.difference_table(paired), rt.decision_agreement_table(paired), rt.ranking_agreement_table(paired),
              rt.human_agreement_table(paired, {"tiny": ds}), rt.bias_comparison_table(paired))
    assert "no change is detected here" in rt.summary_values(*tables)["verdict"]
    table, _ = _claim({("tiny", "toy"): frame}, {("tiny", "toy"): scores}, ds)
    worse, _ = _claim({("tiny", "toy"): frame}, {("tiny", "toy"): _scores(ds, noise=6.0, seed=2)}, ds)
    scoring = rt.method_agreement_table(table, worse, ["prompt scoring (expected)"])
    values = rt.summary_values(*tables, scoring=scoring)
    assert f"0 comparative and {int(scoring['excludes_zero'].sum())} prompt-scoring" in values["verdict"]
    assert values["n_scoring_changed"] == str(int(scoring["excludes_zero"].sum())) and values["min_contexts"] == "3"


def test_runtime_label_names_each_runtime_in_the_prose_words_and_rejects_others():
    from nlgjudge.analysis.runtime import runtime_label

    assert runtime_label("llamacpp") == "llama.cpp"
    assert runtime_label("torch") == "torch"
    assert runtime_label("auto") == "llama.cpp (packaged models) or torch (other models)"
    assert runtime_label("server") == "inference-server"  # every chapter's backend parameter accepts it
    with pytest.raises(ValueError, match="'gpu' is not a runtime"):
        runtime_label("gpu")


def test_changes_are_counted_after_holm_within_each_table_s_rows() -> None:
    from nlgjudge.analysis.runtime import changed_after_holm

    def table(rows):
        return pd.DataFrame([{"difference": d, "difference_low": lo, "difference_high": hi, "n_contexts": n,
                              "excludes_zero": lo > 0 or hi < 0, "too_few": n < 3} for d, lo, hi, n in rows])

    humans = table([(5.0, 4.0, 6.0, 30), (1.0, 0.05, 1.95, 30)])  # p < 0.001 and p just under 0.05
    bias = table([(0.2, 0.1, 0.3, 2), (0.0, -0.1, 0.1, 30)])      # a row of too few contexts never counts
    kept_humans, kept_bias = changed_after_holm([humans, bias])
    # each table is its own family: Holm over humans' two rows keeps both (p2 < 0.05 at the last step)
    assert kept_humans.tolist() == [True, True] and kept_bias.tolist() == [False, False]
    # the same row in a larger family of nulls does not survive: the family is the table, not the page
    nulls = table([(0.0, -1.0, 1.0, 30)] * 8)
    kept, = changed_after_holm([pd.concat([humans, nulls], ignore_index=True)])
    assert kept.tolist() == [True] + [False] * 9


def test_the_lean_of_p_a_is_said_after_holm_over_the_datasets() -> None:
    differences = pd.DataFrame({"dataset": ["a", "b", "c"], "n_contexts": [10, 10, 2],
                                "mean_difference": [-0.0012, 0.001, 0.5], "mean_difference_low": [-0.0021, -0.001, 0.4],
                                "mean_difference_high": [-0.0004, 0.003, 0.6], "median_abs": [0.008, 0.008, 0.008]})
    text = rt.lean_values(differences)["lean"]
    assert "excludes 0 after Holm's correction over the 3 datasets on a (-0.0012 [-0.0021, -0.0004], n = 10 contexts)" in text
    assert "llama.cpp leans away from position A in its probabilities, smaller than the median shift of a single comparison there;" in text
    assert text.endswith("a description of its direction only, since the plan declares no size of lean that matters.")
    assert " c " not in text  # two contexts are too few to read
    none = rt.lean_values(differences.assign(mean_difference_low=-1.0, mean_difference_high=1.0))["lean"]
    assert none.startswith("No dataset's mean shift of p(A) (llama.cpp minus torch) excludes 0")


def _reading_rows(shift: dict[str, float]) -> pd.DataFrame:
    """A correlations table (the template mean) of three readings on 6 contexts, each reading moved by ``shift``."""
    from nlgjudge.analysis.comparative import COMPARATIVE, SCORING_EXPECTED, SCORING_SAMPLED, TEMPLATE_MEAN

    rows = []
    for method in (COMPARATIVE, SCORING_EXPECTED, SCORING_SAMPLED):
        per_context = {f"c{k}": 0.3 + 0.05 * k + shift.get(method, 0.0) * (1 if k % 2 else 0.5) for k in range(6)}
        rows.append({"model": "m", "dataset": "summeval", "method": method, "aspect": "COH", "template": TEMPLATE_MEAN,
                     "per_context": per_context})
    return pd.DataFrame(rows)


def test_the_change_of_the_gap_is_traced_to_the_sampled_reading_only_when_it_moves_most() -> None:
    from nlgjudge.analysis.comparative import SCORING_SAMPLED
    from nlgjudge.analysis.runtime import change_by_reading

    reference = _reading_rows({})
    sampled_moves = change_by_reading(reference, _reading_rows({SCORING_SAMPLED: 0.2}))
    assert "at most 0.0 for comparative assessment" in sampled_moves and "15.0 for its sampled score" in sampled_moves
    assert "drawn again" in sampled_moves
    all_move = change_by_reading(reference, _reading_rows({m: 0.2 for m in reference["method"]}))
    assert "drawn again" not in all_move and all_move.endswith(".")
    assert change_by_reading(reference, _reading_rows({}).iloc[:2]) == ""  # a reading missing: no sentence
