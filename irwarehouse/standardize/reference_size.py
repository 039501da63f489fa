"""How many standardizing systems: rankings under factors of sampled reference runs."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import catalogue, runsets, stats
from .. import measures as ms
from ..errors import IrwError
from .factors import check_reference
from .scores import score_matrix
from .shared import Progress, listed, phi, sample_sd

def phi_z(Y: np.ndarray, mu: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """Phi((Y - mu) / sigma) per topic (the last axis); sigma = 0 gives z = 0."""
    mu, sigma = np.asarray(mu, dtype=float), np.asarray(sigma, dtype=float)
    zero = sigma == 0
    return phi(np.where(zero, 0.0, (Y - mu) / np.where(zero, 1.0, sigma)))


def self_standardize(X: np.ndarray) -> np.ndarray:
    """Phi(z) of every run (row) of X with factors from all of X's runs."""
    return phi_z(X, X.mean(axis=0), sample_sd(X, 0))


def standardized_means(Y: np.ndarray, mu: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """Mean over topics of Phi(z) of the runs ``Y`` (runs x topics) under factors mu, sigma
    (topics, or samples x topics): shape (runs,) or (samples, runs). sigma = 0 gives z = 0."""
    mu = np.asarray(mu, dtype=float)
    sigma = np.asarray(sigma, dtype=float)
    if mu.ndim == 1:
        return phi_z(Y, mu, sigma).mean(axis=1)
    return phi_z(Y[None, :, :], mu[:, None, :], sigma[:, None, :]).mean(axis=2)


def reference_size_experiment(con, qrels: str, measure, run_spec: str = "all",
                              reference: str | None = None, sizes=(2, 5, 10, 20),
                              samples: int = 1000, seed: int = 0,
                              progress: Progress = None) -> pd.DataFrame:
    """How many standardizing systems: for each n in ``sizes``, draw ``samples`` sets of n
    reference runs (without replacement), standardize the evaluated runs with their factors
    and take Kendall's tau-b between the ranking by mean Phi(z) and the ranking from the full
    reference set. Reports the median, tau_95 (5th percentile: 95 % of samples reach it),
    tau_99 (1st percentile), the minimum and the mean. Samples of size n use
    ``numpy.random.default_rng([seed, n])``, so a size's result does not depend on the others."""
    if samples < 1:
        raise IrwError("--samples must be at least 1")
    qrels, _ = catalogue.qrels_info(con, qrels)
    run_ids = runsets.resolve(con, run_spec, qrels=qrels)
    if len(run_ids) < 2:
        raise IrwError("ranking needs at least two evaluated runs")
    ref_spec = reference or run_spec
    ref_runs = runsets.resolve(con, ref_spec, qrels=qrels)
    check_reference(ref_runs, ref_spec)
    sizes = sorted(set(int(s) for s in sizes))
    bad = [s for s in sizes if s < 2 or s > len(ref_runs)]
    if bad:
        raise IrwError(f"sample sizes must lie between 2 and the {len(ref_runs)} reference runs; "
                       f"not possible: {listed(bad)}")
    m = ms.parse(measure) if isinstance(measure, str) else measure
    everyone = list(dict.fromkeys(run_ids + ref_runs))
    X, topics = score_matrix(con, qrels, m, everyone)
    index = {r: i for i, r in enumerate(everyone)}
    Y = X[[index[r] for r in run_ids]]
    R = X[[index[r] for r in ref_runs]]
    full = standardized_means(Y, R.mean(axis=0), sample_sd(R, 0))
    rows = []
    total, done = len(sizes) * samples, 0
    chunk = max(1, min(samples, (1 << 22) // max(1, Y.size)))
    for n in sizes:
        rng = stats.rng_of(seed, n)
        taus = []
        left = samples
        while left > 0:
            k = min(chunk, left)
            picks = rng.random((k, len(ref_runs))).argsort(axis=1)[:, :n]
            S = R[picks]  # (k, n, topics)
            means = standardized_means(Y, S.mean(axis=1), np.std(S, axis=1, ddof=1))
            taus.append(stats.kendall_tau_many(means, full))
            left -= k
            done += k
            if progress:
                progress(done, total)
        tau = np.concatenate(taus)
        rows.append({"measure": str(m), "n": n, "samples": samples, "runs": len(run_ids),
                     "reference_runs": len(ref_runs), "topics": len(topics),
                     "tau_median": float(np.median(tau)),
                     "tau_95": float(np.percentile(tau, 5)),
                     "tau_99": float(np.percentile(tau, 1)),
                     "tau_min": float(tau.min()), "tau_mean": float(tau.mean())})
    return pd.DataFrame(rows)
