"""The runtime chapter's P(A) differences, recomputed independently from the released outputs.

Both runtimes' records of the judge sit in the same released files (``data/outputs/comparative-*``;
llama.cpp's carry ``runtime=llama.cpp`` in their fingerprint). They are read here with ``json``
alone, paired by prompt content (template, aspect, context and the two candidates' texts) and
expanded to every ordered pair of candidates with numpy; the number of comparisons and contexts
both runtimes computed, the median and largest |P(A) difference| and the mean difference must be
what :mod:`nlgjudge.analysis.runtime` reports from the library's own frames. Needs the mirrored
data (``NLGJUDGE_DATA_DIR``); skipped where it is absent.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from nlgjudge.config import outputs_dir

#: Recomputes the book's numbers from the whole release: part of `make test`, not of the fast tier.
pytestmark = pytest.mark.slow

JUDGE = "qwen2.5-coder-1.5b-instruct"
#: The runtime chapter's default subsets (plan.N_CONTEXTS when it was written; seed 0).
N_CONTEXTS = {"summeval": 6, "topicalchat": 10, "webnlg": 6}
LLAMACPP_MARK = "runtime=llama.cpp"


def _p_a(record: dict) -> float:
    logprobs = np.asarray(record["value"]["logprobs"], dtype=float)
    probs = np.exp(logprobs - logprobs.max())
    return float(probs[0] / probs.sum())


def _independent(name: str, frame: pd.DataFrame) -> pd.DataFrame:
    """One row per comparison both runtimes computed: dataset, context, template, aspect, i, j, difference."""
    path = outputs_dir() / f"comparative-{name}" / f"{JUDGE}__label_probs.jsonl"
    columns = ["dataset", "context_id", "template", "aspect", "i", "j", "difference"]
    if not path.exists():  # the library finds nothing there either; the comparison below checks that
        return pd.DataFrame(columns=columns)
    text = {(r.context_id, r.candidate_id): r.text for r in frame.itertuples()}
    planned = set(frame["context_id"])
    by_runtime: dict[str, dict[tuple, float]] = {"torch": {}, "llama.cpp": {}}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        meta = record["meta"]
        if meta["context_id"] not in planned:
            continue
        runtime = "llama.cpp" if LLAMACPP_MARK in record["fingerprint"] else "torch"
        key = (meta["template"], meta["aspect"], meta["context_id"],
               text[(meta["context_id"], meta["a"])], text[(meta["context_id"], meta["b"])])
        by_runtime[runtime][key] = _p_a(record)
    torch_p, llama_p = by_runtime["torch"], by_runtime["llama.cpp"]
    rows = []
    for context_id, candidates in frame.groupby("context_id", sort=False):
        keys = {k for k in torch_p if k[2] == context_id}
        # a context counts when llama.cpp computed every prompt torch did (the chapters' coverage rule)
        if not keys or not keys <= set(llama_p):
            continue
        texts = list(candidates["text"])
        settings = sorted({(k[0], k[1]) for k in keys})
        for template, aspect in settings:
            for i, a in enumerate(texts):
                for j, b in enumerate(texts):
                    if i != j:
                        key = (template, aspect, context_id, a, b)
                        if key not in torch_p:
                            pytest.fail(f"{path}: torch released {context_id} ({template}, {aspect}) only in part; "
                                        f"no record for the pair ({i}, {j})")
                        rows.append((name, context_id, template, aspect, i, j, llama_p[key] - torch_p[key]))
    return pd.DataFrame(rows, columns=columns)


@pytest.fixture(scope="module")
def loaded():
    from nlgjudge.data import DataNotFoundError, load_dataset

    try:
        return {name: load_dataset(name, n_contexts=k, seed=0) for name, k in N_CONTEXTS.items()}
    except DataNotFoundError as error:  # pragma: no cover - depends on the machine
        pytest.skip(str(error))


def test_the_runtime_chapter_differences_match_an_independent_recomputation(loaded) -> None:
    from nlgjudge.analysis import runtime
    from nlgjudge.studies.collect import prepare_comparisons

    independent = pd.concat([_independent(name, ds.frame) for name, ds in loaded.items()], ignore_index=True)
    if independent.empty:
        pytest.skip("no context was released by both runtimes")
    frames = {
        backend: prepare_comparisons([JUDGE], loaded, aspects=None, templates=[1, 2], released_only=True,
                                     backend=backend).frame
        for backend in ("torch", "llamacpp")
    }
    table = runtime.difference_table(runtime.pair_runtimes(frames["torch"], frames["llamacpp"])).set_index("dataset")
    assert sorted(table.index) == sorted(set(independent["dataset"]))
    for name, part in independent.groupby("dataset"):
        row = table.loc[name]
        assert row["n_comparisons"] == len(part)
        assert row["n_contexts"] == part["context_id"].nunique()
        absolute = part["difference"].abs()
        assert row["median_abs"] == pytest.approx(float(np.median(absolute)), abs=1e-12)
        assert row["max_abs"] == pytest.approx(float(absolute.max()), abs=1e-12)
        per_context = part.groupby("context_id")["difference"].mean()
        assert row["mean_difference"] == pytest.approx(float(per_context.mean()), abs=1e-12)
