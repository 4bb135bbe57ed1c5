"""Numbers the book shows, recomputed independently from the released outputs.

The released files (``data/outputs/<study>/*.jsonl``) are read with ``json`` alone, the human
scores straight from the dataset, and P(A), the win-ratio Spearman, pairwise accuracy and the
debiased Spearman are recomputed here with numpy and scipy, without the library's matrices,
decisions, thresholds or metrics. They must agree with what the library (and so every chapter)
reports. Needs the mirrored data (``NLGJUDGE_DATA_DIR``); skipped where it is absent.
"""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest
from scipy.stats import spearmanr

from nlgjudge.config import outputs_dir
from nlgjudge.studies.plan import BACKEND, CHAPTER_N_CONTEXTS, TORCH_BACKEND

#: Recomputes the book's numbers from the whole release: part of `make test`, not of the fast tier.
pytestmark = pytest.mark.slow

JUDGE = "qwen2.5-coder-1.5b-instruct"
STUDY = "comparative-summeval"


#: llama.cpp records carry this in their fingerprint; torch's carry no runtime suffix.
LLAMACPP_MARK = "runtime=llama.cpp"


def _records(study: str, model: str, contexts: set[str]) -> list[dict]:
    """The records of the runtime the chapters read, ``plan.BACKEND``, on the chapter's ``contexts``
    (the released files hold both runtimes' records, and larger subsets' contexts too)."""
    path = outputs_dir() / study / f"{model}__label_probs.jsonl"
    if not path.exists():
        pytest.skip(f"no released outputs at {path}")
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in records if (LLAMACPP_MARK in r["fingerprint"]) == (BACKEND != TORCH_BACKEND)
            and r["meta"]["context_id"] in contexts]


@pytest.fixture(scope="module")
def summeval():
    from nlgjudge.data import DataNotFoundError, load_dataset

    try:
        return load_dataset("summeval", n_contexts=CHAPTER_N_CONTEXTS["summeval"], seed=0)
    except DataNotFoundError as error:  # pragma: no cover - depends on the machine
        pytest.skip(str(error))


@pytest.fixture(scope="module")
def independent(summeval):
    """P(A) per (template, aspect, context, i, j), rebuilt from the JSONL by candidate text.

    The cache stores one record per distinct prompt, so two systems with identical summaries
    share records; looking pairs up by their texts recovers every ordered pair.
    """
    frame = summeval.frame
    text = {(r.context_id, r.candidate_id): r.text for r in frame.itertuples()}
    by_text: dict[tuple, float] = {}
    for record in _records(STUDY, JUDGE, set(summeval.context_ids())):
        meta = record["meta"]
        logprobs = np.asarray(record["value"]["logprobs"], dtype=float)
        probs = np.exp(logprobs - logprobs.max())
        p_a = float(probs[0] / probs.sum())
        key = (meta["template"], meta["aspect"], meta["context_id"],
               text[(meta["context_id"], meta["a"])], text[(meta["context_id"], meta["b"])])
        by_text[key] = p_a
    contexts = sorted({k[2] for k in by_text})
    matrices: dict[tuple[int, str], dict[str, tuple[np.ndarray, np.ndarray]]] = defaultdict(dict)
    for template in (1, 2):
        for aspect in ("COH", "CON", "FLU", "REL"):
            for context_id in contexts:
                rows = frame[frame["context_id"] == context_id]
                texts = list(rows["text"])
                gold = rows[aspect].to_numpy(dtype=float)
                n = len(texts)
                p = np.full((n, n), np.nan)
                for i in range(n):
                    for j in range(n):
                        if i != j:
                            p[i, j] = by_text.get((template, aspect, context_id, texts[i], texts[j]), np.nan)
                if np.isnan(p[~np.eye(n, dtype=bool)]).any():
                    continue  # a context still being computed
                matrices[(template, aspect)][context_id] = (p, gold)
    if not matrices:
        pytest.skip("no complete released context")
    return matrices


def _win_ratio_spearman(matrices: dict, threshold: float) -> float:
    values = []
    for p, gold in matrices.values():
        if np.ptp(gold) == 0:
            continue  # equal human scores: no correlation, left out (the book's definition)
        n = len(gold)
        first = (p > threshold).astype(float)
        # wins as A (row i) plus wins as B (column i: A lost)
        wins = np.array([first[i, np.arange(n) != i].sum() + (1 - first[np.arange(n) != i, i]).sum() for i in range(n)])
        values.append(spearmanr(wins, gold).statistic if np.ptp(wins) > 0 else 0.0)
    return 100.0 * float(np.mean(values))


def _accuracy(matrices: dict, threshold: float) -> float:
    right = total = 0
    for p, gold in matrices.values():
        n = len(gold)
        for i in range(n):
            for j in range(n):
                if i != j and gold[i] != gold[j]:
                    right += (p[i, j] > threshold) == (gold[i] > gold[j])
                    total += 1
    return 100.0 * right / total


@pytest.fixture(scope="module")
def released_comparisons(summeval, independent, tmp_path_factory):
    """The library's comparison frame, read from the released outputs, on the complete contexts."""
    from nlgjudge.cache import OutputCache
    from nlgjudge.studies.collect import collect_comparisons
    from nlgjudge.studies.released import import_released

    cache = OutputCache(tmp_path_factory.mktemp("recompute") / "outputs.sqlite")
    import_released(STUDY, cache)
    contexts = sorted(next(iter(independent.values())))
    ds = summeval.restrict(contexts)
    collected = collect_comparisons(
        [JUDGE], {"summeval": ds}, cache=cache, aspects=None, templates=(1, 2), released_only=True, backend=BACKEND
    )
    frame = collected.frame
    assert sorted(frame["context_id"].unique()) == contexts
    return frame, ds


@pytest.fixture(scope="module")
def library_tables(released_comparisons):
    from nlgjudge.analysis.bias import bias_table, debiasing_table

    frame, ds = released_comparisons
    return bias_table(frame), debiasing_table(frame, {"summeval": ds})


def _row(table, template: int, aspect: str, **extra):
    mask = (table["template"] == template) & (table["aspect"] == aspect)
    for name, value in extra.items():
        mask &= table[name] == value
    assert mask.sum() == 1
    return table[mask].iloc[0]


def test_p_a_matches_an_independent_count(independent, library_tables):
    bias, _ = library_tables
    for (template, aspect), matrices in independent.items():
        made = np.concatenate([p[~np.eye(len(g), dtype=bool)] for p, g in matrices.values()])
        assert _row(bias, template, aspect)["p_a"] == pytest.approx(float((made > 0.5).mean()), abs=1e-9)
        assert _row(bias, template, aspect)["mean_prob_a"] == pytest.approx(float(made.mean()), abs=1e-9)


def test_spearman_and_accuracy_match_an_independent_computation(independent, library_tables):
    _, table = library_tables
    for (template, aspect), matrices in independent.items():
        plain = _row(table, template, aspect, debiased=False)
        assert plain["spearman_x100"] == pytest.approx(_win_ratio_spearman(matrices, 0.5), abs=1e-6)
        assert plain["accuracy_pct"] == pytest.approx(_accuracy(matrices, 0.5), abs=1e-6)


def test_debiased_spearman_matches_a_median_threshold(independent, library_tables):
    """Debiasing (eq. 10) moves the threshold to where P(A) = 0.5, i.e. the median P(A)."""
    _, table = library_tables
    for (template, aspect), matrices in independent.items():
        made = np.concatenate([p[~np.eye(len(g), dtype=bool)] for p, g in matrices.values()])
        threshold = float(np.median(made))
        debiased = _row(table, template, aspect, debiased=True)
        # The library gives the comparisons tied at the median a fractional decision; a plain
        # strict threshold differs from it in at most a couple of comparisons.
        assert debiased["spearman_x100"] == pytest.approx(_win_ratio_spearman(matrices, threshold), abs=1.5)
        assert debiased["accuracy_pct"] == pytest.approx(_accuracy(matrices, threshold), abs=0.5)
        assert debiased["p_a"] == pytest.approx(0.5, abs=1e-9)


def test_released_manifest_counts_match_the_files():
    root = outputs_dir()
    manifests = sorted(root.glob("*/MANIFEST.json"))
    if not manifests:
        pytest.skip("no released outputs")
    for manifest_path in manifests:
        manifest = json.loads(manifest_path.read_text())
        for entry in manifest["files"]:
            lines = (manifest_path.parent / entry["file"]).read_text().splitlines()
            assert len(lines) == entry["records"], f"{manifest_path.parent.name}/{entry['file']}"


def test_comparative_chapter_figure_is_the_mean_over_templates(independent, released_comparisons):
    """The comparative chapter's Table 1 row (template mean of per-template Spearman)."""
    from nlgjudge.analysis import comparative as analysis

    frame, ds = released_comparisons
    table = analysis.comparative_correlations(frame, ds)
    for aspect in ("COH", "CON", "FLU", "REL"):
        ours = np.mean([_win_ratio_spearman(independent[(t, aspect)], 0.5) for t in (1, 2)])
        row = table[(table["aspect"] == aspect) & (table["template"] == analysis.TEMPLATE_MEAN)]
        assert len(row) == 1
        assert float(row["spearman"].iloc[0]) == pytest.approx(ours, abs=1e-6)


def test_expected_score_spearman_matches_an_independent_computation(summeval, tmp_path):
    """Prompt scoring's expected score, sum over s of s * P(s), from the released label probabilities."""
    from nlgjudge.cache import OutputCache
    from nlgjudge.engine import Judge
    from nlgjudge.analysis import comparative as analysis
    from nlgjudge.studies.released import import_released
    from nlgjudge.studies.scoring import expected_scores

    frame = summeval.frame
    text = {(r.context_id, r.candidate_id): r.text for r in frame.itertuples()}
    expected: dict[tuple, float] = {}
    for record in _records("scoring-summeval", JUDGE, set(summeval.context_ids())):
        meta = record["meta"]
        if meta["reading"] != "expected":
            continue
        logprobs = np.asarray(record["value"]["logprobs"], dtype=float)
        assert logprobs.shape == (10,)  # the score words 1..10, in order
        probs = np.exp(logprobs - logprobs.max())
        probs /= probs.sum()
        key = (meta["template"], meta["aspect"], meta["context_id"], text[(meta["context_id"], meta["candidate_id"])])
        expected[key] = float(probs @ np.arange(1, 11))
    complete = [
        c for c in sorted({k[2] for k in expected})
        if all((t, a, c, x) in expected for t in (1, 2) for a in ("COH", "CON", "FLU", "REL")
               for x in frame.loc[frame["context_id"] == c, "text"])
    ]
    if not complete:
        pytest.skip("no complete released scoring context")
    ds = summeval.restrict(complete)
    cache = OutputCache(tmp_path / "outputs.sqlite")
    import_released("scoring-summeval", cache)
    judge = Judge(JUDGE, cache=cache, study="scoring-summeval", backend=BACKEND)
    scores = expected_scores(judge, ds, aspects=["COH", "CON", "FLU", "REL"], templates=(1, 2))
    assert scores["from_cache"].all()  # read back, nothing computed
    table = analysis.correlations(analysis.scoring_predictions(scores, "expected", model=JUDGE, dataset="summeval"), ds)
    for template in (1, 2):
        for aspect in ("COH", "CON", "FLU", "REL"):
            values = []
            for c in complete:
                rows = ds.frame[ds.frame["context_id"] == c]
                pred = [expected[(template, aspect, c, x)] for x in rows["text"]]
                values.append(spearmanr(pred, rows[aspect].to_numpy(dtype=float)).statistic)
            row = table[(table["template"] == template) & (table["aspect"] == aspect)]
            assert float(row["spearman"].iloc[0]) == pytest.approx(100.0 * np.nanmean(values), abs=1e-6)
