"""Shared test settings: everything runs offline and never touches the user's output cache."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from itertools import permutations
from pathlib import Path

import pandas as pd
import pytest
from scipy.special import expit

# No test may reach a model or dataset hub; fail fast rather than wait on the network.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Model outputs computed by tests (and by notebooks they execute, which inherit the environment)
# go to a throw-away database; converted model weights stay in the shared user cache.
os.environ["NLGJUDGE_OUTPUT_CACHE"] = str(Path(tempfile.mkdtemp(prefix="nlgjudge-tests-")) / "outputs.sqlite")


# --------------------------------------------------------------------------------------------
# Shared fixtures: synthetic data for the studies' and analyses' tests (no mirror, no model)

from nlgjudge.data import DatasetInfo, JudgeDataset  # noqa: E402 - after the offline settings above

def _tiny_dataset(n_contexts: int = 2, n_candidates: int = 3) -> JudgeDataset:
    info = DatasetInfo(
        name="tiny",
        title="tiny synthetic summaries",
        aspects={"COH": "coherence", "FLU": "fluency"},
        noun="summary",
        source_kind="passage",
        score_ranges={"COH": (1.0, 5.0), "FLU": (1.0, 5.0)},
        has_references=False,
        citation="made in the test",
    )
    rows = []
    for c in range(n_contexts):
        for k in range(n_candidates):
            rows.append(
                {
                    "context_id": f"ctx{c}",
                    "source": f"The cat sat on the mat {c} .",
                    "references": [],
                    "candidate_id": f"ctx{c}-{k}",
                    "system": f"S{k}",
                    "text": "the cat sat ." if k == 0 else f"a storm closed the schools for {k} days .",
                    "COH": float(1 + k),
                    "FLU": float(5 - k),
                }
            )
    return JudgeDataset(pd.DataFrame(rows)[list(info.columns)], info)


def _synthetic_comparisons(ds, pull: float, sharpness: float = 0.5, model: str = "toy", templates=(1,)) -> pd.DataFrame:
    """A judge with P(A) = sigmoid(sharpness (gold_i - gold_j) + pull): a constant log-odds pull to A."""
    rows = []
    for context_id in ds.context_ids():
        cands = ds.candidates(context_id)
        for template in templates:
            for aspect in ds.info.aspects:
                gold = cands[aspect].to_numpy(float)
                for i, j in permutations(range(len(cands)), 2):
                    p = float(expit(sharpness * (gold[i] - gold[j]) + pull))
                    rows.append((model, ds.info.name, context_id, template, aspect, i, j, p))
    return pd.DataFrame(rows, columns=["model", "dataset", "context_id", "template", "aspect", "i", "j", "p_a"])


@pytest.fixture
def tiny_dataset() -> Callable[..., JudgeDataset]:
    """Factory of a tiny synthetic dataset: ``tiny_dataset(n_contexts=2, n_candidates=3)``;
    candidate k of every context has COH = 1 + k and FLU = 5 - k."""
    return _tiny_dataset


@pytest.fixture
def synthetic_comparisons() -> Callable[..., pd.DataFrame]:
    """Factory of a comparison frame from a judge with P(A) = sigmoid(sharpness (gold_i - gold_j) + pull):
    ``synthetic_comparisons(ds, pull, sharpness=0.5, model="toy", templates=(1,))``."""
    return _synthetic_comparisons


@pytest.fixture(scope="session")
def paper_text_of() -> Callable[[str], str]:
    """Factory reading a paper's text extraction by file name from ``NLGJUDGE_PAPERS_DIR`` (default
    ``../shared/papers``): skipped where it is absent, a failure in CI (the transcriptions must be checked)."""

    def read(name: str) -> str:
        from nlgjudge.config import REPO_ROOT

        path = Path(os.environ.get("NLGJUDGE_PAPERS_DIR") or REPO_ROOT.parent / "shared" / "papers") / name
        if not path.is_file():
            if os.environ.get("CI") == "true":
                pytest.fail(f"paper text {path} is missing (set NLGJUDGE_PAPERS_DIR)")
            pytest.skip(f"paper text {path} not available; set NLGJUDGE_PAPERS_DIR to check transcriptions")
        return path.read_text(encoding="utf-8")

    return read


@pytest.fixture(scope="session")
def smollm2_on_llamacpp() -> str:
    """The packaged SmolLM2-135M's name, for tests that run it on llama.cpp; skips when the backend
    or the model's package is not installed."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (make install-backend)")
    from nlgjudge.models import MissingPackageError, resolve_model

    try:
        resolve_model("smollm2-135m-instruct").load()
    except MissingPackageError as err:
        pytest.skip(str(err))
    return "smollm2-135m-instruct"
