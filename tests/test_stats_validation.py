"""The shared input checks of nlgjudge.stats (every public function relies on them)."""

import numpy as np
import pytest
from nlgjudge.stats import _validation as check


@pytest.mark.parametrize("value", ["AB", b"AB", np.array("AB"), np.str_("AB")])
def test_a_single_string_is_not_a_sequence(value: object) -> None:
    with pytest.raises(TypeError, match="labels must be a sequence of labels.*not the single string"):
        check.not_text(value, "labels")


@pytest.mark.parametrize("value", [["A", "B"], np.array(["A", "B"]), ("AB",), [0, 1]])
def test_real_sequences_pass(value: object) -> None:
    check.not_text(value, "labels")


def test_integer_accepts_whole_numbers_only() -> None:
    assert check.integer(np.int64(3), "n") == 3 and type(check.integer(np.int64(3), "n")) is int
    for bad in (2.0, 2.5, True, "3", None):
        with pytest.raises(TypeError, match="n must be an integer"):
            check.integer(bad, "n")
    with pytest.raises(ValueError, match="n must be at least 1; got 0"):
        check.integer(0, "n", minimum=1)


def test_real_accepts_finite_numbers_only() -> None:
    assert check.real(np.float32(0.5), "x") == 0.5 and check.real(2, "x") == 2.0
    for bad in (float("nan"), float("inf"), -float("inf")):
        with pytest.raises(ValueError, match="x must be finite"):
            check.real(bad, "x")
    for bad in ("1", True, None):
        with pytest.raises(TypeError, match="x must be a real number"):
            check.real(bad, "x")
    with pytest.raises(ValueError, match="x must be positive"):
        check.real(0.0, "x", positive=True)


def test_context_list_takes_ragged_contexts_and_rejects_the_rest() -> None:
    rows = check.context_list([[1, 2], [1, 2, 3]], "pred")
    assert [r.tolist() for r in rows] == [[1.0, 2.0], [1.0, 2.0, 3.0]]
    assert len(check.context_list(np.zeros((3, 4)), "pred")) == 3
    with pytest.raises(TypeError, match="not the single string"):
        check.context_list("12", "pred")
    with pytest.raises(TypeError, match="got float"):
        check.context_list(1.0, "pred")
    with pytest.raises(ValueError, match=r"pred\[0\] must be a 1-D array"):
        check.context_list([[[1, 2]]], "pred")
