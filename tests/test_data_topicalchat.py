"""Topical-Chat USR loader on synthetic files in the tc_usr_data.json format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nlgjudge.data import DataValidationError, load_dataset

MODELS = [
    "Original Ground Truth",
    "Argmax Decoding",
    "Nucleus Decoding (p = 0.3)",
    "Nucleus Decoding (p = 0.5)",
    "Nucleus Decoding (p = 0.7)",
    "New Human Generated",
]


def dialogue(i: int) -> dict[str, Any]:
    return {
        "context": f"hi there , dialogue {i} \n hello , how are you ? \n fine thanks \n\n",
        "fact": f"a fact about topic {i}",
        "annotators": ["sm", "me", "er"],
        "responses": [
            {
                "response": f"response {k} to dialogue {i} .\n",
                "model": model,
                "Understandable": [1, (i + k) % 2, 1],
                "Natural": [3, 2, 1 + (i + k) % 3],
                "Maintains Context": [1, 2, 3],
                "Engaging": [2, 2, 2],
                "Uses Knowledge": [0, 1, 0],
                "Overall": [5, 4, 3],
            }
            for k, model in enumerate(MODELS)
        ],
    }


def write_usr(root: Path, mutate: Any = None) -> Path:
    records = [dialogue(i) for i in range(60)]
    if mutate is not None:
        mutate(records)
    folder = root / "topicalchat_usr"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "usr_topical_chat.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return path


def test_valid_file_averages_annotators(tmp_path: Path) -> None:
    write_usr(tmp_path)
    ds = load_dataset("topicalchat", data_dir=tmp_path)
    assert ds.frame.shape == (360, 10) and ds.n_contexts == 60
    assert ds.context_ids()[:2] == ["dialogue00", "dialogue01"]
    cands = ds.candidates("dialogue01")
    assert cands["system"].tolist() == MODELS
    assert cands["candidate_id"].tolist()[:3] == ["original-ground-truth", "argmax-decoding", "nucleus-decoding-p-0-3"]
    # dialogue 1, response 0: Understandable [1, 1, 1]; Natural [3, 2, 2]; Maintains Context [1, 2, 3]
    assert cands.loc[0, "COH"] == pytest.approx(1.0)
    assert cands.loc[0, "NAT"] == pytest.approx(7 / 3)
    assert cands.loc[0, "CNT"] == pytest.approx(2.0)
    assert cands.loc[0, "ENG"] == pytest.approx(2.0)
    assert cands.loc[0, "source"] == "hi there , dialogue 1\nhello , how are you ?\nfine thanks"
    assert cands.loc[0, "text"] == "response 0 to dialogue 1 ."
    assert cands.loc[0, "references"] == []


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda ds: ds[4]["responses"][2]["Natural"].__setitem__(0, 4), r"dialogue 4, response 2 \(Nucleus Decoding \(p = 0\.3\)\): Natural\[0\]: score 4 outside the range \[1, 3\]"),
        (lambda ds: ds[4]["responses"][1]["Understandable"].__setitem__(2, 2), r"dialogue 4, response 1 .*Understandable\[2\]: score 2 outside the range \[0, 1\]"),
        (lambda ds: ds[10]["responses"][0]["Engaging"].pop(), r"dialogue 10, response 0 .*Engaging has 2 ratings but other aspects have 3"),
        (lambda ds: ds[10]["responses"].pop(), r"context 'dialogue10' \(first row: .*usr_topical_chat\.json, dialogue 10, response 0 .*\): expected 6 candidates, found 5"),
        (lambda ds: ds[3]["responses"][5].__setitem__("model", "Argmax Decoding"), r"candidate id 'argmax-decoding' appears twice in context 'dialogue03'"),
        (lambda ds: ds[7].__setitem__("context", "   "), r"dialogue 7: context: empty text"),
        (lambda ds: ds[7]["responses"][3].pop("response"), r"dialogue 7, response 3 .*missing field 'response'"),
    ],
)
def test_malformed_rows_are_errors(tmp_path: Path, mutate: Any, expected: str) -> None:
    path = write_usr(tmp_path, mutate)
    with pytest.raises(DataValidationError, match=expected) as caught:
        load_dataset("topicalchat", data_dir=tmp_path)
    assert str(path) in str(caught.value)
