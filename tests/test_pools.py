"""Pools, unique contributions and derived qrels (SPEC §3).

The hand case (trec_eval order = listed order; depth 2; S = the runs of teams X and Y):

    T1  x1 (X): a b c     x2 (X): b d e     y1 (Y): a f g     z1 (Z): h a
    T2  x1 (X): p q
    J:  T1 a:1 b:0 c:1 d:1 e:0 f:2 g:0 h:1;  T2 p:1

    pool(S, 2): T1 {a, b, d, f}, T2 {p, q}
    D_X = T1 {a, b, d}, T2 {p, q};  D_Y = T1 {a, f}
    U_X = T1 {b, d}, T2 {p, q};     U_Y = T1 {f}
    multiplicity (runs): a 2, b 2, d 1, f 1, p 1, q 1
"""

from __future__ import annotations

import json

import pytest

from irwarehouse import catalogue, measures
from irwarehouse.api import Warehouse
from irwarehouse.engine import evaluation, loading, pools
from irwarehouse.errors import IrwError


@pytest.fixture()
def hand(con, tmp_path):
    runs = {"x1": {"T1": "abc", "T2": "pq"}, "x2": {"T1": "bde"}, "y1": {"T1": "afg"}, "z1": {"T1": "ha"}}
    lines = [f"{t} Q0 {d} {i} {10 - i} {r}" for r, ts in runs.items() for t, ds in ts.items()
             for i, d in enumerate(ds, 1)]
    (tmp_path / "runs").write_text("\n".join(lines) + "\n")
    (tmp_path / "qrels").write_text("T1 0 a 1\nT1 0 b 0\nT1 0 c 1\nT1 0 d 1\nT1 0 e 0\nT1 0 f 2\n"
                                    "T1 0 g 0\nT1 0 h 1\nT2 0 p 1\n")
    (tmp_path / "meta").write_text("run_id\tteam\tpooled\nx1\tX\ttrue\nx2\tX\ttrue\ny1\tY\ttrue\nz1\tZ\tfalse\n")
    loading.load_qrels(con, [str(tmp_path / "qrels")], "J")
    loading.load_runs(con, [str(tmp_path / "runs")], meta=str(tmp_path / "meta"))
    return con


def pool_stats(con, what, qrels, runs="all", depth=100):
    """Pool statistics of a run spec as a DataFrame (the public API over the connection)."""
    return Warehouse.attach(con).pool_stats(what, qrels, runs, depth).df()


def qrels_set(con, name):
    return set(con.execute("SELECT topic, docno, rel FROM qrels WHERE qrels = ?", [name]).fetchall())


def docs(con, name):
    return {f"{t}:{d}" for t, d, _ in qrels_set(con, name)}


def test_pool_and_reduced_qrels(hand):
    pooled = hand.execute("SELECT topic || ':' || docno FROM pool_of('default', ['x1', 'x2', 'y1'], 2)").fetchall()
    assert {r[0] for r in pooled} == {"T1:a", "T1:b", "T1:d", "T1:f", "T2:p", "T2:q"}
    info = pools.build(hand, "depth", "J", "J-d2", runs="pooled", depth=2)
    assert info["judged"] == 5 and info["relevant"] == 4
    assert docs(hand, "J-d2") == {"T1:a", "T1:b", "T1:d", "T1:f", "T2:p"}
    row = hand.execute("SELECT parent, kind, topic_qrels, params FROM qrels_info WHERE qrels = 'J-d2'").fetchone()
    assert row[:3] == ("J", "depth", "J") and json.loads(row[3])["depth"] == 2


def test_team_and_unique_contributions(hand):
    bind = {"runs": ["x1", "x2", "y1"]}
    d = hand.execute("SELECT team, topic || ':' || docno FROM team_contributions('J', $runs, 2)", bind).fetchall()
    assert sorted(d) == sorted([("X", "T1:a"), ("X", "T1:b"), ("X", "T1:d"), ("X", "T2:p"), ("X", "T2:q"),
                                ("Y", "T1:a"), ("Y", "T1:f")])
    u = hand.execute("SELECT team, topic || ':' || docno, rel FROM unique_contributions('J', $runs, 2)", bind).fetchall()
    assert sorted(u, key=str) == sorted([("X", "T1:b", 0), ("X", "T1:d", 1), ("X", "T2:p", 1), ("X", "T2:q", None),
                                         ("Y", "T1:f", 2)], key=str)
    stats = pool_stats(hand, "teams", "J", "pooled", 2).set_index("team")
    assert stats.loc["X"].tolist() == [2.5, 1.5, 2.0, 1.0]   # (3+2)/2, (2+1)/2, (2+2)/2, (1+1)/2
    assert stats.loc["Y"].tolist() == [1.0, 1.0, 0.5, 0.5]


def test_leave_one_team_out_and_take(hand):
    pools.build(hand, "leave-out", "J", "J-lo-X", runs="pooled", depth=2, teams=["X"])
    assert docs(hand, "J-lo-X") == {"T1:a", "T1:c", "T1:e", "T1:f", "T1:g", "T1:h"}
    pools.build(hand, "take", "J", "J-take-X", runs="pooled", depth=2, teams=["X"])
    assert docs(hand, "J-take-X") == {"T1:a", "T1:b", "T1:d", "T2:p"}
    pools.build(hand, "take", "J", "J-take-XY", runs="pooled", depth=2, teams=["X", "Y"])
    pools.build(hand, "depth", "J", "J-d2", runs="pooled", depth=2)
    assert qrels_set(hand, "J-take-XY") == qrels_set(hand, "J-d2")  # take all teams = the pool
    # the derived qrels keeps its parent's topic set: T2 still counts, with AP 0
    per = evaluation.evaluate(hand, "J-lo-X", measures.parse_all(["AP", "R@10"]), ["x1"], store=False)
    got = {(r.measure, r.topic): r.value for r in per.itertuples()}
    assert got[("AP", "T2")] == 0 and got[("R@10", "T2")] == 0
    assert got[("AP", "T1")] == pytest.approx((1 / 1 + 2 / 3) / 4)  # a, c relevant at 1, 3; R = a c f h


def test_multiplicity_and_pool_statistics(hand):
    bands = pool_stats(hand, "multiplicity", "J", "pooled", 2)
    assert bands.to_dict("records") == [
        {"band": "1", "documents": 4, "judged": 3, "relevant": 3, "fraction_relevant": 0.75},
        {"band": "2", "documents": 2, "judged": 2, "relevant": 1, "fraction_relevant": 0.5},
        {"band": "total", "documents": 6, "judged": 5, "relevant": 4, "fraction_relevant": 4 / 6}]
    topics = pool_stats(hand, "topics", "J", "pooled", 2)
    assert topics.to_dict("records") == [
        {"topic": "T1", "pool_size": 4, "judged": 4, "relevant": 3, "unjudged": 0},
        {"topic": "T2", "pool_size": 2, "judged": 1, "relevant": 1, "unjudged": 1}]
    judged = pool_stats(hand, "judged", "J", "all", 2).set_index(["run_id", "topic"])
    assert judged.loc[("x1", "T2")].tolist() == [2, 0.5]  # p judged, q not: first unjudged 2
    assert judged.loc[("z1", "T1")].tolist() == [3, 1.0]  # h, a judged; length 2
    coll = pool_stats(hand, "collection", "J")
    assert coll.loc[0, "mean_judged"] == 4.5 and coll.loc[0, "mean_relevant"] == 3.0  # (8+1)/2, (5+1)/2
    # per qrels, the mean first unjudged rank over every run and topic of the topic set (T1,
    # T2 have relevant documents): x1 T1 a b c judged -> 4, T2 p judged, q not -> 2; x2 T1
    # b d e -> 4; y1 T1 a f g -> 4; z1 T1 h a -> 3; x2, y1, z1 lack T2 -> 1 (length 0 + 1)
    row = pool_stats(hand, "qrels", "J").to_dict("records")
    assert row == [{"qrels": "J", "topics": 2, "mean_judged": 4.5, "mean_relevant": 3.0, "judged": 9,
                    "relevant": 6, "runs": 4, "mean_first_unjudged": (4 + 2 + 4 + 1 + 4 + 1 + 3 + 1) / 8}]
    pools.build(hand, "depth", "J", "J2", "pooled", 1)  # T1 {a, b}, T2 {p}: x1 T1 -> 3, T2 -> 2
    row = pool_stats(hand, "qrels", "J2", runs="x1").to_dict("records")[0]
    assert (row["runs"], row["mean_first_unjudged"]) == (1, (3 + 2) / 2)


def test_deeply_judged_runs(hand):
    assert pools.deeply_judged(hand, "J", 1) == ["x1"]  # only x1 answers both topics
    hand.execute("DELETE FROM qrels WHERE topic = 'T2'")
    assert pools.deeply_judged(hand, "J", 2) == ["x1", "x2", "y1", "z1"]
    assert pools.deeply_judged(hand, "J", 3) == ["x1", "x2", "y1"]  # z1 has only 2 documents


@pytest.mark.parametrize("call, message", [
    (lambda c: pools.build(c, "depth", "J", "n", depth=0), "depth must be at least 1"),
    (lambda c: pools.build(c, "depth", "nope", "n", depth=2), "qrels 'nope' does not exist; known: J"),
    (lambda c: pools.build(c, "leave-out", "J", "n", runs="pooled", depth=2, teams=["W"]), "unknown team(s) W in the run set; teams: X, Y"),
    (lambda c: pools.build(c, "depth", "J", "n", runs="x1,zz", depth=2), "unknown run 'zz'"),
    (lambda c: pools.build(c, "depth", "J", "J", depth=2), "already exist"),
])
def test_bad_requests_change_nothing(hand, call, message):
    before = hand.execute("SELECT count(*) FROM qrels").fetchone()[0]
    with pytest.raises(IrwError) as info:
        call(hand)
    assert message in str(info.value)
    assert hand.execute("SELECT count(*) FROM qrels").fetchone()[0] == before


def test_replace_and_drop(hand):
    pools.build(hand, "depth", "J", "J-d", depth=1)
    pools.build(hand, "depth", "J", "J-d", depth=2, replace=True)
    assert json.loads(hand.execute("SELECT params FROM qrels_info WHERE qrels = 'J-d'").fetchone()[0])["depth"] == 2
    with pytest.raises(IrwError, match="has derived qrels"):
        loading.drop_qrels(hand, "J")
    loading.drop_qrels(hand, "J-d")
    assert "J-d" not in catalogue.qrels_names(hand)


def test_fixture_properties(con):
    from conftest import FIXTURES

    loading.load_qrels(con, [str(FIXTURES / "qrels.txt")], "f")
    loading.load_runs(con, [str(FIXTURES / "runs")], meta=str(FIXTURES / "runs.tsv"))
    # J ∩ pool(all runs, ∞) = J restricted to retrieved documents
    pools.build(con, "depth", "f", "f-all", runs="all", depth=10_000)
    retrieved = set(con.execute("""SELECT q.topic, q.docno, q.rel FROM qrels q
        WHERE q.qrels = 'f' AND EXISTS (SELECT 1 FROM runs r WHERE r.topic = q.topic AND r.docno = q.docno)""").fetchall())
    assert qrels_set(con, "f-all") == retrieved
    # take-k-teams over all teams = the full pool; U_t are disjoint
    pools.build(con, "take", "f", "f-take-all", runs="all", depth=10, teams=["alpha", "beta", "gamma", "delta"])
    pools.build(con, "depth", "f", "f-d10", runs="all", depth=10)
    assert qrels_set(con, "f-take-all") == qrels_set(con, "f-d10")
    u = con.execute("SELECT topic, docno, count(DISTINCT team) FROM unique_contributions('f', "
                    "(SELECT list(run_id) FROM run_info), 10) GROUP BY ALL HAVING count(DISTINCT team) > 1").fetchall()
    assert u == []
    # the official pool of the fixtures is the depth-10 pool of the pooled runs
    pools.build(con, "depth", "f", "f-pool", runs="pooled", depth=10)
    assert qrels_set(con, "f-pool") == qrels_set(con, "f")


def test_cli(cli):
    from conftest import FIXTURES

    cli("load", "qrels", FIXTURES / "qrels.txt", "--name", "fx")
    cli("load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv")
    result = cli("pool", "leave-out", "--all-teams", "--runs", "pooled", "--depth", "10")
    assert "created qrels fx-lo-alpha" in result.stderr
    names = {r["qrels"] for r in json.loads(cli("qrels", "list", "--format", "json").stdout)}
    assert names == {"fx", "fx-lo-alpha", "fx-lo-beta", "fx-lo-gamma", "fx-lo-delta"}
    cli("pool", "shallow", "--depth", "1", "--name", "fx-s1")
    cli("pool", "take", "-t", "alpha", "--name", "fx-t-alpha", "--depth", "10")
    bands = json.loads(cli("pool", "stats", "multiplicity", "--runs", "pooled", "--depth", "10", "--format", "json").stdout)
    topics = json.loads(cli("pool", "stats", "topics", "--runs", "pooled", "--depth", "10", "--format", "json").stdout)
    assert bands[-1]["band"] == "total" and bands[-1]["documents"] == 194
    assert sum(b["documents"] for b in bands[:-1]) == sum(t["pool_size"] for t in topics) == 194
    per_qrels = json.loads(cli("pool", "stats", "qrels", "-q", "fx", "-q", "fx-s1", "--format", "json").stdout)
    assert [r["qrels"] for r in per_qrels] == ["fx", "fx-s1"]
    judged = json.loads(cli("pool", "stats", "judged", "-q", "fx-s1", "--format", "json").stdout)
    assert per_qrels[1]["mean_first_unjudged"] == pytest.approx(
        sum(r["first_unjudged"] for r in judged) / len(judged))
    bad = cli("pool", "stats", "topics", "-q", "fx", "-q", "fx-s1", ok=False)
    assert bad.exit_code == 1 and "pool stats topics takes one --qrels" in bad.stderr
    ev = json.loads(cli("eval", "-m", "P@10", "--qrels", "fx-lo-alpha", "--runs", "team:alpha", "--format", "json").stdout)
    full = json.loads(cli("eval", "-m", "P@10", "--qrels", "fx", "--runs", "team:alpha", "--format", "json").stdout)
    for lo, f in zip(ev, full):
        assert lo["value"] <= f["value"]
    deep = json.loads(cli("runs", "deeply-judged", "--depth", "3", "--format", "json").stdout)
    assert isinstance(deep, list)
    bad = cli("pool", "leave-out", "--team", "omega", "--runs", "pooled", ok=False)
    assert bad.exit_code == 1 and "unknown team(s) omega" in bad.stderr


ALL_SOURCES_MEASURES = ["AP", "P@3", "nDCG", "Bpref", "Q(beta=0.5)", "RBPres(p=0.8)", "AP'", "nDCG(discount=jk)@2",
                        "P(rel=2)@5", "Bpref(rel=2)", "Q(gains={0:0,1:1,2:3})", "FirstUnjudged"]


def test_base_sources_agree(tmp_path):
    """A root qrels from its materialized base, a derived qrels from the root's base restricted
    to its judgment ids, and both computed afresh from the runs (read-only warehouse) agree."""
    import duckdb

    from irwarehouse import schema
    from conftest import FIXTURES

    path = str(tmp_path / "w.duckdb")
    con = schema.connect(path)
    loading.load_qrels(con, [str(FIXTURES / "qrels.txt")], "fixture")
    loading.load_runs(con, [str(FIXTURES / "runs")], meta=str(FIXTURES / "runs.tsv"))
    pools.build(con, "depth", "fixture", "fx-d3", runs="pooled", depth=3)
    parsed = measures.parse_all(ALL_SOURCES_MEASURES)
    runs = [r[0] for r in con.execute("SELECT run_id FROM run_loads ORDER BY 1").fetchall()]
    cached = {q: evaluation.evaluate(con, q, parsed, runs, store=False) for q in ("fixture", "fx-d3")}
    con.close()
    ro = duckdb.connect(path, read_only=True)
    for q, got in cached.items():
        fresh = evaluation.evaluate(ro, q, parsed, runs, store=False)
        assert len(fresh) == len(got) > 0
        assert fresh[["run_id", "topic", "measure"]].equals(got[["run_id", "topic", "measure"]])
        assert (fresh["value"] - got["value"]).abs().max() < 1e-12, q
    # the pool judges fewer documents, so some scores differ from the root's
    assert not cached["fx-d3"]["value"].equals(cached["fixture"]["value"])
