"""`irw repro` / Warehouse.repro: hand-computed cases of every statistic (both KTUs, RBO,
RMSE, ER, ΔRI, the p-values), the fixtures' reproductions, and repro_eval itself on
reproductions built from TREC-8 runs (per measure and per topic, within 1e-9)."""

from __future__ import annotations

import gzip
import math
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import FIXTURES, unavailable
from irwarehouse import Warehouse, repro_stats
from irwarehouse.errors import IrwError

CUTOFFS = (1000, 100, 50, 20, 10, 5)


# ------------------------------------------------------------------ by hand


def test_ktu_of_repro_eval_pairs_positions_through_the_sorted_union():
    # union sorted: x y z; positions: a = (x, y) -> (0, 1), b = (y, z) -> (1, 2): concordant
    assert repro_stats.ktu_positions(["x", "y"], ["y", "z"]) == pytest.approx(1.0)
    # a = (b, a, c) -> (1, 0, 2), b = (a, b, c) -> (0, 1, 2): 1 discordant pair of 3
    assert repro_stats.ktu_positions(["b", "a", "c"], ["a", "b", "c"]) == pytest.approx(1 / 3)


def test_ktu_over_the_documents_ranks():
    # ranks over the union x, y, z: a (1, 2, 3: z missing), b (3: x missing, 1, 2);
    # pairs x-y and x-z discordant, y-z concordant: (1 - 2) / 3
    assert repro_stats.ktu_ranks(["x", "y"], ["y", "z"]) == pytest.approx(-1 / 3)
    # a document missing from both tails ties there: a (1, 2, 3, 4), b (4, 1, 2, 4):
    # x-w tie in b; tau-b = (C - D) / sqrt((n0 - n1)(n0 - n2)) = (3 - 2) / sqrt(6 * 5)
    assert repro_stats.ktu_ranks(["x", "y", "z", "w"], ["y", "z"]) == pytest.approx(
        1 / math.sqrt(30))


def test_the_two_ktus_part_on_a_ranking_shifted_by_one():
    # the original's 30 documents (docnos in no sort order) after one new document: the
    # documents keep their order, but position i now pairs two different documents
    docs = [f"D{(i * 37) % 101:03d}" for i in range(30)]
    shifted = ["NEW"] + docs[:29]
    assert abs(repro_stats.ktu_positions(docs, shifted)) < 0.2
    assert repro_stats.ktu_ranks(docs, shifted) > 0.85


def test_rbo_truncated_to_the_depth_at_every_cut_off():
    # a = (d1, d2), b = (d2, d1), p = 0.5, depth 3: overlaps 0, 2, 2;
    # (1 * 0/1 + 0.5 * 2/2 + 0.25 * 2/3) / (1 + 0.5 + 0.25) = 8/21
    value = repro_stats.rbo(np.array([0, 0]), np.array([2, 2]), 1, p=0.5, depth=3)
    assert value[0] == pytest.approx(8 / 21)
    # two topics, one without a shared document; a document shared beyond depth is not counted
    value = repro_stats.rbo(np.array([0, 1]), np.array([1, 4]), 2, p=0.5, depth=3)
    assert value.tolist() == pytest.approx([(1 + 0.5 / 2 + 0.25 / 3) / 1.75, 0.0])


def test_rmse_er_and_delta_ri():
    assert repro_stats.rmse(np.array([0.5, 0.2]), np.array([[0.3, 0.2], [0.5, 0.2]])).tolist() \
        == pytest.approx([math.sqrt(0.02), 0.0])
    # original: improvement 0.2 on average; reproduction 0.05: ER 0.25; RI 2/3 and 1/7
    args = (np.array([0.6, 0.4]), np.array([0.4, 0.2]), np.array([[0.5, 0.3]]), np.array([[0.4, 0.3]]))
    assert repro_stats.effect_ratio(*args)[0] == pytest.approx(0.25)
    assert repro_stats.delta_ri(*args)[0] == pytest.approx(2 / 3 - 1 / 7)


def test_p_values_paired_and_unpaired():
    from scipy import stats

    x = np.array([0.5, 0.3, 0.9, 0.1])
    y = np.array([0.4, 0.35, 0.6, 0.0])
    d = x - y
    t = d.mean() / (d.std(ddof=1) / math.sqrt(4))
    assert repro_stats.p_values(x, y, paired=True)[0] == pytest.approx(2 * stats.t.sf(abs(t), 3))
    z = np.array([0.2, 0.1, 0.4])  # another collection: another number of topics
    pooled = ((3 * x.var(ddof=1)) + (2 * z.var(ddof=1))) / 5
    t = (x.mean() - z.mean()) / math.sqrt(pooled * (1 / 4 + 1 / 3))
    assert repro_stats.p_values(x, z[None, :], paired=False)[0] == pytest.approx(2 * stats.t.sf(abs(t), 5))
    assert repro_stats.p_values(x, x, paired=True)[0] == 1.0  # scores equal on every topic


# ------------------------------------------------------------------ the fixtures


@pytest.fixture(scope="module")
def fixtures_db(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("repro") / "w.duckdb")
    with Warehouse(path) as w:
        w.load_qrels(str(FIXTURES / "qrels.txt"), name="fixture")
        w.load_runs(str(FIXTURES / "runs"), meta=str(FIXTURES / "runs.tsv"))
        w.load_runs([str(p) for p in sorted((FIXTURES / "repro").glob("*.txt"))],
                    meta=str(FIXTURES / "repro" / "repro.tsv"))
        w.load_qrels(str(FIXTURES / "auto-qrels.txt"), name="auto")
    return path


def test_a_system_of_reproductions_is_each_of_its_runs_and_their_spread(fixtures_db):
    with Warehouse(fixtures_db, read_only=True) as w:
        both = w.repro("alpha1", "alpha1-repro", "AP", baseline="gamma1",
                       reproduced_baseline="gamma1-repro", qrels="fixture", show="spread")
        one = [w.repro("alpha1", f"alpha1-s{i}", "AP", baseline="gamma1",
                       reproduced_baseline=f"gamma1-s{i}", qrels="fixture").df() for i in (1, 2)]
    effects = both.info["effects"]
    assert effects["reproduced"].tolist() == ["alpha1-s1", "alpha1-s2", "gamma1-s1", "gamma1-s2"]
    for i, frame in enumerate(one):
        got = effects[effects["reproduced"].isin(frame["reproduced"])].reset_index(drop=True)
        assert got.equals(frame)
    spread = both.df().set_index(["role", "statistic"])
    er = [f.loc[f["role"] == "advanced", "er"].item() for f in one]
    row = spread.loc[("advanced", "er")]
    assert row["reproductions"] == 2
    assert row["mean"] == pytest.approx(np.mean(er))
    assert row["sd"] == pytest.approx(np.std(er, ddof=1))
    assert (row["min"], row["max"]) == pytest.approx((min(er), max(er)))


def test_saved_results_are_the_tables(fixtures_db, tmp_path):
    import shutil

    path = str(tmp_path / "w.duckdb")
    shutil.copy(fixtures_db, path)
    with Warehouse(path) as w:
        result = w.repro("alpha1", "alpha1-repro", ["AP", "P@10"], baseline="gamma1",
                         reproduced_baseline="gamma1-repro", qrels="fixture", save="seeds")
        effects = w.sql("SELECT role, reproduced, measure, rmse, p_value, er FROM repro_effects "
                        "WHERE name = 'seeds' ORDER BY measure, role, reproduced").df()
        order = w.sql("SELECT count(*) AS n, avg(rbo) AS rbo FROM repro_order "
                      "WHERE name = 'seeds' AND topic <> 'all'").df()
    expected = result.info["effects"].sort_values(["measure", "role", "reproduced"])
    assert effects["rmse"].tolist() == pytest.approx(expected["rmse"].tolist())
    assert effects["p_value"].tolist() == pytest.approx(expected["p_value"].tolist())
    per_topic = result.info["order"][result.info["order"]["topic"] != "all"]
    assert order["n"][0] == len(per_topic) == 4 * 6 * 6  # pairs x cut-offs x topics
    assert order["rbo"][0] == pytest.approx(per_topic["rbo"].mean())


def test_a_replication_is_tested_unpaired_and_has_no_order(fixtures_db):
    with Warehouse(fixtures_db, read_only=True) as w:
        result = w.repro("alpha1", "alpha1-s1", "AP", baseline="gamma1", reproduced_baseline="gamma1-s1",
                         qrels="fixture", reproduced_qrels="auto")
        orig = w.eval("AP", qrels="fixture", runs="alpha1", per_topic=True, topics="run").df()
        rep = w.eval("AP", qrels="auto", runs="alpha1-s1", per_topic=True, topics="run").df()
    from scipy import stats

    row = result.df().iloc[0]
    assert row["kind"] == "replication" and pd.isna(row["rmse"])
    assert row["p_value"] == pytest.approx(stats.ttest_ind(orig["value"], rep["value"]).pvalue)
    assert result.info["order"].empty


def test_bad_settings_are_one_clear_line(fixtures_db):
    with Warehouse(fixtures_db, read_only=True) as w:
        with pytest.raises(IrwError, match="neither a run nor a system"):
            w.repro("alpha1", "nosuch", "AP", qrels="fixture")
        with pytest.raises(IrwError, match="both --baseline and --reproduced-baseline"):
            w.repro("alpha1", "alpha1-s1", "AP", baseline="gamma1", qrels="fixture")
        with pytest.raises(IrwError, match="1 reproductions but 2 reproduced baselines"):
            w.repro("alpha1", "alpha1-s1", "AP", baseline="gamma1", reproduced_baseline="gamma1-repro",
                    qrels="fixture")
        with pytest.raises(IrwError, match="unknown table"):
            w.repro("alpha1", "alpha1-s1", "AP", qrels="fixture", show="nosuch")


# ------------------------------------------------------------------ repro_eval itself


def _repro_eval():
    try:
        from repro_eval.Evaluator import RpdEvaluator, RplEvaluator
    except ImportError:
        unavailable("the reference package repro-eval is not installed (pip install repro-eval)")
    return RpdEvaluator, RplEvaluator


# irw's measure names and ir_measures' (repro_eval's score keys)
MEASURES = {"AP": "AP", "P@10": "P@10", "nDCG@10": "nDCG@10", "RR": "RR", "RPrec": "Rprec",
            "Bpref": "Bpref", "R@100": "R@100"}


def _compare(w, orig, rep, base, rbase, rpd, rpl_qrels=None):
    """Warehouse.repro against repro_eval's evaluator ``rpd`` (already evaluated)."""
    result = w.repro(orig, rep, list(MEASURES), baseline=base, reproduced_baseline=rbase,
                     qrels="trec8", reproduced_qrels=rpl_qrels)
    effects = result.df()
    er, dri, tt = rpd.er(), rpd.dri(), rpd.ttest()
    rmse = rpd.rmse() if rpl_qrels is None else None
    checked = 0
    for _, row in effects.iterrows():
        name, role = MEASURES[row["measure"]], row["role"]
        assert row["p_value"] == pytest.approx(tt[role][name], abs=1e-9, rel=0)
        if rmse is not None:
            assert row["rmse"] == pytest.approx(rmse[role][name], abs=1e-9, rel=0)
        if role == "advanced":
            assert row["er"] == pytest.approx(er[name], abs=1e-9, rel=0)
            assert row["delta_ri"] == pytest.approx(dri[name], abs=1e-9, rel=0)
        checked += 1
    assert checked == 2 * len(MEASURES)
    return result


def test_equals_repro_eval_on_trec8_reproductions(trec8, tmp_path):
    RpdEvaluator, RplEvaluator = _repro_eval()
    d = tmp_path
    files = _trec8_files(trec8, d)
    with Warehouse(str(d / "w.duckdb")) as w:
        w.load_qrels(str(files["qrels"]), name="trec8")
        w.load_qrels(str(files["qrels2"]), name="trec8-other")
        w.load_runs([str(files[k]) for k in ("orig", "base", "rep", "repb")])
        rpd = RpdEvaluator(qrels_orig_path=str(files["qrels"]), run_b_orig_path=str(files["base"]),
                           run_a_orig_path=str(files["orig"]), run_b_rep_path=str(files["repb"]),
                           run_a_rep_path=str(files["rep"]))
        rpd.trim()
        rpd.evaluate()
        result = _compare(w, ORIG, "rep", BASE, "repb", rpd)
        order = result.info["order"]
        for k in CUTOFFS:
            rpd.trim(k)
            ktu, rbo = rpd.ktu(per_topic=True), rpd.rbo(per_topic=True)
            for role in ("advanced", "baseline"):
                mine = order[(order["role"] == role) & (order["cutoff"] == k)].set_index("topic")
                assert len(mine) == len(ktu[role]) + 1 == 51
                for topic, value in ktu[role].items():
                    assert mine.loc[topic, "ktu"] == pytest.approx(value, abs=1e-9, rel=0), (k, role, topic)
                for topic, value in rbo[role].items():
                    assert mine.loc[topic, "rbo"] == pytest.approx(value, abs=1e-9, rel=0), (k, role, topic)
                assert mine.loc["all", "ktu"] == pytest.approx(np.mean(list(ktu[role].values())), abs=1e-9)
                assert mine.loc["all", "rbo"] == pytest.approx(np.mean(list(rbo[role].values())), abs=1e-9)
        # the reproduction of a run by itself: every statistic at its ideal
        same = w.repro(ORIG, ORIG, "AP", baseline=BASE, reproduced_baseline=BASE, qrels="trec8")
        assert same.df()["rmse"].tolist() == [0.0, 0.0] and same.df()["p_value"].tolist() == [1.0, 1.0]
        taus = same.info["order"][["ktu", "ktu_ranks"]].to_numpy().ravel()
        assert taus.tolist() == pytest.approx([1.0] * len(taus), abs=1e-12)
        # RBO truncated at depth 1,000: a ranking cut at 5 against itself keeps 5 documents
        # of overlap to depth 1,000, so it is not 1
        weights = 0.95 ** np.arange(1000)
        depths = np.arange(1, 1001)
        ideal_at_5 = (weights * np.minimum(depths, 5) / depths).sum() / weights.sum()
        at_5 = same.info["order"].query("cutoff == 5")["rbo"]
        assert at_5.tolist() == pytest.approx([ideal_at_5] * len(at_5), abs=1e-12)
        assert round(ideal_at_5, 3) == 0.476  # as docs/reproducibility.md says
        # a replication: the reproduced runs judged by another qrels, unpaired
        rpl = RplEvaluator(qrels_orig_path=str(files["qrels"]), qrels_rpl_path=str(files["qrels2"]),
                           run_b_orig_path=str(files["base"]), run_a_orig_path=str(files["orig"]),
                           run_b_rep_path=str(files["repb"]), run_a_rep_path=str(files["rep"]))
        rpl.trim()
        rpl.evaluate()
        _compare(w, ORIG, "rep", BASE, "repb", rpl, rpl_qrels="trec8-other")


ORIG, BASE = "CL99SD", "UB99SW"


def _lines(trec8: Path, run: str) -> list[list[str]]:
    with gzip.open(trec8 / "runs" / f"input.{run}.gz", "rt") as fh:
        return [line.split() for line in fh if line.strip()]


def _perturbed(rows: list[list[str]], run_id: str, seed: int) -> list[str]:
    """A reproduction of a run, deterministically: scores scaled to 1 and moved by a normal
    draw (sd 0.05), one document in ten replaced by another, ranked anew and written in rank
    order (as repro_eval reads a file's line order)."""
    rng = random.Random(seed)
    by_topic: dict[str, list] = {}
    for topic, _q0, doc, _rank, score, _run in rows:
        by_topic.setdefault(topic, []).append((doc, float(score)))
    out = []
    for topic in sorted(by_topic):
        docs = by_topic[topic]
        scale = max(abs(s) for _, s in docs) or 1.0
        moved = [(f"X{doc}" if rng.random() < 0.1 else doc, round(s / scale + rng.gauss(0, 0.05), 6))
                 for doc, s in docs]
        moved.sort(key=lambda x: (-x[1], x[0]))
        out += [f"{topic} Q0 {doc} {i} {s:.6f} {run_id}" for i, (doc, s) in enumerate(moved, 1)]
    return out


def _trec8_files(trec8: Path, d: Path) -> dict[str, Path]:
    files = {"orig": d / "orig.txt", "base": d / "base.txt", "rep": d / "rep.txt",
             "repb": d / "repb.txt", "qrels": d / "qrels.txt", "qrels2": d / "qrels2.txt"}
    files["orig"].write_text("\n".join(" ".join(r) for r in _lines(trec8, ORIG)) + "\n")
    files["base"].write_text("\n".join(" ".join(r) for r in _lines(trec8, BASE)) + "\n")
    files["rep"].write_text("\n".join(_perturbed(_lines(trec8, ORIG), "rep", 1)) + "\n")
    files["repb"].write_text("\n".join(_perturbed(_lines(trec8, BASE), "repb", 2)) + "\n")
    with gzip.open(trec8 / "qrels.trec8.gz", "rt") as fh:
        qrels = [line for line in fh if line.strip()]
    files["qrels"].write_text("".join(qrels))
    # another collection's judgments: every third judgment left out, a relevant one kept per topic
    files["qrels2"].write_text("".join(line for i, line in enumerate(qrels) if i % 3 or line.split()[3] != "0"))
    return files
