"""Score standardization and collections (SPEC section 4; Webber, Moffat & Zobel 2008).

Expected values come from independent computations in the tests (pandas groupby, numpy,
scipy.stats.norm / ttest_ind / kendalltau) or from small hand-computed cases with the
arithmetic shown. The TREC-8 tests use the shared data (skipped without it).
"""

from __future__ import annotations

import csv
import json
import math

import duckdb
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from conftest import FIXTURES
from irwarehouse import measures, schema
from irwarehouse.engine import evaluation, loading
from irwarehouse import standardize as st
from irwarehouse.standardize import random_splits
from irwarehouse.errors import IrwError

ALL_RUNS = ["alpha1", "alpha2", "beta1", "beta2", "delta1", "delta2", "gamma1", "gamma2"]
REFERENCE = ["alpha1", "alpha2", "beta1", "beta2", "gamma1"]  # delta1, delta2, gamma2 left out


def load_fixture(con, runs=None, name="fixture"):
    loading.load_qrels(con, [str(FIXTURES / "qrels.txt")], name)
    loading.load_runs(con, [str(FIXTURES / "runs" / r) for r in runs] if runs else [str(FIXTURES / "runs")],
                      meta=str(FIXTURES / "runs.tsv"))
    return con


@pytest.fixture()
def fx(con):
    return load_fixture(con)


def pandas_standardize(per: pd.DataFrame, reference: list[str]) -> pd.DataFrame:
    """The independent computation: per topic, mean and sd (ddof=1) of the reference runs,
    z = (x - mu) / sd (0 when sd = 0), phi = scipy.stats.norm.cdf(z)."""
    ref = per[per["run_id"].isin(reference)]
    f = ref.groupby(["measure", "topic"])["value"].agg(mu="mean", sigma=lambda v: v.std(ddof=1)).reset_index()
    out = per.merge(f, on=["measure", "topic"])
    out["z"] = np.where(out["sigma"] == 0, 0.0, (out["value"] - out["mu"]) / out["sigma"].where(out["sigma"] != 0, 1))
    out["phi"] = stats.norm.cdf(out["z"])
    return out


# ----------------------------------------------------------------------------- Phi and z in SQL

def test_phi_macro_matches_scipy_on_dense_grid(con):
    grid = np.linspace(-8.0, 8.0, 320_001)  # step 5e-5
    extra = np.array([-8.0, -7.99999, -2 * math.sqrt(2), -2.8284271247461903, -1e-300, 0.0, 1e-12,
                      2 * math.sqrt(2), 3.5, 6.0, 8.0])
    zs = np.concatenate([grid, extra])
    got = con.execute("SELECT std_normal_cdf(z) AS p FROM (SELECT unnest(?::DOUBLE[]) AS z, "
                      "generate_subscripts(?::DOUBLE[], 1) AS i) ORDER BY i",
                      [zs.tolist(), zs.tolist()]).fetchnumpy()["p"]
    expected = stats.norm.cdf(zs)
    assert np.max(np.abs(got - expected)) < 1e-9
    # stronger than required: relative accuracy in the lower tail (Phi(-8) ~ 6e-16)
    lower = zs < 0
    assert np.max(np.abs(got[lower] - expected[lower]) / expected[lower]) < 1e-9
    assert np.all(np.diff(got[: len(grid)]) >= 0)  # monotone


def test_phi_edge_values(con):
    row = con.execute("SELECT std_normal_cdf(NULL), std_normal_cdf(0), std_normal_cdf(50), "
                      "std_normal_cdf(-50), std_normal_cdf('inf'::DOUBLE), std_normal_cdf('-inf'::DOUBLE), "
                      "isnan(std_normal_cdf('nan'::DOUBLE)), std_normal_cdf(1)").fetchone()
    assert row[:7] == (None, 0.5, 1.0, 0.0, 1.0, 0.0, True)
    assert row[7] == pytest.approx(stats.norm.cdf(1), abs=1e-15)  # an integer argument works


def test_views_on_a_hand_computed_case(con):
    # Topic T1, runs a, b, c score 0.2, 0.4, 0.6:
    #   mu = 0.4; sigma = sqrt(((0.2-0.4)^2 + 0 + (0.6-0.4)^2) / (3-1)) = sqrt(0.08/2) = 0.2
    #   z = (0.2-0.4)/0.2 = -1, 0, +1 ; phi = Phi(-1), 0.5, Phi(1)
    # Topic T2: all runs score 0.5 -> sigma = 0 -> z = 0, phi = 0.5 for every run.
    # Run means of phi: a (Phi(-1) + 0.5)/2, b 0.5, c (Phi(1) + 0.5)/2.
    con.executemany("INSERT INTO scores (qrels, collection, run_id, topic, measure, value) "
                    "VALUES ('q', 'default', ?, ?, 'AP', ?)",
                    [("a", "T1", 0.2), ("b", "T1", 0.4), ("c", "T1", 0.6),
                     ("a", "T2", 0.5), ("b", "T2", 0.5), ("c", "T2", 0.5)])
    con.execute("INSERT INTO std_factors SELECT 'F', 'q', 'AP', topic, avg(value), stddev_samp(value), "
                "count(*) FROM scores GROUP BY topic")
    got = {(r, t): (z, p) for r, t, z, p in con.execute(
        "SELECT run_id, topic, z, phi FROM std_scores WHERE factors = 'F'").fetchall()}
    assert got[("a", "T1")][0] == pytest.approx(-1.0, abs=1e-12)
    assert got[("b", "T1")][0] == pytest.approx(0.0, abs=1e-12)
    assert got[("c", "T1")][0] == pytest.approx(1.0, abs=1e-12)
    assert got[("a", "T1")][1] == pytest.approx(stats.norm.cdf(-1), abs=1e-12)
    assert all(got[(r, "T2")] == (0.0, 0.5) for r in "abc")
    means = dict(con.execute("SELECT run_id, mean_phi FROM std_score_means WHERE factors = 'F'").fetchall())
    assert means["a"] == pytest.approx((stats.norm.cdf(-1) + 0.5) / 2, abs=1e-12)
    assert means["b"] == pytest.approx(0.5, abs=1e-12)
    assert means["c"] == pytest.approx((stats.norm.cdf(1) + 0.5) / 2, abs=1e-12)
    # a stored topic without factors keeps its row, with phi NULL, and is counted as missing
    con.execute("INSERT INTO scores (qrels, collection, run_id, topic, measure, value) "
                "VALUES ('q', 'default', 'a', 'T3', 'AP', 0.9)")
    row = con.execute("SELECT n_topics, n_missing FROM std_score_means WHERE factors = 'F' AND run_id = 'a'").fetchone()
    assert row == (2, 1)


# ----------------------------------------------------------------------------- factors (fixtures)

def test_factors_and_standardized_scores_match_pandas(fx):
    info = st.create_factor_set(fx, "ref5", ["AP", "nDCG@10"], qrels="fixture", reference=",".join(REFERENCE))
    assert info["n_ref"] == 5 and info["topics"] == 5  # topic 106 has no relevant document
    parsed = measures.parse_all(["AP", "nDCG@10"])
    per = evaluation.evaluate(fx, "fixture", parsed, ALL_RUNS, store=False).df()
    expected = pandas_standardize(per, REFERENCE)
    factors = st.factors_frame(fx, "ref5").merge(
        expected[["measure", "topic", "mu", "sigma"]].drop_duplicates(), on=["measure", "topic"])
    assert len(factors) == 10
    assert np.allclose(factors["mu_x"], factors["mu_y"], atol=1e-12, rtol=0)
    assert np.allclose(factors["sigma_x"], factors["sigma_y"], atol=1e-12, rtol=0)
    got = st.standardized_scores(fx, "ref5", run_ids=ALL_RUNS, per_topic=True)
    both = got.merge(expected, on=["run_id", "measure", "topic"], suffixes=("", "_pd"))
    assert len(both) == 8 * 5 * 2
    assert np.max(np.abs(both["z"] - both["z_pd"])) < 1e-12
    assert np.max(np.abs(both["phi"] - both["phi_pd"])) < 1e-12
    assert set(both.loc[both["in_reference"], "run_id"]) == set(REFERENCE)
    means = st.standardized_scores(fx, "ref5", ["AP"], ALL_RUNS)
    pd_means = expected[expected["measure"] == "AP"].groupby("run_id")["phi"].mean()
    assert np.allclose(means.set_index("run_id")["mean_phi"].reindex(pd_means.index), pd_means, atol=1e-12)


def test_identities_on_fixtures(fx):
    ms_ = ["AP", "SP", "nDCG@10", "DCG@10", "nDCG", "DCG"]
    st.create_factor_set(fx, "self", ms_, qrels="fixture")
    got = st.standardized_scores(fx, "self", per_topic=True).pivot(
        index=["run_id", "topic"], columns="measure", values="z")
    assert got.notna().all().all() and len(got) == 40
    for a, b in (("AP", "SP"), ("nDCG@10", "DCG@10"), ("nDCG", "DCG")):
        assert np.max(np.abs(got[a] - got[b])) < 1e-9, (a, b)
    # ... while the raw values differ (the identity is not vacuous)
    raw = fx.execute("SELECT measure, avg(value) FROM scores WHERE measure IN ('AP', 'SP') GROUP BY measure").fetchall()
    assert dict(raw)["SP"] > 2 * dict(raw)["AP"]


def test_self_standardized_z_has_mean_0_and_sd_1_per_topic(fx):
    st.create_factor_set(fx, "self", ["AP", "P@10"], qrels="fixture")
    frame = st.standardized_scores(fx, "self", per_topic=True)
    by = frame.groupby(["measure", "topic"])["z"]
    assert np.max(np.abs(by.mean())) < 1e-12
    sd = by.std(ddof=1)
    assert np.max(np.abs(sd - 1)) < 1e-12


def test_scores_are_evaluated_when_missing_and_eval_standardize_agrees(fx):
    assert fx.execute("SELECT count(*) FROM scores").fetchone()[0] == 0
    st.create_factor_set(fx, "self", ["AP"], qrels="fixture")
    assert fx.execute("SELECT count(*) FROM scores WHERE measure = 'AP'").fetchone()[0] == 8 * 5
    per = evaluation.evaluate(fx, "fixture", measures.parse_all(["AP"]), ALL_RUNS, store=False).df()
    applied = st.apply_factors(fx, per, "self")
    assert list(applied.columns) == ["run_id", "topic", "measure", "value"] and len(applied) == 40
    view = fx.execute("SELECT run_id, topic, phi FROM std_scores WHERE factors = 'self'").df()
    both = applied.merge(view, on=["run_id", "topic"])
    assert len(both) == 40 and np.max(np.abs(both["value"] - both["phi"])) < 1e-15


def test_plain_duckdb_reads_the_standardized_views(tmp_path):
    path = str(tmp_path / "w.duckdb")
    con = load_fixture(schema.connect(path))
    st.create_factor_set(con, "self", ["AP"], qrels="fixture")
    expected = st.standardized_scores(con, "self")
    con.close()
    plain = duckdb.connect(path, read_only=True)  # no package code: only what the file holds
    rows = plain.execute("SELECT run_id, mean_phi, n_topics FROM std_score_means "
                         "WHERE factors = 'self' AND measure = 'AP' ORDER BY run_id").fetchall()
    per_topic = plain.execute("SELECT count(*), min(phi), max(phi) FROM std_scores WHERE factors = 'self'").fetchone()
    value = plain.execute("SELECT std_normal_cdf(1.0)").fetchone()[0]
    plain.close()
    assert [r[0] for r in rows] == ALL_RUNS and all(r[2] == 5 for r in rows)
    assert np.allclose([r[1] for r in rows], expected.set_index("run_id").loc[ALL_RUNS, "mean_phi"], atol=1e-15)
    assert per_topic[0] == 40 and 0 < per_topic[1] < per_topic[2] < 1
    assert value == pytest.approx(stats.norm.cdf(1.0), abs=1e-15)


# ----------------------------------------------------------------------------- export / import

@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_export_import_round_trip_to_runs_outside_the_reference(tmp_path, suffix):
    a = load_fixture(schema.connect(str(tmp_path / "a.duckdb")))
    st.create_factor_set(a, "ref5", ["AP", "nDCG@10"], qrels="fixture", reference=",".join(REFERENCE),
                         description='five runs, "quoted"')
    outside = ["delta1", "delta2", "gamma2"]
    want = st.standardized_scores(a, "ref5", run_ids=outside, per_topic=True)
    assert not want["in_reference"].any()
    path = str(tmp_path / f"factors.{suffix}")
    assert st.export_factor_set(a, "ref5", path) == 10
    a.close()
    # a second warehouse: other qrels name, only runs that were not in the reference set
    b = load_fixture(schema.connect(str(tmp_path / "b.duckdb")), runs=["delta.txt", "gamma2.txt"], name="local")
    with pytest.raises(IrwError, match="qrels 'fixture' is not loaded"):
        st.import_factor_set(b, path)
    info = st.import_factor_set(b, path, qrels="local")
    assert info["factors"] == "ref5" and info["rows"] == 10 and info["reference"] == f"{','.join(REFERENCE)} (5 runs)"
    row = b.execute("SELECT description, n_ref FROM std_factor_sets WHERE factors = 'ref5'").fetchone()
    assert row == ('five runs, "quoted"', 5)
    got = st.standardized_scores(b, "ref5", run_ids=outside, per_topic=True)
    both = got.merge(want, on=["run_id", "measure", "topic"], suffixes=("", "_a"))
    assert len(both) == len(want) == 3 * 5 * 2
    assert (both["mu"] == both["mu_a"]).all() and (both["sigma"] == both["sigma_a"]).all()  # exact
    assert np.max(np.abs(both["phi"] - both["phi_a"])) == 0.0
    assert both["in_reference"].isna().all()  # an imported set's reference runs are not known
    b.close()


def test_csv_export_layout(fx, tmp_path):
    st.create_factor_set(fx, "self", ["AP"], qrels="fixture")
    path = tmp_path / "f.csv"
    st.export_factor_set(fx, "self", str(path))
    rows = list(csv.DictReader(path.open()))
    assert list(rows[0]) == st.EXPORT_COLUMNS
    assert [r["topic"] for r in rows] == ["101", "102", "103", "104", "105"]
    assert {r["reference"] for r in rows} == {"all (8 runs)"} and {r["qrels"] for r in rows} == {"fixture"}


# ----------------------------------------------------------------------------- bad input

def test_fewer_than_two_reference_runs(fx):
    with pytest.raises(IrwError, match="at least two reference runs.*selects 1"):
        st.create_factor_set(fx, "one", ["AP"], qrels="fixture", reference="alpha1")
    with pytest.raises(IrwError, match="at least two reference runs"):
        st.compute_factors(fx, "fixture", ["AP"], ["alpha1"])
    assert fx.execute("SELECT count(*) FROM std_factor_sets").fetchone()[0] == 0


def test_missing_measure_or_topic_is_named(fx, tmp_path):
    st.create_factor_set(fx, "self", ["AP"], qrels="fixture")
    per = evaluation.evaluate(fx, "fixture", measures.parse_all(["AP", "P@10"]), ALL_RUNS, store=False).df()
    with pytest.raises(IrwError, match=r"factor set self has no factors for measure\(s\) P@10; it has: AP"):
        st.apply_factors(fx, per, "self")
    with pytest.raises(IrwError, match="unknown factor set 'nope'; known: self"):
        st.apply_factors(fx, per, "nope")
    # a factor set lacking topics 104 and 105
    st.export_factor_set(fx, "self", str(tmp_path / "f.csv"))
    rows = [r for r in csv.DictReader((tmp_path / "f.csv").open()) if r["topic"] not in ("104", "105")]
    with (tmp_path / "g.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=st.EXPORT_COLUMNS)
        w.writeheader()
        w.writerows(rows)
    st.import_factor_set(fx, str(tmp_path / "g.csv"), name="partial")
    with pytest.raises(IrwError, match=r"factor set partial lacks topic\(s\) 104, 105 for measure AP"):
        st.apply_factors(fx, per[per["measure"] == "AP"], "partial")
    with pytest.raises(IrwError, match=r"lacks topic\(s\) 104, 105 for measure AP"):
        st.standardized_scores(fx, "partial")
    with pytest.raises(IrwError, match=r"no factors for measure\(s\) P@10"):
        st.standardized_scores(fx, "self", ["P@10"])


def _write_csv(path, header, rows):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)


def _counts(con):
    return tuple(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                 for t in ("std_factor_sets", "std_factors", "std_reference_runs"))


def test_import_rejects_bad_files_and_imports_nothing(fx, tmp_path):
    st.create_factor_set(fx, "self", ["AP"], qrels="fixture")
    before = _counts(fx)
    good = ["factors", "qrels", "measure", "topic", "mu", "sigma", "n_ref", "reference", "description"]
    row = ["x", "fixture", "AP", "101", "0.5", "0.1", "8", "all", ""]
    cases = {
        "cols.csv": (["qrels", "measure", "topic", "mean", "sigma", "n_ref", "reference"],
                     [["fixture", "AP", "101", "0.5", "0.1", "8", "all"]],
                     r"wrong columns \(missing column\(s\) mu; unexpected column\(s\) mean\)"),
        "extra.csv": (good + ["note"], [row + ["hi"]], r"unexpected column\(s\) note"),
        "value.csv": (good, [row, ["x", "fixture", "AP", "102", "abc", "0.1", "8", "all", ""]],
                      r"line 3: mu 'abc' is not a finite number"),
        "sigma.csv": (good, [["x", "fixture", "AP", "101", "0.5", "-1", "8", "all", ""]], "sigma must not be negative"),
        "nref.csv": (good, [["x", "fixture", "AP", "101", "0.5", "0.1", "1", "all", ""]], "at least two reference runs"),
        "dup.csv": (good, [row, row], "a second row for measure AP and topic 101"),
        "measure.csv": (good, [["x", "fixture", "Nope", "101", "0.5", "0.1", "8", "all", ""]], "unknown measure"),
        "two.csv": (good, [row, ["y", "fixture", "AP", "102", "0.5", "0.1", "8", "all", ""]], "several values of factors"),
    }
    for name, (header, rows, message) in cases.items():
        _write_csv(tmp_path / name, header, rows)
        with pytest.raises(IrwError, match=message):
            st.import_factor_set(fx, str(tmp_path / name), name="new")
        assert _counts(fx) == before, name
    # Parquet with the wrong columns
    pd.DataFrame({"qrels": ["fixture"], "measure": ["AP"], "topic": ["101"], "mu": [0.5]}).to_csv(tmp_path / "x.csv", index=False)
    fx.execute(f"COPY (SELECT * FROM read_csv('{tmp_path / 'x.csv'}')) TO '{tmp_path / 'bad.parquet'}' (FORMAT parquet)")
    with pytest.raises(IrwError, match=r"missing column\(s\) sigma, n_ref, reference.*nothing imported"):
        st.import_factor_set(fx, str(tmp_path / "bad.parquet"), name="new")
    with pytest.raises(IrwError, match="factor set 'self' exists; use --replace"):
        st.export_factor_set(fx, "self", str(tmp_path / "ok.csv"))
        st.import_factor_set(fx, str(tmp_path / "ok.csv"))
    assert _counts(fx) == before


# ----------------------------------------------------------------------------- collections

def test_split_collection_by_topics_and_halves(fx):
    made = st.split_collection(fx, "fixture", "A", topics="101-103", rest="B")
    assert [(m["qrels"], m["topics"]) for m in made] == [("A", 3), ("B", 2)]
    for name, topics in (("A", ("101", "102", "103")), ("B", ("104", "105"))):
        got = set(fx.execute("SELECT topic, docno, rel FROM qrels WHERE qrels = ?", [name]).fetchall())
        want = set(fx.execute("SELECT topic, docno, rel FROM qrels WHERE qrels = 'fixture' AND topic IN "
                              "(SELECT unnest(?::VARCHAR[]))", [list(topics)]).fetchall())
        assert got == want and got
        assert sorted(r[0] for r in fx.execute("SELECT topic FROM topic_sets WHERE qrels = ?", [name]).fetchall()) == list(topics)
        assert fx.execute("SELECT kind, parent, topic_qrels FROM qrels_info WHERE qrels = ?", [name]).fetchone() \
            == ("topics", "fixture", name)
    # per-topic scores on a collection equal the parent's on those topics
    ap = measures.parse_all(["AP"])
    parent = evaluation.evaluate(fx, "fixture", ap, ALL_RUNS, store=False).df()
    child = evaluation.evaluate(fx, "A", ap, ALL_RUNS, store=False).df()
    merged = child.merge(parent, on=["run_id", "topic", "measure"])
    assert len(merged) == len(child) == 24 and np.allclose(merged["value_x"], merged["value_y"], atol=1e-15)
    # random halves: deterministic given the seed, disjoint, covering the topic set
    st.split_collection(fx, "fixture", "H1", half_seed=7, rest="H2")
    h1 = {r[0] for r in fx.execute("SELECT DISTINCT topic FROM qrels WHERE qrels = 'H1'").fetchall()}
    h2 = {r[0] for r in fx.execute("SELECT DISTINCT topic FROM qrels WHERE qrels = 'H2'").fetchall()}
    assert len(h1) == 2 and len(h2) == 3 and not h1 & h2 and h1 | h2 == {"101", "102", "103", "104", "105"}
    assert st.random_half(["101", "102", "103", "104", "105"], 7)[0] == sorted(h1)
    with pytest.raises(IrwError, match="exists; use --replace"):
        st.split_collection(fx, "fixture", "H1", half_seed=8)
    st.split_collection(fx, "fixture", "H1", half_seed=8, replace=True)
    with pytest.raises(IrwError, match="topic '999' is not in the qrels"):
        st.split_collection(fx, "fixture", "X", topics="101,999")
    with pytest.raises(IrwError, match="--topics LIST or --half SEED"):
        st.split_collection(fx, "fixture", "X")


def _independent_compare(per_c, per_d, runs):
    """RMSE, dRMSE and t-test false positives with plain numpy / scipy, run by run."""
    mc = np.array([per_c[per_c.run_id == r]["value"].mean() for r in runs])
    md = np.array([per_d[per_d.run_id == r]["value"].mean() for r in runs])
    rmse = math.sqrt(sum((a - b) ** 2 for a, b in zip(mc, md)) / len(runs))
    drmse = 2 * rmse / (np.std(mc, ddof=1) + np.std(md, ddof=1))
    fp = sum(stats.ttest_ind(per_c[per_c.run_id == r]["value"], per_d[per_d.run_id == r]["value"]).pvalue < 0.05
             for r in runs)
    return rmse, drmse, fp


def test_compare_collections_against_numpy_and_scipy(fx):
    st.split_collection(fx, "fixture", "A", topics="101-103", rest="B")
    summary, per_run = st.compare_collections(fx, "A", "B", "AP")
    assert list(summary["form"]) == ["raw", "normalized", "standardized"]
    assert list(summary["measure"]) == ["SP", "AP", "AP"]
    full = evaluation.evaluate(fx, "fixture", measures.parse_all(["AP", "SP"]), ALL_RUNS, store=False).df()
    std = pandas_standardize(full[full.measure == "AP"], ALL_RUNS)  # per-topic factors: self-standardization
    std = std.assign(value=std["phi"])
    sources = {"raw": full[full.measure == "SP"], "normalized": full[full.measure == "AP"], "standardized": std}
    in_a = ["101", "102", "103"]
    for form, frame in sources.items():
        c, d = frame[frame.topic.isin(in_a)], frame[~frame.topic.isin(in_a)]
        rmse, drmse, fp = _independent_compare(c, d, ALL_RUNS)
        row = summary[summary.form == form].iloc[0]
        assert row["rmse"] == pytest.approx(rmse, abs=1e-12), form
        assert row["drmse"] == pytest.approx(drmse, abs=1e-12), form
        assert row["false_positives"] == fp and row["fp_rate"] == pytest.approx(fp / 8)
        p = per_run[per_run.form == form].set_index("run_id")["p"]
        for r in ALL_RUNS:
            assert p[r] == pytest.approx(stats.ttest_ind(c[c.run_id == r]["value"], d[d.run_id == r]["value"]).pvalue,
                                         rel=1e-9)
    # standardizing with a stored factor set of the parent gives the same numbers
    st.create_factor_set(fx, "self", ["AP"], qrels="fixture")
    again, _ = st.compare_collections(fx, "A", "B", "AP", factors="self")
    assert again.iloc[2]["drmse"] == pytest.approx(summary.iloc[2]["drmse"], abs=1e-12)


@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")
def test_t_test_of_constant_samples_is_undefined_up_to_rounding(fx):
    # two runs self-standardized: on every topic z = +/- (d/2) / (|d| / sqrt(2)) = +/- 1/sqrt(2),
    # so each run's phi is the same constant on C and D (up to rounding): no false positive
    st.split_collection(fx, "fixture", "A", topics="101-103", rest="B")
    _, per_run = st.compare_collections(fx, "A", "B", "AP", run_spec="alpha1,delta2")
    std = per_run[per_run.form == "standardized"].set_index("run_id")
    assert std.loc["alpha1", "mean_c"] == pytest.approx(stats.norm.cdf(1 / math.sqrt(2)), abs=1e-12)
    assert std.loc["delta2", "mean_d"] == pytest.approx(stats.norm.cdf(-1 / math.sqrt(2)), abs=1e-12)
    assert std["p"].isna().all() and not std["significant"].any()
    # constant but different samples: t infinite, p = 0, as scipy.stats.ttest_ind
    t, p = st.two_sample_t(np.array([0.5]), np.array([0.0]), 3, np.array([0.25]), np.array([0.0]), 4)
    assert np.isinf(t[0]) and t[0] > 0 and p[0] == 0.0
    assert stats.ttest_ind([0.5] * 3, [0.25] * 4).pvalue == 0.0


def test_forms_of_measures():
    def names(m, raw=None):
        return [(f.form, str(f.measure)) for f in st.forms_of(m, raw)]
    assert names("AP@100") == [("raw", "SP@100"), ("normalized", "AP@100"), ("standardized", "AP@100")]
    assert names("nDCG(discount=jk)@10") == [("raw", "DCG(discount=jk)@10"), ("normalized", "nDCG(discount=jk)@10"),
                                             ("standardized", "nDCG(discount=jk)@10")]
    assert names("DCG@5") == [("raw", "DCG@5"), ("normalized", "nDCG@5"), ("standardized", "nDCG@5")]
    assert names("P@10") == [("raw", "P@10"), ("standardized", "P@10")]


@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")
def test_split_statistics_match_a_loop_with_scipy():
    rng = np.random.default_rng(3)
    X = rng.random((7, 12))
    X[2] = 0.25  # a constant run: its t-test is undefined (NaN), never a false positive
    idx_c, idx_d = st.random_split_indices(12, 40, 5, np.random.default_rng(11))
    rmse, drmse, fp = st.split_statistics(X, idx_c, idx_d)
    for s in range(40):
        assert not set(idx_c[s]) & set(idx_d[s]) and len(set(idx_c[s])) == 5
        C, D = X[:, idx_c[s]], X[:, idx_d[s]]
        mc, md = C.mean(axis=1), D.mean(axis=1)
        want_rmse = math.sqrt(np.mean((mc - md) ** 2))
        assert rmse[s] == pytest.approx(want_rmse, abs=1e-12)
        assert drmse[s] == pytest.approx(2 * want_rmse / (mc.std(ddof=1) + md.std(ddof=1)), abs=1e-12)
        with np.errstate(all="ignore"):
            p = [stats.ttest_ind(C[r], D[r]).pvalue for r in range(7)]
        assert fp[s] == pytest.approx(sum(x < 0.05 for x in p) / 7)


def test_random_splits_experiment(fx):
    kw = dict(splits=300, seed=5)
    a = st.random_splits_experiment(fx, "fixture", "AP", **kw)
    b = st.random_splits_experiment(fx, "fixture", "AP", **kw)
    pd.testing.assert_frame_equal(a, b)  # deterministic given the seed
    # independent of the chunk size
    old = random_splits.SPLIT_CHUNK
    random_splits.SPLIT_CHUNK = 7
    try:
        c = st.random_splits_experiment(fx, "fixture", "AP", **kw)
    finally:
        random_splits.SPLIT_CHUNK = old
    pd.testing.assert_frame_equal(a, c)
    # the summary equals the statistics recomputed split by split
    per = evaluation.evaluate(fx, "fixture", measures.parse_all(["AP"]), ALL_RUNS, store=False).df()
    X = per.pivot(index="run_id", columns="topic", values="value").loc[ALL_RUNS].to_numpy()
    idx_c, idx_d = st.random_split_indices(5, 300, 2, np.random.default_rng(5))
    drmse, fp = [], []
    for s in range(300):
        mc, md = X[:, idx_c[s]].mean(axis=1), X[:, idx_d[s]].mean(axis=1)
        r = math.sqrt(np.mean((mc - md) ** 2))
        drmse.append(2 * r / (mc.std(ddof=1) + md.std(ddof=1)))
        fp.append(np.mean([stats.ttest_ind(X[i, idx_c[s]], X[i, idx_d[s]]).pvalue < 0.05 for i in range(8)]))
    row = a[a.form == "normalized"].iloc[0]
    assert row["drmse_mean"] == pytest.approx(np.mean(drmse), abs=1e-12)
    assert row["drmse_p95"] == pytest.approx(np.percentile(drmse, 95), abs=1e-12)
    assert row["fp_rate_mean"] == pytest.approx(np.mean(fp), abs=1e-12)
    assert row["fp_rate_p99"] == pytest.approx(np.percentile(fp, 99), abs=1e-12)
    d = st.random_splits_experiment(fx, "fixture", "AP", splits=300, seed=6)
    assert not d.equals(a)
    with pytest.raises(IrwError, match="--size 3 is not possible"):
        st.random_splits_experiment(fx, "fixture", "AP", splits=10, size=3)


def test_reference_size_experiment(fx):
    frame = st.reference_size_experiment(fx, "fixture", "AP", sizes=[2, 3, 8], samples=60, seed=4)
    assert list(frame["n"]) == [2, 3, 8]
    full = frame[frame.n == 8].iloc[0]
    assert full["tau_median"] == full["tau_min"] == 1.0  # all 8 runs: the full standardization itself
    # recompute n = 3 sample by sample with pandas/scipy
    per = evaluation.evaluate(fx, "fixture", measures.parse_all(["AP"]), ALL_RUNS, store=False).df()
    X = per.pivot(index="run_id", columns="topic", values="value").loc[ALL_RUNS].to_numpy()
    full_means = stats.norm.cdf((X - X.mean(0)) / X.std(0, ddof=1)).mean(1)
    rng = np.random.default_rng([4, 3])
    picks = rng.random((60, 8)).argsort(axis=1)[:, :3]
    taus = []
    for p in picks:
        mu, sd = X[p].mean(0), X[p].std(0, ddof=1)
        z = np.where(sd == 0, 0.0, (X - mu) / np.where(sd == 0, 1, sd))
        taus.append(stats.kendalltau(stats.norm.cdf(z).mean(1), full_means).statistic)
    row = frame[frame.n == 3].iloc[0]
    assert row["tau_median"] == pytest.approx(np.median(taus), abs=1e-12)
    assert row["tau_95"] == pytest.approx(np.percentile(taus, 5), abs=1e-12)
    assert row["tau_99"] == pytest.approx(np.percentile(taus, 1), abs=1e-12)
    with pytest.raises(IrwError, match="between 2 and the 8 reference runs; not possible: 1, 9"):
        st.reference_size_experiment(fx, "fixture", "AP", sizes=[1, 9], samples=5)


# ----------------------------------------------------------------------------- CLI

@pytest.fixture()
def loaded(cli):
    cli("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture")
    cli("load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv")
    return cli


def test_cli_factor_sets(loaded, tmp_path):
    out = json.loads(loaded("standardize", "factors", "-m", "AP", "-m", "SP", "--name", "self",
                            "--format", "json").stdout)
    assert [(r["measure"], r["topics"], r["n_ref"]) for r in out] == [("AP", 5, 8), ("SP", 5, 8)]
    listed = json.loads(loaded("standardize", "list", "--format", "json").stdout)
    assert [(r["factors"], r["qrels"], r["measures"], r["reference"]) for r in listed] == \
        [("self", "fixture", "AP, SP", "all (8 runs)")]
    shown = json.loads(loaded("standardize", "show", "self", "-m", "AP", "--format", "json").stdout)
    assert [r["topic"] for r in shown] == ["101", "102", "103", "104", "105"]
    std = json.loads(loaded("eval", "-m", "AP", "--standardize", "self", "--format", "json").stdout)
    raw = json.loads(loaded("eval", "-m", "AP", "--format", "json").stdout)
    means = json.loads(loaded("standardize", "scores", "self", "-m", "AP", "--format", "json").stdout)
    by_run = {r["run_id"]: r["mean_phi"] for r in means}
    assert len(std) == 8 and all(r["value"] == pytest.approx(by_run[r["run_id"]], abs=1e-12) for r in std)
    assert any(abs(a["value"] - b["value"]) > 0.01 for a, b in zip(std, raw))  # really standardized
    per = json.loads(loaded("eval", "-m", "SP", "--standardize", "self", "--per-topic", "--format", "json").stdout)
    assert len(per) == 40 and all(0 < r["value"] < 1 for r in per)
    # export, import under another name, both formats
    for suffix in ("csv", "parquet"):
        path = tmp_path / f"f.{suffix}"
        loaded("standardize", "export", "self", path)
        loaded("standardize", "import", path, "--name", f"again-{suffix}")
        again = json.loads(loaded("standardize", "scores", f"again-{suffix}", "-m", "AP", "--format", "json").stdout)
        assert [r["mean_phi"] for r in again] == [r["mean_phi"] for r in means]
    loaded("standardize", "drop", "again-csv")
    assert [r["factors"] for r in json.loads(loaded("standardize", "list", "--format", "json").stdout)] \
        == ["again-parquet", "self"]


def test_cli_errors_are_clean(loaded, tmp_path):
    loaded("standardize", "factors", "-m", "AP", "--name", "self")
    (tmp_path / "bad.csv").write_text("qrels,measure,topic,mean\nfixture,AP,101,0.5\n")
    for args, text in [
        (("eval", "-m", "P@10", "--standardize", "self"), "no factors for measure(s) P@10; it has: AP"),
        (("eval", "-m", "AP", "--standardize", "nope"), "unknown factor set 'nope'"),
        (("standardize", "factors", "-m", "AP", "--name", "x", "--reference", "alpha1"), "at least two reference runs"),
        (("standardize", "factors", "-m", "AP", "--name", "self"), "exists; use --replace"),
        (("standardize", "import", tmp_path / "bad.csv", "--name", "b"), "wrong columns"),
        (("standardize", "import", tmp_path / "none.csv"), "no such file"),
        (("standardize", "export", "self", tmp_path / "f.xlsx"), "cannot tell the file format"),
        (("collections", "split", "fixture", "--name", "A"), "--topics LIST or --half SEED"),
        (("collections", "compare", "fixture", "nope", "-m", "AP"), "unknown qrels 'nope'"),
        (("standardize", "reference-size", "-m", "AP", "--sizes", "2,x"), "--sizes must be integers"),
    ]:
        result = loaded(*args, ok=False)
        assert result.exit_code == 1, args
        assert result.stderr.startswith("error: ") and text in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.output
    assert json.loads(loaded("sql", "SELECT count(*) AS n FROM std_factor_sets", "--format", "json").stdout) == [{"n": 1}]


def test_cli_collections(loaded):
    loaded("splits", "make", "fixture", "--name", "A", "--topics", "101-103", "--rest", "B")
    listed = json.loads(loaded("splits", "list", "--format", "json").stdout)
    assert [(r["qrels"], r["parent"], r["topics"]) for r in listed] == [("A", "fixture", 3), ("B", "fixture", 2)]
    summary = json.loads(loaded("splits", "compare", "A", "B", "-m", "AP", "--format", "json").stdout)
    assert [r["form"] for r in summary] == ["raw", "normalized", "standardized"]
    assert set(summary[0]) == {"form", "measure", "runs", "topics_c", "topics_d", "rmse", "drmse",
                               "false_positives", "fp_rate"}
    per_run = json.loads(loaded("collections", "compare", "A", "B", "-m", "AP", "--per-run", "--format", "json").stdout)
    assert len(per_run) == 3 * 8 and sum(r["significant"] for r in per_run) == sum(r["false_positives"] for r in summary)
    splits = json.loads(loaded("splits", "random", "fixture", "-m", "nDCG@10", "--splits", "50",
                               "--seed", "1", "--format", "json").stdout)
    assert [(r["form"], r["measure"], r["splits"], r["size"]) for r in splits] == \
        [("raw", "DCG@10", 50, 2), ("normalized", "nDCG@10", 50, 2), ("standardized", "nDCG@10", 50, 2)]
    sizes = json.loads(loaded("standardize", "reference-size", "-m", "AP", "--sizes", "2,4", "--samples", "20",
                              "--format", "json").stdout)
    assert [r["n"] for r in sizes] == [2, 4] and all(-1 <= r["tau_99"] <= r["tau_95"] <= r["tau_median"] <= 1 for r in sizes)
    csv_out = loaded("splits", "compare", "A", "B", "-m", "AP", "--format", "csv").stdout
    assert csv_out.splitlines()[0] == "form,measure,runs,topics_c,topics_d,rmse,drmse,false_positives,fp_rate"


# ----------------------------------------------------------------------------- TREC-8

@pytest.fixture()
def trec8_con(trec8_db):
    con = schema.connect(trec8_db)
    yield con
    con.close()


def test_trec8_z_scores_match_pandas(trec8_con):
    con = trec8_con
    runs = [r[0] for r in con.execute("SELECT run_id FROM run_loads ORDER BY run_id").fetchall()]
    assert len(runs) == 129
    st.create_factor_set(con, "test-self-ap", ["AP"], qrels="trec8", replace=True)
    per = evaluation.evaluate(con, "trec8", measures.parse_all(["AP"]), runs, store=False).df()
    expected = pandas_standardize(per, runs)
    got = con.execute("SELECT run_id, topic, mu, sigma, z, phi, in_reference FROM std_scores "
                      "WHERE factors = 'test-self-ap'").df()
    both = got.merge(expected, on=["run_id", "topic"], suffixes=("", "_pd"))
    assert len(both) == len(got) == 129 * 50
    assert np.max(np.abs(both["mu"] - both["mu_pd"])) < 1e-13
    assert np.max(np.abs(both["sigma"] - both["sigma_pd"])) < 1e-13
    assert np.max(np.abs(both["z"] - both["z_pd"])) < 1e-10
    assert np.max(np.abs(both["phi"] - both["phi_pd"])) < 1e-12
    assert both["in_reference"].all()
    # self-standardized: z has mean 0 and sd 1 on every topic
    by = got.groupby("topic")["z"]
    assert by.size().eq(129).all()
    assert np.max(np.abs(by.mean())) < 1e-12 and np.max(np.abs(by.std(ddof=1) - 1)) < 1e-12


def test_trec8_identities(trec8_con):
    con = trec8_con
    ms_ = ["AP", "SP", "nDCG@100", "DCG@100", "AP@10", "SP@10"]
    st.create_factor_set(con, "test-identities", ms_, qrels="trec8", reference="pooled", replace=True)
    z = st.standardized_scores(con, "test-identities", per_topic=True).pivot(
        index=["run_id", "topic"], columns="measure", values="z")
    assert len(z) == 129 * 50
    for a, b in (("AP", "SP"), ("nDCG@100", "DCG@100"), ("AP@10", "SP@10")):
        assert np.max(np.abs(z[a] - z[b])) < 1e-9, (a, b)


def test_trec8_plain_duckdb(trec8_db):
    con = schema.connect(trec8_db)
    st.create_factor_set(con, "test-plain", ["AP"], qrels="trec8", replace=True)
    expected = st.standardized_scores(con, "test-plain").set_index("run_id")["mean_phi"]
    con.close()
    plain = duckdb.connect(trec8_db, read_only=True)
    got = dict(plain.execute("SELECT run_id, mean_phi FROM std_score_means WHERE factors = 'test-plain'").fetchall())
    plain.close()
    assert len(got) == 129
    assert max(abs(got[r] - expected[r]) for r in got) < 1e-15


def test_a_qrels_with_factor_sets_is_neither_dropped_nor_replaced(fx):
    from irwarehouse.engine import loading
    from irwarehouse.errors import IrwError

    st.create_factor_set(fx, "self", ["AP"], qrels="fixture")
    before = fx.execute("SELECT count(*) FROM qrels WHERE qrels = 'fixture'").fetchone()[0]
    with pytest.raises(IrwError, match=r"has standardization factor sets \(self\); drop them first"):
        loading.drop_qrels(fx, "fixture")
    with pytest.raises(IrwError, match="has standardization factor sets"):
        loading.load_qrels(fx, [str(FIXTURES / "qrels.txt")], "fixture", replace=True)
    assert fx.execute("SELECT count(*) FROM qrels WHERE qrels = 'fixture'").fetchone()[0] == before
    st.drop_factor_set(fx, "self")
    loading.drop_qrels(fx, "fixture")
    assert fx.execute("SELECT count(*) FROM qrels").fetchone()[0] == 0
