"""Score standardization (Webber, Moffat & Zobel, SIGIR 2008; SPEC section 4).

The data and the formulas live in SQL (``sql/standardize_*.sql``):

- a **factor set** is rows of ``std_factors(factors, qrels, measure, topic, mu, sigma,
  n_ref)`` with a catalogue row in ``std_factor_sets`` and, when computed here, its reference
  runs in ``std_reference_runs``;
- ``std_z(x, mu, sigma)`` and ``std_normal_cdf(z)`` are SQL macros stored in the warehouse;
- the views ``std_scores`` / ``std_score_means`` standardize every stored score.

Python computes what SQL is bad at: the cross-collection statistics (RMSE, dRMSE, two-sample
t-tests) and the randomized experiments of the paper, vectorized over splits and samples.
There Phi is ``scipy.special.ndtr`` (the SQL macro agrees with it to ~1e-15).

Conventions (documented in the README):

- sigma is the sample standard deviation (n - 1); sigma = 0 gives z = 0 (phi = 0.5).
- A factor set needs at least two reference runs, and every topic at least two scores.
- Cross-collection false positive: Student's two-sample t-test with *equal variances*
  (``scipy.stats.ttest_ind`` default), two-tailed, p < alpha (0.05). Two samples that are
  constant and equal up to rounding give an undefined test (NaN), never a false positive.
- dRMSE = 2 RMSE / (sd(M^C) + sd(M^D)), sd over systems with n - 1.
- Percentiles use numpy's default (linear interpolation). "tau_95" is the tau that 95 % of
  the samples reach or exceed (the 5th percentile); "tau_99" the 1st percentile.
- Kendall's tau is tau-b (equal to ``scipy.stats.kendalltau``).

The package's modules name its parts: ``factors`` (factor sets computed, stored, listed),
``applying`` (scores standardized by a factor set), ``factor_files`` (export and import),
``subcollections`` (collections made of a qrels's topics), ``forms`` (raw, normalized and
standardized forms of a measure), ``comparison`` (two collections compared), ``random_splits``
and ``reference_size`` (the paper's experiments), over ``scores`` and ``shared``. The package
exports what the rest of irwarehouse uses.
"""

from __future__ import annotations

from .applying import apply_factors, standardize_frame, standardized_scores
from .comparison import ZERO_SD_RTOL, check_same_runs, compare_collections, rmse_drmse, two_sample_t
from .factor_files import (EXPORT_COLUMNS, FILE_FORMATS, REQUIRED_IMPORT_COLUMNS, export_factor_set,
                           import_factor_set)
from .factors import (compute_factors, create_factor_set, drop_factor_set, factor_set_info, factor_sets,
                      factor_summary, factors_frame, list_factor_sets)
from .forms import NORMALIZED_FORM, RAW_FORM, Form, forms_of
from .random_splits import (SPLIT_CHUNK, random_split_indices, random_splits_experiment,
                            split_statistics)
from .reference_size import phi_z, reference_size_experiment, self_standardize, standardized_means
from .scores import ensure_scores, score_matrix
from .shared import Progress, phi
from .subcollections import (COLLECTION_KIND, parent_topics, parse_topic_spec, random_half,
                             split_collection)

__all__ = [
    "COLLECTION_KIND", "EXPORT_COLUMNS", "FILE_FORMATS", "NORMALIZED_FORM", "RAW_FORM",
    "REQUIRED_IMPORT_COLUMNS", "SPLIT_CHUNK", "ZERO_SD_RTOL", "Form", "Progress", "apply_factors",
    "check_same_runs", "compare_collections", "compute_factors", "create_factor_set",
    "drop_factor_set", "ensure_scores", "export_factor_set", "factor_set_info", "factor_sets",
    "factor_summary", "factors_frame", "forms_of", "import_factor_set", "list_factor_sets",
    "parent_topics", "parse_topic_spec", "phi", "phi_z", "random_half", "random_split_indices",
    "random_splits_experiment", "reference_size_experiment", "rmse_drmse", "score_matrix",
    "self_standardize", "split_collection", "split_statistics", "standardize_frame",
    "standardized_means", "standardized_scores", "two_sample_t",
]
