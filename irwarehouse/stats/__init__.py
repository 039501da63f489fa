"""Significance tests, multiple comparisons and rank correlations over score matrices.

A package whose modules name its parts: ``pairs`` (the result over every run pair and the
shared helpers), ``paired`` (t, Wilcoxon), ``bootstrap``, ``permutation`` (randomization,
Tukey HSD), ``corrections`` (the registry of multiple-comparison corrections),
``discrimination`` (discriminative power, agreement with a reference test), ``groups``
(letter groups), ``correlations``, ``intervals``, ``effects`` (effect sizes, the noncentral
t) and ``agreement`` (two judgment sets).  This module re-exports their public names.

Everything here works on a per-topic score matrix ``X`` of shape ``(n_runs, n_topics)``
(runs x topics, float64, the same topics for every run) and is vectorized over *all* run
pairs at once: 129 runs give 8,256 pairs, and no function loops over pairs in Python.
The randomization and Tukey tests loop over chunks of replicates, each chunk vectorized
over every pair, with the chunk size chosen so that working memory stays around a few
hundred MB; the bootstrap loops over blocks of pairs, each vectorized over all replicates,
so that its memory does not grow with the number of pairs (1,290 runs = 831,405 pairs).

Conventions (SPEC section 5)
----------------------------
Pairs
    ``pair_indices(n)`` lists the pairs ``i < j`` in row-major order (0,1), (0,2), ...,
    (1,2), ...  For every test, ``mean_diff = mean_t(X[i, t] - X[j, t])``: a positive
    difference favours run ``i``.

p-values
    All tests are two-tailed.  Monte Carlo p-values are the plain fraction
    ``#{null statistic >= observed} / B`` used by the SPEC (no ``+1`` smoothing), so a
    p-value of 0 means "below 1/B".  A null statistic counts as ``>=`` the observed one when
    it is larger or equal up to floating-point rounding (relative tolerance ``1e-9``): the
    same number computed along two summation orders must count as a tie.

Undefined pairs
    A pair whose per-topic differences have zero variance (all differences equal, up to
    rounding: standard deviation <= 1e-10 x the magnitude of the two runs' scores) has no
    t statistic.  For the paired t-test and the bootstrap such a pair is *undefined*: its
    statistic and p-value are NaN.  The Wilcoxon test is undefined when every difference is
    zero.  Undefined pairs are never significant (``NaN < alpha`` is False), are counted
    separately by ``discriminative_power`` and are left out of the family size of
    ``adjust``.  The randomization and Tukey tests are defined for every pair (a pair with
    identical scores gets p = 1).

Random numbers
    Every Monte Carlo test takes a ``seed`` and is deterministic given it
    (``numpy.random.default_rng(seed)``); results do not depend on the chunk size.
    - Bootstrap: all indices are drawn at once, ``rng.integers(0, n, size=(B, n))``;
      replicate ``b`` resamples topics ``idx[b]``, and *the same resampled topics are used
      for every pair* in replicate ``b`` (the standard paired-topic bootstrap over a
      matrix; it also makes the test a matrix product).
    - Randomization: ``rng.integers(0, 2, size=(B, n))``; replicate ``b`` flips the sign of
      topic ``t``'s difference when the draw is 1, for every pair at once.
    - Tukey HSD: replicate ``b`` draws ``rng.random((n, n_runs))`` (in replicate order) and
      topic ``t``'s scores are permuted across runs by ``argsort`` of row ``t``.

Bootstrap (Sakai 2006)
    ``z`` = per-topic differences, ``t(Z) = mean(z) / (sd(z) / sqrt(n))`` with ``sd`` using
    ``n - 1``; ``w = z - mean(z)``; ``t*_b`` is the same statistic on the resampled ``w``.
    A replicate whose resampled values are all equal (``sd*_b = 0`` up to rounding) gets
    ``t*_b = 0`` if its mean is 0 and ``t*_b = +/-inf`` otherwise (the limit of
    ``mean / (sd / sqrt(n))`` as ``sd -> 0``); such replicates occur when two runs differ on
    only a few topics.  The estimated difference required for significance at ``alpha`` is,
    per pair, ``|t*_b| * sd*_b / sqrt(n)`` (= ``|mean*_b|``) of the replicate whose ``|t*_b|``
    is the ``k``-th largest, ``k = max(1, round(B * alpha))``; among replicates whose
    ``|t*_b|`` are equal (up to the relative tolerance ``1e-9``, as for the p-value: on
    grid-valued scores such as P@10 many replicates tie in exact arithmetic) the one with
    the larger ``|mean*_b|`` ranks higher.

Rank correlations
    System orderings are by score, higher = better = top rank.  Kendall's tau-b (ties) and
    tau-a are computed exactly from concordant/discordant pair counts (tau-b equals
    ``scipy.stats.kendalltau``).  tau_AP and RBO are defined on strict rankings; with ties
    we report their *expected value when ties are broken uniformly at random*, independently
    in each list.  For tau_AP with ties only in the second list this is Urbano & Marrero's
    (2017) tau_AP,a; with no ties both reduce to the published definitions.  A consequence:
    two identical rankings *with ties* give tau_AP < 1 and RBO < 1 (tau-b gives 1).

Agreement of two judgment sets
    :func:`agreement` takes confusion matrices of document counts (any leading shape: one
    per topic, one per bootstrap sample) and gives Cohen's kappa on the binary labels,
    weighted kappa on the grades and Krippendorff's alpha (nominal, ordinal) for each at
    once; :func:`agreement_intervals` resamples topics; :func:`group_mean_test` tests the
    mean of each group of items (a team's rank shifts) against random groups of its size.
"""

from .agreement import (
    AGREEMENT_STATISTICS, agreement, agreement_intervals, competition_ranks, group_mean_test,
    kendall_tau_top, ordinal_distances,
)
from .bootstrap import estimated_difference_summary, paired_bootstrap
from .corrections import CORRECTIONS, Correction, adjust, correction
from .correlations import (
    PVALUE_STATISTICS, _concordance, kendall_tau, kendall_tau_many, pearson, pvalue_correlation_matrix,
    pvalue_order_tau, rank_correlation_matrix, rank_correlations, rbo, rbo_many, row_means, tau_ap,
    tau_ap_many,
)
from .discrimination import compare_to_reference, discriminative_power
from .effects import (
    _noncentrality_bracketed, dz_interval, effect_sizes, nct_cdf, noncentrality, residual_variance,
)
from .groups import MAX_GROUPS, letter_groups
from .intervals import diff_ci, mean_ci, t_interval_of_pairs
from .paired import paired_t, wilcoxon
from .pairs import CHUNK_ELEMENTS, PairResult, Progress, pair_indices, pair_moments, rng_of
from .permutation import randomization, tukey_hsd

__all__ = [
    "PairResult",
    "pair_indices",
    "paired_t",
    "paired_bootstrap",
    "estimated_difference_summary",
    "randomization",
    "wilcoxon",
    "tukey_hsd",
    "CORRECTIONS",
    "Correction",
    "correction",
    "adjust",
    "discriminative_power",
    "compare_to_reference",
    "kendall_tau",
    "tau_ap",
    "rbo",
    "rbo_many",
    "pearson",
    "row_means",
    "rank_correlations",
    "rank_correlation_matrix",
    "tau_ap_many",
    "pvalue_order_tau",
    "pvalue_correlation_matrix",
    "kendall_tau_many",
    "mean_ci",
    "diff_ci",
    "agreement",
    "agreement_intervals",
    "ordinal_distances",
    "competition_ranks",
    "kendall_tau_top",
    "group_mean_test",
]
