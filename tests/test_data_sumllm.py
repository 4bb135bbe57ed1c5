"""SumLLM outputs joined to RoSE references, on synthetic files in the released layout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nlgjudge.data import DataNotFoundError, DataValidationError, load_dataset, sources
from nlgjudge.data.sumllm import SYSTEM_FILES, match_references

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau".split()


def article(i: int) -> str:
    # Distinct vocabularies per article so that word-set similarity separates them.
    return " ".join(f"{w}{i}" for w in WORDS) + " ."


def write_files(root: Path, mutate_lines: Any = None, with_rose: bool = True) -> Path:
    folder = root / "cnndm_llm_summaries_sumllm"
    (folder / "outputs" / "llm").mkdir(parents=True, exist_ok=True)
    (folder / "outputs" / "system").mkdir(parents=True, exist_ok=True)
    articles = [f"(CNN){article(i)}" for i in range(100)]
    (folder / "test.source").write_text("\n".join(articles) + "\n", encoding="utf-8")
    for system, relative in SYSTEM_FILES.items():
        lines = [f"{system} summary {i}" for i in range(100)]
        if mutate_lines is not None:
            mutate_lines(system, lines)
        (folder / relative).write_text("\n".join(lines) + "\n", encoding="utf-8")
    if with_rose:
        # RoSE drops "(CNN)", holds a different article at position 38, and swaps two articles.
        order = list(range(100))
        order[10], order[11] = 11, 10
        docs = []
        for position, i in enumerate(order):
            text = article(i) if i != 38 else "an entirely different article about horses ."
            systems = ("bart", "brio", "gpt3", "t0")
            docs.append(
                {
                    "count_id": position,
                    "example_id": f"ex{i:03d}",
                    "source": text,
                    "reference": f"reference {i}",
                    "reference_acus": [],
                    "system_outputs": {s: f"{s} {i}" for s in systems},
                    "annotations": {
                        s: {"prior": 3.0, "ref_free": 3.0, "ref_based": 3.0, "acu": 0.5, "normalized_acu": 0.4}
                        for s in systems
                    },
                }
            )
        (root / "rose").mkdir(exist_ok=True)
        (root / "rose" / "protocol-comparison-llm.json").write_text(json.dumps(docs), encoding="utf-8")
    return folder


def test_outputs_are_joined_to_references(tmp_path: Path) -> None:
    write_files(tmp_path)
    ds = load_dataset("sumllm", data_dir=tmp_path)
    assert ds.frame.shape == (1200, 6) and ds.n_contexts == 100 and ds.aspects == []
    ids = ds.context_ids()
    assert ids[10] == "ex010" and ids[11] == "ex011"  # found despite the swapped order
    assert ids[38] == "line038"
    assert ds.candidates("ex010")["references"].iloc[0] == ["reference 10"]
    assert ds.candidates("line038")["references"].iloc[0] == []
    cands = ds.candidates("ex005")
    assert cands["system"].tolist() == list(SYSTEM_FILES)
    assert cands.loc[0, "source"].startswith("(CNN)alpha5")
    assert cands.loc[4, "text"] == "gpt4 summary 5"


def test_misaligned_output_file_is_an_error(tmp_path: Path) -> None:
    folder = write_files(tmp_path, mutate_lines=lambda system, lines: lines.pop() if system == "gpt4" else None)
    with pytest.raises(DataValidationError, match=r"gpt4\.txt: expected 100 summaries .* found 99"):
        load_dataset("sumllm", data_dir=tmp_path)
    assert folder.exists()


def test_empty_summary_line_is_an_error(tmp_path: Path) -> None:
    write_files(tmp_path, mutate_lines=lambda system, lines: lines.__setitem__(17, " ") if system == "brio.gpt4" else None)
    with pytest.raises(DataValidationError, match=r"brio\.gpt4\.txt, line 18 \(ex017\): empty candidate text"):
        load_dataset("sumllm", data_dir=tmp_path)


def test_too_few_reference_matches_is_an_error(tmp_path: Path) -> None:
    write_files(tmp_path)
    source = tmp_path / "cnndm_llm_summaries_sumllm" / "test.source"
    lines = source.read_text(encoding="utf-8").split("\n")
    lines[3] = "something unrelated to any rose article ."
    source.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(DataValidationError, match=r"expected 99 articles to match .* matched 98 .* \[3, 38\]"):
        load_dataset("sumllm", data_dir=tmp_path)


def test_missing_rose_is_reported_as_such(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_files(tmp_path, with_rose=False)
    def offline(source: object) -> list[dict[str, Any]]:
        raise ConnectionError("offline")

    monkeypatch.setattr(sources, "load_hub_rows", offline)
    with pytest.raises(DataNotFoundError, match=r"(?s)'sumllm' takes its references from dataset 'rose_llm'.*protocol-comparison-llm\.json"):
        load_dataset("sumllm", data_dir=tmp_path)


def test_match_references_threshold() -> None:
    import pandas as pd

    frame = pd.DataFrame(
        {"context_id": ["a", "b"], "source": [article(1), article(2)], "references": [["ra"], ["rb"]]}
    )
    assert match_references([article(2), "nothing alike", article(1)], frame) == [("b", "rb"), None, ("a", "ra")]
