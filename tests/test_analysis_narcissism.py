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
    table = analysis.length_correlation_table(cube, lengths, EVALUATORS, n_boot=100)
    assert (table["n"] == 30 * 4).all()
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
    readings = analysis.interval_readings(table, "gamma", "gamma_low", "gamma_high")
    if boost:
        assert (readings == "above 0").all()
    else:
        assert (readings == "straddles 0").sum() >= 2  # 95% intervals: an occasional miss is allowed
    counts = analysis.count_readings({"x": table}, "gamma", "gamma_low", "gamma_high")
    assert counts["total"] == 3 and sum(counts[k] for k in ("above 0", "below 0", "straddles 0", "undecided")) == 3


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


def test_human_score_table_and_an_unknown_system() -> None:
    frame = pd.DataFrame({"system": ["a", "a", "b"], "score": [0.2, 0.6, 1.0]})
    table = analysis.human_score_table({"B": (frame, "score")}, {"B-a": ("B", "a")})
    assert table.loc["B-a", ["Max", "Min", "Mean", "Median", "n"]].tolist() == [0.6, 0.2, 0.4, 0.4, 2]
    with pytest.raises(KeyError, match="no system 'c'"):
        analysis.human_score_table({"B": (frame, "score")}, {"B-c": ("B", "c")})


def test_generation_table_counts_empty_and_unfinished_summaries() -> None:
    generations, _ = _frames(n_docs=3)
    generations.loc[0, ["summary", "n_words", "empty"]] = ["", 0, True]
    generations.loc[1, "summary"] = "A storm closed the schools."
    table = analysis.generation_table(generations)
    assert table.loc[("qags_xsum", "qa"), "empty"] == 1 and table.loc[("qags_xsum", "qa"), "documents"] == 3
    assert table.loc[("qags_xsum", "qb"), "mid_sentence"] == 2  # "w w w" twice, the full stop once


@pytest.mark.parametrize(
    ("text", "unfinished"),
    [("It rained.", False), ('He said "no."', False), ("It rained (again)", False), ("The game is scheduled to", True),
     ("", False), ("Done!  ", False)],
)
def test_a_summary_ends_mid_sentence_when_it_does_not_close_its_sentence(text: str, unfinished: bool) -> None:
    assert analysis.ends_mid_sentence(text) is unfinished
