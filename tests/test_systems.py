"""Systems that each have several runs (SPEC §5, "Systems with several runs"): a run's
metadata names its system; ``--by system`` works on the systems' per-topic means, with the
number of runs and the spread of their means beside each system. Checked against
independent computations on the per-topic means (pandas group-bys of ``irw eval``'s
per-topic rows, scipy's paired t-test pair by pair)."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from conftest import FIXTURES, cli_for
from irwarehouse import Warehouse
from irwarehouse import systems as S
from irwarehouse.errors import IrwError


def _json(invoke, *args):
    return json.loads(invoke(*args, "--format", "json").stdout)


# ----------------------------------------------------------------------------- the grouping


def test_systems_of_runs():
    systems = S.Systems.of(["b2", "a1", "b1", "c"], {"a1": "A", "b1": "B", "b2": "B", "c": None})
    assert systems.as_dict() == {"A": ["a1"], "B": ["b2", "b1"], "c": ["c"]}
    assert systems.system_of() == {"a1": "A", "b2": "B", "b1": "B", "c": "c"}
    with pytest.raises(IrwError, match="run c has no system, so it is its own system c, but run c2 name"):
        S.Systems.of(["c", "c2"], {"c2": "c"})
    assert S.Systems.of(["c", "c2"], {"c": "c", "c2": "c"}).as_dict() == {"c": ["c", "c2"]}


def test_group_means_and_spread():
    X = np.array([[0.1, 0.3], [0.5, 0.7], [0.2, 0.2], [0.9, 0.1]])
    runs = ["r1", "r2", "r3", "r4"]
    systems = S.Systems.of(runs, {"r1": "s", "r3": "s", "r4": "s"})
    # systems by name: r2 alone, then s = mean of r1, r3, r4
    np.testing.assert_allclose(S.group_means(X, systems, runs), [[0.5, 0.7], [0.4, 0.2]])
    assert systems.names == ("r2", "s")
    spread = S.spread(X.mean(axis=1), systems, runs)
    assert spread["runs"].tolist() == [1, 3]
    assert math.isnan(spread["run_sd"][0])
    assert spread["run_sd"][1] == pytest.approx(np.std([0.2, 0.2, 0.5], ddof=1))
    assert (spread["run_min"][1], spread["run_max"][1]) == (pytest.approx(0.2), pytest.approx(0.5))
    # a difference smaller than the larger spread is flagged; one run has no spread
    assert S.within_spread([0.1, 0.2, 0.1], [0.15, 0.15, np.nan], [0.05, np.nan, np.nan]).tolist() == \
        [True, False, False]


# ----------------------------------------------------------------------------- the fixtures


@pytest.fixture()
def fx(cli, tmp_path):
    cli("load", "collection", FIXTURES, "--name", "fx", "--qrels-name", "fixture")
    meta = tmp_path / "systems.tsv"
    meta.write_text("run_id\tsystem\nalpha1\talpha\nalpha2\talpha\nbeta1\tbeta\nbeta2\tbeta\n")
    cli("load", "meta", meta)
    return cli


def _per_topic_means(invoke, measure, systems):
    """The systems' per-topic means from irw eval's per-topic rows of the runs (pandas)."""
    per = pd.DataFrame(_json(invoke, "eval", "-m", measure, "--per-topic", "--no-store"))
    per["system"] = per["run_id"].map(lambda r: systems.get(r, r))
    return per.groupby(["system", "topic"])["value"].mean().unstack()


def test_fixture_systems(fx):
    systems = {"alpha1": "alpha", "alpha2": "alpha", "beta1": "beta", "beta2": "beta"}
    assert {r["run_id"]: r["system"] for r in _json(fx, "runs", "list")} == \
        {**{r: None for r in ("delta1", "delta2", "gamma1", "gamma2")}, **systems}
    wide = _per_topic_means(fx, "AP", systems)
    means = _json(fx, "eval", "-m", "AP", "--by", "system", "--no-store")
    run_means = {r["run_id"]: r["value"] for r in _json(fx, "eval", "-m", "AP", "--no-store")}
    assert [m["system"] for m in means] == ["alpha", "beta", "delta1", "delta2", "gamma1", "gamma2"]
    for m in means:
        members = [r for r in run_means if systems.get(r, r) == m["system"]]
        assert m["value"] == pytest.approx(wide.loc[m["system"]].mean(), abs=1e-12)
        assert m["runs"] == len(members) and m["n_topics"] == 5
        values = [run_means[r] for r in members]
        assert m["run_min"] == pytest.approx(min(values)) and m["run_max"] == pytest.approx(max(values))
        assert (m["run_sd"] is None) == (len(values) == 1)
        if len(values) > 1:
            assert m["run_sd"] == pytest.approx(np.std(values, ddof=1))
    per = _json(fx, "eval", "-m", "AP", "--by", "system", "--per-topic", "--no-store")
    assert {(r["system"], r["topic"]): r["value"] for r in per} == \
        pytest.approx({(s, t): v for (s, t), v in wide.stack().items()})
    ci = _json(fx, "ci", "-m", "AP", "--by", "system")
    alpha = wide.loc["alpha"].to_numpy()
    low, high = sps.t.interval(0.95, len(alpha) - 1, loc=alpha.mean(), scale=sps.sem(alpha))
    assert ci[0]["system"] == "alpha" and (ci[0]["ci_low"], ci[0]["ci_high"]) == \
        (pytest.approx(low), pytest.approx(high))
    assert ci[0]["runs"] == 2 and ci[0]["run_sd"] == pytest.approx(means[0]["run_sd"])
    # pairs of systems: the t-test on the per-topic means; alpha and beta differ by less
    # than beta's runs differ among themselves
    pairs = _json(fx, "pvalues", "-m", "AP", "--by", "system")
    assert len(pairs) == 15
    ab = pairs[0]
    assert (ab["system_a"], ab["system_b"], ab["runs_a"], ab["runs_b"]) == ("alpha", "beta", 2, 2)
    beta = wide.loc["beta"].to_numpy()
    assert ab["p_value"] == pytest.approx(sps.ttest_rel(alpha, beta).pvalue)
    assert ab["within_spread"] is True and abs(ab["diff"]) < means[1]["run_sd"]
    assert not any(p["within_spread"] for p in pairs[1:])
    compare = _json(fx, "compare", "alpha", "beta", "-m", "AP", "--by", "system", "--test", "t",
                    "--test", "wilcoxon")[0]
    assert (compare["system_a"], compare["system_b"]) == ("alpha", "beta")
    for key, same in (("diff", "diff"), ("ci_low", "ci_low"), ("ci_high", "ci_high"), ("p_t", "p_value"),
                      ("effect_size", "effect_size"), ("within_spread", "within_spread")):
        assert compare[key] == pytest.approx(ab[same]), key
    assert compare["p_wilcoxon"] == pytest.approx(sps.wilcoxon(alpha, beta).pvalue)
    runs_alpha = [r for r in run_means if systems.get(r) == "alpha"]
    residual = pd.DataFrame(_json(fx, "eval", "-m", "RBPres(p=0.8)", "--runs", ",".join(runs_alpha), "--no-store"))
    assert compare["residual_a"] == pytest.approx(residual["value"].mean())
    dp = _json(fx, "discpower", "-m", "AP", "--by", "system")[0]
    assert (dp["runs"], dp["systems"], dp["pairs"]) == (8, 6, 15)
    assert dp["significant"] == sum(p["p_value"] < 0.05 for p in pairs)
    bad = fx("compare", "alpha", "nosuch", "-m", "AP", "--by", "system", ok=False)
    assert "no system nosuch" in bad.stderr


def test_meta_system_column_checks(fx, tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("run_id\tsystem\nalpha1\tba\x07d\n")
    result = fx("load", "meta", bad, ok=False)
    assert "line 2" in result.stderr and "system name" in result.stderr
    clash = tmp_path / "clash.tsv"
    clash.write_text("run_id\tsystem\nalpha1\tgamma1\n")
    fx("load", "meta", clash)
    result = fx("pvalues", "-m", "AP", "--by", "system", ok=False)
    assert "run gamma1 has no system" in result.stderr
    result = fx("eval", "-m", "AP", "--by", "team", ok=False)
    assert "unknown --by 'team'" in result.stderr


def test_the_api_and_saved_system_pairs(fx):
    with Warehouse(fx.db_path) as w:
        assert w.systems()["beta"] == ["beta1", "beta2"]
        frame = w.pvalues("AP", by="system", save="sys").df()
        saved = w.sql("SELECT system_a, system_b, run_a, runs_a, within_spread, ci_low FROM pair_tests "
                      "WHERE name = 'sys' ORDER BY system_a, system_b").df()
    assert saved["run_a"].isna().all() and len(saved) == 15
    assert saved["ci_low"].tolist() == pytest.approx(frame.sort_values(["system_a", "system_b"])["ci_low"].tolist())


# ----------------------------------------------------------------------------- TREC-8


def test_trec8_teams_as_systems(trec8, trec8_db, tmp_path):
    """Done when: with each TREC-8 team's runs declared as one system (41 systems), eval
    --by system and pvalues --by system equal an independent computation on the per-topic
    means within 1e-9."""
    path = str(tmp_path / "trec8.duckdb")
    shutil.copy(trec8_db, path)  # the session's warehouse stays as the other tests expect it
    teams = pd.read_csv(trec8 / "runs.tsv", sep="\t")
    meta = tmp_path / "systems.tsv"
    teams.rename(columns={"team": "system"})[["run_id", "system"]].to_csv(meta, sep="\t", index=False)
    w = cli_for(path)
    w("load", "meta", meta)
    per = pd.DataFrame(_json(w, "eval", "-m", "AP", "--per-topic"))
    per["system"] = per["run_id"].map(dict(zip(teams["run_id"], teams["team"])))
    wide = per.groupby(["system", "topic"])["value"].mean().unstack()
    assert wide.shape == (41, 50)
    run_means = per.groupby("run_id")["value"].mean()
    spread = run_means.groupby(per.groupby("run_id")["system"].first()).agg(["count", "std", "min", "max"])
    means = pd.DataFrame(_json(w, "eval", "-m", "AP", "--by", "system")).set_index("system")
    assert list(means.index) == sorted(wide.index)
    np.testing.assert_allclose(means["value"], wide.mean(axis=1).loc[means.index], rtol=0, atol=1e-9)
    assert means["runs"].tolist() == spread.loc[means.index, "count"].tolist()
    np.testing.assert_allclose(means["run_sd"].astype(float), spread.loc[means.index, "std"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(means["run_min"], spread.loc[means.index, "min"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(means["run_max"], spread.loc[means.index, "max"], rtol=0, atol=1e-9)
    pairs = pd.DataFrame(_json(w, "pvalues", "-m", "AP", "--by", "system"))
    assert len(pairs) == 41 * 40 // 2
    a, b = wide.loc[pairs["system_a"]].to_numpy(), wide.loc[pairs["system_b"]].to_numpy()
    test = sps.ttest_rel(a, b, axis=1)
    ci = test.confidence_interval(0.95)
    np.testing.assert_allclose(pairs["diff"], (a - b).mean(axis=1), rtol=0, atol=1e-9)
    np.testing.assert_allclose(pairs["p_value"], test.pvalue, rtol=0, atol=1e-9)
    np.testing.assert_allclose(pairs["ci_low"], ci.low, rtol=0, atol=1e-9)
    np.testing.assert_allclose(pairs["ci_high"], ci.high, rtol=0, atol=1e-9)
    d = a - b
    np.testing.assert_allclose(pairs["effect_size"], d.mean(axis=1) / d.std(axis=1, ddof=1), rtol=0, atol=1e-9)
    sd = spread["std"].fillna(0.0)
    flagged = np.abs(pairs["diff"]) < np.maximum(sd.loc[pairs["system_a"]].to_numpy(),
                                                  sd.loc[pairs["system_b"]].to_numpy())
    assert pairs["within_spread"].tolist() == flagged.tolist()
    assert 0 < flagged.sum() < len(pairs)
