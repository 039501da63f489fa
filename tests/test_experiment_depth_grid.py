"""The evaluation depth x pooling depth experiment on the fixtures."""

from __future__ import annotations

import csv
import itertools
import json
import math

import numpy as np
import pytest
from scipy import stats as sps

from conftest import FIXTURES, expected_tau_ap, tie_breakings


@pytest.fixture()
def grid(cli, tmp_path):
    cli("load", "qrels", FIXTURES / "qrels.txt", "--name", "fx")
    cli("load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv")
    out = tmp_path / "out"
    result = cli("experiment", "depth-grid", "--out", out, "--pool-depths", "5,10",
                 "--eval-depths", "5,10,100", "--format", "json")
    return cli, out, json.loads(result.stdout)


def per_topic(cli, measure, qrels):
    rows = json.loads(cli("eval", "-m", measure, "--qrels", qrels, "--per-topic", "--format", "json",
                          "--no-store").stdout)
    runs = sorted({r["run_id"] for r in rows})
    topics = sorted({r["topic"] for r in rows})
    value = {(r["run_id"], r["topic"]): r["value"] for r in rows}
    return np.array([[value[(run, t)] for t in topics] for run in runs])


def power(X):
    p = [sps.ttest_rel(X[i], X[j]).pvalue for i, j in itertools.combinations(range(len(X)), 2)]
    return sum(v < 0.05 for v in p) / len(p)


def test_cells_match_an_independent_computation(grid):
    cli, out, rows = grid
    cell = {(r["pool_depth"], r["eval_depth"], r["family"], r["form"]): r for r in rows}
    assert len(rows) == 3 * 3 * 13  # (full, 5, 10) x (5, 10, 100) x 13 measure forms
    X = per_topic(cli, "AP@10", "fx-grid-d5")
    assert cell[(5, 10, "AP", "normalized")]["discriminative_power"] == pytest.approx(power(X))
    X = per_topic(cli, "DCG(discount=jk)@100", "fx")
    assert cell[("full", 100, "DCG", "raw")]["discriminative_power"] == pytest.approx(power(X))
    sd = X.std(axis=0, ddof=1)
    Z = sps.norm.cdf(np.where(sd > 0, (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1), 0))
    assert cell[("full", 100, "DCG", "standardized")]["discriminative_power"] == pytest.approx(power(Z))


def test_tau_table_against_an_independent_computation(grid):
    """The tau table: each family against itself in two of the cells shallow (pool 10 /
    evaluation 10), extended (10 / 100) and full (full qrels / the deepest evaluation depth,
    100), every form; and each family against every other at full (cross-metric). Its τ, τ_AP
    (cell_b the reference) and the τ of the p-value orderings (smallest p on top) recomputed
    from `irw eval` scores with scipy and tau_AP's definition."""
    cli, out, _ = grid
    rows = list(csv.DictReader((out / "depth_grid_tau.csv").open()))
    assert set(rows[0]) == {"cell_a", "family_a", "measure_a", "cell_b", "family_b", "measure_b", "form",
                            "kendall_tau", "tau_ap", "pvalue_tau", "pvalue_tau_ap"}
    same = [r for r in rows if r["family_a"] == r["family_b"]]
    cross = [r for r in rows if r["family_a"] != r["family_b"]]
    assert {(r["cell_a"], r["cell_b"]) for r in same} == {("shallow", "extended"), ("shallow", "full"),
                                                          ("extended", "full")}
    assert len(same) == 3 * 13  # the 13 measure forms, as in the discpower table
    assert {r["cell_b"] for r in cross} == {"full"} and {r["cell_a"] for r in cross} == {"shallow", "extended", "full"}
    # raw: 4 x 3 ordered family pairs; normalized: P, DCG, AP (RBP has none); standardized: as raw
    assert len(cross) == 3 * (12 + 6 + 12)
    qrels = {"shallow": "fx-grid-d10", "extended": "fx-grid-d10", "full": "fx"}
    scores = {}

    def matrix(measure, cell, form):
        if (measure, cell) not in scores:
            scores[(measure, cell)] = per_topic(cli, measure, qrels[cell])
        X = scores[(measure, cell)]
        if form == "standardized":
            sd = X.std(axis=0, ddof=1)
            X = sps.norm.cdf(np.where(sd > 0, (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1), 0))
        return X

    def pvalues(X):
        return np.array([sps.ttest_rel(X[i], X[j]).pvalue for i, j in itertools.combinations(range(len(X)), 2)])

    wanted = [r for r in rows if r["form"] != "normalized-expanded"]
    checked_ap = 0
    for r in wanted[::3] + [r for r in cross if r["cell_a"] == "shallow" and r["form"] == "raw"]:
        A, B = matrix(r["measure_a"], r["cell_a"], r["form"]), matrix(r["measure_b"], r["cell_b"], r["form"])
        # means as exactly rounded sums: runs with equal P@10 sums tie
        ma, mb = (np.array([math.fsum(x) / x.size for x in M]) for M in (A, B))
        assert float(r["kendall_tau"]) == pytest.approx(sps.kendalltau(ma, mb).statistic, abs=1e-9), r
        assert float(r["tau_ap"]) == pytest.approx(expected_tau_ap(mb, ma), abs=1e-9), r
        pa, pb = pvalues(A), pvalues(B)
        keep = ~(np.isnan(pa) | np.isnan(pb))
        assert float(r["pvalue_tau"]) == pytest.approx(sps.kendalltau(pa[keep], pb[keep]).statistic, abs=1e-9), r
        ra, rb = -pa[keep], -pb[keep]
        if tie_breakings(ra) * tie_breakings(rb) <= 2000:
            assert float(r["pvalue_tau_ap"]) == pytest.approx(expected_tau_ap(rb, ra), abs=1e-9), r
            checked_ap += 1
    assert checked_ap >= 20
    row = next(r for r in cross if (r["cell_a"], r["family_a"], r["family_b"], r["form"]) == ("shallow", "P", "AP", "normalized"))
    assert (row["measure_a"], row["measure_b"]) == ("R@10", "AP@100")
    rbp = next(r for r in same if r["family_a"] == "RBP" and r["form"] == "raw" and r["cell_b"] == "full")
    assert rbp["measure_b"] == "RBP(depth=100,residual=0.1)@100"  # φ = 0.1^(1/100)


def test_outputs_and_resume(grid):
    cli, out, rows = grid
    assert (out / "report.md").read_text().count("## Evaluation depth × pooling depth") == 1
    for name in ("depth_grid_discpower.csv", "depth_grid_discpower.png", "depth_grid_tau.csv",
                 "depth_grid_scatter.png"):
        assert (out / name).stat().st_size > 0, name
    tau = (out / "depth_grid_tau.csv").read_text()
    assert "shallow,P,P@10,extended,P,P@100" in tau
    stored = json.loads(cli("sql", "SELECT count(*) AS n FROM exp_depth_grid_discpower", "--format", "json").stdout)
    assert stored == [{"n": len(rows)}]
    cells = sorted((out / "cells").rglob("*.parquet"))
    stamps = [p.stat().st_mtime_ns for p in cells]
    again = json.loads(cli("experiment", "depth-grid", "--out", out, "--pool-depths", "5,10",
                           "--eval-depths", "5,10,100", "--format", "json").stdout)
    assert again == rows
    assert [p.stat().st_mtime_ns for p in sorted((out / "cells").rglob("*.parquet"))] == stamps


def pool_matches(cli, name, run_filter):
    """Whether qrels `name` is exactly J ∩ pool(runs, 5), the runs those of run_info WHERE run_filter."""
    rows = json.loads(cli("sql", f"""
        SELECT (SELECT count(*) FROM (SELECT topic, docno, rel FROM qrels WHERE qrels = '{name}'
                 EXCEPT SELECT * FROM pooled_qrels('fx', (SELECT list(run_id) FROM run_info WHERE {run_filter}), 5)))
             + (SELECT count(*) FROM (SELECT * FROM pooled_qrels('fx', (SELECT list(run_id) FROM run_info WHERE {run_filter}), 5)
                 EXCEPT SELECT topic, docno, rel FROM qrels WHERE qrels = '{name}')) AS differences""",
                          "--format", "json").stdout)
    return rows[0]["differences"] == 0


def test_pools_of_all_runs_by_default(grid, tmp_path):
    """The paper pools over all runs; --pool-runs pooled pools over the pooled runs only (the
    fixtures have a run that is not pooled, so the two depth-5 pools differ)."""
    cli, out, rows = grid
    assert pool_matches(cli, "fx-grid-d5", "true") and not pool_matches(cli, "fx-grid-d5", "pooled")
    assert "a depth-d pool of the `all` runs" in (out / "report.md").read_text()
    cli("experiment", "depth-grid", "--out", tmp_path / "pooled", "--pool-depths", "5", "--eval-depths", "5",
        "--pool-runs", "pooled")
    assert pool_matches(cli, "fx-grid-d5", "pooled") and not pool_matches(cli, "fx-grid-d5", "true")
