"""The full TREC-8 ad hoc runset: loading facts, and agreement with trec_eval's C code.

pytrec_eval (trec_eval 9's C implementation) is the oracle: for all 129 runs x 50 topics the
warehouse's per-topic values under its order, trec_eval_9, must agree within 1e-6. The
default order, trec_eval 10.0's, gives every face the same numbers.
"""

from __future__ import annotations

import gzip

import pytest

from irwarehouse import measures, schema
from irwarehouse.engine import evaluation

ORACLE = {  # trec_eval measure -> ours
    "map": "AP", "P_5": "P@5", "P_10": "P@10", "P_20": "P@20", "P_100": "P@100",
    "P_1000": "P@1000", "recall_100": "R@100", "recall_1000": "R@1000", "ndcg": "nDCG",
    "ndcg_cut_10": "nDCG@10", "bpref": "Bpref", "Rprec": "RPrec", "recip_rank": "RR",
}


def test_loaded_facts(trec8_db):
    con = schema.connect(trec8_db, read_only=True)
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 6_284_293
    assert con.execute("SELECT count(*) FROM run_info").fetchone()[0] == 129
    assert con.execute("SELECT count(*) FROM run_info WHERE pooled").fetchone()[0] == 71
    assert con.execute("SELECT count(DISTINCT team) FROM run_info").fetchone()[0] == 41
    assert con.execute("SELECT min(n_topics), max(n_topics) FROM run_info").fetchone() == (50, 50)
    assert con.execute("SELECT count(*), count(*) FILTER (WHERE rel >= 1) FROM qrels "
                       "WHERE qrels = 'trec8'").fetchone() == (86_830, 4_728)
    # ranks are 1..n without gaps for every run and topic
    bad = con.execute("""SELECT count(*) FROM (SELECT run_id, topic, min(rank) lo, max(rank) hi,
                         count(*) n FROM runs GROUP BY ALL) WHERE lo <> 1 OR hi <> n""").fetchone()[0]
    assert bad == 0


def _read_trec8(trec8):
    qrels = {}
    with gzip.open(trec8 / "qrels.trec8.gz", "rt") as fh:
        for line in fh:
            topic, _, doc, rel = line.split()
            qrels.setdefault(topic, {})[doc] = int(rel)
    runs = {}
    for path in sorted((trec8 / "runs").glob("input.*.gz")):
        with gzip.open(path, "rt") as fh:
            for line in fh:
                topic, _, doc, _rank, score, run_id = line.split()
                runs.setdefault(run_id, {}).setdefault(topic, {})[doc] = float(score)
    return qrels, runs


def test_agrees_with_trec_eval_9_on_all_runs(trec8, trec8_db_9):
    """pytrec_eval keeps scores as 32-bit floats, as trec_eval 9 did: the order trec_eval_9."""
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="the oracle pytrec-eval-terrier is a test dependency")
    qrels, runs = _read_trec8(trec8)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(ORACLE))
    con = schema.connect(trec8_db_9)
    assert con.execute("SELECT DISTINCT ranking_policy FROM run_loads").fetchall() == [("trec_eval_9",)]
    parsed = measures.parse_all(list(ORACLE.values()))
    label = {te: str(m) for te, m in zip(ORACLE, parsed)}
    per = evaluation.evaluate(con, "trec8", parsed, sorted(runs), topics="run", store=False).df()
    ours = {(r.run_id, r.topic, r.measure): r.value for r in per.itertuples()}
    compared, worst = 0, (0.0, None)
    for run_id, run in runs.items():
        for topic, values in evaluator.evaluate(run).items():
            for te_name, value in values.items():
                diff = abs(ours[(run_id, topic, label[te_name])] - value)
                compared += 1
                if diff > worst[0]:
                    worst = (diff, (run_id, topic, te_name, value))
    assert compared == 129 * 50 * len(ORACLE)
    assert worst[0] <= 1e-6, f"largest difference {worst[0]} at {worst[1]}"


def test_depth_100_pool_of_pooled_runs_is_the_official_qrels(trec8_db):
    from irwarehouse.engine import pools

    con = schema.connect(trec8_db)
    pools.build(con, "depth", "trec8", "trec8-pool100", runs="pooled", depth=100, replace=True)
    official = set(con.execute("SELECT topic, docno FROM qrels WHERE qrels = 'trec8'").fetchall())
    rebuilt = set(con.execute("SELECT topic, docno FROM qrels WHERE qrels = 'trec8-pool100'").fetchall())
    assert len(official) == 86_830 and rebuilt == official
    con.close()


def test_unique_contributions_and_leave_one_team_out(trec8_db):
    from irwarehouse.engine import pools

    con = schema.connect(trec8_db)
    top = con.execute("""SELECT i.team, r.topic, r.docno FROM runs r JOIN run_info i USING (run_id)
                         WHERE i.pooled AND r.rank <= 100""").fetchall()
    # independent computation of |U_t| per team
    teams_of_doc: dict = {}
    for team, topic, docno in top:
        teams_of_doc.setdefault((topic, docno), set()).add(team)
    expected: dict = {}
    for key, teams in teams_of_doc.items():
        if len(teams) == 1:
            team = next(iter(teams))
            expected[team] = expected.get(team, 0) + 1
    got = dict(con.execute("""SELECT team, count(*) FROM unique_contributions('trec8',
        (SELECT list(run_id) FROM run_info WHERE pooled), 100) GROUP BY team""").fetchall())
    assert got == expected and len(got) > 30

    # leave-one-team-out: the team's P@k and RBP never increase (no normalization by R)
    teams = sorted(expected, key=expected.get, reverse=True)[:3]
    targets = [(f"trec8-lo-{t}", [t]) for t in teams]
    pools.build_many(con, "leave-out", "trec8", targets, runs="pooled", depth=100, replace=True)
    parsed = measures.parse_all(["P@10", "P@100", "RBP(p=0.8)", "AP"])
    for (name, (team,)) in targets:
        runs = [r[0] for r in con.execute("SELECT run_id FROM run_info WHERE team = ?", [team]).fetchall()]
        full = evaluation.evaluate(con, "trec8", parsed, runs, store=False).df().set_index(["run_id", "topic", "measure"])
        lo = evaluation.evaluate(con, name, parsed, runs, store=False).df().set_index(["run_id", "topic", "measure"])
        diff = (lo["value"] - full["value"]).unstack("measure")
        for m in ("P@10", "P@100", "RBP(p=0.8)"):
            assert (diff[m] <= 1e-12).all(), (team, m)
        assert (diff["P@100"] < 0).any()  # the team did lose judged relevant documents
    con.close()


def test_loaded_in_batches_through_a_staging_file_alike(trec8, trec8_db, tmp_path):
    """TREC-8 under a memory limit that makes its load several batches, whose ranked rows wait
    in a staging database file: the same rankings, rows for rows, as the load of one batch in
    memory (trec8_db), and the same fingerprints recorded."""
    import duckdb

    from irwarehouse import connection
    from irwarehouse.engine import loading

    path = str(tmp_path / "batched.duckdb")
    with connection.Staging(path, memory="400MB", prepare=schema.prepare) as staging:
        files = loading.expand_paths([str(trec8 / "runs")])
        assert len(loading.runs._batches(staging.con, files)) >= 4
        loading.load_runs(staging.con, [str(trec8 / "runs")], final=staging.attach)
    con = duckdb.connect()
    con.execute(f"ATTACH '{path}' AS batched (READ_ONLY)")
    con.execute(f"ATTACH '{trec8_db}' AS whole (READ_ONLY)")
    assert con.execute("SELECT count(*) FROM batched.runs").fetchone()[0] == 6_284_293
    for table in ("runs", "run_topics", "irw_run_state"):
        for a, b in (("batched", "whole"), ("whole", "batched")):
            assert con.execute(f"SELECT count(*) FROM (SELECT * FROM {a}.{table} EXCEPT ALL "
                               f"SELECT * FROM {b}.{table})").fetchone()[0] == 0, (table, a)
    con.close()


def test_one_order_everywhere(trec8, trec8_db, trec8_db_9, tmp_path):
    """uwmt8a0's scores tie as 32-bit floats where they differ as doubles: every face
    gives trec_eval 10.0's numbers by default (P@10 0.4040, nDCG@10 0.4379), the order
    trec_eval_9 those of trec_eval 9 and pytrec_eval (0.4080, 0.4415), and the evaluations
    log names the order that produced them."""
    from irwarehouse import Warehouse

    files = {}
    for name, source in (("qrels", trec8 / "qrels.trec8.gz"), ("run", trec8 / "runs" / "input.uwmt8a0.gz")):
        files[name] = tmp_path / name
        files[name].write_bytes(gzip.decompress(source.read_bytes()))
    report = Warehouse.trec_eval(files["qrels"], files["run"], ["P.10", "ndcg_cut.10"])
    printed = {label: f"{value:6.4f}" for label, _, _, value in report.summary_lines}
    assert (printed["P_10"], printed["ndcg_cut_10"]) == ("0.4040", "0.4379")

    def means(result):
        return {r["measure"]: round(r["value"], 4) for r in result.records()}
    wanted = ["P@10", "nDCG@10"]
    assert means(Warehouse.eval_files(files["qrels"], [files["run"]], wanted, per_topic=False)) \
        == {"P@10": 0.4040, "nDCG@10": 0.4379}
    assert means(Warehouse.eval_files(files["qrels"], [files["run"]], wanted, per_topic=False,
                                      order="trec_eval_9")) == {"P@10": 0.4080, "nDCG@10": 0.4415}
    with Warehouse(trec8_db) as w:
        assert means(w.eval(wanted, runs="uwmt8a0", per_topic=False, store=False)) \
            == {"P@10": 0.4040, "nDCG@10": 0.4379}
    with Warehouse(trec8_db_9) as w:
        assert means(w.eval(wanted, runs="uwmt8a0", per_topic=False)) == {"P@10": 0.4080, "nDCG@10": 0.4415}
        logged = w.sql("SELECT DISTINCT ranking_policy FROM evaluations").rows()
    assert logged == [("trec_eval_9",)]
