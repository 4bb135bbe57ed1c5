"""The claim rule (four verdicts) and 'what more data would settle', against known answers."""

import math

import numpy as np
import pytest

from nlgjudge.stats.claims import (
    CONTRADICTED,
    NOT_RESOLVED,
    NOT_TESTED,
    SUPPORTED,
    VERDICTS,
    PairEvidence,
    claim_verdict,
    contexts_needed,
    contexts_needed_from_values,
    ordering_verdict,
    verdict_from_test,
    t_test_power,
    units_needed_from_interval,
)


def test_the_four_verdicts_of_an_above_claim() -> None:
    assert claim_verdict(5.0, 1.0, 9.0, 16).verdict == SUPPORTED
    assert claim_verdict(-5.0, -9.0, -1.0, 16).verdict == CONTRADICTED
    straddle = claim_verdict(2.0, -1.0, 5.0, 16)
    assert straddle.verdict == NOT_RESOLVED and "contains 0" in straddle.reason
    few = claim_verdict(5.0, 1.0, 9.0, 2, min_n=3)
    assert few.verdict == NOT_TESTED and few.reason == "n = 2 < 3"
    assert set(VERDICTS) == {SUPPORTED, CONTRADICTED, NOT_RESOLVED, NOT_TESTED}


def test_a_below_claim_mirrors_an_above_claim_and_the_threshold_counts() -> None:
    assert claim_verdict(0.1, 0.0, 0.3, 10, threshold=0.4, direction="below").verdict == SUPPORTED
    assert claim_verdict(0.6, 0.5, 0.7, 10, threshold=0.4, direction="below").verdict == CONTRADICTED
    assert claim_verdict(0.6, 0.5, 0.7, 10, threshold=0.4, direction="above").verdict == SUPPORTED
    # an interval that touches the threshold does not exclude it
    assert claim_verdict(0.6, 0.4, 0.7, 10, threshold=0.4, direction="above").verdict == NOT_RESOLVED


def test_a_degenerate_judge_is_not_tested_whatever_its_interval() -> None:
    # the comparative chapter's case: a gap 'below 0' from a ranking that tied every candidate
    v = claim_verdict(-19.2, -32.1, -6.3, 32, degenerate="comparative ranking ties every candidate in 31 of 32 cells")
    assert v.verdict == NOT_TESTED and "ties every candidate" in v.reason and not v.tested


def test_a_missing_interval_is_not_tested() -> None:
    assert claim_verdict(0.3, math.nan, math.nan, 10).verdict == NOT_TESTED
    assert claim_verdict(math.nan, 0.1, 0.2, 10).verdict == NOT_TESTED


def test_near_claims_are_equivalence_tests_against_the_margin() -> None:
    """'As bad as random' is kappa within 0 +- 0.2, read by two one-sided tests: an interval that
    excludes 0 but lies inside the margin supports it (the margin is what 'near' means; a point
    null would call any nonzero kappa 'contradicted' once the data grow)."""
    chance = claim_verdict(-0.02, -0.09, 0.05, 99, direction="near", margin=0.2)
    assert chance.verdict == SUPPORTED
    small_disagreement = claim_verdict(-0.12, -0.19, -0.04, 99, direction="near", margin=0.2)
    assert small_disagreement.verdict == SUPPORTED and "inside 0 +- 0.2" in small_disagreement.reason
    straddling = claim_verdict(0.15, 0.05, 0.25, 99, direction="near", margin=0.2)
    assert straddling.verdict == NOT_RESOLVED and "straddles an end of 0 +- 0.2" in straddling.reason
    beyond = claim_verdict(-0.35, -0.45, -0.25, 99, direction="near", margin=0.2)
    assert beyond.verdict == CONTRADICTED and "below 0 +- 0.2" in beyond.reason
    wide = claim_verdict(0.05, -0.3, 0.4, 99, direction="near", margin=0.2)
    assert wide.verdict == NOT_RESOLVED


def test_near_and_within_are_one_rule() -> None:
    for interval in [(-0.19, -0.04), (0.05, 0.25), (-0.45, -0.25), (-0.3, 0.4), (0.21, 0.3)]:
        mid = sum(interval) / 2
        near = claim_verdict(mid, *interval, 30, direction="near", margin=0.2)
        within = claim_verdict(mid, *interval, 30, direction="within", margin=0.2)
        assert near == within, interval


def test_bad_settings_fail_loudly() -> None:
    with pytest.raises(ValueError, match="direction"):
        claim_verdict(1, 0, 2, 5, direction="sideways")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="margin"):
        claim_verdict(1, 0, 2, 5, direction="near")
    with pytest.raises(ValueError, match="'within' claim needs a positive"):
        claim_verdict(1, 0, 2, 5, direction="within")
    with pytest.raises(ValueError, match="margin goes only"):
        claim_verdict(1, 0, 2, 5, margin=0.1)
    with pytest.raises(ValueError, match="low end"):
        claim_verdict(1, 2, 0, 5)


def test_an_ordering_claim_needs_every_pair_resolved() -> None:
    resolved = PairEvidence("GPT-4", "BRIO", 0.8, 0.3, 1.3, 42)
    open_pair = PairEvidence("GPT-3", "BRIO", 0.2, -0.3, 0.7, 42)
    against = PairEvidence("ChatGPT", "BRIO", -0.6, -1.0, -0.2, 42)
    assert ordering_verdict([resolved]).verdict == SUPPORTED
    v = ordering_verdict([resolved, open_pair])
    assert v.verdict == NOT_RESOLVED and "GPT-3 vs BRIO" in v.reason
    v = ordering_verdict([resolved, open_pair, against])
    assert v.verdict == CONTRADICTED and "BRIO above ChatGPT" in v.reason
    assert ordering_verdict([]).verdict == NOT_TESTED
    assert ordering_verdict([PairEvidence("a", "b", 1.0, 0.5, 1.5, 2)]).verdict == NOT_TESTED
    # a pair below 0 only just (p ~ 0.04) among four: not after Holm's correction, so a flag, not a contradiction
    weak_against = PairEvidence("GPT-3", "BART", -0.4, -0.78, -0.02, 42)
    v = ordering_verdict([resolved, open_pair, weak_against, open_pair])
    assert v.verdict == NOT_RESOLVED and "a flag, not after Holm's correction over the 4 pairs: BART above GPT-3" in v.reason
    every = ordering_verdict([resolved, resolved])
    assert every.verdict == SUPPORTED and "no correction applies to it; a pair against it would need Holm's correction over the 2 pairs" in every.reason


@pytest.mark.parametrize(("effect", "expected"), [(0.2, 199), (0.5, 34), (0.8, 15), (1.0, 10)])
def test_contexts_needed_matches_the_textbook_paired_t_sample_sizes(effect: float, expected: int) -> None:
    # G*Power / Cohen (1988): one-sample t, two-sided alpha 0.05, power 0.8
    assert contexts_needed(effect, 1.0) == expected
    assert contexts_needed(3.0 + effect * 2.0, 2.0, threshold=3.0) == expected
    assert t_test_power(effect, expected) >= 0.8 > t_test_power(effect, expected - 1)


def test_contexts_needed_edge_cases() -> None:
    assert contexts_needed(0.0, 1.0) is None  # no effect: no n resolves it
    assert contexts_needed(1e-4, 1.0) is None  # out of reach
    assert contexts_needed(1.0, 0.0) == 2
    assert contexts_needed_from_values([1.0, 2.0, 3.0, 0.5, 1.5]) == contexts_needed(1.6, 0.9617692030835673)
    with pytest.raises(ValueError, match="two finite"):
        contexts_needed_from_values([1.0])


def test_units_needed_from_an_interval_scales_the_standard_error() -> None:
    # estimate 2 standard errors from 0 at n = 50 needs (2.80 / 2)^2 = 1.96 times the units
    se = 0.1
    n = units_needed_from_interval(0.2, 0.2 - 1.959964 * se, 0.2 + 1.959964 * se, 50)
    assert n == math.ceil(50 * (2.8015852 / 2.0) ** 2)
    assert units_needed_from_interval(0.0, -0.1, 0.1, 50) is None


def test_a_test_without_an_interval_reads_its_p_value_as_the_interval() -> None:
    assert verdict_from_test(0.4, 0.01, 22).verdict == SUPPORTED
    assert verdict_from_test(-0.4, 0.01, 22).verdict == CONTRADICTED
    assert verdict_from_test(-0.4, 0.01, 22, direction="below").verdict == SUPPORTED
    assert verdict_from_test(0.4, 0.2, 22).verdict == NOT_RESOLVED
    assert verdict_from_test(0.4, 0.01, 2).verdict == NOT_TESTED
    assert verdict_from_test(float("nan"), float("nan"), 22).verdict == NOT_TESTED


def test_an_interval_that_still_contains_the_threshold_needs_more_units_than_now() -> None:
    # skewed: the estimate is far from 0 in standard errors, but the interval's low end reaches below 0
    assert units_needed_from_interval(0.5, -0.01, 0.6, 40) == 41


def test_a_band_claim_is_contradicted_only_by_an_interval_wholly_outside_the_band() -> None:
    """'About 1 point': no-repeat minus symmetric within 1 +- 1. An interval overlapping the band is not
    a contradiction, whichever name the equivalence claim goes by."""
    band = dict(threshold=1.0, direction="within", margin=1.0)
    assert claim_verdict(1.2, 0.5, 1.8, 30, **band).verdict == SUPPORTED
    assert claim_verdict(2.9, 1.3, 4.5, 30, **band).verdict == NOT_RESOLVED
    assert claim_verdict(1.5, 1.1, 1.9, 30, **band).verdict == SUPPORTED
    assert claim_verdict(-3.9, -6.0, -1.7, 16, **band).verdict == CONTRADICTED
    assert claim_verdict(4.0, 2.5, 5.5, 16, **band).verdict == CONTRADICTED
    assert claim_verdict(2.9, 1.3, 4.5, 30, threshold=1.0, direction="near", margin=1.0).verdict == NOT_RESOLVED


def test_family_verdicts_turn_rows_that_fail_holm_into_flags_and_leave_untested_rows_out() -> None:
    from nlgjudge.stats.claims import family_verdicts

    # 0.01 and 0.04 survive Holm over two tests; a third (untested, NaN) row would not change that
    assert family_verdicts(["supported", "contradicted", "not tested"], [0.01, 0.04, math.nan]) == [
        "supported", "contradicted", "not tested"]
    # with a third real test at p = 0.5 the family is three: 0.04 > 0.05 / 2 after 0.01 is rejected
    assert family_verdicts(["supported", "contradicted", "not resolved"], [0.01, 0.04, 0.5]) == [
        "supported", "not resolved", "not resolved"]
    assert family_verdicts([], []) == []
    with pytest.raises(ValueError, match="one p-value per row"):
        family_verdicts(["supported"], [])


def test_an_interval_end_at_the_boundary_is_borderline_whichever_side_it_falls() -> None:
    inside = claim_verdict(-0.12, -0.198, -0.04, 99, direction="near", margin=0.2, borderline=0.005)
    outside = claim_verdict(-0.12, -0.203, -0.04, 99, direction="near", margin=0.2, borderline=0.005)
    assert inside.verdict == outside.verdict == NOT_RESOLVED and inside.reason.startswith("borderline")
    assert claim_verdict(-0.12, -0.19, -0.04, 99, direction="near", margin=0.2, borderline=0.005).verdict == SUPPORTED
    assert claim_verdict(0.3, 0.001, 0.6, 30, borderline=0.005).verdict == NOT_RESOLVED  # directional too
    assert claim_verdict(0.3, 0.01, 0.6, 30, borderline=0.005).verdict == SUPPORTED


def test_equivalence_units_needed_put_the_interval_inside_the_margin_with_the_stated_power() -> None:
    from scipy import stats as scipy_stats

    from nlgjudge.stats.claims import equivalence_units_needed

    n = equivalence_units_needed(10.0, 5.0)
    # the smallest n whose t interval half-width leaves z(0.9) standard errors to the band's end
    assert 5.0 * np.sqrt(n) / 10.0 >= scipy_stats.t.ppf(0.975, n - 1) + scipy_stats.norm.ppf(0.9)
    assert 5.0 * np.sqrt(n - 1) / 10.0 < scipy_stats.t.ppf(0.975, n - 2) + scipy_stats.norm.ppf(0.9)
    assert 40 < n < 50  # about (3.24 x 2)^2 = 42, a little more for the t quantile
    # simulated: a true change of 0 falls inside +-5 at that n about 80% of the time
    rng = np.random.default_rng(0)
    draws = rng.normal(0.0, 10.0, size=(4000, n))
    half = scipy_stats.t.ppf(0.975, n - 1) * draws.std(axis=1, ddof=1) / np.sqrt(n)
    inside = (np.abs(draws.mean(axis=1)) + half < 5.0).mean()
    assert 0.75 < inside < 0.88
    assert equivalence_units_needed(0.0, 5.0) == 2 and equivalence_units_needed(1e6, 1.0) is None
    with pytest.raises(ValueError, match="margin"):
        equivalence_units_needed(1.0, 0.0)


def test_systems_needed_for_a_kendall_tau_follow_its_null_variance() -> None:
    """tau = -0.5 against 0: sd0(n)^2 = 2 (2n + 5) / (9 n (n - 1)); 0.5 / sd0 first reaches
    z(0.975) + z(0.8) = 2.8016 at n = 18 (at 17 it is 2.8011, just short)."""
    import math

    from nlgjudge.stats.claims import kendall_units_needed

    def ratio(n: int) -> float:
        return 0.5 / math.sqrt(2 * (2 * n + 5) / (9 * n * (n - 1)))

    assert ratio(17) < 2.8016 <= ratio(18)
    assert kendall_units_needed(-0.5) == kendall_units_needed(0.5) == 18
    assert kendall_units_needed(0.2) > kendall_units_needed(0.5)
    assert kendall_units_needed(0.0) is None
    with pytest.raises(ValueError, match="lies in"):
        kendall_units_needed(1.5)


def test_units_needed_for_a_correlation_follow_fishers_z() -> None:
    """r = 0.3 against 0: (2.8016 / atanh 0.3)^2 = 81.9; Spearman's 1.06 x that + 3 = 89.8 -> 90; Pearson's 84.9 -> 85."""
    from nlgjudge.stats.claims import correlation_units_needed

    assert correlation_units_needed(0.3) == correlation_units_needed(-0.3) == 90
    assert correlation_units_needed(0.3, spearman=False) == 85
    assert correlation_units_needed(0.0) is None
    with pytest.raises(ValueError, match="lies in"):
        correlation_units_needed(1.0)
