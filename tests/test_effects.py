"""The size of every difference with its interval (SPEC §5, "Effect sizes and intervals").

Each interval of a mean difference is checked against an independent computation from its
definition: scipy's t-interval; the bootstrap percentile interval of the resampled means
(numpy's quantile over the same documented draws); the randomization test and the
randomized Tukey HSD inverted by testing shifted differences on either side of each end;
Cohen's d_z interval by scipy's noncentral t and brentq, pair by pair; Sakai's effect size
over V_E from the ANOVA's sums of squares. On TREC-8 AP every pair is checked (the d_z
intervals on a sample).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import optimize
from scipy import stats as sps

from irwarehouse import Warehouse
from irwarehouse import stats as S


def random_matrix(n_runs=9, n_topics=20, seed=3):
    rng = np.random.default_rng(seed)
    effect = rng.uniform(-0.2, 0.2, size=(n_runs, 1))
    return np.clip(rng.beta(2, 4, size=(n_runs, n_topics)) + effect, 0, 1)


def pairs_of(n):
    return list(zip(*S.pair_indices(n)))


def nct_limit(t: float, df: float, p: float) -> float:
    """lam with P(T_{df, lam} <= t) = p, by brentq on scipy's noncentral t, bracketed around
    the normal approximation in small steps (the cdf is NaN in its far tails)."""
    f = lambda lam: sps.nct.cdf(t, df, lam) - p  # noqa: E731
    guess = t - sps.norm.ppf(p) * math.sqrt(1 + t * t / (2 * df))
    lo, hi = guess - 0.5, guess + 0.5
    while f(lo) < 0:
        lo -= 0.5
    while f(hi) > 0:
        hi += 0.5
    return optimize.brentq(f, lo, hi, xtol=1e-13, rtol=1e-14)


def residual_variance(X) -> float:
    """V_E from the two-way ANOVA's sums of squares: SS_total - SS_runs - SS_topics."""
    a, b = X.shape
    grand = X.mean()
    ss_total = ((X - grand) ** 2).sum()
    ss_runs = b * ((X.mean(axis=1) - grand) ** 2).sum()
    ss_topics = a * ((X.mean(axis=0) - grand) ** 2).sum()
    return (ss_total - ss_runs - ss_topics) / ((a - 1) * (b - 1))


# ------------------------------------------------------------------ intervals of the difference


@pytest.mark.parametrize("level", [0.95, 0.8])
def test_t_interval_is_scipys(level):
    X = random_matrix()
    res = S.paired_t(X, level=level)
    for k, (i, j) in enumerate(pairs_of(len(X))):
        ci = sps.ttest_rel(X[i], X[j]).confidence_interval(level)
        assert res.extra["ci_low"][k] == pytest.approx(ci.low, abs=1e-12)
        assert res.extra["ci_high"][k] == pytest.approx(ci.high, abs=1e-12)


def test_wilcoxon_gives_the_t_interval():
    X = random_matrix()
    t, w = S.paired_t(X, level=0.9), S.wilcoxon(X, level=0.9)
    np.testing.assert_array_equal(t.extra["ci_low"], w.extra["ci_low"])
    np.testing.assert_array_equal(t.extra["ci_high"], w.extra["ci_high"])


@pytest.mark.parametrize("B, level", [(1000, 0.95), (333, 0.9)])
def test_bootstrap_percentile_interval(B, level):
    X = random_matrix()
    X[1] = X[0] + 0.05  # a zero-variance pair: [diff, diff]
    res = S.paired_bootstrap(X, B=B, seed=7, level=level)
    idx = np.random.default_rng(7).integers(0, X.shape[1], size=(B, X.shape[1]))
    for k, (i, j) in enumerate(pairs_of(len(X))):
        d = X[i] - X[j]
        if res.extra["undefined"][k]:
            assert res.extra["ci_low"][k] == res.extra["ci_high"][k] == pytest.approx(d.mean())
            continue
        low, high = np.quantile(d[idx].mean(axis=1), [(1 - level) / 2, (1 + level) / 2])
        assert res.extra["ci_low"][k] == pytest.approx(low, abs=1e-12)
        assert res.extra["ci_high"][k] == pytest.approx(high, abs=1e-12)
    assert res.extra["undefined"][0]


def _shifted_p(d, signs, delta):
    """The randomization test's p-value of the differences d - delta (no tolerance)."""
    shifted = d - delta
    null = np.abs(signs @ shifted) / len(d)
    return np.mean(null >= abs(shifted.mean()))


@pytest.mark.parametrize("level", [0.95, 0.9])
def test_randomization_interval_is_the_inverted_test(level):
    X = random_matrix(6, 12)
    B = 500
    res = S.randomization(X, B=B, seed=11, level=level)
    signs = 1.0 - 2.0 * np.random.default_rng(11).integers(0, 2, size=(B, X.shape[1]))
    alpha = round(1 - level, 12)  # 0.05, not 1 - 0.95 in floating point
    eps = 1e-7
    for k, (i, j) in enumerate(pairs_of(len(X))):
        d = X[i] - X[j]
        low, high = res.extra["ci_low"][k], res.extra["ci_high"][k]
        assert low <= d.mean() <= high
        # inside, the shifted test does not reject; just outside, it does
        for delta in (low + eps, high - eps, d.mean()):
            assert _shifted_p(d, signs, delta) >= alpha
        for delta in (low - eps, high + eps):
            assert _shifted_p(d, signs, delta) < alpha
        # and 0 lies outside exactly when the test rejects
        assert (res.p[k] < alpha) == (not low <= 0 <= high)


def test_tukey_interval_is_simultaneous_and_inverted():
    X = random_matrix(7, 15)
    res = S.tukey_hsd(X, B=400, seed=5, level=0.95)
    ranges = res.extra["null_range"]
    half = res.extra["ci_high"] - res.mean_diff
    np.testing.assert_allclose(res.mean_diff - res.extra["ci_low"], half, rtol=0, atol=1e-15)
    assert np.ptp(half) < 1e-15  # one width for every pair
    # shift delta is accepted when at least 5% of the null ranges reach |diff - delta|
    inside = np.mean(ranges >= half[0] - 1e-12)
    outside = np.mean(ranges >= half[0] + 1e-12)
    assert inside >= 0.05 > outside
    assert np.all((res.p < 0.05) == ~((res.extra["ci_low"] <= 0) & (0 <= res.extra["ci_high"])))


# ------------------------------------------------------------------------------ effect sizes


def test_dz_and_its_exact_interval():
    X = random_matrix(8, 25)
    out = S.effect_sizes(X, level=0.95)
    n = X.shape[1]
    for k, (i, j) in enumerate(pairs_of(len(X))):
        d = X[i] - X[j]
        dz = d.mean() / d.std(ddof=1)
        t = dz * math.sqrt(n)
        assert out["effect_size"][k] == pytest.approx(dz, abs=1e-12)
        assert out["effect_low"][k] == pytest.approx(nct_limit(t, n - 1, 0.975) / math.sqrt(n), abs=1e-9)
        assert out["effect_high"][k] == pytest.approx(nct_limit(t, n - 1, 0.025) / math.sqrt(n), abs=1e-9)
    ve = residual_variance(X)
    means = X.mean(axis=1)
    expected = [(means[i] - means[j]) / math.sqrt(ve) for i, j in pairs_of(len(X))]
    np.testing.assert_allclose(out["effect_size_residual"], expected, rtol=1e-12)


def test_noncentrality_from_neighbours_equals_the_bracketed_search():
    """Many values are found from neighbours (interpolated, then polished per value): the
    same roots as the bracketed search of each, including far tails and huge t."""
    rng = np.random.default_rng(2)
    t = np.concatenate([rng.normal(0, 6, 3000), [0.0, 1e-9, 80.0, -250.0, 4000.0]])
    for p in (0.975, 0.025, 0.995):
        fast = S.noncentrality(t, 39, p)
        direct = S._noncentrality_bracketed(t, 39, p)
        np.testing.assert_allclose(fast, direct, rtol=1e-9, atol=1e-9)
    assert np.isnan(S.noncentrality(np.array([np.nan]), 10, 0.5)).all()


def test_undefined_pairs_have_no_effect_size():
    X = random_matrix(3, 10)
    X[2] = X[1] + 0.1
    out = S.effect_sizes(X)
    assert np.isnan(out["effect_size"][2]) and np.isnan(out["effect_low"][2]) and np.isnan(out["effect_high"][2])
    assert np.isfinite(out["effect_size"][:2]).all()


# ------------------------------------------------------------------------------ TREC-8


def test_trec8_ap_every_pair(trec8_db):
    """Done when: on TREC-8 AP every pair's interval of the difference and d_z equal an
    independent computation within 1e-9, and the d_z intervals within 1e-4 (a sample of 150
    pairs, by brentq); Sakai's effect size over V_E for every pair."""
    with Warehouse(trec8_db) as w:
        frame = w.pvalues("AP").df()
        per = w.eval("AP", store=False).df()
    wide = per.pivot(index="run_id", columns="topic", values="value")
    X = wide.to_numpy()
    row = {r: k for k, r in enumerate(wide.index)}
    assert len(frame) == 8256
    n = X.shape[1]
    a = X[[row[r] for r in frame["run_a"]]]
    b = X[[row[r] for r in frame["run_b"]]]
    d = a - b
    ci = sps.ttest_rel(a, b, axis=1).confidence_interval(0.95)  # scipy, over every pair
    scale = np.maximum(np.abs(a).max(axis=1), np.abs(b).max(axis=1))
    undefined = np.isnan(ci.low) | (d.std(axis=1, ddof=1) <= 1e-10 * scale)  # stats.py's rule
    assert undefined.sum() == frame["p_value"].isna().sum() == frame["effect_size"].isna().sum()
    defined = ~undefined
    np.testing.assert_allclose(frame["ci_low"][defined], ci.low[defined], rtol=0, atol=1e-9)
    np.testing.assert_allclose(frame["ci_high"][defined], ci.high[defined], rtol=0, atol=1e-9)
    np.testing.assert_allclose(frame["ci_low"][undefined], frame["diff"][undefined], rtol=0, atol=1e-12)
    dz = np.array([np.mean(x) / np.std(x, ddof=1) for x in d[defined]])  # pair by pair
    np.testing.assert_allclose(frame["effect_size"][defined], dz, rtol=0, atol=1e-9)
    es = (X.mean(axis=1)[[row[r] for r in frame["run_a"]]]
          - X.mean(axis=1)[[row[r] for r in frame["run_b"]]]) / math.sqrt(residual_variance(X))
    np.testing.assert_allclose(frame["effect_size_residual"], es, rtol=0, atol=1e-9)
    sample = frame.dropna(subset=["effect_size"]).sample(150, random_state=0)
    for rec in sample.itertuples():
        t = rec.effect_size * math.sqrt(n)
        assert abs(rec.effect_low - nct_limit(t, n - 1, 0.975) / math.sqrt(n)) < 1e-4
        assert abs(rec.effect_high - nct_limit(t, n - 1, 0.025) / math.sqrt(n)) < 1e-4


def test_pvalues_columns_and_levels(cli):
    from conftest import FIXTURES

    cli("load", "collection", FIXTURES, "--name", "fx", "--qrels-name", "fixture")
    rows = json.loads(cli("pvalues", "-m", "AP", "--test", "bootstrap", "--level", "0.9",
                          "--format", "json").stdout)
    assert list(rows[0]) == ["qrels", "measure", "test", "run_a", "run_b", "mean_a", "mean_b", "diff",
                             "ci_low", "ci_high", "effect_size", "effect_low", "effect_high",
                             "effect_size_residual", "statistic", "p_value", "p_adjusted", "significant"]
    for r in rows:
        assert r["ci_low"] <= r["diff"] <= r["ci_high"]
        assert r["effect_low"] <= r["effect_size"] <= r["effect_high"]
    wide = json.loads(cli("pvalues", "-m", "AP", "--test", "bootstrap", "--level", "0.99",
                          "--format", "json").stdout)
    assert all(w["ci_low"] <= r["ci_low"] and r["ci_high"] <= w["ci_high"] for w, r in zip(wide, rows))
    bad = cli("pvalues", "-m", "AP", "--level", "1.5", ok=False)
    assert bad.exit_code == 1 and "level" in bad.stderr
