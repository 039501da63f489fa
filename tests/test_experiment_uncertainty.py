"""``irw experiment uncertainty`` (Moffat, Scholer, Yang 2018) on the bundled fixtures, and
the numpy RBP grid it uses for the per-topic best fit.

On the fixtures (qrels from a depth-10 pool with some pooled documents unassessed) the runs
judged at the top of every topic are few: m = 2 gives alpha2, beta1, beta2 and gamma1, so
part (d) runs with ``--deep-m 2 --deep-depths 1,2``; the default m = 50 leaves it empty.
"""

from __future__ import annotations

import csv
import itertools
import json

import numpy as np
import pytest
from scipy.stats import kendalltau, ttest_rel

from conftest import FIXTURES
from irwarehouse.engine import evaluation, loading, pools
from irwarehouse.experiments import uncertainty as unc
from irwarehouse.experiments.vector_measures import gain_data, rbp_grid
from irwarehouse.measures import parse_all

DEEP = ["alpha2", "beta1", "beta2", "gamma1"]


@pytest.fixture()
def fixture_con(con):
    loading.load_qrels(con, [str(FIXTURES / "qrels.txt")], "fixture")
    loading.load_runs(con, [str(FIXTURES / "runs")], meta=str(FIXTURES / "runs.tsv"))
    return con


@pytest.fixture(scope="module")
def experiment(tmp_path_factory):
    """One run of the whole experiment on the fixtures (a coarse φ grid for part (c))."""
    from typer.testing import CliRunner

    from irwarehouse.cli import app

    tmp = tmp_path_factory.mktemp("uncertainty")
    path = str(tmp / "w.duckdb")
    runner = CliRunner()

    def cli(*args, ok=True):
        result = runner.invoke(app, ["--db", path, *map(str, args)])
        if ok and result.exit_code != 0:
            raise AssertionError(f"irw {' '.join(map(str, args))} failed:\n{result.output}\n{result.exception!r}")
        return result

    cli("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture")
    cli("load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv")
    out = tmp / "out"
    result = cli("experiment", "uncertainty", "--out", out, "--fit-step", "0.1", "--deep-m", "2",
                 "--deep-depths", "1,2", "--format", "json")
    return cli, out, json.loads(result.stdout)


def table(out, name):
    with open(out / f"uncertainty_{name}.csv") as handle:
        return list(csv.DictReader(handle))


def per_topic(cli, *args):
    rows = json.loads(cli("eval", *args, "--per-topic", "--format", "json").stdout)
    out: dict = {}
    for r in rows:
        out.setdefault(r["measure"], {}).setdefault(r["run_id"], {})[r["topic"]] = r["value"]
    return out


@pytest.mark.parametrize("derived", [False, True])
def test_rbp_grid_equals_sql(fixture_con, derived):
    """The numpy grid equals the SQL RBP(p=φ) and RBPres(p=φ) (graded gains / g_max), also
    under a derived qrels (the root's base restricted to the subset)."""
    con = fixture_con
    qrels = "fixture"
    if derived:
        pools.build(con, "depth", "fixture", "fx-d3", runs="pooled", depth=3)
        qrels = "fx-d3"
    runs = [r[0] for r in con.execute("SELECT run_id FROM run_loads ORDER BY 1").fetchall()]
    phis = [0.5, 0.77, 0.9, 0.95, 0.999]
    data = gain_data(con, qrels, runs)
    base, res = rbp_grid(data, phis, residual=True)
    assert base.shape == (len(phis), len(runs), len(data.topics))
    measures = parse_all([f"RBP(p={p})" for p in phis] + [f"RBPres(p={p})" for p in phis])
    sql = evaluation.evaluate(con, qrels, measures, runs, store=False).df()
    for k, p in enumerate(phis):
        for label, grid in ((f"RBP(p={p})", base), (f"RBPres(p={p})", res)):
            rows = sql[sql["measure"] == label]
            assert len(rows) == len(runs) * len(data.topics)
            got = grid[k][rows["run_id"].map(runs.index), rows["topic"].map(data.topics.index)]
            np.testing.assert_allclose(got, rows["value"].to_numpy(), rtol=0, atol=1e-12, err_msg=label)
    # delta2 lacks topic 104: base 0, residual 1 (as the SQL measures)
    d2, t104 = runs.index("delta2"), data.topics.index("104")
    assert base[:, d2, t104].tolist() == [0.0] * len(phis) and res[:, d2, t104].tolist() == [1.0] * len(phis)


def test_fit_grid():
    grid = unc.fit_grid(0.001)
    assert len(grid) == 500 and grid[0] == 0.5 and grid[-1] == 0.999
    assert unc.fit_grid(0.1).tolist() == [0.5, 0.6, 0.7, 0.8, 0.9]


def test_best_phi_ties_go_to_smallest():
    import pandas as pd

    fit = pd.DataFrame({"topic": "t", "reference": "AP", "phi": [0.7, 0.5, 0.6, 0.8],
                        "tau": [0.9, 0.2, 0.9, 0.1], "rbo": [np.nan] * 4})
    best = unc.best_phi(fit)
    assert best.to_dict("records") == [{"topic": "t", "reference": "AP", "criterion": "tau",
                                        "best_phi": 0.6, "value": 0.9}]


def test_outputs(experiment):
    cli, out, main = experiment
    assert main and {r["reference"] for r in main} == {"AP", "nDCG"}  # best_fit_summary
    for name in ("rbp_distribution", "residual_tau", "best_fit", "best_fit_summary", "pool_sizes",
                 "multiplicity", "score_differences", "discrimination", "residual_change"):
        assert table(out, name), name
    for name in ("rbp_boxplots", "residual_tau", "best_fit", "score_differences", "discrimination"):
        png = (out / f"uncertainty_{name}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000, name
    report = (out / "report.md").read_text()
    assert "## Measurement uncertainty (Moffat, Scholer, Yang 2018)" in report
    for part in ("**(a)", "**(b)", "**(c)", "**(d)"):
        assert part in report
    assert len(list((out / "cells" / "uncertainty").glob("*fit-*.parquet"))) == 1
    assert len(list((out / "cells" / "uncertainty").glob("*scores-d*.parquet"))) == 2


def test_distribution_and_tau_against_eval(experiment):
    cli, out, _ = experiment
    dist = {(float(r["phi"]), r["component"]): r for r in table(out, "rbp_distribution")}
    assert len(dist) == 2 * len(unc.DEFAULT_PHIS)
    scores = per_topic(cli, "-m", "RBP(p=0.9)", "-m", "RBPres(p=0.9)", "-m", "P@10")
    base = [v for run in scores["RBP(p=0.9)"].values() for v in run.values()]
    assert int(dist[(0.9, "base")]["n"]) == len(base) == 40
    assert float(dist[(0.9, "base")]["median"]) == pytest.approx(np.median(base))
    residual = [v for run in scores["RBPres(p=0.9)"].values() for v in run.values()]
    tau = next(r for r in table(out, "residual_tau") if r["phi"] == "0.9" and r["reference"] == "P@10")
    assert float(tau["mean_residual"]) == pytest.approx(np.mean(residual))
    runs = sorted(scores["P@10"])
    mean = {m: [np.mean(list(scores[m][r].values())) for r in runs] for m in ("P@10", "RBP(p=0.9)")}
    assert float(tau["tau"]) == pytest.approx(kendalltau(mean["P@10"], mean["RBP(p=0.9)"]).statistic)


def test_best_fit_against_scipy(experiment):
    """Per topic: Kendall's τ (scipy, τ-b) between the run orderings by AP and by RBP(φ) from
    `irw eval`, for the grid 0.5, 0.6, ..., 0.9; the best φ (ties: the smallest) matches."""
    cli, out, _ = experiment
    phis = [0.5, 0.6, 0.7, 0.8, 0.9]
    scores = per_topic(cli, "-m", "AP", *sum((["-m", f"RBP(p={p})"] for p in phis), []))
    runs = sorted(scores["AP"])
    best = {(r["topic"], r["reference"], r["criterion"]): r for r in table(out, "best_fit")}
    for topic in ("101", "102", "103", "104", "105"):
        ap = [scores["AP"][r][topic] for r in runs]
        taus = [kendalltau(ap, [scores[f"RBP(p={p})"][r][topic] for r in runs]).statistic for p in phis]
        top = max(taus)
        expected = next(p for p, t in zip(phis, taus) if t >= top - 1e-12)
        row = best[(topic, "AP", "tau")]
        assert float(row["best_phi"]) == pytest.approx(expected), topic
        assert float(row["value"]) == pytest.approx(top)
    summary = {(r["reference"], r["criterion"]): r for r in table(out, "best_fit_summary")}
    row = summary[("AP", "tau")]
    fitted = [float(best[(t, "AP", "tau")]["best_phi"]) for t in ("101", "102", "103", "104", "105")]
    assert int(row["topics"]) == 5
    assert int(row["n_lt_0_8"]) + int(row["n_0_8_to_0_9"]) + int(row["n_ge_0_9"]) == 5
    assert int(row["n_ge_0_9"]) == sum(p >= 0.9 for p in fitted)
    assert float(row["mean_phi"]) == pytest.approx(np.mean(fitted))


def test_deeply_judged_part(experiment):
    cli, out, _ = experiment
    sizes = table(out, "pool_sizes")
    assert [r["depth"] for r in sizes] == ["1", "2"] and {r["runs"] for r in sizes} == {"4"}
    stats = json.loads(cli("pool", "stats", "topics", "--runs", ",".join(DEEP), "--depth", "1",
                           "--format", "json").stdout)
    assert float(sizes[0]["mean_pool_size"]) == pytest.approx(np.mean([s["pool_size"] for s in stats]))
    # discrimination ratio: paired t over the topics from `irw eval` under the reduced qrels
    disc = {(r["depth"], r["measure"]): r for r in table(out, "discrimination")}
    for depth in (1, 2):
        scores = per_topic(cli, "-m", "AP", "-m", "RBP(p=0.98)", "--qrels", f"fixture-mu2-d{depth}",
                           "--runs", ",".join(DEEP))
        for measure in ("AP", "RBP(p=0.98)"):
            topics = sorted(scores[measure][DEEP[0]])
            X = {r: [scores[measure][r][t] for t in topics] for r in DEEP}
            p = [ttest_rel(X[a], X[b]).pvalue for a, b in itertools.combinations(DEEP, 2)]
            row = disc[(str(depth), measure)]
            assert int(row["pairs"]) == 6
            assert float(row["discrimination_ratio"]) == pytest.approx(np.mean(np.array(p) < 0.05))
    # the score differences against d' = 2
    ap1 = per_topic(cli, "-m", "AP", "--qrels", "fixture-mu2-d1", "--runs", ",".join(DEEP))["AP"]
    ap2 = per_topic(cli, "-m", "AP", "--qrels", "fixture-mu2-d2", "--runs", ",".join(DEEP))["AP"]
    diffs = [ap1[r][t] - ap2[r][t] for r in DEEP for t in ap1[r]]
    row = next(r for r in table(out, "score_differences") if r["measure"] == "AP")
    assert row["depth"] == "1" and int(row["pairs"]) == 20
    assert float(row["mean_diff"]) == pytest.approx(np.mean(diffs))
    change = next(r for r in table(out, "residual_change") if r["measure"] == "RBP(p=0.98)")
    assert -1 <= float(change["tau_difference"]) <= 1


def test_resumes_from_cells(experiment):
    cli, out, main = experiment
    before = sorted(p.name for p in (out / "cells" / "uncertainty").iterdir())
    again = cli("experiment", "uncertainty", "--out", out, "--fit-step", "0.1", "--deep-m", "2",
                "--deep-depths", "1,2", "--parts", "c,d", "--format", "json")
    assert json.loads(again.stdout) == main
    assert sorted(p.name for p in (out / "cells" / "uncertainty").iterdir()) == before


def test_degrades_gracefully(cli, tmp_path):
    cli("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture")
    cli("load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv")
    out = tmp_path / "out"
    cli("experiment", "uncertainty", "--out", out, "--parts", "b,c,d", "--runs", "alpha1,beta1",
        "--fit-step", "0.1")
    report = (out / "report.md").read_text()
    assert "Part (c) is empty" in report
    assert "Part (d) is empty" in report and "--deep-m" in report
    assert (out / "uncertainty_residual_tau.csv").exists()
    result = cli("experiment", "uncertainty", "--out", out, "--parts", "x", ok=False)
    assert result.exit_code == 1 and "unknown part" in result.output
