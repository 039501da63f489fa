"""Significance, discriminative power and correlation over warehouse scores (SPEC §5),
driven through the CLI and checked against independent scipy computations."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats as sps

from conftest import FIXTURES
from irwarehouse import measures, runsets, schema, significance
from irwarehouse.engine import evaluation


@pytest.fixture()
def loaded(cli):
    cli("load", "qrels", FIXTURES / "qrels.txt", "--name", "fx")
    cli("load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv")
    return cli


def matrix(db_path, measure="AP", qrels="fx"):
    con = schema.connect(db_path)
    runs = runsets.resolve(con, "all")
    per = evaluation.evaluate(con, qrels, measures.parse_all([measure]), runs, store=False).df()
    con.close()
    wide = per.pivot(index="run_id", columns="topic", values="value").reindex(runs)
    return runs, wide.to_numpy()


def test_discpower_t_matches_scipy(loaded):
    rows = json.loads(loaded("discpower", "-m", "AP", "--format", "json").stdout)
    runs, X = matrix(loaded.db_path)
    significant = sum(sps.ttest_rel(X[i], X[j]).pvalue < 0.05
                      for i, j in itertools.combinations(range(len(runs)), 2))
    assert rows[0]["pairs"] == 28 and rows[0]["significant"] == significant
    assert rows[0]["discriminative_power"] == pytest.approx(significant / 28)


def test_pvalues_and_corrections(loaded):
    plain = json.loads(loaded("pvalues", "-m", "AP", "--format", "json").stdout)
    holm = json.loads(loaded("pvalues", "-m", "AP", "--correction", "holm", "--format", "json").stdout)
    runs, X = matrix(loaded.db_path)
    index = {r: k for k, r in enumerate(runs)}
    for row in plain:
        expected = sps.ttest_rel(X[index[row["run_a"]]], X[index[row["run_b"]]]).pvalue
        assert row["p_value"] == pytest.approx(expected)
    p = sorted(r["p_value"] for r in plain)
    # Holm: the smallest p-value times m
    assert min(r["p_adjusted"] for r in holm) == pytest.approx(min(1.0, p[0] * len(p)))
    assert all(h["p_adjusted"] >= h["p_value"] for h in holm)


def test_compare_two_runs(loaded):
    rows = json.loads(loaded("compare", "alpha1", "gamma2", "-m", "AP", "-m", "P@10",
                             "--test", "t", "--test", "wilcoxon", "--format", "json").stdout)
    runs, X = matrix(loaded.db_path)
    a, b = X[runs.index("alpha1")], X[runs.index("gamma2")]
    ap = rows[0]
    assert ap["measure"] == "AP" and ap["diff"] == pytest.approx((a - b).mean())
    low, high = sps.t.interval(0.95, len(a) - 1, loc=(a - b).mean(), scale=sps.sem(a - b))
    assert (ap["ci_low"], ap["ci_high"]) == (pytest.approx(low), pytest.approx(high))
    assert ap["p_t"] == pytest.approx(sps.ttest_rel(a, b).pvalue)
    assert ap["p_wilcoxon"] == pytest.approx(sps.wilcoxon(a, b).pvalue)
    assert 0 <= ap["residual_b"] <= 1 and 0 <= ap["judged_a"] <= 1


def test_correlate_and_reference(loaded):
    row = json.loads(loaded("correlate", "-m", "AP", "-m", "P@10", "--format", "json").stdout)[0]
    _, X = matrix(loaded.db_path, "AP")
    _, Y = matrix(loaded.db_path, "P@10")

    def exact_means(M):  # equal sums give equal means: delta1 and gamma2 tie in P@10 (0.34)
        return [float(sum(map(Fraction, r)) / len(r)) for r in M]

    x, y = exact_means(X), exact_means(Y)
    assert len(set(y)) == 7  # the tie is kept
    assert row["kendall_tau"] == pytest.approx(sps.kendalltau(x, y).statistic)
    assert row["pearson"] == pytest.approx(sps.pearsonr(x, y).statistic)
    same = json.loads(loaded("correlate", "-m", "AP", "--format", "json").stdout)[0]
    assert same["kendall_tau"] == same["tau_ap"] == same["rbo"] == pytest.approx(1.0)
    loaded("pool", "shallow", "--depth", "1", "--name", "fx-s1")
    ref = json.loads(loaded("discpower", "-m", "AP", "--qrels", "fx-s1", "--reference-qrels", "fx",
                            "--format", "json").stdout)[0]
    assert ref["tp"] + ref["fp"] + ref["fn"] + ref["tn"] == 28
    assert ref["misses"] == ref["fn"] and ref["false_alarms"] == ref["fp"]


def test_saved_results_are_tables(loaded):
    loaded("discpower", "-m", "AP", "-m", "nDCG", "--test", "bootstrap", "-B", "200", "--save", "dp1")
    loaded("pvalues", "-m", "AP", "--save", "pairs1")
    dp = json.loads(loaded("sql", "SELECT measure, test, \"B\", pairs FROM discpower_results WHERE name = 'dp1' ORDER BY measure", "--format", "json").stdout)
    assert dp == [{"measure": "AP", "test": "bootstrap", "B": 200, "pairs": 28},
                  {"measure": "nDCG", "test": "bootstrap", "B": 200, "pairs": 28}]
    n = json.loads(loaded("sql", "SELECT count(*) AS n FROM pair_tests WHERE name = 'pairs1'", "--format", "json").stdout)
    assert n == [{"n": 28}]


@pytest.mark.parametrize("args, message", [
    (("discpower", "-m", "AP", "--runs", "alpha1"), "need at least two runs"),
    (("discpower", "-m", "AP", "--alpha", "1.5"), "alpha must be between 0 and 1"),
    (("discpower", "-m", "AP", "--test", "bootstrap", "-B", "50"), "B must be at least 100"),
    (("discpower", "-m", "AP", "--test", "magic"), "unknown test 'magic'"),
    (("compare", "alpha1", "alpha1", "-m", "AP"), "two different runs"),
    (("compare", "alpha1", "nope", "-m", "AP"), "unknown run 'nope'"),
])
def test_bad_input(loaded, args, message):
    result = loaded(*args, ok=False)
    assert result.exit_code == 1 and message in result.stderr, result.stderr


def test_trec8_discriminative_power_of_ap(trec8_db):
    con = schema.connect(trec8_db)
    runs = runsets.resolve(con, "all")
    ap = measures.parse_all(["AP"])
    frame = significance.discpower(con, "trec8", ap, runs, test="t")
    m = significance.score_matrix(con, "trec8", ap[0], runs)
    con.close()
    i, j = np.triu_indices(len(runs), 1)
    p = sps.ttest_rel(m.X[i], m.X[j], axis=1).pvalue  # independent: scipy, pair by pair
    # a pair whose differences are constant up to rounding is undefined (stats.py): scipy
    # only knows exact zeros, and float sums in any order leave ~1e-17 behind
    d = m.X[i] - m.X[j]
    scale = np.maximum(np.abs(m.X[i]).max(axis=1), np.abs(m.X[j]).max(axis=1))
    undefined = np.isnan(p) | (d.std(axis=1, ddof=1) <= 1e-10 * scale)
    assert frame.loc[0, "pairs"] == 8256
    assert frame.loc[0, "significant"] == int(np.sum((p < 0.05) & ~undefined))
    assert frame.loc[0, "undefined"] == int(np.sum(undefined))
