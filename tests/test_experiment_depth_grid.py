"""The evaluation depth x pooling depth experiment on the fixtures."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from scipy import stats as sps

from conftest import FIXTURES


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


def test_outputs_and_resume(grid):
    cli, out, rows = grid
    assert (out / "report.md").read_text().count("## Evaluation depth × pooling depth") == 1
    for name in ("depth_grid_discpower.csv", "depth_grid_discpower.png", "depth_grid_tau.csv",
                 "depth_grid_scatter.png"):
        assert (out / name).stat().st_size > 0, name
    tau = (out / "depth_grid_tau.csv").read_text()
    assert "shallow,extended" in tau.replace(" ", "")
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
