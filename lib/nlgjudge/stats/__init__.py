"""Pure numeric code for comparative assessment: numpy in, numpy / dataclasses out, no I/O, no models.

Convention: a comparison matrix ``P[i, j]`` is the probability that candidate ``i`` beats ``j`` when
``i`` is in position A (seed 000 eq. 1); NaN marks a comparison not made; the diagonal is ignored.
A decision matrix has the same layout with (possibly fractional) wins for ``i``.

Modules, one concept each:

- :mod:`~nlgjudge.stats.selection`       which comparisons to make (full, random, no-repeat, symmetric, active)
- :mod:`~nlgjudge.stats.decisions`       hard decisions (eq. 2), win ratio (eq. 6; seed 002 eq. 4), ranks
- :mod:`~nlgjudge.stats.bias`            P(A)/P(B) (eq. 8), exact debiasing threshold and weight (eq. 9-10)
- :mod:`~nlgjudge.stats.max_likelihood`  maximum-likelihood ranking (Appendix B, eq. 11-13)
- :mod:`~nlgjudge.stats.bradley_terry`   Bradley-Terry scores via choix, bootstrap intervals
- :mod:`~nlgjudge.stats.elo`             Elo by stochastic gradient ascent (seed 004 Annex)
- :mod:`~nlgjudge.stats.intervals`       the t interval of a mean over contexts, and its paired version
- :mod:`~nlgjudge.stats.claims`          the claim rule (four verdicts) and what more data would settle
- :mod:`~nlgjudge.stats.likelihood`      seed 003 eq. 2: token log-likelihoods -> one score
- :mod:`~nlgjudge.stats.correlation`     correlation with human scores: summary- and system-level, length bias
- :mod:`~nlgjudge.stats.agreement`       pairwise accuracy (Tables 7, 10), self-consistency (Table 8), Cohen's kappa
- :mod:`~nlgjudge.stats.bootstrap`       bootstrap intervals for a correlation or a mean (the clustered one: estimate +- t x SE)
- :mod:`~nlgjudge.stats.normalisation`   min-max normalisation per evaluator (seed 003 eq. 4)
- :mod:`~nlgjudge.stats.regression`      binned, count-weighted regression on the ROUGE difference (seed 004 Fig. 5)
- :mod:`~nlgjudge.stats.subset_curves`   Spearman against the number of comparisons (Fig. 4-5)
"""

from nlgjudge.stats.agreement import (
    PairwiseAccuracy,
    SelfConsistency,
    cohen_kappa,
    pairwise_accuracy,
    self_consistency,
    self_consistency_from_probs,
)
from nlgjudge.stats.bias import (
    DebiasThreshold,
    PositionalBias,
    alpha_from_threshold,
    debias_threshold,
    debias_thresholds_batch,
    debiased_decisions,
    grid_debias_threshold,
    positional_bias,
    reweight_probabilities,
    threshold_from_alpha,
)
from nlgjudge.stats.bootstrap import (
    ConfidenceInterval,
    bootstrap_clustered_correlation_ci,
    bootstrap_correlation_ci,
    bootstrap_mean_ci,
)
from nlgjudge.stats.bradley_terry import (
    BradleyTerryFit,
    bradley_terry_bootstrap,
    bradley_terry_from_wins,
    bradley_terry_scores,
    win_matrix,
)
from nlgjudge.stats.claims import (
    CONTRADICTED,
    NOT_RESOLVED,
    NOT_TESTED,
    SUPPORTED,
    VERDICTS,
    ClaimVerdict,
    PairEvidence,
    claim_verdict,
    contexts_needed,
    contexts_needed_from_values,
    ordering_verdict,
    units_needed_from_interval,
    verdict_from_test,
)
from nlgjudge.stats.correlation import (
    ContextCorrelation,
    correlation,
    correlation_test,
    length_score_spearman,
    spearman_rows,
    summary_level_correlation,
    system_level_correlation,
)
from nlgjudge.stats.decisions import (
    comparison_mask,
    hard_decisions,
    ranks_from_scores,
    win_counts,
    win_ratio,
    win_ratio_full_matrix,
)
from nlgjudge.stats.elo import (
    EloResult,
    design_matrix,
    elo_expected_score,
    elo_from_pairs,
    elo_sga,
    logistic_as_printed,
    logistic_consistent,
    outcomes_from_codes,
    step_schedule,
)
from nlgjudge.stats.intervals import MeanInterval, mean_interval, paired_difference_interval
from nlgjudge.stats.likelihood import weighted_loglikelihood
from nlgjudge.stats.max_likelihood import (
    LikelihoodRanking,
    agreement_from_consistency,
    max_likelihood_ranking,
    max_likelihood_ranking_hard,
    ranking_log_likelihood,
)
from nlgjudge.stats.normalisation import min_max_normalise
from nlgjudge.stats.regression import BinnedRegression, binned_regression
from nlgjudge.stats.selection import (
    STRATEGIES,
    max_budget,
    restrict_to,
    select_comparisons,
    selection_mask,
    selection_orders,
    valid_budgets,
)
from nlgjudge.stats.subset_curves import (
    StrategyComparison,
    SubsetCurve,
    SubsetCurves,
    SubsetDemo,
    SyntheticJudge,
    compare_strategies,
    subset_curves,
    synthetic_judge,
    synthetic_subset_demo,
)

__all__ = [
    "CONTRADICTED",
    "NOT_RESOLVED",
    "NOT_TESTED",
    "SUPPORTED",
    "VERDICTS",
    "ClaimVerdict",
    "PairEvidence",
    "claim_verdict",
    "contexts_needed",
    "contexts_needed_from_values",
    "ordering_verdict",
    "units_needed_from_interval",
    "verdict_from_test",
    "STRATEGIES",
    "BinnedRegression",
    "BradleyTerryFit",
    "ConfidenceInterval",
    "ContextCorrelation",
    "DebiasThreshold",
    "EloResult",
    "LikelihoodRanking",
    "PairwiseAccuracy",
    "PositionalBias",
    "SelfConsistency",
    "StrategyComparison",
    "SubsetCurve",
    "SubsetCurves",
    "SubsetDemo",
    "SyntheticJudge",
    "agreement_from_consistency",
    "alpha_from_threshold",
    "binned_regression",
    "bootstrap_clustered_correlation_ci",
    "bootstrap_correlation_ci",
    "bootstrap_mean_ci",
    "bradley_terry_bootstrap",
    "bradley_terry_from_wins",
    "bradley_terry_scores",
    "cohen_kappa",
    "compare_strategies",
    "comparison_mask",
    "correlation",
    "correlation_test",
    "debias_threshold",
    "debias_thresholds_batch",
    "debiased_decisions",
    "design_matrix",
    "elo_expected_score",
    "elo_from_pairs",
    "elo_sga",
    "grid_debias_threshold",
    "hard_decisions",
    "length_score_spearman",
    "logistic_as_printed",
    "logistic_consistent",
    "max_budget",
    "max_likelihood_ranking",
    "max_likelihood_ranking_hard",
    "min_max_normalise",
    "outcomes_from_codes",
    "pairwise_accuracy",
    "positional_bias",
    "ranking_log_likelihood",
    "ranks_from_scores",
    "restrict_to",
    "reweight_probabilities",
    "select_comparisons",
    "selection_mask",
    "selection_orders",
    "self_consistency",
    "self_consistency_from_probs",
    "spearman_rows",
    "step_schedule",
    "subset_curves",
    "summary_level_correlation",
    "synthetic_judge",
    "synthetic_subset_demo",
    "system_level_correlation",
    "threshold_from_alpha",
    "valid_budgets",
    "win_counts",
    "win_matrix",
    "win_ratio",
    "weighted_loglikelihood",
    "MeanInterval",
    "mean_interval",
    "paired_difference_interval",
    "win_ratio_full_matrix",
]
