"""Tests of irwarehouse.stats.

Vectorized results are checked against scipy or against plain per-pair loop references
written here from the definitions (same seed -> same random draws, as documented in the
module); hand-checkable cases show their arithmetic in comments.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
import scipy.stats as sps

from conftest import strict_orders, yilmaz_tau_ap
from irwarehouse import stats as S

ZERO_SD_RTOL = 1e-10  # the module's documented "zero variance" tolerance
TIE_RTOL = 1e-9  # the module's documented tolerance of ">=" against the observed statistic


def random_matrix(n_runs=12, n_topics=25, seed=1):
    """Scores in [0, 1] with run effects, so that some pairs differ significantly."""
    rng = np.random.default_rng(seed)
    effect = rng.uniform(-0.15, 0.15, size=(n_runs, 1))
    return np.clip(rng.beta(2, 4, size=(n_runs, n_topics)) + effect, 0, 1)


def pairs_of(n):
    return list(itertools.combinations(range(n), 2))


# --------------------------------------------------------------------------------------
# pair_indices, PairResult
# --------------------------------------------------------------------------------------


def test_pair_indices_row_major():
    i, j = S.pair_indices(4)
    assert list(zip(i.tolist(), j.tolist())) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    i, j = S.pair_indices(129)
    assert len(i) == 129 * 128 // 2 == 8256
    assert np.all(i < j)


def test_to_frame_and_adjusted_column():
    X = random_matrix(4, 10)
    res = S.paired_t(X)
    frame = res.to_frame(["a", "b", "c", "d"], method="holm")
    assert list(frame.columns) == [
        "run_a", "run_b", "mean_a", "mean_b", "diff", "statistic", "p_value", "p_adjusted"
    ]
    assert frame[["run_a", "run_b"]].values.tolist() == [
        ["a", "b"], ["a", "c"], ["a", "d"], ["b", "c"], ["b", "d"], ["c", "d"]
    ]
    np.testing.assert_allclose(frame["mean_a"], X.mean(axis=1)[res.i])
    np.testing.assert_allclose(frame["mean_b"], X.mean(axis=1)[res.j])
    np.testing.assert_allclose(frame["diff"], frame["mean_a"] - frame["mean_b"], atol=1e-12)
    np.testing.assert_allclose(frame["p_adjusted"], S.adjust(res.p, "holm"))
    assert "p_adjusted" not in res.to_frame(list("abcd")).columns
    with pytest.raises(ValueError, match="3 run ids"):
        res.to_frame(["a", "b", "c"])


# --------------------------------------------------------------------------------------
# Input validation
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda X: S.paired_t(X),
        lambda X: S.wilcoxon(X),
        lambda X: S.paired_bootstrap(X, B=100),
        lambda X: S.randomization(X, B=100),
        lambda X: S.tukey_hsd(X, B=100),
    ],
)
def test_matrix_validation(call):
    with pytest.raises(ValueError, match="two runs"):
        call(np.zeros((1, 5)))
    with pytest.raises(ValueError, match="two topics"):
        call(np.zeros((3, 1)))
    bad = np.zeros((3, 4))
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="NaN.*run index 1, topic index 2"):
        call(bad)
    with pytest.raises(ValueError, match="2-D"):
        call(np.zeros((2, 3, 4)))


def test_parameter_validation():
    X = random_matrix(3, 5)
    for B in (0, 99, 50.5):
        with pytest.raises(ValueError, match="B must"):
            S.paired_bootstrap(X, B=B)
        with pytest.raises(ValueError, match="B must"):
            S.randomization(X, B=B)
        with pytest.raises(ValueError, match="B must"):
            S.tukey_hsd(X, B=B)
    for alpha in (0, 1, -0.1, 1.5):
        with pytest.raises(ValueError, match="alpha"):
            S.paired_bootstrap(X, B=100, alpha=alpha)
        with pytest.raises(ValueError, match="alpha"):
            S.paired_t(X, alpha=alpha)
        with pytest.raises(ValueError, match="alpha"):
            S.discriminative_power(S.paired_t(X), alpha=alpha)
    with pytest.raises(ValueError, match="unknown adjustment"):
        S.adjust([0.1], "sidak")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        S.adjust([0.1, 1.2], "holm")
    with pytest.raises(ValueError, match="persistence"):
        S.rbo([1, 2], [1, 2], p=1.0)
    with pytest.raises(ValueError, match="same length"):
        S.kendall_tau([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="level"):
        S.mean_ci(X, level=95)


# --------------------------------------------------------------------------------------
# Paired t-test
# --------------------------------------------------------------------------------------


def test_paired_t_matches_scipy_pair_by_pair():
    X = random_matrix(12, 25)
    res = S.paired_t(X)
    assert res.test == "paired_t" and len(res) == 66
    for k, (a, b) in enumerate(pairs_of(12)):
        ref = sps.ttest_rel(X[a], X[b])
        assert (res.i[k], res.j[k]) == (a, b)
        assert res.stat[k] == pytest.approx(ref.statistic, rel=1e-10)
        assert res.p[k] == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-15)
        assert res.mean_diff[k] == pytest.approx(np.mean(X[a] - X[b]), abs=1e-14)
    assert not np.isnan(res.p).any()


def test_paired_t_zero_variance_pairs_are_undefined():
    X = random_matrix(5, 20)
    X[1] = X[0]  # differences all 0
    X[2] = X[0] + 0.25  # constant difference
    X[3] = X[0] + 0.1  # constant in exact arithmetic, a few ulps apart in floating point
    res = S.paired_t(X)
    undefined = {(a, b) for a, b in pairs_of(5) if a < 4 and b < 4}
    for k, pair in enumerate(pairs_of(5)):
        if pair in undefined:
            assert np.isnan(res.p[k]) and np.isnan(res.stat[k]), pair
        else:
            assert res.p[k] == pytest.approx(sps.ttest_rel(X[pair[0]], X[pair[1]]).pvalue, rel=1e-9)
    # Undefined is not significant, and is counted separately.
    dp = S.discriminative_power(res)
    assert dp["undefined"] == 6 and dp["pairs"] == 10
    assert dp["significant"] + dp["not_significant"] == 4


def test_paired_t_confidence_interval_in_extra():
    X = random_matrix(4, 15)
    res = S.paired_t(X, alpha=0.1)
    for k, (a, b) in enumerate(pairs_of(4)):
        d = X[a] - X[b]
        low, high = sps.t.interval(0.9, len(d) - 1, loc=d.mean(), scale=sps.sem(d))
        assert res.extra["ci_low"][k] == pytest.approx(low)
        assert res.extra["ci_high"][k] == pytest.approx(high)


# --------------------------------------------------------------------------------------
# Wilcoxon
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n_runs,n_topics,decimals",
    [
        (12, 25, None),  # continuous: scipy's exact distribution
        (12, 25, 1),  # zeros and ties: normal approximation
        (5, 9, 1),  # n <= 13 with ties: exact permutation distribution
        (6, 60, None),  # n > 50: normal approximation for every pair
    ],
)
def test_wilcoxon_matches_scipy_pair_by_pair(n_runs, n_topics, decimals):
    X = random_matrix(n_runs, n_topics, seed=n_topics)
    if decimals is not None:
        X = np.round(X, decimals)
    res = S.wilcoxon(X)
    for k, (a, b) in enumerate(pairs_of(n_runs)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = sps.wilcoxon(X[a], X[b])
        assert res.stat[k] == pytest.approx(ref.statistic, rel=1e-12), (a, b)
        assert res.p[k] == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-15), (a, b)


def test_wilcoxon_all_zero_differences_undefined():
    X = random_matrix(3, 12)
    X[1] = X[0]
    res = S.wilcoxon(X)
    assert np.isnan(res.p[0]) and np.isnan(res.stat[0])
    assert not np.isnan(res.p[1:]).any()


# --------------------------------------------------------------------------------------
# Bootstrap
# --------------------------------------------------------------------------------------


def reference_bootstrap(X, B, seed, alpha):
    """Per-pair loop implementation of the documented bootstrap (Sakai 2006)."""
    n_runs, n = X.shape
    idx = np.random.default_rng(seed).integers(0, n, size=(B, n))
    k = max(1, round(B * alpha))
    p, stat, est, crit = [], [], [], []
    for a, b in pairs_of(n_runs):
        z = X[a] - X[b]
        scale = max(np.abs(X[a]).max(), np.abs(X[b]).max())
        sd = z.std(ddof=1)
        if sd <= ZERO_SD_RTOL * scale:
            p.append(np.nan), stat.append(np.nan), est.append(np.nan), crit.append(np.nan)
            continue
        t = z.mean() / (sd / math.sqrt(n))
        w = z - z.mean()
        abs_t, diff = [], []
        for rep in range(B):
            sample = w[idx[rep]]
            m = sample.mean()
            sd_b = sample.std(ddof=1)
            if sd_b <= ZERO_SD_RTOL * scale:  # constant resample
                tb = 0.0 if abs(m) <= ZERO_SD_RTOL * scale else math.inf
                d = 0.0 if tb == 0.0 else abs(m)
            else:
                tb = abs(m) / (sd_b / math.sqrt(n))
                d = tb * sd_b / math.sqrt(n)  # SPEC: |t*_b| sd*_b / sqrt(n) (= |mean*_b|)
            abs_t.append(tb), diff.append(d)
        hits = sum(tb >= abs(t) * (1 - TIE_RTOL) for tb in abs_t)
        # k-th largest |t*|; the |t*| equal to it up to TIE_RTOL are ties, ranked by the
        # larger |mean*|
        kth = sorted(abs_t, reverse=True)[k - 1]
        above = sum(tb > kth * (1 + TIE_RTOL) for tb in abs_t)
        tied = sorted((d for tb, d in zip(abs_t, diff)
                       if kth * (1 - TIE_RTOL) <= tb <= kth * (1 + TIE_RTOL)), reverse=True)
        p.append(hits / B), stat.append(t), est.append(tied[k - above - 1]), crit.append(kth)
    return np.array(p), np.array(stat), np.array(est), np.array(crit)


def degenerate_matrix():
    """Runs that differ on only one or two topics (many constant resamples), a zero-mean
    pair, a constant-difference (undefined) pair and grid-valued scores with ties."""
    rng = np.random.default_rng(7)
    n = 12
    # Non-dyadic values, so that sums of equal values carry rounding error (the fast
    # one-pass variance of a constant resample is then not exactly 0).
    base = rng.choice([0.1, 0.3, 0.45, 0.7, 0.9], n)
    base[[3, 4]] = 0.5
    one = base.copy()
    one[0] += 0.3  # differs from base on one topic
    two = base.copy()
    two[[1, 2]] += [0.1, 0.7]
    balanced = base.copy()
    balanced[[3, 4]] = [0.75, 0.25]  # differences exactly -0.25, +0.25, 0...: mean 0
    shifted = base + 0.1  # zero-variance difference to base (up to rounding)
    noisy = np.round(base + rng.normal(0, 0.2, n), 1)
    return np.vstack([base, one, two, balanced, shifted, noisy])


def grid_matrix():
    """P@5-like scores (multiples of 0.2, not exact in binary): replicates with |t*| equal
    in exact arithmetic come out a few ulps apart, with different |mean*| (in one pair
    here at the k-th place, where ranking them by the rounding picks the wrong one). No
    two runs have the same total, so no mean difference is zero up to rounding."""
    rng = np.random.default_rng(14)
    effect = rng.integers(0, 3, size=(10, 1))
    return np.clip(rng.integers(0, 4, size=(10, 15)) + effect, 0, 5) / 5


@pytest.mark.parametrize("X", [random_matrix(6, 15, seed=3), degenerate_matrix(), grid_matrix()],
                         ids=["continuous", "degenerate", "grid"])
def test_bootstrap_equals_loop_reference(X):
    B, seed, alpha = 400, 11, 0.05
    res = S.paired_bootstrap(X, B=B, seed=seed, alpha=alpha)
    p, stat, est, crit = reference_bootstrap(X, B, seed, alpha)
    np.testing.assert_array_equal(np.isnan(res.p), np.isnan(p))
    np.testing.assert_allclose(res.p, p, rtol=0, atol=0, equal_nan=True)
    np.testing.assert_allclose(res.stat, stat, rtol=1e-10, equal_nan=True)
    np.testing.assert_allclose(res.extra["estimated_diff"], est, rtol=1e-9, atol=1e-15,
                               equal_nan=True)
    # k-th largest |t*|: inf where at least k resamples were constant with non-zero mean
    np.testing.assert_allclose(res.extra["critical_t"], crit, rtol=1e-9, equal_nan=True)


def test_bootstrap_degenerate_cases_behave():
    X = degenerate_matrix()
    res = S.paired_bootstrap(X, B=400, seed=2)
    k = {pair: n for n, pair in enumerate(pairs_of(6))}
    # base vs base+0.1: zero variance -> undefined, also no estimated difference
    assert np.isnan(res.p[k[(0, 4)]]) and np.isnan(res.extra["estimated_diff"][k[(0, 4)]])
    # base vs one-topic change: resamples missing topic 0 are constant with non-zero mean
    # (t* = inf >= |t(Z)|), so p >= P(topic 0 not drawn) ~ (11/12)^12 = 0.35
    assert res.p[k[(0, 1)]] > 0.25
    assert res.extra["critical_t"][k[(0, 1)]] == np.inf
    # zero mean difference: t(Z) = 0, every |t*| >= 0
    assert res.stat[k[(0, 3)]] == 0 and res.p[k[(0, 3)]] == 1


def test_bootstrap_estimated_difference_hand_case():
    # Two topics, z = (0.5, 0.1): mean 0.3, w = (0.2, -0.2).  A replicate draws two topics:
    # both the same -> constant sample, mean +-0.2, t* = +-inf; one of each -> mean 0, t* = 0.
    # So |t(Z)| (finite) is reached only by the constant replicates, and the k-th largest
    # |t*| (k = B alpha = 10) is inf with |mean*| = 0.2 = |t*| sd*/sqrt(n) in the limit.
    X = np.array([[0.9, 0.4], [0.4, 0.3]])
    B, seed = 200, 5
    res = S.paired_bootstrap(X, B=B, seed=seed, alpha=0.05)
    idx = np.random.default_rng(seed).integers(0, 2, size=(B, 2))
    constant = np.sum(idx[:, 0] == idx[:, 1])
    assert constant >= 10  # the hand argument needs at least k constant replicates
    assert res.p[0] == pytest.approx(constant / B)
    assert res.extra["estimated_diff"][0] == pytest.approx(0.2)
    # t(Z) = 0.3 / (sd / sqrt 2), sd = sqrt(((0.2)^2 + (0.2)^2) / 1) = 0.2 sqrt 2 -> t = 1.5
    assert res.stat[0] == pytest.approx(1.5)
    summary = S.estimated_difference_summary(res)
    assert summary["max"] == pytest.approx(0.2) and summary["median"] == pytest.approx(0.2)


def test_bootstrap_pvalue_consistent_with_critical_t():
    # With B alpha an integer k: p < alpha  <=>  fewer than k replicates reach |t(Z)|
    # <=>  |t(Z)| is above the k-th largest |t*| (up to the documented tie tolerance).
    X = random_matrix(12, 20, seed=12)
    res = S.paired_bootstrap(X, B=1000, seed=3, alpha=0.05)
    assert res.extra["k"] == 50
    above = np.abs(res.stat) * (1 - TIE_RTOL) > res.extra["critical_t"]
    np.testing.assert_array_equal(res.p < 0.05, above)
    assert 0 < np.sum(res.p < 0.05) < len(res)  # both outcomes occur
    # The required difference |t*| sd* / sqrt(n) grows with the pair's standard error.
    D = X[res.i] - X[res.j]
    se = D.std(axis=1, ddof=1) / np.sqrt(D.shape[1])
    assert sps.spearmanr(se, res.extra["estimated_diff"]).statistic > 0.5


def test_bootstrap_summary_deterministic_and_chunk_independent(monkeypatch):
    X = random_matrix(7, 20, seed=4)
    a = S.paired_bootstrap(X, B=300, seed=9)
    b = S.paired_bootstrap(X, B=300, seed=9)
    np.testing.assert_array_equal(a.p, b.p)
    c = S.paired_bootstrap(X, B=300, seed=10)
    assert not np.array_equal(a.p, c.p)
    monkeypatch.setattr(S.pairs, "CHUNK_ELEMENTS", 50)  # a few replicates per chunk
    d = S.paired_bootstrap(X, B=300, seed=9)
    np.testing.assert_array_equal(a.p, d.p)
    np.testing.assert_allclose(a.extra["estimated_diff"], d.extra["estimated_diff"], rtol=1e-12)
    est = a.extra["estimated_diff"]
    summary = S.estimated_difference_summary(a)
    assert summary["max"] == est.max() and summary["median"] == np.median(est)
    with pytest.raises(ValueError, match="estimated differences"):
        S.estimated_difference_summary(S.paired_t(X))


def test_progress_callback_reports_chunks(monkeypatch):
    monkeypatch.setattr(S.pairs, "CHUNK_ELEMENTS", 1000)
    X = random_matrix(5, 10)
    # the bootstrap and the randomization test count pairs (10 here), Tukey's replicates
    for fn, total in ((S.paired_bootstrap, 10), (S.randomization, 10), (S.tukey_hsd, 250)):
        calls = []
        fn(X, B=250, progress=lambda done, total: calls.append((done, total)))
        assert len(calls) > 1, fn.__name__
        assert calls[-1] == (total, total)
        assert all(t == total for _, t in calls)
        assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_bootstrap_memory_does_not_grow_with_pairs():
    # 600 runs = 179,700 pairs. Holding the (pairs x topics) differences alone would take
    # 43 MB and a running top-k of the replicates (pairs x 2k keys) 29 MB more; blocks of
    # pairs need the per-pair results (~10 MB) and one block's work arrays (~34 MB).
    import tracemalloc

    X = random_matrix(600, 30, seed=5)
    tracemalloc.start()
    try:
        res = S.paired_bootstrap(X, B=100, seed=1, alpha=0.05)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(res) == 179_700
    assert peak < 80 * 2**20, f"peak {peak / 2**20:.0f} MB"


# --------------------------------------------------------------------------------------
# Randomization and Tukey HSD
# --------------------------------------------------------------------------------------


def reference_randomization(X, B, seed):
    n_runs, n = X.shape
    flips = np.random.default_rng(seed).integers(0, 2, size=(B, n))
    p = []
    for a, b in pairs_of(n_runs):
        z = X[a] - X[b]
        obs = abs(z.mean())
        tol = TIE_RTOL * np.abs(z).mean()
        hits = 0
        for rep in range(B):
            signs = np.where(flips[rep] == 1, -1.0, 1.0)
            hits += abs(np.mean(signs * z)) >= obs - tol
        p.append(hits / B)
    return np.array(p)


def reference_tukey(X, B, seed):
    n_runs, n = X.shape
    rng = np.random.default_rng(seed)
    ranges = []
    for _ in range(B):
        keys = rng.random((n, n_runs))
        shuffled = np.empty_like(X)
        for t in range(n):
            shuffled[:, t] = X[np.argsort(keys[t]), t]
        means = shuffled.mean(axis=1)
        ranges.append(means.max() - means.min())
    ranges = np.array(ranges)
    tol = TIE_RTOL * np.abs(X).max()
    return np.array([np.mean(ranges >= abs(np.mean(X[a] - X[b])) - tol)
                     for a, b in pairs_of(n_runs)])


def test_randomization_equals_loop_reference():
    X = random_matrix(5, 12, seed=5)
    X[4] = X[3]  # identical runs: statistic 0, p = 1
    res = S.randomization(X, B=300, seed=3)
    np.testing.assert_array_equal(res.p, reference_randomization(X, 300, 3))
    assert res.p[-1] == 1.0
    np.testing.assert_allclose(res.stat, res.mean_diff)


def test_randomization_approximates_exact_enumeration():
    # With 6 topics all 2^6 sign vectors can be enumerated: the Monte Carlo p-value must be
    # close to the exact one (SE of a p near 0.5 with B = 20000 is ~0.0035).
    X = random_matrix(3, 6, seed=8)
    res = S.randomization(X, B=20000, seed=1)
    signs = np.array(list(itertools.product([1.0, -1.0], repeat=6)))
    for k, (a, b) in enumerate(pairs_of(3)):
        z = X[a] - X[b]
        exact = np.mean(np.abs(signs @ z) >= abs(z.sum()) - 1e-12)
        assert res.p[k] == pytest.approx(exact, abs=0.015)


def test_randomization_chunk_independent(monkeypatch):
    X = random_matrix(6, 14, seed=2)
    a = S.randomization(X, B=500, seed=4)
    monkeypatch.setattr(S.pairs, "CHUNK_ELEMENTS", 40)
    np.testing.assert_array_equal(a.p, S.randomization(X, B=500, seed=4).p)


def test_tukey_equals_loop_reference(monkeypatch):
    X = random_matrix(5, 8, seed=6)
    res = S.tukey_hsd(X, B=200, seed=12)
    np.testing.assert_array_equal(res.p, reference_tukey(X, 200, 12))
    monkeypatch.setattr(S.pairs, "CHUNK_ELEMENTS", 100)  # about two replicates per chunk
    np.testing.assert_array_equal(res.p, S.tukey_hsd(X, B=200, seed=12).p)


def test_tukey_controls_family_and_is_monotone():
    X = random_matrix(10, 20, seed=9)
    tukey = S.tukey_hsd(X, B=2000, seed=1)
    rand = S.randomization(X, B=2000, seed=1)
    # One null distribution (the range of all means) for every pair: p can only fall as
    # |mean difference| grows ...
    order = np.argsort(np.abs(tukey.mean_diff))
    assert np.all(np.diff(tukey.p[order]) <= 0)
    # ... and being family-wise it is more conservative than the per-pair test.
    assert tukey.p.mean() > rand.p.mean()
    assert np.mean(tukey.p >= rand.p) > 0.9
    assert S.discriminative_power(tukey)["significant"] <= S.discriminative_power(rand)["significant"]
    # Identical runs are never significant
    Y = X.copy()
    Y[1] = Y[0]
    assert S.tukey_hsd(Y, B=200).p[0] == 1.0


# --------------------------------------------------------------------------------------
# Multiple comparisons
# --------------------------------------------------------------------------------------


def direct_holm(p):
    m = len(p)
    order = sorted(range(m), key=lambda k: p[k])
    out = [0.0] * m
    for pos, k in enumerate(order):
        out[k] = max(min(1.0, (m - l) * p[order[l]]) for l in range(pos + 1))
    return out


def direct_bh(p):
    m = len(p)
    order = sorted(range(m), key=lambda k: p[k])
    out = [0.0] * m
    for pos, k in enumerate(order):
        out[k] = min(min(1.0, m * p[order[l]] / (l + 1)) for l in range(pos, m))
    return out


def test_adjust_hand_case():
    p = [0.01, 0.04, 0.03, 0.005]  # m = 4
    # Bonferroni: 4p = 0.04, 0.16, 0.12, 0.02
    np.testing.assert_allclose(S.adjust(p, "bonferroni"), [0.04, 0.16, 0.12, 0.02])
    # Holm, ascending: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> running max 0.06
    np.testing.assert_allclose(S.adjust(p, "holm"), [0.03, 0.06, 0.06, 0.02])
    # BH, ascending: 0.005*4/1=0.02, 0.01*4/2=0.02, 0.03*4/3=0.04, 0.04*4/4=0.04
    # running min from the largest: 0.04, 0.04, 0.02, 0.02
    np.testing.assert_allclose(S.adjust(p, "bh"), [0.02, 0.04, 0.04, 0.02])
    np.testing.assert_allclose(S.adjust(p, "none"), p)
    # BH monotonicity: [0.02, 0.03, 0.035], m = 3: 0.02*3/1 = 0.06, 0.03*3/2 = 0.045,
    # 0.035*3/3 = 0.035; running min from the largest -> 0.035 for all three.
    np.testing.assert_allclose(S.adjust([0.02, 0.03, 0.035], "bh"), [0.035] * 3)
    # caps at 1: 0.5 * 4 = 2 -> 1
    assert S.adjust([0.5, 0.01, 0.02, 0.03], "bonferroni")[0] == 1.0


def test_adjust_nan_not_counted_in_family():
    p = [0.01, np.nan, 0.04, 0.03, np.nan, 0.005]
    for method in ("bonferroni", "holm", "bh", "none"):
        out = S.adjust(p, method)
        assert np.isnan(out[[1, 4]]).all()
        np.testing.assert_allclose(out[[0, 2, 3, 5]], S.adjust([0.01, 0.04, 0.03, 0.005], method))
    assert np.isnan(S.adjust([np.nan, np.nan], "holm")).all()


def test_corrections_are_a_registry(monkeypatch):
    """adjust applies the function the registry's entry names: an entry added to the registry
    is offered without any other change, and 'none' is the identity entry."""
    from irwarehouse import significance_tests as T
    from irwarehouse.cli.stats import CORRECTIONS_HELP

    p = np.array([0.01, np.nan, 0.04, 0.03])
    for entry in T.CORRECTIONS.values():
        assert callable(getattr(S.corrections, entry.function)), entry.name
        assert f"{entry.name} ({entry.help})" in CORRECTIONS_HELP  # --correction's help
        assert str(entry) == entry.label  # a caption reads the entry as its label
    assert T.CORRECTIONS["none"].function == "identity"
    monkeypatch.setitem(T.CORRECTIONS, "twice",
                        T.Correction("twice", "Bonferroni again", "Bonferroni", "bonferroni"))
    np.testing.assert_array_equal(S.adjust(p, "twice"), S.adjust(p, "bonferroni"))
    assert T.correction("twice").label == "Bonferroni again"
    with pytest.raises(Exception, match="unknown correction 'sidak'; valid: none, bonferroni, holm, bh, twice"):
        T.correction("sidak")


def test_adjust_against_direct_implementations():
    rng = np.random.default_rng(0)
    p = np.round(rng.uniform(0, 0.2, 40), 3)  # rounding makes ties
    np.testing.assert_allclose(S.adjust(p, "holm"), direct_holm(list(p)))
    np.testing.assert_allclose(S.adjust(p, "bh"), direct_bh(list(p)))
    np.testing.assert_allclose(S.adjust(p, "bonferroni"), np.minimum(1, p * 40))
    # shape is kept
    assert S.adjust(p.reshape(5, 8), "bh").shape == (5, 8)
    np.testing.assert_allclose(S.adjust(p.reshape(5, 8), "bh").ravel(), direct_bh(list(p)))


# --------------------------------------------------------------------------------------
# Discriminative power and agreement with a reference
# --------------------------------------------------------------------------------------


def hand_result(p, diff):
    i, j = S.pair_indices(4)  # 6 pairs
    return S.PairResult(i=i, j=j, mean_diff=np.array(diff, float), stat=np.zeros(6),
                        p=np.array(p, float), test="hand")


def test_discriminative_power_and_reference_counts():
    ref = hand_result([0.01, 0.01, 0.20, 0.30, 0.01, np.nan], [+1, +1, +1, +1, +1, +1])
    here = hand_result([0.02, 0.30, 0.01, 0.50, 0.03, 0.01], [+1, +1, +1, +1, -1, +1])
    # here: significant pairs 0, 2, 4, 5 -> 4 of 6
    assert S.discriminative_power(here) == {
        "pairs": 6, "significant": 4, "not_significant": 2, "undefined": 0,
        "discriminative_power": 4 / 6,
    }
    # reference: significant 0, 1, 4; pair 5 undefined
    assert S.discriminative_power(ref) == {
        "pairs": 6, "significant": 3, "not_significant": 2, "undefined": 1,
        "discriminative_power": 0.5,
    }
    # pair 0: both significant, same direction -> TP
    # pair 1: reference only -> FN (miss)
    # pair 2: here only -> FP
    # pair 3: neither -> TN
    # pair 4: both significant but opposite directions -> FP
    # pair 5: here significant, reference undefined (= not significant) -> FP
    out = S.compare_to_reference(here, ref)
    assert (out["tp"], out["fp"], out["fn"], out["tn"]) == (1, 3, 1, 1)
    assert out["misses"] == 1 and out["false_alarms"] == 3 and out["opposite"] == 1
    # at alpha = 0.015 only p = 0.01 counts: here {2, 5}, reference {0, 1, 4}
    out = S.compare_to_reference(here, ref, alpha=0.015)
    assert (out["tp"], out["fp"], out["fn"], out["tn"]) == (0, 2, 3, 1)


def test_compare_to_reference_requires_same_pairs():
    a = S.paired_t(random_matrix(4, 8))
    b = S.paired_t(random_matrix(5, 8))
    with pytest.raises(ValueError, match="same run pairs"):
        S.compare_to_reference(a, b)
    out = S.compare_to_reference(a, a)
    assert out["fp"] == out["fn"] == 0 and out["tp"] + out["tn"] == 6


# --------------------------------------------------------------------------------------
# Rank correlations
# --------------------------------------------------------------------------------------


def test_kendall_tau_b_matches_scipy_with_ties():
    rng = np.random.default_rng(3)
    for _ in range(20):
        x = rng.integers(0, 6, 30).astype(float)
        y = x + rng.integers(-3, 4, 30)
        assert S.kendall_tau(x, y) == pytest.approx(sps.kendalltau(x, y).statistic, rel=1e-12)
    x, y = rng.random(200), rng.random(200)
    assert S.kendall_tau(x, y) == pytest.approx(sps.kendalltau(x, y).statistic, rel=1e-12)


def test_kendall_tau_hand_cases():
    # One discordant pair, (2, 3), of 6: tau-a = (5 - 1) / 6
    assert S.kendall_tau([1, 2, 3, 4], [1, 3, 2, 4], "a") == pytest.approx(4 / 6)
    # x ties items 3 and 4: that pair counts 0; the other 5 are concordant.
    # tau-a = 5 / 6; tau-b = 5 / sqrt((6 - 1) * (6 - 0))
    assert S.kendall_tau([1, 2, 3, 3], [1, 2, 4, 3], "a") == pytest.approx(5 / 6)
    assert S.kendall_tau([1, 2, 3, 3], [1, 2, 4, 3], "b") == pytest.approx(5 / math.sqrt(30))
    assert math.isnan(S.kendall_tau([1, 1, 1], [1, 2, 3]))


def test_identical_and_reversed_rankings():
    x = np.array([0.31, 0.12, 0.55, 0.47, 0.08, 0.26])
    for p in (0.5, 0.9, 0.98):
        assert S.rbo(x, x, p) == pytest.approx(1.0)
    assert S.kendall_tau(x, x) == 1 and S.kendall_tau(x, x, "a") == 1
    assert S.tau_ap(x, x) == pytest.approx(1.0)
    assert S.kendall_tau(x, -x) == -1 and S.kendall_tau(x, -x, "a") == -1
    assert S.tau_ap(x, -x) == pytest.approx(-1.0)
    corr = S.rank_correlations(x, 2 * x + 1)
    assert corr == pytest.approx({"kendall_tau": 1, "kendall_tau_a": 1, "tau_ap": 1, "rbo": 1,
                                  "pearson": 1, "n_systems": 6})


def test_tau_ap_hand_cases():
    x = [4, 3, 2, 1]  # reference: a > b > c > d
    # y ranks b, a, c, d.  Position 2 (a): above {b}, x has b below a -> 0/1;
    # position 3 (c): {b, a} both above c in x -> 2/2; position 4 (d): 3/3.
    # tau_AP = 2/3 * (0 + 1 + 1) - 1 = 1/3   (Kendall: (5 - 1)/6 = 2/3)
    assert S.tau_ap(x, [3, 4, 2, 1]) == pytest.approx(1 / 3)
    # y ranks a, b, d, c: positions 2, 3 correct (1/1, 2/2); position 4 (c): {a, b, d},
    # a and b above c in x, d not -> 2/3.  tau_AP = 2/3 * (1 + 1 + 2/3) - 1 = 7/9
    assert S.tau_ap(x, [4, 3, 1, 2]) == pytest.approx(7 / 9)
    # y ties a and b at the top: random tie-breaking gives a,b (tau_AP 1) or b,a (1/3)
    # with probability 1/2 each -> expected 2/3.
    assert S.tau_ap(x, [1, 1, 0.5, 0]) == pytest.approx(2 / 3)
    # tau_AP is asymmetric.  y = [2, 4, 3, 1] ranks b, c, a, d:
    # position 2 (c): {b} above, b above c in x -> 1/1; position 3 (a): {b, c}, neither
    # above a in x -> 0/2; position 4 (d): 3/3.  tau_AP = 2/3 * 2 - 1 = 1/3.
    # Roles swapped (reference b > c > a > d, walk down a, b, c, d): position 2 (b): {a}
    # is below b -> 0/1; position 3 (c): {a, b}, only b above c -> 1/2; position 4: 3/3.
    # tau_AP = 2/3 * 1.5 - 1 = 0.
    assert S.tau_ap(x, [2, 4, 3, 1]) == pytest.approx(1 / 3)
    assert S.tau_ap([2, 4, 3, 1], x) == pytest.approx(0.0, abs=1e-15)


def test_tau_ap_published_example():
    # Values printed in the documentation of the R package ircor (Urbano), tauAP examples:
    # tauAP(x, y) = 0.3928571 and, with y rounded to one decimal (ties), tauAP_a = 0.39903.
    x = [0.67, 0.45, 0.29, 0.12, 0.57, 0.24, 0.94, 0.75, 0.08, 0.54]
    y = [0.48, 0.68, 0.32, 0.09, 0.06, 0.61, 0.87, 0.22, 0.44, 0.84]
    assert S.tau_ap(x, y) == pytest.approx(0.3928571, abs=1e-7)
    assert S.tau_ap(x, np.round(y, 1)) == pytest.approx(0.39903, abs=1e-5)


def plain_rbo_ext(order_a, order_b, p):
    k = len(order_a)
    agreement = [len(set(order_a[:d]) & set(order_b[:d])) / d for d in range(1, k + 1)]
    return agreement[-1] * p**k + (1 - p) / p * sum(a * p**d for d, a in enumerate(agreement, 1))


@pytest.mark.parametrize("seed", range(5))
def test_ties_give_expectation_over_tie_breakings(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, 6).astype(float)
    y = rng.integers(0, 3, 6).astype(float)
    orders_x, orders_y = list(strict_orders(x)), list(strict_orders(y))
    exp_tap = np.mean([yilmaz_tau_ap(a, b) for a in orders_x for b in orders_y])
    exp_rbo = np.mean([plain_rbo_ext(a, b, 0.8) for a in orders_x for b in orders_y])
    assert S.tau_ap(x, y) == pytest.approx(exp_tap, abs=1e-12)
    assert S.rbo(x, y, 0.8) == pytest.approx(exp_rbo, abs=1e-12)


def test_rbo_many_is_rbo_of_each_row():
    """Rows with and without ties, in more than one chunk, against the expectation over
    tie-breakings computed from plain RBO_ext."""
    rng = np.random.default_rng(7)
    x = rng.integers(0, 4, 6).astype(float)
    Y = np.vstack([rng.integers(0, 3, 6).astype(float) for _ in range(4)] + [x, rng.random(6)])
    orders_x = list(strict_orders(x))
    expected = [np.mean([plain_rbo_ext(a, b, 0.7) for a in orders_x for b in strict_orders(y)]) for y in Y]
    np.testing.assert_allclose(S.rbo_many(x, Y, 0.7), expected, rtol=0, atol=1e-12)
    big = rng.random((40, 200))  # 40 x 200 x 200 elements: several chunks
    ref = rng.random(200)
    ox = list(np.argsort(-ref))
    np.testing.assert_allclose(S.rbo_many(ref, big, 0.9),
                               [plain_rbo_ext(ox, list(np.argsort(-y)), 0.9) for y in big], rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="same 6"):
        S.rbo_many(x, np.ones((2, 5)), 0.9)


def test_rbo_hand_cases():
    # [a, b, c] vs [b, a, c], p = 0.5: A_1 = 0, A_2 = 1, A_3 = 1
    # RBO_ext = A_3 p^3 + (1-p)/p (A_1 p + A_2 p^2 + A_3 p^3) = 0.125 + (0.25 + 0.125) = 0.5
    assert S.rbo([3, 2, 1], [2, 3, 1], 0.5) == pytest.approx(0.5)
    # [a, b, c] vs [c, b, a]: A_1 = 0, A_2 = |{a,b} & {c,b}| / 2 = 1/2, A_3 = 1
    # = 0.125 + (0 + 0.5 * 0.25 + 0.125) = 0.375
    assert S.rbo([3, 2, 1], [1, 2, 3], 0.5) == pytest.approx(0.375)
    # no ties: equals the plain formula on the orderings
    rng = np.random.default_rng(1)
    x, y = rng.random(30), rng.random(30)
    ox, oy = list(np.argsort(-x)), list(np.argsort(-y))
    assert S.rbo(x, y, 0.9) == pytest.approx(plain_rbo_ext(ox, oy, 0.9), abs=1e-12)
    assert S.tau_ap(x, y) == pytest.approx(yilmaz_tau_ap(ox, oy), abs=1e-12)


def test_pearson_and_rank_correlations():
    rng = np.random.default_rng(2)
    x, y = rng.random(20), rng.random(20)
    assert S.pearson(x, y) == pytest.approx(sps.pearsonr(x, y).statistic, rel=1e-12)
    assert math.isnan(S.pearson(np.ones(5), np.arange(5)))
    corr = S.rank_correlations(x, y, rbo_p=0.8)
    assert corr["kendall_tau"] == pytest.approx(sps.kendalltau(x, y).statistic)
    assert corr["kendall_tau_a"] == S.kendall_tau(x, y, "a")
    assert corr["tau_ap"] == S.tau_ap(x, y)
    assert corr["rbo"] == S.rbo(x, y, 0.8)
    assert corr["n_systems"] == 20


def test_pvalue_order_tau():
    rng = np.random.default_rng(4)
    p_a = rng.random(50)
    p_b = np.clip(p_a + rng.normal(0, 0.2, 50), 0, 1)  # clipping creates ties at 0 and 1
    assert S.pvalue_order_tau(p_a, p_b) == pytest.approx(sps.kendalltau(p_a, p_b).statistic)
    assert S.pvalue_order_tau(p_a, p_a) == 1
    # undefined pairs are dropped from both orderings
    p_a[[3, 7]] = np.nan
    p_b[10] = np.nan
    keep = np.ones(50, bool)
    keep[[3, 7, 10]] = False
    assert S.pvalue_order_tau(p_a, p_b) == pytest.approx(
        sps.kendalltau(p_a[keep], p_b[keep]).statistic)
    # accepts PairResults
    X = random_matrix(6, 15)
    t, w = S.paired_t(X), S.wilcoxon(X)
    assert S.pvalue_order_tau(t, w) == pytest.approx(sps.kendalltau(t.p, w.p).statistic)


def test_concordance_is_exact():
    """S = concordant - discordant, counted pair by pair, for small vectors with and without
    ties (in one, the other or both), and against scipy on a large one."""
    rng = np.random.default_rng(11)
    for trial in range(200):
        n = int(rng.integers(2, 40))
        x = rng.random(n) if trial % 4 == 0 else rng.integers(0, rng.integers(1, 6), n).astype(float)
        y = rng.random(n) if trial % 4 == 1 else rng.integers(0, rng.integers(1, 6), n).astype(float)
        pairwise = sum(int(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]))
                       for i, j in itertools.combinations(range(n), 2))
        assert S._concordance(x, y) == pairwise
    x = rng.random(20_000)
    y = np.round(x + rng.normal(0, 0.3, x.size), 2)  # many ties in y
    assert S.kendall_tau(x, y) == pytest.approx(sps.kendalltau(x, y).statistic, abs=1e-12)


def test_tau_ap_many_is_tau_ap_of_each_row():
    rng = np.random.default_rng(12)
    x = rng.integers(0, 4, 7).astype(float)
    Y = np.vstack([rng.integers(0, 3, 7).astype(float), x, -x, rng.random(7)])
    got = S.tau_ap_many(x, Y)
    for row, value in zip(Y, got):
        expected = np.mean([yilmaz_tau_ap(a, b) for a in strict_orders(x) for b in strict_orders(row)])
        assert value == pytest.approx(expected, abs=1e-12)
    big_x, big_Y = rng.random(1200), rng.random((3, 1200))  # several chunks of items and rows
    ox = list(np.argsort(-big_x))
    assert S.tau_ap_many(big_x, big_Y) == pytest.approx(
        [yilmaz_tau_ap(ox, list(np.argsort(-y))) for y in big_Y], abs=1e-12)


@pytest.mark.parametrize("n_systems", [2, 9, 60])
def test_rank_correlation_matrix_is_rank_correlations_of_each_cell(n_systems):
    """Every cell equals rank_correlations of its two rows, to the last bit: rows with ties,
    a constant row (tau-b and Pearson undefined), a row twice and a reversed row."""
    rng = np.random.default_rng(n_systems)
    M = np.vstack([rng.random(n_systems), rng.integers(0, 3, n_systems), np.ones(n_systems),
                   rng.integers(0, 4, n_systems), rng.random(n_systems)])
    M = np.vstack([M, M[0], -M[3]])
    out = S.rank_correlation_matrix(M, rbo_p=0.8)
    assert set(out) == {"kendall_tau", "kendall_tau_a", "tau_ap", "rbo", "pearson"}
    for a, b in itertools.product(range(len(M)), repeat=2):
        single = S.rank_correlations(M[a], M[b], rbo_p=0.8)
        for name, matrix in out.items():
            assert matrix[a, b] == single[name] or (np.isnan(matrix[a, b]) and np.isnan(single[name])), \
                (name, a, b)
    assert np.isnan(out["kendall_tau"][2, 0]) and out["kendall_tau"][0, 5] == 1


def test_row_means_keep_ties_of_equal_sums():
    # two runs with the same P@10 values on 10 topics, in another order: equal sums
    a = [0.6, 0.6, 0.7, 0.6, 0.8, 0.2, 0.8, 0.5, 0.8, 0.5]
    X = np.array([a, [0.6, 0.6, 0.8, 0.2, 0.8, 0.8, 0.5, 0.5, 0.7, 0.6], [0.9] * 10])
    assert X.mean(axis=1)[0] != X.mean(axis=1)[1]  # a floating-point sum splits the tie
    means = S.row_means(X)
    assert means[0] == means[1] == math.fsum(a) / 10 and means[2] == 0.9
    assert S.kendall_tau(means, [1, 2, 3]) == 2 / math.sqrt(2 * 3)  # the tie counts as a tie


def brute_kendall(x, y):
    """(S, n1, n2) counted pair by pair: concordant minus discordant, ties in x, ties in y."""
    S = n1 = n2 = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        S += int(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]))
        n1 += x[i] == x[j]
        n2 += y[i] == y[j]
    return S, n1, n2


def test_pvalue_correlation_matrix():
    """tau-b against scipy, tau-a counted pair by pair, tau_AP as the mean of Yilmaz's
    formula over every tie-breaking -- of the orderings with the smallest p-value on top --
    over the items defined under both rows."""
    rng = np.random.default_rng(13)
    P = rng.random((5, 9))
    P[1] = np.clip(P[0] + rng.normal(0, 0.2, 9), 0, 1)  # ties at 0 and 1
    P[2, [3, 8]] = np.nan
    P[3, 8] = np.nan
    P[4] = np.round(P[0], 1)  # ties, and none undefined
    out, n = S.pvalue_correlation_matrix(P)
    assert set(out) == {"kendall_tau", "kendall_tau_a", "tau_ap"}
    for a, b in itertools.product(range(len(P)), repeat=2):
        keep = ~(np.isnan(P[a]) | np.isnan(P[b]))
        pa, pb = P[a][keep], P[b][keep]
        assert n[a, b] == keep.sum()
        assert out["kendall_tau"][a, b] == pytest.approx(sps.kendalltau(pa, pb).statistic, abs=1e-12)
        assert out["kendall_tau"][a, b] == S.pvalue_order_tau(P[a], P[b])
        concordance, _, _ = brute_kendall(pa, pb)
        assert out["kendall_tau_a"][a, b] == pytest.approx(concordance / (keep.sum() * (keep.sum() - 1) / 2), abs=1e-12)
        expected = np.mean([yilmaz_tau_ap(ra, rb) for ra in strict_orders(-pa) for rb in strict_orders(-pb)])
        assert out["tau_ap"][a, b] == pytest.approx(expected, abs=1e-12), (a, b)
    assert np.all(np.diag(out["kendall_tau"]) == 1)
    assert out["kendall_tau_a"][0, 0] == 1 and out["kendall_tau_a"][4, 4] < 1  # tau-a: ties count 0
    assert out["tau_ap"][0, 2] != out["tau_ap"][2, 0]  # tau_AP: row a is the reference
    # the top of a p-value ordering is its smallest p: reversing the order below the top
    # pair changes tau_AP, which weights the top, differently from reversing above it
    top_first = np.array([0.001, 0.01, 0.2, 0.3, 0.4, 0.5])
    swapped_top, swapped_bottom = top_first[[1, 0, 2, 3, 4, 5]], top_first[[0, 1, 2, 3, 5, 4]]
    out, _ = S.pvalue_correlation_matrix(np.vstack([top_first, swapped_top, swapped_bottom]), ["tau_ap"])
    assert out["tau_ap"][0, 1] < out["tau_ap"][0, 2]
    assert out["tau_ap"][0, 1] == pytest.approx(yilmaz_tau_ap([0, 1, 2, 3, 4, 5], [1, 0, 2, 3, 4, 5]))


def test_pvalue_correlation_matrix_undefined_and_large():
    P = np.array([[0.1, np.nan, np.nan], [0.2, 0.3, np.nan], [0.5, 0.4, 0.3]])
    out, n = S.pvalue_correlation_matrix(P)
    assert n[0, 1] == 1 and all(np.isnan(out[s][0, 1]) for s in out)  # one pair defined: NaN
    assert out["kendall_tau_a"][1, 2] == -1 and out["tau_ap"][1, 2] == -1
    with pytest.raises(ValueError, match="unknown statistic 'rbo'"):
        S.pvalue_correlation_matrix(P, ["rbo"])
    # many items (more than one merge level of every size), smallest p on top
    rng = np.random.default_rng(14)
    big = rng.random((2, 2000))
    big[1] = np.clip(big[0] + rng.normal(0, 0.2, 2000), 0, 1)
    out, _ = S.pvalue_correlation_matrix(big)
    concordance, n1, n2 = brute_kendall(big[0], big[1])
    assert n1 == 0 and n2 > 0  # ties at 0 and 1 in the second
    assert out["kendall_tau_a"][0, 1] == pytest.approx(concordance / (2000 * 1999 / 2), abs=1e-12)
    assert out["kendall_tau"][0, 1] == pytest.approx(sps.kendalltau(big[0], big[1]).statistic, abs=1e-12)
    untied = rng.random((2, 2000))
    out, _ = S.pvalue_correlation_matrix(untied, ["tau_ap"])
    assert out["tau_ap"][0, 1] == pytest.approx(
        yilmaz_tau_ap(list(np.argsort(untied[0])), list(np.argsort(untied[1]))), abs=1e-12)


# --------------------------------------------------------------------------------------
# Confidence intervals
# --------------------------------------------------------------------------------------


def test_mean_ci_matches_scipy_t_interval():
    X = random_matrix(5, 18)
    for level in (0.95, 0.9):
        mean, low, high = S.mean_ci(X, level)
        for r in range(5):
            lo, hi = sps.t.interval(level, 17, loc=X[r].mean(), scale=sps.sem(X[r]))
            assert (mean[r], low[r], high[r]) == pytest.approx((X[r].mean(), lo, hi))
    m, lo, hi = S.mean_ci(X[0])
    assert np.ndim(m) == 0 and lo < m < hi


def test_diff_ci_matches_scipy():
    X = random_matrix(2, 18)
    d = X[0] - X[1]
    diff, low, high = S.diff_ci(X[0], X[1])
    lo, hi = sps.t.interval(0.95, 17, loc=d.mean(), scale=sps.sem(d))
    assert (diff, low, high) == pytest.approx((d.mean(), lo, hi))
    # the interval excludes 0 exactly when the paired t-test is significant at 5%
    p = sps.ttest_rel(X[0], X[1]).pvalue
    assert (low > 0 or high < 0) == (p < 0.05)
    with pytest.raises(ValueError, match="same shape"):
        S.diff_ci(X[0], X[1][:5])


def test_kendall_tau_many_matches_scipy_row_by_row():
    rng = np.random.default_rng(7)
    b = rng.integers(0, 5, size=12).astype(float)  # ties
    A = rng.integers(0, 6, size=(9, 12)).astype(float)
    A[3] = 1.0  # a ranking that is all ties: undefined
    got = S.kendall_tau_many(A, b)
    for row, value in zip(A, got):
        expected = sps.kendalltau(row, b).statistic
        assert (np.isnan(value) and np.isnan(expected)) or value == pytest.approx(expected)
