"""Seed 003's per-family generation and likelihood prompts (Tables 4-6)."""

from __future__ import annotations

import pytest

from nlgjudge.prompts.narcissism import (
    FamilyPrompt,
    family_prompt,
    family_prompts,
    generation_prompt,
    likelihood_condition,
)


def test_each_setting_lists_the_twenty_models() -> None:
    for setting in ("generation", "reference_free", "reference_based"):
        prompts = family_prompts(setting)
        assert len(prompts) == 20
        assert list(prompts)[0] == "BART-Base" and list(prompts)[-1] == "Cohere-Command"


def test_generation_prompts_by_family() -> None:
    doc = "The council approved a park."
    assert generation_prompt(doc, family_prompt("BART-Base", "generation")) == "Summarize: The council approved a park."
    assert generation_prompt(doc, family_prompt("GPT2", "generation")) == "The council approved a park. TL;DR:"
    assert generation_prompt(doc, family_prompt("BART-Large-CNN", "generation")) == doc
    assert generation_prompt(doc, family_prompt("Cohere-Command", "generation")).startswith("Write a concise summarization: ")
    assert generation_prompt(doc, family_prompt("FLANT5-XL", "generation"), joiner="\n") == doc + "\nTL;DR:"


def test_likelihood_conditions_by_setting() -> None:
    ref = "A park was approved."
    assert likelihood_condition(ref, family_prompt("BART-Large", "reference_based")) == "A park was approved. in other words:"
    assert likelihood_condition(ref, family_prompt("T5-Base", "reference_based")) == "Paraphrase: A park was approved."
    assert likelihood_condition(ref, family_prompt("GPT2-Large", "reference_based")) == "A park was approved. Paraphrase the sentence:"
    assert likelihood_condition(ref, family_prompt("T5-Small", "reference_free")) == "Summarize: A park was approved."


def test_misuse_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown setting"):
        family_prompts("zero_shot")  # type: ignore[arg-type]
    with pytest.raises(KeyError, match="no generation prompt for model 'GPT5'"):
        family_prompt("GPT5", "generation")
    with pytest.raises(ValueError, match="Table 4"):
        generation_prompt("x", family_prompt("GPT2", "reference_free"))
    with pytest.raises(ValueError, match="Table 5 or 6"):
        likelihood_condition("x", family_prompt("GPT2", "generation"))
    with pytest.raises(ValueError, match="empty"):
        FamilyPrompt("m", "c", "", "TL;DR:", "generation", 4).wrap("  ")
