"""Prompt styles: packaged models' styles come from the model registry, known without loading."""

from __future__ import annotations

import pytest

from nlgjudge.models import PACKAGED_MODELS, resolve_model
from nlgjudge.prompts import PromptEnding
from nlgjudge.studies.prompting import PROMPT_STYLES, answer_end, classify_request, prompt_style


def test_every_packaged_generator_declares_a_style_and_an_answer_end() -> None:
    for name, spec in PACKAGED_MODELS.items():
        if spec.kind == "causal":
            assert spec.prompt_style in PROMPT_STYLES and spec.answer_end, name
            assert spec.family, name
        else:
            assert spec.prompt_style is None, name


@pytest.mark.parametrize(
    ("name", "style", "end"),
    [
        ("qwen2.5-coder-1.5b-instruct", "chat", "<|im_end|>"),
        ("smollm2-135m-instruct", "chat", "<|im_end|>"),
        ("gemma-3-270m", "plain", "\n"),
    ],
)
def test_packaged_styles_are_read_from_the_registry_without_loading(name: str, style: str, end: str) -> None:
    handle = resolve_model(name)
    assert prompt_style(handle) == style
    assert answer_end(handle, style) == end
    assert not handle.is_loaded


def test_an_explicit_style_wins_and_an_unknown_one_is_an_error() -> None:
    handle = resolve_model("gemma-3-270m")
    assert prompt_style(handle, "chat") == "chat"
    with pytest.raises(ValueError, match="unknown prompt style 'instruct'"):
        prompt_style(handle, "instruct")


def test_each_style_builds_its_request_shape() -> None:
    ending = PromptEnding(name="t", labels=(" A", " B"), decisions=("A", "B"), answer_prefix="Summary")
    chat = classify_request("Which?", ending, "chat", {})
    assert chat.prompt[-1]["role"] == "user" and chat.response_prefix == "Summary"
    plain = classify_request("Which?", ending, "plain", {})
    assert isinstance(plain.prompt, str) and plain.prompt.endswith("Summary")
    with pytest.raises(ValueError, match="unknown prompt style"):
        classify_request("Which?", ending, "json", {})
