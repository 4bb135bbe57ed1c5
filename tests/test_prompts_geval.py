"""G-Eval prompts: loading from the data directory, the derived consistency prompt, filling in."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nlgjudge.data import DataNotFoundError
from nlgjudge.prompts.geval import (
    GEVAL_FILES,
    GEvalPromptError,
    GEvalPromptsNotFoundError,
    derive_consistency_prompt,
    geval_prompt,
    load_geval_prompt,
    load_geval_prompts,
)

# A made-up multi-agent scorer file in the shape of con_scorer.txt (written for this test).
SCORER = """You will be given a text. You will then be given one summary of it.

Your task is to rate the summary on one metric, discussing with other agents.

Read carefully.

Evaluation Criteria:

Consistency (1-5) - whether the summary agrees with the text. 

Evaluation Steps:

1. Read the text.
2. Read the summary.
3. Assign a score for consistency based on the Evaluation Criteria. Tell me the reason too.
4. Discuss with the other agents.


Source Text: 

{{Document}}

Summary: 

{{Summary}}

Other Agent's Opinion:

"""

SIMPLE = """Rate it.

Evaluation Criteria:

Coherence (1-5) - structure.

Source Text:

{{Document}}

Summary:

{{Summary}}

- Coherence:"""

FLUENCY = "Fluency (1-3): grammar.\n\nSummary:\n\n{{Summary}}\n\n- Fluency (1-3):"


def _write_folder(root: Path, **overrides: str) -> Path:
    folder = root / "geval_prompts"
    folder.mkdir()
    texts = {"COH": SIMPLE, "CON": SCORER, "FLU": FLUENCY, "REL": SIMPLE.replace("Coherence", "Relevance")}
    texts.update(overrides)
    for aspect, name in GEVAL_FILES.items():
        if texts[aspect]:
            (folder / name).write_text(texts[aspect], encoding="utf-8")
    return root


def test_derived_consistency_prompt_keeps_the_single_agent_parts() -> None:
    prompt = derive_consistency_prompt(SCORER)
    assert "discussing with other agents" not in prompt
    assert "Other Agent" not in prompt and "4. Discuss" not in prompt and "Tell me the reason" not in prompt
    assert "3. Assign a score for consistency based on the Evaluation Criteria.\n" in prompt
    assert "Consistency (1-5) - whether the summary agrees with the text.\n" in prompt
    assert prompt.endswith("Source Text:\n\n{{Document}}\n\nSummary:\n\n{{Summary}}\n\n\nEvaluation Form (scores ONLY):\n\n- Consistency:")
    with pytest.raises(GEvalPromptError, match="Evaluation Steps"):
        derive_consistency_prompt("Evaluation Criteria: x")


def test_load_and_fill_from_a_folder(tmp_path: Path) -> None:
    root = _write_folder(tmp_path)
    prompts = load_geval_prompts(data_dir=root)
    assert {a: p.score_range for a, p in prompts.items()} == {"COH": (1, 5), "CON": (1, 5), "FLU": (1, 3), "REL": (1, 5)}
    assert prompts["CON"].derived and not prompts["COH"].derived
    assert not prompts["FLU"].needs_document
    filled = prompts["COH"].fill("The DOC {{Summary}}", "The SUM")
    # one pass: text inside the document is not substituted again
    assert "The DOC {{Summary}}\n\nSummary:\n\nThe SUM\n\n- Coherence:" in filled
    assert geval_prompt("FLU", "", "Short.", data_dir=root).endswith("Summary:\n\nShort.\n\n- Fluency (1-3):")
    with pytest.raises(ValueError, match="source document is empty"):
        prompts["COH"].fill(" ", "x")
    with pytest.raises(ValueError, match="summary is empty"):
        prompts["FLU"].fill("", "")


def test_missing_folder_and_file_are_clear_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NLGJUDGE_DATA_DIR", raising=False)
    with pytest.raises(GEvalPromptsNotFoundError, match="NLGJUDGE_DATA_DIR"):
        load_geval_prompt("COH")
    with pytest.raises(DataNotFoundError, match="folder 'geval_prompts' not found"):
        load_geval_prompt("COH", data_dir=tmp_path)
    root = _write_folder(tmp_path, REL="")
    with pytest.raises(GEvalPromptsNotFoundError, match="'rel_detailed.txt' is missing"):
        load_geval_prompt("REL", data_dir=root)
    with pytest.raises(ValueError, match="not 'ENG'"):
        load_geval_prompt("ENG", data_dir=root)


def test_prompt_without_score_range_or_placeholder_is_rejected(tmp_path: Path) -> None:
    root = _write_folder(tmp_path, COH="Rate it.\n\n{{Summary}}", FLU="Fluency (1-3): no placeholder")
    with pytest.raises(GEvalPromptError, match="score range"):
        load_geval_prompt("COH", data_dir=root)
    with pytest.raises(GEvalPromptError, match="placeholder"):
        load_geval_prompt("FLU", data_dir=root)


@pytest.fixture
def shared_data_dir() -> Path:
    value = os.environ.get("NLGJUDGE_DATA_DIR")
    if not value or not (Path(value) / "geval_prompts").is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail("NLGJUDGE_DATA_DIR with geval_prompts/ is required in CI")
        pytest.skip("NLGJUDGE_DATA_DIR with geval_prompts/ not set")
    return Path(value)


def test_the_real_summeval_prompts(shared_data_dir: Path) -> None:
    prompts = load_geval_prompts(shared_data_dir)
    assert {a: p.score_range for a, p in prompts.items()} == {"COH": (1, 5), "CON": (1, 5), "FLU": (1, 3), "REL": (1, 5)}
    for aspect, prompt in prompts.items():
        filled = prompt.fill("DOCUMENT TEXT", "SUMMARY TEXT")
        assert "{{" not in filled and "SUMMARY TEXT" in filled
        assert ("DOCUMENT TEXT" in filled) == (aspect != "FLU")
        assert filled.rstrip().endswith(":")
    assert prompts["CON"].template.endswith("- Consistency:")
    assert "other agents" not in prompts["CON"].template.lower()
