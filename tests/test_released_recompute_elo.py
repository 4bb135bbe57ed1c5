"""The Elo chapter's LLM-judge numbers, recomputed independently from the released outputs.

``data/outputs/elo-cnndm_contest/*.jsonl`` is read with ``json`` alone; the judge's outcome of each
encounter in its display order, the Annex's Elo update (b = 400, theta0 = 1000, beta geometric from
50 to 1, the increasing logistic), the ROUGE-1 judge (``rouge_score`` directly) and Cohen's kappa
(its formula) are written out here with numpy, without the library's outcome, Elo, ROUGE or kappa
code. Only the visiting order of the encounters (a design, not a result) comes from the library.
They must agree with what the library, and so the chapter, reports. Needs the mirrored data.
"""

from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pytest

from nlgjudge.config import outputs_dir

#: Recomputes the book's numbers from the whole release: part of `make test`, not of the fast tier.
pytestmark = pytest.mark.slow

JUDGE = "qwen2.5-coder-1.5b-instruct"
BACKEND = "llamacpp"  # the runtime of the released Elo judgements (plan.ELO_BACKEND)
STUDY = "elo-cnndm_contest"
CONTESTANTS = ["BART", "PEGASUS", "BRIO", "GPT-4", "ChatGPT", "GPT-3", "reference"]


@pytest.fixture(scope="module")
def contest():
    from nlgjudge.data import DataNotFoundError, load_dataset

    try:
        return load_dataset("cnndm_contest")
    except DataNotFoundError as error:  # pragma: no cover - depends on the machine
        pytest.skip(str(error))


@pytest.fixture(scope="module")
def independent(contest):
    """P(A) by (article, text in A, text in B), and the articles with every ordered pair released."""
    path = outputs_dir() / STUDY / f"{JUDGE}__label_probs.jsonl"
    if not path.exists():
        pytest.skip(f"no released outputs at {path}")
    text = {(r.context_id, r.system): r.text for r in contest.frame.itertuples()}
    by_text: dict[tuple[str, str, str], float] = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        meta = record["meta"]
        logprobs = np.asarray(record["value"]["logprobs"], dtype=float)
        probs = np.exp(logprobs - logprobs.max())
        key = (meta["context_id"], text[(meta["context_id"], meta["a"])], text[(meta["context_id"], meta["b"])])
        by_text[key] = float(probs[0] / probs.sum())
    complete = sorted(
        c for c in {k[0] for k in by_text}
        if all((c, text[(c, a)], text[(c, b)]) in by_text for a in CONTESTANTS for b in CONTESTANTS if a != b)
    )
    if len(complete) < 2:
        pytest.skip("fewer than two complete released articles")
    return by_text, text, complete


@pytest.fixture(scope="module")
def library(contest, independent):
    """What the chapter computes: its judgements (released only), encounters and outcomes."""
    from nlgjudge.analysis import elo as analysis
    from nlgjudge.studies.collect import collect_elo_judgements
    from nlgjudge.studies.registry import released_folder
    from nlgjudge.studies.released import chapter_cache

    _, _, complete = independent
    ds = contest.restrict(complete)
    cache, _ = chapter_cache(True, [released_folder("elo", ds.info.name)])
    judged, _ = collect_elo_judgements([JUDGE], ds, cache=cache, templates=[1], released_only=True, backend=BACKEND)
    frame = judged[JUDGE]
    assert sorted(frame["context_id"].unique()) == complete
    encounters = analysis.encounters(complete, CONTESTANTS, seed=0)
    return analysis, encounters, analysis.llm_outcomes(encounters, frame[frame["template"] == 1], JUDGE)


def _display_order_outcomes(encounters, by_text, text) -> np.ndarray:
    """y = 1 when the second contestant (shown in B) wins: the judge picks B when P(A) < 0.5."""
    y = []
    for row in encounters.itertuples():
        p_a = by_text[(row.context_id, text[(row.context_id, row.first)], text[(row.context_id, row.second)])]
        y.append(1.0 if p_a < 0.5 else 0.0 if p_a > 0.5 else 0.5)
    return np.array(y)


def test_display_order_outcomes_match(independent, library):
    by_text, text, _ = independent
    _, encounters, outcomes = library
    np.testing.assert_array_equal(_display_order_outcomes(encounters, by_text, text), outcomes["y"].to_numpy())


def test_final_elo_matches_the_annex_update_written_out(independent, library):
    by_text, text, _ = independent
    analysis, encounters, outcomes = library
    y = _display_order_outcomes(encounters, by_text, text)
    rating = dict.fromkeys(CONTESTANTS, 1000.0)
    n = len(encounters)
    for k, (row, outcome) in enumerate(zip(encounters.itertuples(), y, strict=True)):
        beta = 50.0 * (1.0 / 50.0) ** (k / (n - 1))
        expected = 1.0 / (1.0 + 10.0 ** (-(rating[row.second] - rating[row.first]) / 400.0))
        rating[row.second] += beta * (outcome - expected)
        rating[row.first] -= beta * (outcome - expected)
    ours = analysis.final_elo(outcomes, CONTESTANTS)
    for name in CONTESTANTS:
        assert ours[name] == pytest.approx(rating[name], abs=1e-6)


def test_kappa_with_rouge_1_matches_its_formula(contest, independent, library):
    from rouge_score import rouge_scorer

    by_text, text, complete = independent
    analysis, encounters, outcomes = library
    scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)
    rouge = {(c, s): scorer.score(text[(c, "reference")], text[(c, s)])["rouge1"].fmeasure
             for c in complete for s in CONTESTANTS if s != "reference"}
    llm = _display_order_outcomes(encounters, by_text, text)
    pairs = []
    for row, judge_y in zip(encounters.itertuples(), llm, strict=True):
        if "reference" in (row.first, row.second) or judge_y == 0.5:
            continue
        one, two = rouge[(row.context_id, row.first)], rouge[(row.context_id, row.second)]
        if one != two:
            pairs.append((judge_y, 1.0 if two > one else 0.0))
    a, b = np.array(pairs).T
    observed = float(np.mean(a == b))
    chance = float(a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean()))
    kappa = (observed - chance) / (1 - chance)

    from nlgjudge.metrics.reference import reference_baselines

    scores = analysis.rouge_scores(reference_baselines(contest.restrict(complete), bertscore=False))
    table = analysis.kappa_table({"ROUGE-1": analysis.score_outcomes(encounters, scores, "ROUGE-1", "ROUGE-1"),
                                  JUDGE: outcomes}, n_boot=2)
    assert int(table["n_encounters"].iloc[0]) == len(pairs)
    assert float(table["kappa"].iloc[0]) == pytest.approx(kappa, abs=1e-9)


def test_every_complete_article_has_all_pairs(independent):
    by_text, text, complete = independent
    for c in complete:
        for a, b in combinations(CONTESTANTS, 2):
            assert (c, text[(c, a)], text[(c, b)]) in by_text and (c, text[(c, b)], text[(c, a)]) in by_text
