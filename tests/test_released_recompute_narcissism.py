"""The narcissism chapter's numbers, recomputed independently from the released outputs.

``data/outputs/likelihood-<dataset>/*.jsonl`` are read with ``json`` alone (llama.cpp records only,
the chapter's runtime); eq. 2's mean, the common documents, eq. 4 and the self-bias excess are
written out here with numpy, and the benchmarks' correlations with people come from
``scipy.stats`` on the raw human scores. They must agree with what the library, and so the chapter,
computes. Needs the mirrored data; skipped where a release is absent.
"""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest
from scipy import stats

from nlgjudge.config import outputs_dir

#: Recomputes the book's numbers from the whole release: part of `make test`, not of the fast tier.
pytestmark = pytest.mark.slow

MODELS = ["qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-0.5b-instruct", "smollm2-135m-instruct", "gemma-3-270m"]
RUNTIME = "runtime=llama.cpp"


def _released_means(study: str, setting: str, texts: dict[tuple[str, str], str] | None = None) -> dict[tuple[str, str, str], float]:
    """(evaluator, document, generator) -> mean token log-probability, from the JSONL alone.

    The cache stores one record per distinct request, named by the first study that asked for it.
    When two hypotheses have the same text (e.g. a generator that wrote, word for word, RoSE's GPT-3
    summary, which the ``rose_llm`` release scored first), one record scores both: with ``texts``
    ((document, generator) -> summary), a record also counts for every generator of the same text.
    """
    folder = outputs_dir() / study
    if not folder.is_dir():
        pytest.skip(f"no released outputs at {folder}")
    means: dict[tuple[str, str, str], float] = {}
    for path in sorted(folder.glob("*__loglikelihood.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            meta = record["meta"]
            if RUNTIME not in record["fingerprint"] or meta["setting"] != setting:
                continue
            value = float(np.mean(record["value"]["token_logprobs"]))
            document, named = meta["context_id"], meta["generator"]
            means[(record["model_id"], document, named)] = value
            if texts is not None and (document, named) in texts:
                for generator in MODELS:
                    if texts.get((document, generator)) == texts[(document, named)]:
                        means[(record["model_id"], document, generator)] = value
    return means


def _summary_texts(dataset: str) -> dict[tuple[str, str], str]:
    """(document, generator) -> summary: the released generations (JSONL) and RoSE-LLM's systems."""
    texts: dict[tuple[str, str], str] = {}
    for path in sorted((outputs_dir() / f"generation-{dataset}").glob("*__generate.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if RUNTIME in record["fingerprint"]:
                texts[(record["meta"]["context_id"], record["model_id"])] = record["value"]["text"].strip()
    for row in _load("rose_llm", None).frame.itertuples():
        texts.setdefault((row.context_id, row.system), str(row.text).strip())
    return texts


def _load(name: str, n: int | None):
    from nlgjudge.data import DataNotFoundError, load_dataset

    try:
        return load_dataset(name, n_contexts=n, seed=0)
    except DataNotFoundError as error:  # pragma: no cover - depends on the machine
        pytest.skip(str(error))


def _excess_by_hand(means: dict[tuple[str, str, str], float], documents: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Eq. 4 of the per-evaluator means over ``documents``, and each evaluator's excess for its own generator."""
    table = np.array([[np.mean([means[(e, d, g)] for d in documents]) for g in MODELS] for e in MODELS])
    normalised = (table - table.min(axis=1, keepdims=True)) / (table.max(axis=1, keepdims=True) - table.min(axis=1, keepdims=True))
    excess = np.array([normalised[k, k] - np.mean([normalised[j, k] for j in range(len(MODELS)) if j != k]) for k in range(len(MODELS))])
    return normalised, excess


def _complete(means: dict[tuple[str, str, str], float]) -> list[str]:
    docs_seen = sorted({d for _, d, _ in means})
    return [d for d in docs_seen if all((e, d, g) in means for e in MODELS for g in MODELS)]


@pytest.mark.parametrize(("dataset", "setting"), [("qags_cnndm", "reference_free"), ("qags_xsum", "reference_free"),
                                                  ("rose", "reference_free"), ("rose", "reference_based")])
def test_heatmap_and_self_bias_excess_recomputed_from_the_jsonl(dataset: str, setting: str) -> None:
    from nlgjudge.analysis import narcissism as analysis
    from nlgjudge.stats.self_bias import self_bias_excess
    from nlgjudge.studies.collect import collect_narcissism
    from nlgjudge.studies.registry import released_folder
    from nlgjudge.studies.released import chapter_cache

    means = _released_means(f"likelihood-{dataset}", setting, _summary_texts(dataset))
    complete = _complete(means)
    if len(complete) < 10:
        pytest.skip(f"{dataset}: fewer than 10 documents scored by every evaluator for every generator")
    # Independent: per evaluator, the mean over documents, min-max over generators (eq. 4), then the excess.
    normalised, excess = _excess_by_hand(means, complete)

    ds = _load(dataset, 100)
    folders = [released_folder(study, dataset) for study in ("generation", "likelihood")]
    cache, _ = chapter_cache(True, folders)
    collected = collect_narcissism(MODELS, MODELS, {dataset: ds}, cache=cache, released_only=True, backend="llamacpp")
    cube, docs = analysis.score_cube(collected.likelihood, dataset, setting, MODELS, MODELS)
    assert sorted(docs) == complete
    np.testing.assert_allclose(analysis.heatmap_table(cube, MODELS, MODELS).to_numpy(), normalised, atol=1e-9)
    np.testing.assert_allclose(self_bias_excess(cube, np.arange(len(MODELS))), excess, atol=1e-9)
    # A generator every evaluator rates lowest (or highest) has an excess of 0 by construction: the
    # chapter must flag exactly those rows as unable to test the claim.
    at_bound = [bool((normalised[:, k] == 0).all() or (normalised[:, k] == 1).all()) for k in range(len(MODELS))]
    assert [bool(reason) for reason in analysis.excess_at_bound(cube, MODELS, MODELS)] == at_bound
    assert all(excess[k] == 0 for k in range(len(MODELS)) if at_bound[k])


def test_reference_free_minus_reference_based_recomputed_from_the_jsonl() -> None:
    from nlgjudge.analysis import narcissism as analysis
    from nlgjudge.studies.collect import collect_narcissism
    from nlgjudge.studies.registry import released_folder
    from nlgjudge.studies.released import chapter_cache

    texts = _summary_texts("rose")
    free, based = (_released_means("likelihood-rose", setting, texts) for setting in ("reference_free", "reference_based"))
    both = sorted(set(_complete(free)) & set(_complete(based)))
    if len(both) < 10:
        pytest.skip("rose: fewer than 10 documents scored in both settings")
    (free_norm, free_excess), (based_norm, based_excess) = _excess_by_hand(free, both), _excess_by_hand(based, both)
    difference = free_excess - based_excess
    at_bound = [any(bool((norm[:, k] == 0).all() or (norm[:, k] == 1).all()) for norm in (free_norm, based_norm))
                for k in range(len(MODELS))]

    folders = [released_folder(study, "rose") for study in ("generation", "likelihood")]
    cache, _ = chapter_cache(True, folders)
    collected = collect_narcissism(MODELS, MODELS, {"rose": _load("rose", 100)}, cache=cache, released_only=True, backend="llamacpp")
    table = analysis.setting_comparison_table(collected.likelihood, "rose", MODELS, MODELS, n_boot=20)
    assert table.attrs["n_documents"] == len(both)
    np.testing.assert_allclose(table.loc[MODELS, "free - based"].to_numpy(), difference, atol=1e-9)
    assert [bool(reason) for reason in table.loc[MODELS, "excess at bound"]] == at_bound
    assert (table["n"] == len(both)).all()


@pytest.mark.parametrize(("dataset", "setting", "human"), [("rose_llm", "reference_based", "ACU"), ("summeval", "reference_free", "COH")])
def test_benchmark_correlations_with_people_recomputed_from_the_jsonl(dataset: str, setting: str, human: str) -> None:
    from nlgjudge.analysis import narcissism as analysis
    from nlgjudge.studies.collect import collect_benchmark_likelihood
    from nlgjudge.studies.likelihood import BENCHMARKS
    from nlgjudge.studies.registry import released_folder
    from nlgjudge.studies.released import chapter_cache

    means = _released_means(f"likelihood-{dataset}", setting)
    ds = _load(dataset, None)
    gold = {(r.context_id, r.system): float(getattr(r, human)) for r in ds.frame.itertuples()}
    evaluators = [e for e in MODELS if any(key[0] == e for key in means)]
    if not evaluators:
        pytest.skip(f"no released {dataset} scores")
    cache, _ = chapter_cache(True, [released_folder("likelihood", dataset)])
    frame, _ = collect_benchmark_likelihood(evaluators, {dataset: ds}, cache=cache, released_only=True, backend="llamacpp")
    table = analysis.human_correlation_table(frame, ds.frame, dataset, setting, evaluators, [human], n_boot=20)
    systems = set(BENCHMARKS[dataset].systems)
    for evaluator in evaluators:
        by_doc: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for (e, d, g), value in means.items():
            if e == evaluator and g in systems:
                by_doc[d].append((value, gold[(d, g)]))
        used = set(frame.loc[frame["evaluator"] == evaluator, "context_id"])
        pairs = np.array([p for d in sorted(used) for p in by_doc[d]])
        assert len(pairs) == table.loc[(evaluator, human), "n_summaries"]
        assert table.loc[(evaluator, human), "spearman"] == pytest.approx(stats.spearmanr(pairs[:, 0], pairs[:, 1]).statistic, abs=1e-9)
        assert table.loc[(evaluator, human), "kendall"] == pytest.approx(stats.kendalltau(pairs[:, 0], pairs[:, 1]).statistic, abs=1e-9)
