"""request_key: content addresses of model outputs."""

from __future__ import annotations

import hashlib

import pytest

from nlgjudge.cache import NotJSONableError, is_valid_key, request_key

REQUEST = {"prompt": "Which summary is better?\nAnswer:", "labels": ["A", "B"], "seed": 0, "temperature": 1.0}


def test_known_answer() -> None:
    # The documented construction, spelled out by hand: sha256 of sorted, whitespace-free JSON.
    text = (
        '{"fingerprint":"fp","model_id":"m","operation":"label_probs",'
        '"request":{"labels":["A","B"],"prompt":"Which summary is better?\\nAnswer:","seed":0,"temperature":1.0}}'
    )
    assert request_key("m", "fp", "label_probs", REQUEST) == hashlib.sha256(text.encode()).hexdigest()


def test_key_shape_and_validity() -> None:
    key = request_key("m", "fp", "op", REQUEST)
    assert is_valid_key(key)
    assert not is_valid_key(key.upper())
    assert not is_valid_key(key[:-1])
    assert not is_valid_key(None)


def test_dict_order_does_not_change_the_key() -> None:
    reordered = dict(reversed(list(REQUEST.items())))
    assert request_key("m", "fp", "op", reordered) == request_key("m", "fp", "op", REQUEST)


@pytest.mark.parametrize(
    "change",
    [
        {"model_id": "m2"},
        {"fingerprint": "fp2"},
        {"operation": "sample"},
        {"request": {**REQUEST, "prompt": REQUEST["prompt"] + " "}},
        {"request": {**REQUEST, "seed": 1}},
        {"request": {**REQUEST, "temperature": 1}},  # 1 and 1.0 are different decoding settings
        {"request": {**REQUEST, "labels": ["B", "A"]}},
    ],
)
def test_every_ingredient_changes_the_key(change: dict) -> None:
    base = {"model_id": "m", "fingerprint": "fp", "operation": "op", "request": REQUEST}
    assert request_key(**{**base, **change}) != request_key(**base)


def test_nan_and_non_json_requests_are_rejected_clearly() -> None:
    with pytest.raises(NotJSONableError, match=r"request\['temperature'\] is nan"):
        request_key("m", "fp", "op", {**REQUEST, "temperature": float("nan")})
    with pytest.raises(NotJSONableError, match=r"request\['stop'\] has type set"):
        request_key("m", "fp", "op", {**REQUEST, "stop": {"\n"}})
    with pytest.raises(TypeError, match="request must be a mapping"):
        request_key("m", "fp", "op", ["not", "a", "dict"])  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["model_id", "fingerprint", "operation"])
def test_empty_or_non_string_names_are_rejected(field: str) -> None:
    base = {"model_id": "m", "fingerprint": "fp", "operation": "op", "request": REQUEST}
    with pytest.raises(ValueError, match=f"{field} must not be empty"):
        request_key(**{**base, field: ""})
    with pytest.raises(TypeError, match=f"{field} must be a str"):
        request_key(**{**base, field: 3})
