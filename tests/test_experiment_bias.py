"""``irw experiment bias`` (Sakai 2009): tables, figures, report, and every kind of number
checked against an independent computation from ``irw eval`` on the derived qrels."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from conftest import FIXTURES, cli_for

from irwarehouse import stats

MEASURES = ["AP", "Q", "nDCG(discount=jk)@1000", "RBP(p=0.95)", "AP'", "Q'",
            "nDCG'(discount=jk)@1000", "RBP'(p=0.95)", "Bpref"]
ARGS = ("--pool-depth", 10, "--samples", 200)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The fixture collection loaded and the experiment run once (shared by the tests)."""
    tmp = tmp_path_factory.mktemp("bias")
    cli = cli_for(str(tmp / "test.duckdb"))
    cli("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture")
    cli("load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv")
    out = tmp / "out"
    result = cli("experiment", "bias", "--out", out, *ARGS, "--format", "json")
    return cli, out, json.loads(result.stdout)


def _csv(out, name) -> pd.DataFrame:
    return pd.read_csv(out / f"bias_{name}.csv", keep_default_na=False, na_values=[""])


def _means(cli, qrels, runs, measures=MEASURES) -> dict:
    args = [a for m in measures for a in ("-m", m)]
    rows = json.loads(cli("eval", *args, "--qrels", qrels, "--runs", ",".join(runs),
                          "--format", "json").stdout)
    return {(r["run_id"], r["measure"]): r["value"] for r in rows}


def _matrices(cli, qrels, runs) -> dict:
    """measure -> X[run, topic] (runs in the given order, topics sorted) from `irw eval`."""
    args = [a for m in MEASURES for a in ("-m", m)]
    rows = pd.DataFrame(json.loads(cli("eval", *args, "--qrels", qrels, "--runs", ",".join(runs),
                                       "--per-topic", "--format", "json").stdout))
    return {m: g.pivot(index="run_id", columns="topic", values="value")
                .reindex(runs).sort_index(axis=1).to_numpy()
            for m, g in rows.groupby("measure")}


def test_outputs(run):
    cli, out, rows = run
    for name in ("selected_runs", "leave_out", "leave_out_summary", "teams", "summary",
                 "take_one_summary", "overview"):
        assert len(_csv(out, name)) > 0, name
    for name in ("leave_out_change", "tau", "discpower"):
        assert (out / f"bias_{name}.png").stat().st_size > 1000, name
    report = (out / "report.md").read_text()
    assert "## System bias and pool-depth bias (Sakai 2009)" in report
    assert "Leave-one-team-out" in report and "bias_summary.csv" in report
    # the JSON main table is the (b)/(c) summary
    frame = pd.DataFrame(rows)
    assert {"condition", "measure", "kendall_tau", "discriminative_power", "misses",
            "false_alarms", "tp", "fp", "fn", "tn"} <= set(frame.columns)
    assert set(frame["kind"]) == {"full", "take-one-team", "take-three-teams", "shallow"}
    assert set(frame["measure"]) == set(MEASURES)
    assert set(frame.loc[frame.kind == "shallow", "condition"]) == {"shallow pd=50", "shallow pd=10",
                                                                     "shallow pd=1"}
    full = frame[frame.kind == "full"]
    assert (full.kendall_tau == 1).all() and (full.misses == 0).all() and (full.false_alarms == 0).all()
    assert ((frame.tp + frame.fp + frame.fn + frame.tn) == frame.pairs).all()
    over = _csv(out, "overview").set_index("measure")
    pd1 = frame[frame.condition == "shallow pd=1"].set_index("measure")
    assert over["tau_shallow_pd1"].to_dict() == pytest.approx(pd1["kendall_tau"].to_dict())
    take = frame[frame.kind == "take-one-team"].groupby("measure")["discriminative_power"].mean()
    assert over["dp_take_one_team_mean"].to_dict() == pytest.approx(take.to_dict())
    # the tables are in the warehouse too
    n = json.loads(cli("sql", "SELECT count(*) AS n FROM exp_bias_summary", "--format", "json").stdout)
    assert n == [{"n": len(frame)}]


def test_one_run_per_team(run):
    cli, out, _ = run
    selected = _csv(out, "selected_runs")
    meta = pd.read_csv(FIXTURES / "runs.tsv", sep="\t")
    assert sorted(selected["team"]) == sorted(meta["team"].unique())
    team_of = dict(zip(meta.run_id, meta.team))
    assert all(team_of[r] == t for r, t in zip(selected.run_id, selected.team))


def test_leave_out_recomputed(run):
    """Score change (%) and rank change from `irw eval` on J − U_t and on J."""
    cli, out, _ = run
    leave = _csv(out, "leave_out")
    sel = list(_csv(out, "selected_runs")["run_id"])
    full = _means(cli, "fixture", sel)
    assert len(leave) == len(sel) * len(MEASURES)
    left_out = {}
    for team, run_id in zip(leave.team, leave.run_id):
        if (run_id, "AP") not in left_out:
            left_out.update(_means(cli, f"fixture-bias-lo-{team}", [run_id]))
    changed = 0
    for rec in leave.itertuples():
        after = left_out[(rec.run_id, rec.measure)]
        before = full[(rec.run_id, rec.measure)]
        assert rec.full == pytest.approx(before, abs=1e-12)
        assert rec.left_out == pytest.approx(after, abs=1e-12)
        assert rec.change_pct == pytest.approx(100 * (after - before) / before, abs=1e-9)
        others = [full[(r, rec.measure)] for r in sel if r != rec.run_id]
        rank_full = 1 + sum(o > before for o in others)
        rank_lo = 1 + sum(o > after for o in others)
        assert (rec.rank_full, rec.rank_left_out, rec.rank_change) == (rank_full, rank_lo, rank_lo - rank_full)
        changed += rank_lo != rank_full
        if rec.measure == "RBP(p=0.95)":  # traditional RBP never gains from fewer judgments
            assert rec.change_pct <= 1e-9
    summary = _csv(out, "leave_out_summary").set_index("measure")
    ap = leave[leave.measure == "AP"]
    assert summary.loc["AP", "mean_abs_change_pct"] == pytest.approx(ap.change_pct.abs().mean())
    assert summary.loc["AP", "max_abs_change_pct"] == pytest.approx(ap.change_pct.abs().max())
    assert summary["rank_changed"].sum() == changed


def test_take_teams_chosen_as_specified(run):
    cli, out, rows = run
    teams = _csv(out, "teams").set_index("team")
    # unique contributions from `irw pool stats unique`
    unique = pd.DataFrame(json.loads(cli("pool", "stats", "unique", "--runs", "pooled", "--depth", 10,
                                         "--format", "json").stdout))
    counts = unique.groupby("team").size()
    assert dict(teams["unique"]) == dict(counts)
    three = list(counts.sort_values(kind="stable").index[:3])  # (no ties on the fixtures)
    take3 = {r["teams"] for r in rows if r["kind"] == "take-three-teams"}
    assert take3 == {",".join(three)}
    # take-one-team: exactly the teams whose D_t^rel covers every topic with a relevant document
    topics = {r["topic"] for r in json.loads(cli("sql", "SELECT topic FROM topic_sets WHERE qrels = 'fixture'",
                                                 "--format", "json").stdout)}
    taken = {r["teams"] for r in rows if r["kind"] == "take-one-team"}
    for team in teams.index:
        cli("pool", "take", "--team", team, "--name", f"check-{team}", "--runs", "pooled", "--depth", 10)
        covered = {r["topic"] for r in json.loads(cli(
            "sql", f"SELECT DISTINCT topic FROM qrels WHERE qrels = 'check-{team}' AND rel >= 1",
            "--format", "json").stdout)}
        assert (team in taken) == (topics <= covered), team
    assert 0 < len(taken) < len(teams)  # the fixtures exclude a team


@pytest.mark.parametrize("condition", ["take-one-team beta", "shallow pd=1", "take-three-teams"])
def test_tau_and_discpower_recomputed(run, condition):
    """τ by scipy from `irw eval` means; bootstrap discriminative power, misses and false
    alarms from stats.paired_bootstrap over the `irw eval` per-topic matrices."""
    cli, out, rows = run
    sel = list(_csv(out, "selected_runs")["run_id"])
    mine = {r["measure"]: r for r in rows if r["condition"] == condition}
    qrels = next(iter(mine.values()))["qrels"]
    full, cond = _means(cli, "fixture", sel), _means(cli, qrels, sel)
    matrices, references = _matrices(cli, qrels, sel), _matrices(cli, "fixture", sel)
    for measure in MEASURES:
        row = mine[measure]
        tau = kendalltau([full[(r, measure)] for r in sel], [cond[(r, measure)] for r in sel]).statistic
        assert row["kendall_tau"] == pytest.approx(tau, abs=1e-12)
        X, R = matrices[measure], references[measure]
        res = stats.paired_bootstrap(X, B=200, seed=0, alpha=0.05)
        ref = stats.paired_bootstrap(R, B=200, seed=0, alpha=0.05)
        sig, sig_ref = res.p < 0.05, ref.p < 0.05
        same = np.sign(res.mean_diff) == np.sign(ref.mean_diff)
        assert row["pairs"] == len(sel) * (len(sel) - 1) // 2
        assert row["discriminative_power"] == pytest.approx(sig.sum() / row["pairs"])
        assert row["misses"] == int((~sig & sig_ref).sum())
        assert row["false_alarms"] == int((sig & ~sig_ref).sum() + (sig & sig_ref & ~same).sum())
        assert row["tp"] == int((sig & sig_ref & same).sum())


def test_resume_reuses_cells(run, monkeypatch):
    """A second run over the same directory computes nothing: no evaluation, no pool."""
    cli, out, rows = run
    cells = list((out / "cells" / "bias").glob("*.parquet"))
    assert any("scores-lo-" in p.name for p in cells) and any("stats-pd1" in p.name for p in cells)
    before = {n: _csv(out, n) for n in ("leave_out", "summary", "teams")}

    def boom(*args, **kwargs):
        raise AssertionError("recomputed a cell")

    from irwarehouse import significance
    from irwarehouse.engine import evaluation, pools

    monkeypatch.setattr(evaluation, "evaluate", boom)
    monkeypatch.setattr(pools, "build_many", boom)
    monkeypatch.setattr(significance, "run_test", boom)
    again = json.loads(cli("experiment", "bias", "--out", out, *ARGS, "--format", "json").stdout)
    assert again == rows
    for name, frame in before.items():
        pd.testing.assert_frame_equal(_csv(out, name), frame)


def test_parts_and_errors(run, tmp_path):
    cli, _, _ = run
    out = tmp_path / "a"
    rows = json.loads(cli("experiment", "bias", "--out", out, *ARGS, "--parts", "a",
                          "-m", "AP", "--format", "json").stdout)
    assert [r["measure"] for r in rows] == ["AP"] and "mean_abs_change_pct" in rows[0]
    assert not (out / "bias_summary.csv").exists()
    bad = cli("experiment", "bias", "--out", out, "--runs", "team:alpha", ok=False)
    assert bad.exit_code == 1 and "at least two" in bad.output
    bad = cli("experiment", "bias", "--out", out, "--parts", "x", ok=False)
    assert bad.exit_code == 1 and "--parts" in bad.output


def test_trec8_leave_out(trec8_db, tmp_path):
    """Part (a) on TREC-8 for three teams: RBP never gains, and a team with unique relevant
    documents loses AP."""
    cli = cli_for(trec8_db)
    out = tmp_path / "t8"
    rows = json.loads(cli("experiment", "bias", "--out", out, "--qrels", "trec8", "--parts", "a",
                          "--runs", "team:city-pliers,team:umd,team:ACSys",
                          "-m", "AP", "-m", "RBP(p=0.95)", "-m", "Bpref", "--format", "json").stdout)
    assert {r["measure"] for r in rows} == {"AP", "RBP(p=0.95)", "Bpref"}
    leave = _csv(out, "leave_out")
    selected = _csv(out, "selected_runs").set_index("team")
    assert len(selected) == 3 and len(leave) == 9
    assert (leave.loc[leave.measure == "RBP(p=0.95)", "change_pct"] <= 1e-9).all()
    for team, rec in selected.iterrows():
        ap = leave[(leave.team == team) & (leave.measure == "AP")].iloc[0]
        if rec.unique_relevant == 0:
            assert ap.change_pct == pytest.approx(0, abs=1e-9)
        assert ap.qrels == f"trec8-bias-lo-{team}"
    assert (selected.unique_relevant > 0).any()
    assert (leave[leave.measure == "AP"].change_pct < 0).any()
