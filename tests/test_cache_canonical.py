"""Canonical JSON: strict, deterministic, exact for floats."""

from __future__ import annotations

import json
import math
import struct

import numpy as np
import pytest

from nlgjudge.cache.canonical import NotJSONableError, canonical_json, loads_strict, to_json_tree


def test_keys_are_sorted_and_whitespace_removed() -> None:
    assert canonical_json({"b": 1, "a": [1, 2.5, "x"], "c": {"z": None, "y": True}}) == (
        '{"a":[1,2.5,"x"],"b":1,"c":{"y":true,"z":null}}'
    )


def test_insertion_order_does_not_matter() -> None:
    assert canonical_json({"x": 1, "y": 2}) == canonical_json({"y": 2, "x": 1})


def test_unicode_is_kept_as_utf8() -> None:
    assert canonical_json({"t": "Résumé — “quoted”"}) == '{"t":"Résumé — “quoted”"}'


def test_tuples_become_lists() -> None:
    assert canonical_json({"labels": ("A", "B")}) == '{"labels":["A","B"]}'


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_floats_are_rejected_with_their_location(bad: float) -> None:
    with pytest.raises(NotJSONableError, match=r"request\['scores'\]\[1\]"):
        canonical_json({"scores": [1.0, bad]}, where="request")


def test_non_string_keys_are_rejected_instead_of_silently_converted() -> None:
    # json.dumps would write {"1": ...} and make {1: x} collide with {"1": x}.
    with pytest.raises(NotJSONableError, match="dict key 1 of type int"):
        canonical_json({1: "a"})


@pytest.mark.parametrize("bad", [object(), {1, 2}, b"bytes", 1 + 2j])
def test_unknown_types_are_rejected(bad: object) -> None:
    with pytest.raises(NotJSONableError, match="not JSON-able"):
        canonical_json({"x": bad})


def test_numpy_values_are_converted_exactly() -> None:
    tree = to_json_tree({"probs": np.array([0.25, 0.75]), "n": np.int64(3), "p": np.float32(0.1)})
    assert tree == {"probs": [0.25, 0.75], "n": 3, "p": float(np.float32(0.1))}
    assert type(tree["n"]) is int
    with pytest.raises(NotJSONableError, match="nan"):
        to_json_tree({"probs": np.array([0.5, np.nan])})


def test_floats_round_trip_bit_for_bit() -> None:
    rng = np.random.default_rng(0)
    patterns = rng.integers(0, 2**63, size=2000, dtype=np.uint64)
    floats = [struct.unpack("<d", struct.pack("<Q", int(p)))[0] for p in patterns]
    floats = [x for x in floats if math.isfinite(x)]
    floats += [5e-324, -0.0, 0.1 + 0.2, 1 / 3, 1.7976931348623157e308, 2.2250738585072014e-308]
    back = loads_strict(canonical_json(floats))
    assert [struct.pack("<d", x) for x in back] == [struct.pack("<d", x) for x in floats]


def test_loads_strict_refuses_nan_constants() -> None:
    assert json.loads("[NaN]")[0] != json.loads("[NaN]")[0]  # plain json accepts it ...
    with pytest.raises(ValueError, match="NaN"):
        loads_strict("[NaN]")  # ... we do not
