"""Discriminative power of a test, and a test's decisions against a reference test's.
"""

from __future__ import annotations


import numpy as np

from .pairs import PairResult, _check_alpha, _p_of

# --------------------------------------------------------------------------------------
# Discriminative power and agreement with a reference
# --------------------------------------------------------------------------------------


def discriminative_power(result: PairResult, alpha=0.05) -> dict:
    """Counts of significant (p < alpha), not significant and undefined pairs, and
    discriminative power = significant / pairs (undefined pairs count in the denominator)."""
    alpha = _check_alpha(alpha)
    p = _p_of(result)
    pairs = int(p.size)
    undefined = int(np.isnan(p).sum())
    significant = int(np.sum(p < alpha))
    return {
        "pairs": pairs,
        "significant": significant,
        "not_significant": pairs - significant - undefined,
        "undefined": undefined,
        "discriminative_power": significant / pairs if pairs else np.nan,
    }


def compare_to_reference(result: PairResult, reference: PairResult, alpha=0.05) -> dict:
    """Agreement of a test's significance decisions with a reference condition's.

    Over the same pairs: ``tp`` significant in both, same direction (sign of the mean
    difference); ``fp`` significant here but not in the reference, *or* significant in both
    but favouring different runs; ``fn`` significant in the reference only; ``tn``
    significant in neither.  ``misses = fn``, ``false_alarms = fp`` (``opposite`` counts the
    direction disagreements included in fp).  Undefined p-values count as not significant.
    """
    alpha = _check_alpha(alpha)
    if len(result) != len(reference) or not (
        np.array_equal(result.i, reference.i) and np.array_equal(result.j, reference.j)
    ):
        raise ValueError("result and reference must cover the same run pairs in the same order")
    sig = result.p < alpha
    sig_ref = reference.p < alpha
    same_dir = np.sign(result.mean_diff) == np.sign(reference.mean_diff)
    tp = int(np.sum(sig & sig_ref & same_dir))
    opposite = int(np.sum(sig & sig_ref & ~same_dir))
    fp = int(np.sum(sig & ~sig_ref)) + opposite
    fn = int(np.sum(~sig & sig_ref))
    tn = int(np.sum(~sig & ~sig_ref))
    return {
        "pairs": len(result),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "misses": fn,
        "false_alarms": fp,
        "opposite": opposite,
        "significant": int(sig.sum()),
        "significant_reference": int(sig_ref.sum()),
    }
