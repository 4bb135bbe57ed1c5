from __future__ import annotations

import numpy as np
import pytest

from nlgjudge.engine.likelihood import Affixes, scoring_condition, seed003_affixes, weighted_loglikelihood


def test_equal_weights_give_the_mean_and_explicit_weights_the_dot_product():
    values = [-1.0, -2.0, -4.0]
    assert weighted_loglikelihood(values) == pytest.approx(-7 / 3)
    assert weighted_loglikelihood(values, [1, 1, 1]) == pytest.approx(-7.0)
    assert weighted_loglikelihood(np.array(values), [0.5, 0.5, 0]) == pytest.approx(-1.5)
    with pytest.raises(ValueError):
        weighted_loglikelihood(values, [1, 1])
    with pytest.raises(ValueError):
        weighted_loglikelihood([])


def test_seed003_affixes_tables_5_and_6():
    assert seed003_affixes("GPT2", reference_based=False) == Affixes(suffix="TL;DR:")
    assert seed003_affixes("t5", reference_based=True) == Affixes(prefix="Paraphrase:")
    assert seed003_affixes("bart", reference_based=True) == Affixes(suffix="in other words:")
    assert scoring_condition("The text.", Affixes(prefix="Summarize:")) == "Summarize: The text."
    assert scoring_condition("The text.", Affixes(suffix="TL;DR:")) == "The text. TL;DR:"
    with pytest.raises(KeyError):
        seed003_affixes("pegasus", reference_based=False)
