"""A tiny synthetic dataset for the studies' tests (no mirror needed)."""

from __future__ import annotations

import pandas as pd

from nlgjudge.data import DatasetInfo, JudgeDataset


def tiny_dataset(n_contexts: int = 2, n_candidates: int = 3) -> JudgeDataset:
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
