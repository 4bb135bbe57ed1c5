"""The narcissism chapter's tables from tidy frames (no model): coverage, eq. 4, length, self-bias."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nlgjudge.analysis import narcissism as analysis

EVALUATORS = ["qa", "qb", "s"]
GENERATORS = ["qa", "qb", "s", "g"]
FAMILIES = {"qa": "qwen", "qb": "qwen", "s": "smol", "g": "gemma"}


def _frames(n_docs: int = 12, self_boost: float = 0.0, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Generations and likelihood frames of a fake evaluator panel: score = quality - 0.01 words (+ boost for self)."""
    rng = np.random.default_rng(seed)
    quality = {"qa": -1.0, "qb": -1.2, "s": -1.5, "g": -2.0}
    gen_rows, lik_rows = [], []
    for d in range(n_docs):
        for g in GENERATORS:
            words = int(rng.integers(10, 40))
            gen_rows.append({"generator": g, "dataset": "qags_xsum", "context_id": f"doc{d}", "style": "chat",
                             "raw_text": "x", "summary": "w " * words, "n_words": words, "empty": False, "from_cache": True})
            for e in EVALUATORS:
                score = quality[g] - 0.01 * words + (self_boost if e == g else 0.0) + rng.normal(0, 0.05)
                lik_rows.append({"evaluator": e, "dataset": "qags_xsum", "setting": "reference_free", "context_id": f"doc{d}",
                                 "generator": g, "n_tokens": words, "loglik_mean": score, "loglik_sum": score * words,
                                 "empty": False, "from_cache": True})
    return pd.DataFrame(gen_rows), pd.DataFrame(lik_rows)


def test_documents_missing_a_score_are_left_out_and_counted() -> None:
    generations, likelihood = _frames(n_docs=5)
    gap = (likelihood["context_id"] == "doc2") & (likelihood["generator"] == "g") & (likelihood["evaluator"] == "s")
    likelihood.loc[gap, "loglik_mean"] = np.nan  # an empty summary
    docs, dropped = analysis.common_documents(likelihood, "qags_xsum", "reference_free")
    assert dropped == 1 and "doc2" not in docs and len(docs) == 4
    cube, used = analysis.score_cube(likelihood, "qags_xsum", "reference_free", EVALUATORS, GENERATORS)
    assert cube.shape == (4, 3, 4) and used == docs and np.isfinite(cube).all()
    with pytest.raises(KeyError, match="no likelihood scores for dataset 'qags_cnndm'"):
        analysis.common_documents(likelihood, "qags_cnndm", "reference_free")
    with pytest.raises(KeyError, match=r"evaluator\(s\) \['zz'\]"):
        analysis.score_cube(likelihood, "qags_xsum", "reference_free", ["zz"], GENERATORS)


def test_heatmap_is_eq4_of_the_document_means() -> None:
    _, likelihood = _frames()
    cube, _ = analysis.score_cube(likelihood, "qags_xsum", "reference_free", EVALUATORS, GENERATORS)
    table = analysis.heatmap_table(cube, EVALUATORS, GENERATORS)
    means = cube.mean(axis=0)
    expected = (means - means.min(axis=1, keepdims=True)) / (means.max(axis=1, keepdims=True) - means.min(axis=1, keepdims=True))
    np.testing.assert_allclose(table.to_numpy(), expected)
    assert list(table.index) == EVALUATORS and list(table.columns) == GENERATORS
    assert (table.max(axis=1) == 1).all() and (table.min(axis=1) == 0).all()


def test_length_correlation_sees_the_planted_length_penalty() -> None:
    generations, likelihood = _frames(n_docs=30)
    cube, docs = analysis.score_cube(likelihood, "qags_xsum", "reference_free", EVALUATORS, GENERATORS)
    lengths = analysis.summary_lengths(generations, "qags_xsum", docs, GENERATORS)
    table = analysis.length_correlation_table(cube, lengths, EVALUATORS)
    assert (table["n"] == 30).all() and (table["n_documents"] == 30).all() and (table["n_left_out"] == 0).all()
    assert (table["ci_low"] <= table["spearman"]).all() and (table["spearman"] <= table["ci_high"]).all()
    assert analysis.mean_lengths(generations, "qags_xsum", GENERATORS).index.tolist() == GENERATORS


@pytest.mark.parametrize("boost", [0.0, 0.3])
def test_self_bias_table_finds_a_planted_self_boost_and_no_more(boost: float) -> None:
    generations, likelihood = _frames(n_docs=40, self_boost=boost)
    cube, docs = analysis.score_cube(likelihood, "qags_xsum", "reference_free", EVALUATORS, GENERATORS)
    lengths = analysis.summary_lengths(generations, "qags_xsum", docs, GENERATORS)
    table = analysis.self_bias_table(cube, lengths, EVALUATORS, GENERATORS, FAMILIES, n_boot=200)
    assert table.attrs["n_documents"] == 40 and table.attrs["gamma_not_identified"] == ""
    assert table.loc["s", "same family here"] == "none (self = family)" and table.loc["qa", "same family here"] == "qb"
    rows = analysis.claim_rows(table, "self-bias", "gamma", "gamma_low", "gamma_high")
    assert (rows["n"] == 40).all() and rows["row"].tolist() == EVALUATORS
    if boost:
        assert (rows["verdict"] == "supported").all()
        assert analysis.overall_verdict(rows).verdict == "supported"
    else:
        assert (rows["verdict"] == "not resolved").sum() >= 2  # 95% intervals: an occasional miss is allowed
        assert analysis.overall_verdict(rows).verdict != "supported"


def test_two_owned_generators_leave_gamma_unidentified_and_say_why() -> None:
    generations, likelihood = _frames(n_docs=6)
    cube, docs = analysis.score_cube(likelihood, "qags_xsum", "reference_free", ["qa", "s"], ["qa", "s"])
    lengths = analysis.summary_lengths(generations, "qags_xsum", docs, ["qa", "s"])
    table = analysis.self_bias_table(cube, lengths, ["qa", "s"], ["qa", "s"], FAMILIES, n_boot=20)
    assert table["gamma"].isna().all() and "not identified" in table.attrs["gamma_not_identified"]
    assert table["excess"].notna().all()


def test_family_preference_pairs_only_relatives() -> None:
    _, likelihood = _frames(n_docs=10)
    cube, _ = analysis.score_cube(likelihood, "qags_xsum", "reference_free", EVALUATORS, GENERATORS)
    table = analysis.family_preference(cube, EVALUATORS, GENERATORS, FAMILIES)
    assert sorted(zip(table["evaluator"], table["relative"])) == [("qa", "qb"), ("qb", "qa")]
    assert (table["n"] == 10).all()
    for row in table.itertuples():  # the interval is made of the per-document differences it carries
        assert row.per_document.shape == (10,) and row.per_document.mean() == pytest.approx(row._3)


def test_human_score_table_and_an_unknown_system() -> None:
    frame = pd.DataFrame({"system": ["a", "a", "b"], "score": [0.2, 0.6, 1.0]})
    table = analysis.human_score_table({"B": (frame, "score")}, {"B-a": ("B", "a")})
    assert table.loc["B-a", ["Max", "Min", "Mean", "Median", "n"]].tolist() == [0.6, 0.2, 0.4, 0.4, 2]
    with pytest.raises(KeyError, match="no system 'c'"):
        analysis.human_score_table({"B": (frame, "score")}, {"B-c": ("B", "c")})


def test_generation_table_counts_empty_unfinished_and_control_token_summaries() -> None:
    generations, _ = _frames(n_docs=3)
    generations.loc[0, ["summary", "n_words", "empty"]] = ["", 0, True]
    generations.loc[1, "summary"] = "A storm closed the schools."
    table = analysis.generation_table(generations)
    assert table.loc[("qags_xsum", "qa"), "empty"] == 1 and table.loc[("qags_xsum", "qa"), "documents"] == 3
    assert table.loc[("qags_xsum", "qb"), "mid_sentence"] == 2  # "w w w" twice, the full stop once
    assert table["control_tokens"].sum() == 0
    doc1_qa = (generations["generator"] == "qa") & (generations["context_id"] == "doc1")
    generations.loc[doc1_qa, "summary"] = "The lido opens.<start_of_image><start_of_image>"
    assert analysis.generation_table(generations).loc[("qags_xsum", "qa"), "control_tokens"] == 1


def test_control_token_text_names_only_the_generators_that_wrote_one() -> None:
    generations, _ = _frames(n_docs=3)
    assert analysis.control_token_text(analysis.generation_table(generations)) == "no summary does"
    generations.loc[(generations["generator"] == "qa") & (generations["context_id"] == "doc1"), "summary"] = "<|im_end|>"
    generations.loc[(generations["generator"] == "qb") & (generations["context_id"] != "doc0"), "summary"] = "</s>"
    assert (analysis.control_token_text(analysis.generation_table(generations))
            == "1 of qa's 3 summaries of qags_xsum and 2 of qb's 3 summaries of qags_xsum")


@pytest.mark.parametrize(
    ("text", "control"),
    [("<start_of_image><start_of_image>", True), ("It ended.<|im_end|>", True), ("It ended.</s>", True),
     ("x <end_of_turn>", True), ("A line<br>break in <p>HTML</p>", False), ("a < b and c > d", False),
     ("It rained.", False)],
)
def test_a_control_token_is_recognised_in_its_written_form(text: str, control: bool) -> None:
    assert analysis.has_control_token(text) is control


@pytest.mark.parametrize(
    ("text", "unfinished"),
    [("It rained.", False), ('He said "no."', False), ("It rained (again)", False), ("The game is scheduled to", True),
     ("", False), ("Done!  ", False)],
)
def test_a_summary_ends_mid_sentence_when_it_does_not_close_its_sentence(text: str, unfinished: bool) -> None:
    assert analysis.ends_mid_sentence(text) is unfinished


def _benchmark_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Six documents x two systems; evaluator 'up' scores the human score, 'down' its negative."""
    rng = np.random.default_rng(0)
    human_rows, lik_rows = [], []
    for d in range(6):
        for system in ("bart", "gpt3"):
            acu = float(rng.uniform())
            human_rows.append({"context_id": f"d{d}", "system": system, "text": f"summary {d} of {system} .", "ACU": acu})
            for evaluator, sign in (("up", 1.0), ("down", -1.0)):
                lik_rows.append({"evaluator": evaluator, "dataset": "rose_llm", "setting": "reference_based",
                                 "context_id": f"d{d}", "generator": system, "loglik_mean": sign * acu})
    return pd.DataFrame(lik_rows), pd.DataFrame(human_rows)


def test_human_correlation_table_known_answers_and_counts() -> None:
    likelihood, human = _benchmark_frames()
    table = analysis.human_correlation_table(likelihood, human, "rose_llm", "reference_based", ["up", "down"], ["ACU"], n_boot=50)
    assert table.loc[("up", "ACU"), "spearman"] == pytest.approx(1.0)
    assert table.loc[("up", "ACU"), "kendall"] == pytest.approx(1.0)
    assert table.loc[("down", "ACU"), "spearman"] == pytest.approx(-1.0)
    assert table.loc[("up", "ACU"), "spearman_low"] == pytest.approx(1.0)  # every resample is perfectly monotone
    assert table.loc[("up", "ACU"), "n_summaries"] == 12 and table.loc[("up", "ACU"), "n_documents"] == 6


def test_human_correlation_refuses_a_summary_without_a_human_score() -> None:
    likelihood, human = _benchmark_frames()
    with pytest.raises(ValueError, match="1 scored summaries have no human score"):
        analysis.human_correlation_table(likelihood, human.iloc[1:], "rose_llm", "reference_based", ["up"], ["ACU"], n_boot=50)
    with pytest.raises(KeyError, match="no human score column"):
        analysis.human_correlation_table(likelihood, human, "rose_llm", "reference_based", ["up"], ["COH"], n_boot=50)


def test_benchmark_generations_take_the_selected_systems_with_their_lengths() -> None:
    _, human = _benchmark_frames()
    out = analysis.benchmark_generations(human, "rose_llm", {"gpt3": "GPT-3"})
    assert set(out["generator"]) == {"gpt3"} and len(out) == 6 and (out["n_words"] == 5).all() and not out["empty"].any()
    with pytest.raises(KeyError, match="no system"):
        analysis.benchmark_generations(human, "rose_llm", {"t5": "T5"})


def _judged(boosts: dict[str, float], n_docs: int = 5) -> dict[str, pd.DataFrame]:
    """P(A) = sigmoid(quality(first) - quality(second) + 0.3 pull to A +- the judge's boost for its own summary)."""
    quality = {"g0": 3.0, "g1": 2.0, "g2": 1.0, "g3": 0.0}
    frames = {}
    for judge, boost in boosts.items():
        rows = []
        for d in range(n_docs):
            for first in quality:
                for second in quality:
                    if first == second:
                        continue
                    logit = quality[first] - quality[second] + 0.3 + boost * ((first == judge) - (second == judge))
                    rows.append({"context_id": f"d{d}", "first": first, "second": second, "p_a": 1 / (1 + np.exp(-logit))})
        frames[judge] = pd.DataFrame(rows)
    return frames


def test_self_preference_finds_a_planted_self_boost_against_neutral_judges() -> None:
    generators = ["g0", "g1", "g2", "g3"]
    outcomes = analysis.pairwise_outcomes(_judged({"g0": 0.0, "g1": 5.0, "g2": 0.0}), generators)
    assert set(outcomes["a_wins"]) <= {0.0, 0.5, 1.0} and len(outcomes) == 3 * 5 * 6
    table = analysis.self_preference_table(outcomes, generators)
    # g1 beats the better g0 only in its own eyes; the neutral judge (g2) sides with quality.
    assert table.loc[("g1", "g0"), "own"] == 1.0 and table.loc[("g1", "g0"), "others"] == 0.0
    assert table.loc[("g1", "g0"), "excess"] == 1.0 and table.loc[("g1", "all"), "excess"] == pytest.approx(1 / 3)
    for judge in ("g0", "g2"):  # unbiased judges agree with the neutral ones on every pair
        assert table.loc[(judge, "all"), "excess"] == 0.0
    assert table.loc[("g0", "g1"), "anchor judges"] == "g2" and table.attrs["n_documents"] == 5
    assert table.loc[("g1", "all"), "n"] == 5
    assert table.loc[("g1", "g0"), "per_document"].tolist() == [1.0] * 5  # own - others, document by document


def test_self_preference_needs_a_third_judge_and_common_documents() -> None:
    generators = ["g0", "g1", "g2", "g3"]
    with pytest.raises(ValueError, match="at least two judges"):
        analysis.self_preference_table(analysis.pairwise_outcomes(_judged({"g0": 0.0}), generators), generators)
    two = analysis.self_preference_table(analysis.pairwise_outcomes(_judged({"g0": 0.0, "g1": 0.0}), generators), generators)
    assert ("g0", "g1") not in two.index and ("g0", "g2") in two.index  # no judge wrote neither g0's nor g1's summary


def _two_settings(free_boost: float, based_boost: float, n_docs: int = 30) -> pd.DataFrame:
    """Both settings of one dataset; the reference-based frame lacks one document, the free one scores the reference."""
    _, free = _frames(n_docs=n_docs, self_boost=free_boost, seed=1)
    _, based = _frames(n_docs=n_docs, self_boost=based_boost, seed=2)
    based = based[based["context_id"] != "doc0"].assign(setting="reference_based")
    reference = free[free["generator"] == "qa"].assign(generator=analysis.REFERENCE, loglik_mean=-3.0)
    return pd.concat([free, based, reference], ignore_index=True)


def test_setting_comparison_pairs_the_documents_of_both_settings_and_sees_a_free_only_boost() -> None:
    likelihood = _two_settings(free_boost=0.4, based_boost=0.0)
    table = analysis.setting_comparison_table(likelihood, "qags_xsum", EVALUATORS, GENERATORS, n_boot=200)
    assert table.attrs["n_documents"] == 29  # doc0 has no reference-based scores
    assert list(table.index) == EVALUATORS
    assert (table["difference_low"] > 0).all()  # the planted boost exists only without the reference
    np.testing.assert_allclose(table["free - based"], table["reference-free"] - table["reference-based"])
    _, free = _frames(n_docs=20, seed=3)
    identical = pd.concat([free, free.assign(setting="reference_based")], ignore_index=True)
    same = analysis.setting_comparison_table(identical, "qags_xsum", EVALUATORS, GENERATORS, n_boot=50)
    np.testing.assert_array_equal(same["free - based"], 0.0)  # identical settings: exactly no difference
    np.testing.assert_array_equal(same["difference_low"], 0.0)
    with pytest.raises(ValueError, match="none of the evaluators wrote summaries"):
        analysis.setting_comparison_table(likelihood, "qags_xsum", EVALUATORS, ["g"], n_boot=20)


def test_reference_mean_scores_average_the_reference_over_the_documents_asked_for() -> None:
    likelihood = _two_settings(0.0, 0.0, n_docs=6)
    means = analysis.reference_mean_scores(likelihood, "qags_xsum", "reference_free", EVALUATORS, [f"doc{d}" for d in range(6)])
    assert means.name == analysis.REFERENCE and list(means.index) == EVALUATORS
    np.testing.assert_allclose(means, -3.0)
    with pytest.raises(KeyError, match="reference was not scored"):
        analysis.reference_mean_scores(likelihood, "qags_xsum", "reference_based", EVALUATORS, ["doc1"])
    with pytest.raises(ValueError, match="not scored on all 7 documents"):
        analysis.reference_mean_scores(likelihood, "qags_xsum", "reference_free", EVALUATORS, [f"doc{d}" for d in range(7)])


def test_length_is_read_within_documents_so_a_shared_document_effect_is_not_a_length_preference() -> None:
    """A document effect shared by length and score (long articles: longer summaries, higher scores),
    and nothing within a document: pooled over every summary the correlation is strong, within
    documents it is near 0 and its interval contains 0."""
    from scipy import stats as scipy_stats

    from nlgjudge.stats.correlation import spearman_rows

    rng = np.random.default_rng(5)
    offset = rng.normal(0, 1, 30)
    lengths = 40 + 10 * offset[:, None] + rng.normal(0, 0.1, (30, 4))
    cube = np.repeat((offset[:, None] + rng.normal(0, 0.1, (30, 4)))[:, None, :], 2, axis=1)
    table = analysis.length_correlation_table(cube, lengths, ["e0", "e1"])
    pooled = scipy_stats.spearmanr(lengths.reshape(-1), cube[:, 0, :].reshape(-1)).statistic
    assert pooled > 0.8 and table.loc["e0", "ci_low"] < 0 < table.loc["e0", "ci_high"]
    assert table.loc["e0", "spearman"] == pytest.approx(np.mean(spearman_rows(lengths, cube[:, 0, :])))
    # a planted within-document preference for length is found
    within = np.repeat((lengths + rng.normal(0, 0.01, (30, 4)))[:, None, :], 2, axis=1)
    assert analysis.length_correlation_table(within, lengths, ["e0", "e1"]).loc["e0", "ci_low"] > 0
    two = analysis.length_correlation_table(cube[:2], lengths[:2], ["e0", "e1"])
    assert two["ci_low"].notna().all() and (two["n_documents"] == 2).all()
    one = analysis.length_correlation_table(cube[:1], lengths[:1], ["e0", "e1"])
    assert one["ci_low"].isna().all() and one["spearman"].notna().all()  # 1 document: no interval, said as NaN
    # a document with equal lengths has no correlation: left out and counted
    flat = lengths.copy()
    flat[0] = 40.0
    assert analysis.length_correlation_table(cube, flat, ["e0", "e1"]).loc["e0", "n_left_out"] == 1


def _claims_table() -> pd.DataFrame:
    return pd.DataFrame({
        "value": [0.30, -0.20, 0.05, 0.40, 0.0],
        "low": [0.10, -0.35, -0.10, 0.20, 0.0],
        "high": [0.50, -0.05, 0.20, 0.60, 0.3],
        "n": [40, 40, 40, 2, 40],
        "bound": ["", "", "", "", "at its floor"],
    }, index=pd.MultiIndex.from_tuples([("d", "a"), ("d", "b"), ("d", "c"), ("d", "e"), ("d", "f")]))


def test_claim_rows_give_the_four_verdicts_and_count_documents_only_for_the_open_ones() -> None:
    from nlgjudge.stats.claims import units_needed_from_interval

    rows = analysis.claim_rows(_claims_table(), "x above 0", "value", "low", "high", degenerate="bound")
    assert rows["verdict"].tolist() == ["supported", "contradicted", "not resolved", "not tested", "not tested"]
    assert rows["reason"].tolist()[3:] == ["n = 2 < 3", "at its floor"]
    assert rows["row"].tolist()[0] == "d / a"
    assert rows.loc[2, "documents needed"] == units_needed_from_interval(0.05, -0.10, 0.20, 40)
    assert rows.loc[2, "method"] == analysis.FROM_INTERVAL and rows["documents needed"].isna().sum() == 4
    below = analysis.claim_rows(_claims_table(), "x below 0", "value", "low", "high", direction="below")
    assert below["verdict"].tolist()[:2] == ["contradicted", "supported"]


def test_documents_needed_from_per_document_values_use_the_paired_t_power() -> None:
    from nlgjudge.stats.claims import contexts_needed_from_values

    values = np.random.default_rng(1).normal(0.05, 0.5, 30)
    table = pd.DataFrame({"v": [values.mean()], "lo": [-0.1], "hi": [0.2], "n": [30], "per": [values]}, index=["j"])
    rows = analysis.claim_rows(table, "own above others", "v", "lo", "hi", per_document="per")
    assert rows.loc[0, "verdict"] == "not resolved" and rows.loc[0, "method"] == analysis.FROM_VALUES
    assert rows.loc[0, "documents needed"] == contexts_needed_from_values(values) > 30
    needed = analysis.documents_needed_table(rows, horizon={"own above others": 100})
    assert needed.loc[0, "n now"] == 30 and needed.loc[0, "more"] == str(int(rows.loc[0, "documents needed"]) - 30)
    assert needed.loc[0, "within"] == f"{'yes' if rows.loc[0, 'documents needed'] <= 100 else 'no'} (100)"


@pytest.mark.parametrize(("low", "high", "verdict"), [(0.1, 0.4, "supported"), (0.55, 0.7, "contradicted"),
                                                      (-0.8, -0.6, "contradicted"), (0.3, 0.6, "not resolved"),
                                                      (-0.6, 0.2, "not resolved")])
def test_a_correlation_is_not_strong_only_when_its_interval_lies_inside_the_band(low: float, high: float, verdict: str) -> None:
    estimate = (low + high) / 2
    assert analysis.not_strong_verdict(estimate, low, high, 50).verdict == verdict
    assert analysis.not_strong_verdict(estimate, low, high, 2).verdict == "not tested"


def test_overall_verdict_needs_every_tested_row_and_names_the_others() -> None:
    rows = analysis.claim_rows(_claims_table(), "x", "value", "low", "high", degenerate="bound")
    overall = analysis.overall_verdict(rows)
    assert overall.verdict == "contradicted" and "d / b" in overall.reason and "not tested: d / e (n = 2 < 3) and d / f (at its floor)" in overall.reason  # each reason beside its row
    open_only = analysis.overall_verdict(rows[~rows["row"].isin(["d / b", "d / e"])])
    assert open_only.verdict == "not resolved" and "not resolved: d / c" in open_only.reason
    clean = analysis.overall_verdict(rows[rows["row"].isin(["d / a", "d / c", "d / f"])].assign(
        verdict=["supported"] * 2 + ["not tested"], p_value=[0.001, 0.001, float("nan")], p_family=[0.001, 0.001, float("nan")]))
    assert clean.verdict == "supported" and clean.reason == "supported in 2 of 3 rows after Holm's correction; not tested: d / f (at its floor)"
    # The count is given after Holm's correction over the tested rows (an untested row has no test and
    # is not in the family), the uncorrected one beside it: 0.03 > 0.05 / 2, so neither row survives.
    weak = analysis.overall_verdict(rows[rows["row"].isin(["d / a", "d / c", "d / f"])].assign(
        verdict=["supported"] * 2 + ["not tested"], p_value=[0.03, 0.04, float("nan")], p_family=[0.03, 0.04, float("nan")]))
    assert weak.reason == "supported in 0 of 3 rows after Holm's correction (2 before it); not tested: d / f (at its floor)"
    kept = analysis.overall_verdict(rows[rows["row"].isin(["d / a", "d / c", "d / f"])].assign(
        verdict=["supported"] * 2 + ["not tested"], p_value=[0.001, 0.04, float("nan")], p_family=[0.001, 0.04, float("nan")]))
    assert kept.reason == "supported in 2 of 3 rows after Holm's correction; not tested: d / f (at its floor)"
    # most rows untested: the claim about every row is not tested, whatever the few tested rows say
    few = analysis.overall_verdict(rows[rows["row"].isin(["d / a", "d / f"])])
    assert few.verdict == "not tested" and few.reason == "only 1 of 2 rows can test it (d / a supported); not tested: d / f (at its floor)"
    assert analysis.overall_verdict(rows.iloc[3:]).verdict == "not tested"
    assert analysis.overall_verdict(analysis.untested_claim("y", "no such evaluator")).reason == "no such evaluator"
    summary = analysis.claims_summary(pd.concat([rows, analysis.untested_claim("y", "no such evaluator")]))
    assert summary.loc["x", "reason"] == ("supported in 1 of 5 rows after Holm's correction; contradicted (after Holm's correction over the 5 rows): "
                                          "1 row; not resolved: 1 row; not tested: 2 rows (at its floor and n = 2 < 3)")  # counted in the table; named in the detail
    assert analysis.overall_verdict(rows, max_names=1).reason.endswith("not tested: 2 rows (at its floor and n = 2 < 3)")
    # the range is over the rows that test the claim: d / e (+0.40, n = 2) is not one of them
    assert summary.loc["x", "estimates (tested rows)"] == "-0.20 to +0.30" and summary.loc["y", "verdict"] == "not tested"
    assert summary.loc["x", "n (documents)"] == "40 and 2" and summary.loc["y", "n (documents)"] == "–"


def test_an_excess_at_eq4_floor_is_flagged_and_cannot_test_the_claim() -> None:
    """Generator s is everyone's least favourite, s's own evaluator included (and qa everyone's favourite):
    their excesses are 0 by construction."""
    generations, likelihood = _frames(n_docs=20, self_boost=0.2)
    cube, docs = analysis.score_cube(likelihood, "qags_xsum", "reference_free", EVALUATORS, GENERATORS)
    cube = cube.copy()
    cube[:, :, 2] -= 0.8  # s's summaries fall below everyone's, however much s likes them
    lengths = analysis.summary_lengths(generations, "qags_xsum", docs, GENERATORS)
    table = analysis.self_bias_table(cube, lengths, EVALUATORS, GENERATORS, FAMILIES, n_boot=50)
    assert table.loc["s", "excess"] == 0.0 and "lowest" in table.loc["s", "excess at bound"]
    assert "highest" in table.loc["qa", "excess at bound"]  # qa is the best summariser in everyone's eyes: the ceiling
    assert table.loc["qb", "excess at bound"] == "" and (table["n"] == 20).all()
    rows = analysis.claim_rows(table, "self-bias", "excess", "excess_low", "excess_high", degenerate="excess at bound")
    assert rows.set_index("row").loc["s", "verdict"] == "not tested"
    gamma = analysis.claim_rows(table, "self-bias", "gamma", "gamma_low", "gamma_high")
    assert gamma.set_index("row").loc["s", "verdict"] != "not tested"  # gamma has no floor: the row is a test


def test_a_single_row_against_a_claim_about_every_row_is_a_flag_unless_it_survives_holm():
    import pandas as pd

    from nlgjudge.analysis.narcissism import overall_verdict

    def rows(p_against: float) -> pd.DataFrame:
        base = {"claim": "c", "estimate": 0.1, "low": 0.01, "high": 0.2, "n": 30, "reason": "", "documents needed": None,
                "method": ""}
        out = [{**base, "row": f"r{k}", "verdict": "supported", "p_value": 0.001} for k in range(7)]
        out += [{**base, "row": f"o{k}", "verdict": "not resolved", "p_value": 0.4} for k in range(4)]
        out.append({**base, "row": "against", "verdict": "contradicted", "p_value": p_against})
        return pd.DataFrame(out)

    flagged = overall_verdict(rows(0.03))  # 0.03 > 0.05 / 5 at its Holm step: a flag
    assert flagged.verdict == "not resolved" and "a flag: against goes against the claim on its own interval, but not after Holm's correction over the 12 rows" in flagged.reason
    kept = overall_verdict(rows(0.0001))
    assert kept.verdict == "contradicted" and "contradicted (after Holm's correction over the 12 rows): against" in kept.reason


def test_a_degenerate_judge_is_never_an_anchor() -> None:
    rows = []
    judges = ["j1", "j2", "j3"]
    for doc in ["d1", "d2", "d3"]:
        for judge in judges:
            for a, b in [("j1", "j2"), ("j1", "j3"), ("j2", "j3")]:
                rows.append({"judge": judge, "context_id": doc, "a": a, "b": b, "a_wins": 1.0 if judge == a else 0.5})
    outcomes = pd.DataFrame(rows)
    full = analysis.self_preference_table(outcomes, judges)
    assert full.loc[("j1", "j2"), "anchor judges"] == "j3"
    kept = analysis.self_preference_table(outcomes, judges, not_anchors=["j3"])
    assert ("j1", "j2") not in kept.index and kept.loc[("j1", "j3"), "anchor judges"] == "j2"
    assert ("j3", "j1") in kept.index  # its own rows are still there (read as not tested)


def test_a_claims_rows_are_one_family_and_a_row_that_fails_holm_reads_as_a_flag() -> None:
    from nlgjudge.analysis.narcissism import row_verdict_cells

    rows = pd.DataFrame({"claim": ["a"] * 3 + ["b"], "row": list("wxyz"),
                         "verdict": ["supported", "contradicted", "not resolved", "supported"],
                         "reason": ["r1", "r2", "r3", "r4"], "p_value": [0.001, 0.04, 0.5, 0.04]})
    assert row_verdict_cells(rows) == [
        "supported (r1)",  # p = 0.001 survives Holm over claim a's 3 rows
        "not resolved (a flag: contradicted on its own interval, not after Holm's correction over the 3 rows)",
        "not resolved (r3)",
        "supported (r4)",  # claim b is its own family of one row
    ]
    assert row_verdict_cells(rows.drop(columns="p_value"))[1] == "contradicted (r2)"


def test_a_bootstraps_monte_carlo_error_enters_the_verdict_and_holms_count() -> None:
    from nlgjudge.stats.intervals import bootstrap_end_error

    # excess 0.10 [0.02, 0.18] over 40 documents: resolved with exact resamples; with 50 resamples the
    # lower end's Monte Carlo error (0.08 / sqrt(98)) puts it within the band of 0: borderline
    table = pd.DataFrame({"value": [0.10, 0.5], "low": [0.02, 0.3], "high": [0.18, 0.7], "n": [40, 40]},
                         index=["a", "b"])
    exact = analysis.claim_rows(table, "x", "value", "low", "high", registered="narcissism.excess")
    assert exact["verdict"].tolist() == ["supported", "supported"]
    assert exact["p_family"].tolist() == pytest.approx(exact["p_value"].tolist())
    few = analysis.claim_rows(table, "x", "value", "low", "high", registered="narcissism.excess", resamples=50)
    assert 3 * bootstrap_end_error(0.08, 50) > 0.02
    assert few["verdict"].tolist() == ["not resolved", "supported"] and "Monte Carlo" in few["reason"].iloc[0]
    assert (few["p_family"] > few["p_value"]).all()  # Holm reads the largest p the resamples could give
    many = analysis.claim_rows(table, "x", "value", "low", "high", registered="narcissism.excess", resamples=100_000)
    assert many["verdict"].tolist() == ["supported", "supported"]
    with pytest.raises(ValueError, match="registered"):
        analysis.claim_rows(table, "x", "value", "low", "high", resamples=50)


def test_a_flag_is_an_open_row_counted_at_holms_strictest_step() -> None:
    """A row resolved on its own interval that Holm's correction over its claim's rows leaves open is
    listed with the rows not resolved, its documents counted at alpha 0.05 / k (k: the claim's rows)."""
    from nlgjudge.stats.claims import units_needed_from_interval

    table = pd.DataFrame({"value": [0.30, 0.04, 0.04, 0.30], "low": [0.20, 0.004, 0.004, 0.20], "high": [0.40, 0.076, 0.076, 0.40],
                          "n": [40, 40, 40, 40]}, index=pd.MultiIndex.from_tuples([("d", "a"), ("d", "b"), ("d", "c"), ("d", "e")]))
    rows = analysis.claim_rows(table, "own above others", "value", "low", "high", registered="narcissism.excess")
    # b and c: supported on their own intervals (p about 0.03), not after Holm over the 4 rows (0.05 / 2 at their step)
    assert rows.loc[1, "verdict"] == rows.loc[2, "verdict"] == "supported"
    assert analysis.row_verdict_cells(rows)[1].startswith("not resolved (a flag")
    needed = analysis.documents_needed_table(rows, horizon=100)
    assert needed["row"].tolist() == ["d / b", "d / c"]
    expected = units_needed_from_interval(rows.loc[1, "effect_at"], 0.004, 0.076, 40, threshold=rows.loc[1, "needed_threshold"],
                                          alpha=0.05 / 4)
    assert needed.loc[0, "documents needed"] == str(expected) and "a flag: at alpha 0.05 / 4" in needed.loc[0, "method"]


def test_a_band_row_open_at_its_design_size_is_not_said_to_leave_only_smaller_effects_open() -> None:
    from nlgjudge.analysis.narcissism import CLAIM_COLUMNS, documents_needed_table

    base = {"claim": "6", "row": "SummEval / q / CON", "estimate": 0.44, "low": 0.35, "high": 0.54, "n": 100,
            "verdict": "not resolved", "reason": "", "documents needed": 12, "method": "m", "p_value": 0.2,
            "p_family": 0.2, "effect_at": 0.5, "needed_threshold": 0.0}
    band = documents_needed_table(pd.DataFrame([{**base, "band": True}], columns=CLAIM_COLUMNS))
    assert band["more"].iloc[0].startswith("none at the band's centre") and "edge" in band["more"].iloc[0]
    directional = documents_needed_table(pd.DataFrame([{**base, "band": False}], columns=CLAIM_COLUMNS))
    assert directional["more"].iloc[0].startswith("none: already enough")


def test_a_row_whose_excess_cannot_reach_the_smallest_effect_that_matters_cannot_test_the_claim() -> None:
    # documents x evaluators x generators; generator 0 is evaluator 0's own; the others rate it near the top
    scores = np.array([[[1.0, 0.0, 0.5], [0.97, 0.0, 1.0], [1.0, 0.0, 0.5]]] * 4)
    evaluators = generators = ["a", "b", "c"]
    near = analysis.excess_at_bound(scores, evaluators, generators, minimal_effect=0.1)
    assert "can reach at most" in near[0] and "0.1" in near[0]
    assert analysis.excess_at_bound(scores, evaluators, generators)[0] == ""  # without the plan's effect: the exact bounds only
    assert analysis.excess_at_bound(scores, evaluators, generators, minimal_effect=0.001)[0] == ""


def test_a_not_tested_reason_keeps_its_setting_so_two_settings_never_read_as_one() -> None:
    rows = pd.DataFrame({
        "claim": ["c"] * 3, "row": ["d / a", "d / b", "d / c"],
        "verdict": ["supported", "not tested", "not tested"],
        "reason": ["", "reference-based: every evaluator rates b lowest: its excess is 0 by construction (eq. 4's floor)",
                   "reference-free: the other evaluators rate c near the top already: its excess can reach at most 0.1"],
    })
    reason = analysis.overall_verdict(rows).reason
    assert "reference-based, every evaluator rates b lowest" in reason
    assert "reference-free, the other evaluators rate c near the top already" in reason


def test_the_first_releases_pooled_length_reading_lets_a_document_effect_pass_for_a_length_preference() -> None:
    """The amended reading (one Spearman pooled over every summary, documents resampled), kept to show
    which verdicts the amendment moved: a document effect (long articles: longer summaries and higher
    scores) makes it positive while every document's own correlation is -1."""
    from nlgjudge.analysis.narcissism import length_correlation_table, pooled_length_correlation_table

    docs = np.arange(6, dtype=float)[:, None]
    lengths = np.array([1.0, 2.0, 3.0]) + 10 * docs
    scores = np.array([3.0, 2.0, 1.0]) + 10 * docs
    cube = scores[:, None, :]
    pooled = pooled_length_correlation_table(cube, lengths, ["e"], n_boot=200).loc["e"]
    within = length_correlation_table(cube, lengths, ["e"]).loc["e"]
    assert within["spearman"] == pytest.approx(-1.0)
    assert pooled["spearman"] > 0.8 and pooled["ci_low"] <= pooled["spearman"] <= pooled["ci_high"] <= 1.0
    assert pooled["n_documents"] == 6
