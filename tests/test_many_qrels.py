"""Many derived qrels in one pass (engine.many.evaluate_many, sql/evaluate_many.sql): the scores
equal evaluating each qrels on its own, for every catalogue measure and every setting that takes
the one-pass route; the one-pass
route is really taken where it applies (and not where it does not); its formulas give the
hand-computed values on small rankings.
"""

from __future__ import annotations

import math
import shutil

import pytest

from irwarehouse import Warehouse, catalogue, measures, schema, sql, state
from irwarehouse.engine import base, evaluation, loading, many, pools, rendering
from test_sql_product import CASES, GRADED_MEASURES, load_fixtures

# every catalogue measure once, and at every example setting the measures with a one-pass
# route have (some settings of those take it, the others not)
ALL = list(dict.fromkeys([measures.CATALOGUE[m].examples[0] for m in GRADED_MEASURES] + [
    name for name, macro, _ in CASES if getattr(sql.module(f"measures/{macro}.sql"), "many", None)]))


def close(a: float, b: float) -> bool:
    """Equal to 12 significant digits (DuckDB's parallel sums may add in another order)."""
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)


def derive(con, name: str, parent: str, where: str) -> None:
    """A derived qrels of ``parent``: its judgments where the SQL condition ``where`` holds."""
    con.execute(f"INSERT INTO qrels SELECT ?, topic, docno, rel FROM qrels WHERE qrels = ? AND ({where})",
                [name, parent])
    catalogue.register_qrels(con, name, source=None, kind="depth", parent=parent)
    state.record_qrels(con, name)


class Route:
    """Which measures each qrels was evaluated with on its own (engine.evaluation.compute)."""

    def __init__(self, monkeypatch):
        self.calls: dict[str, set[str]] = {}
        inner = evaluation.compute

        def spy(con, qrels, measures_, *args, **kwargs):
            self.calls.setdefault(qrels, set()).update(str(m) for m in measures_)
            return inner(con, qrels, measures_, *args, **kwargs)

        # engine.many looks the function up by its own name (from .evaluation import compute)
        monkeypatch.setattr(evaluation, "compute", spy)
        monkeypatch.setattr(many, "compute", spy)


def evaluate_many_rows(con, names, parsed, run_ids, **options) -> dict[str, list[tuple]]:
    """engine.many.evaluate_many as {qrels: [(run_id, topic, measure, value), ...]}."""
    out: dict[str, list[tuple]] = {q: [] for q in names}
    for q, *row in many.evaluate_many(con, names, parsed, run_ids, **options).rows():
        out.setdefault(q, []).append(tuple(row))
    return out


def compare(con, names, parsed, run_ids, **options) -> int:
    """evaluate_many's rows against evaluate_rows per qrels; the number of scores compared."""
    by_qrels = evaluate_many_rows(con, names, parsed, run_ids, store=False, **options)
    n = 0
    for q in names:
        one = evaluation.evaluate(con, q, parsed, run_ids, store=False, **options).rows()
        assert [r[:3] for r in by_qrels[q]] == [r[:3] for r in one], (q, options)
        for a, b in zip(by_qrels[q], one):
            assert close(a[3], b[3]), (q, options, a, b)
        n += len(one)
    return n


# --------------------------------------------------------------------------- the fixtures

@pytest.fixture(scope="module")
def fx(tmp_path_factory):
    """The fixtures with derived qrels of every kind: leave-one-team-out for each team,
    take-one-team, depth pools, a pool of a derived qrels, and a qrels whose grades differ
    from its root's (not a subset: evaluated per qrels)."""
    path = str(tmp_path_factory.mktemp("many") / "fx.duckdb")
    con = schema.connect(path)
    load_fixtures(con)
    teams = sorted(pools_teams(con))
    pools.build_many(con, "leave-out", "fixture", [(f"lo-{t}", [t]) for t in teams], "pooled", 10)
    pools.build_many(con, "take", "fixture", [("take-alpha", ["alpha"])], "pooled", 10)
    for depth in (1, 3):
        pools.build_many(con, "depth", "fixture", [(f"depth-{depth}", [])], "all", depth)
    pools.build_many(con, "depth", "lo-alpha", [("lo-alpha-depth-5", [])], "all", 5)
    derive(con, "regraded", "fixture", "TRUE")
    con.execute("UPDATE qrels SET rel = 3 - rel WHERE qrels = 'regraded' AND rel BETWEEN 1 AND 2")
    state.record_qrels(con, "regraded")
    base.ensure_base(con, "fixture")
    names = [r[0] for r in con.execute("SELECT qrels FROM qrels_info WHERE parent IS NOT NULL ORDER BY qrels").fetchall()]
    runs = [r[0] for r in con.execute("SELECT run_id FROM run_loads ORDER BY run_id").fetchall()]
    con.close()
    return path, names, runs


def pools_teams(con) -> list[str]:
    return list(Warehouse.attach(con).teams("fixture", "pooled"))


@pytest.mark.parametrize("options", [
    {"topics": "qrels"}, {"topics": "run", "max_docs": 5}, {"topics": "all", "rel_level": 2},
], ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_every_measure_equals_per_qrels_evaluation(fx, options):
    path, names, runs = fx
    con = schema.connect(path)
    parsed = measures.parse_all(ALL, rel_level=options.get("rel_level"))
    assert compare(con, names, parsed, runs, **options) > 0
    con.close()


def test_the_one_pass_route_is_taken_where_it_applies(fx, monkeypatch):
    """The subset qrels are evaluated per qrels only for the measures without a one-pass form;
    the regraded qrels (grades differ from its root's) and a single derived qrels are
    evaluated per qrels for every measure."""
    path, names, runs = fx
    con = schema.connect(path)
    parsed = measures.parse_all(ALL)
    rest = {str(m) for m in parsed if rendering.many_kind(m) is None}
    together = {str(m) for m in parsed} - rest
    assert {"AP", "P@10", "nDCG@10", "RBP(p=0.8)", "Bpref", "RPrec", "RR", "Judged@10",
            "FirstUnjudged"} <= together
    assert {"AP'", "Q", "RBPres(p=0.8)", "Bpref(rel=2)", "RPrec(rel=2)"} <= rest
    route = Route(monkeypatch)
    evaluate_many_rows(con, names, parsed, runs, store=False)
    for q in names:
        assert route.calls[q] == ({str(m) for m in parsed} if q == "regraded" else rest), q
    route.calls.clear()
    evaluate_many_rows(con, ["lo-alpha"], parsed, runs, store=False)
    assert route.calls == {"lo-alpha": {str(m) for m in parsed}}
    con.close()


def test_what_each_qrels_lacks_is_recorded_and_used_while_it_stands(fx, tmp_path):
    """irw records what a derived qrels lacks of its root when it writes it; the pass uses the
    record while both qrels are as recorded (by their fingerprints) and otherwise finds the
    removed judgments from the tables. Either way the scores equal evaluating each qrels on
    its own."""
    path, names, runs = fx
    con = schema.connect(path, read_only=True)
    subsets = [q for q in names if q != "regraded"]
    assert state.recorded_subsets(con, names, "fixture") == set(subsets)  # regraded: not a subset
    lacked = dict(con.execute("SELECT qrels, count(*) FROM irw_derived_removed GROUP BY qrels").fetchall())
    by_tables = {q: con.execute(
        "SELECT count(*) FROM qrels AS r WHERE r.qrels = 'fixture' AND r.rel >= 0 AND NOT EXISTS "
        "(SELECT 1 FROM qrels AS d WHERE d.qrels = ? AND d.topic = r.topic AND d.docno = r.docno "
        "AND d.rel = r.rel)", [q]).fetchall()[0][0] for q in subsets}
    assert {q: lacked.get(q, 0) for q in subsets} == by_tables and sum(by_tables.values()) > 0
    con.close()

    parsed = measures.parse_all(["AP", "P@10", "nDCG@5", "Bpref", "RBP(p=0.8)", "RPrec"])
    changed = str(tmp_path / "changed.duckdb")
    for table_change, gone in [
        # a derived qrels loses a relevant judgment, another gains one of the root's back
        ("DELETE FROM qrels WHERE qrels = 'lo-alpha' AND (topic, docno) IN "
         "(SELECT (topic, docno) FROM qrels WHERE qrels = 'lo-alpha' AND rel >= 1 ORDER BY ALL LIMIT 1)",
         {"lo-alpha"}),
        # the root gains a judgment: no record stands
        ("INSERT INTO qrels VALUES ('fixture', (SELECT min(topic) FROM qrels WHERE qrels = 'fixture'), "
         "'NEW-DOC', 1)", set(subsets)),
    ]:
        shutil.copy(path, changed)
        import duckdb
        raw = duckdb.connect(changed)  # a change made outside irw
        raw.execute(table_change)
        raw.close()
        con = schema.connect(changed, read_only=True)  # irw sees it, and changes nothing
        assert state.recorded_subsets(con, names, "fixture") == set(subsets) - gone
        assert compare(con, names, parsed, runs) > 0
        con.close()
        con = schema.connect(changed)  # opening for writing records the qrels anew
        assert state.recorded_subsets(con, names, "fixture") == set(subsets)
        assert compare(con, names, parsed, runs) > 0
        con.close()


def test_many_kind_follows_the_settings():
    kind = lambda name: rendering.many_kind(measures.parse(name))  # noqa: E731
    assert kind("AP") == kind("nDCG(rel=2)@10") == kind("nDCG(gains={1:1,2:3})@5") == "rows"
    assert kind("Bpref") == kind("RPrec") == kind("Bpref@10") == "delta"
    assert kind("Judged@10") == kind("FirstUnjudged") == "delta"
    assert kind("AP(rel=0)") is None  # non-relevant rows count: all judged rows matter
    assert kind("nDCG(gains={0:1,1:2})") is None  # a positive gain for grade 0
    assert kind("Bpref(rel=2)") is None and kind("AP'") is None and kind("Q") is None


def test_stored_scores_and_the_warehouse_api(fx, tmp_path):
    """store=True keeps every qrels's scores as evaluating each would; Warehouse.eval over a
    pattern gives the per-qrels frames one after the other."""
    path, names, runs = fx
    copy = str(tmp_path / "w.duckdb")
    shutil.copy(path, copy)
    with Warehouse(copy) as w:
        frame = w.eval(["AP", "Bpref", "RPrec", "Q"], "lo-*")
        lo = w.qrels_names("lo-*")
        assert list(dict.fromkeys(frame["qrels"])) == lo
        stored = w.sql("SELECT qrels, run_id, topic, measure, value FROM scores "
                       "ORDER BY qrels, run_id, topic, measure")
        assert len(stored) == len(frame) and set(stored["qrels"]) == set(lo)
        for q in lo:
            one = w.eval(["AP", "Bpref", "RPrec", "Q"], q, store=False)
            mine = frame[frame["qrels"] == q].reset_index(drop=True)
            assert list(mine["measure"]) == list(one["measure"]) and list(mine["topic"]) == list(one["topic"])
            assert all(close(a, b) for a, b in zip(mine["value"], one["value"]))
        means = w.eval(["AP", "Bpref"], "lo-*", per_topic=False, store=False)
        assert set(means["qrels"]) == set(lo) and len(means) == len(lo) * len(runs) * 2


# --------------------------------------------------------------------------- by hand

# One topic. Run r1 ranks a b c d e f g h (e unjudged); run r2 ranks x y. The root judges
# a=1 b=0 c=1 d=0 f=1 g=0 h=2 x=1 y=0: R = 5, N = 4.
RUN_LINES = [f"1 Q0 {doc} {rank} {100 - rank} r1" for rank, doc in enumerate("abcdefgh", 1)] + \
            ["1 Q0 x 1 10 r2", "1 Q0 y 2 9 r2"]
QRELS = {"a": 1, "b": 0, "c": 1, "d": 0, "f": 1, "g": 0, "h": 2, "x": 1, "y": 0}
REMOVED = {  # derived qrels: the root's judgments it lacks
    "q-bf": "bf",      # a non-relevant between relevant ones, and a relevant one
    "q-norel": "acfhx",  # every relevant document: R' = 0
    "q-dg": "dg",      # non-relevant only: Bpref changes, AP does not
    "q-hy": "hy",      # the last relevant, and an unretrieved non-relevant
}
D = lambda i: 1 / math.log2(i + 1)  # noqa: E731
EXPECTED = {  # (qrels, run) -> {measure: value}, computed by hand from the definitions
    ("q-bf", "r1"): {"AP": (1 / 1 + 2 / 3 + 3 / 8) / 4, "P@5": 2 / 5, "RPrec": 2 / 4, "RR": 1.0,
                     "Bpref": (1 + 1 + (1 - 2 / 3)) / 4,  # R'=4, N'=3: h has d, g above
                     "nDCG@5": (D(1) + D(3)) / (2 * D(1) + D(2) + D(3) + D(4)),
                     "Bpref@3": (1 + 1) / 4, "Judged@5": 3 / 5, "FirstUnjudged": 2},
    ("q-bf", "r2"): {"AP": 1 / 4, "P@5": 1 / 5, "RPrec": 1 / 4, "RR": 1.0, "Bpref": 1 / 4,
                     "nDCG@5": D(1) / (2 * D(1) + D(2) + D(3) + D(4)), "Bpref@3": 1 / 4,
                     "Judged@5": 1.0, "FirstUnjudged": 3},  # both judged: length + 1
    ("q-norel", "r1"): {"AP": 0.0, "P@5": 0.0, "RPrec": 0.0, "RR": 0.0, "Bpref": 0.0, "nDCG@5": 0.0,
                        "Bpref@3": 0.0, "Judged@5": 2 / 5, "FirstUnjudged": 1},
    ("q-norel", "r2"): {"Judged@5": 1 / 2, "FirstUnjudged": 1},
    ("q-dg", "r1"): {"AP": (1 + 2 / 3 + 3 / 6 + 4 / 8) / 5, "P@5": 2 / 5, "RPrec": 2 / 5, "RR": 1.0,
                     "Bpref": (1 + 0.5 + 0.5 + 0.5) / 5,  # N' = 2: c, f and h each have one above
                     "nDCG@5": (D(1) + D(3)) / (2 * D(1) + D(2) + D(3) + D(4) + D(5)),
                     "Bpref@3": (1 + 0.5) / 5, "Judged@5": 3 / 5, "FirstUnjudged": 4},
    ("q-dg", "r2"): {"AP": 1 / 5, "RPrec": 1 / 5, "Bpref": 1 / 5, "Judged@5": 1.0, "FirstUnjudged": 3},
    ("q-hy", "r1"): {"AP": (1 + 2 / 3 + 3 / 6) / 4, "P@5": 2 / 5, "RPrec": 2 / 4, "RR": 1.0,
                     "Bpref": (1 + (1 - 1 / 3) + (1 - 2 / 3)) / 4,  # N' = 3
                     "nDCG@5": (D(1) + D(3)) / (D(1) + D(2) + D(3) + D(4)), "Bpref@3": (1 + 2 / 3) / 4,
                     "Judged@5": 4 / 5, "FirstUnjudged": 5},  # e, unjudged by the root, first
    ("q-hy", "r2"): {"AP": 1 / 4, "RPrec": 1 / 4, "Bpref": 1 / 4,  # y unjudged now
                     "Judged@5": 1 / 2, "FirstUnjudged": 2},
}


@pytest.fixture(scope="module")
def by_hand(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hand")
    (tmp / "runs.txt").write_text("\n".join(RUN_LINES) + "\n")
    (tmp / "qrels.txt").write_text("".join(f"1 0 {d} {g}\n" for d, g in QRELS.items()))
    con = schema.connect(str(tmp / "w.duckdb"))
    loading.load_qrels(con, [str(tmp / "qrels.txt")], "root")
    loading.load_runs(con, [str(tmp / "runs.txt")])
    for name, docs in REMOVED.items():
        derive(con, name, "root", "docno NOT IN (" + ", ".join(f"'{d}'" for d in docs) + ")")
    base.ensure_base(con, "root")
    yield con
    con.close()


def test_hand_computed_cases(by_hand, monkeypatch):
    route = Route(monkeypatch)
    labels = sorted({m for values in EXPECTED.values() for m in values})
    parsed = measures.parse_all(labels)
    rows = evaluate_many_rows(by_hand, list(REMOVED), parsed, ["r1", "r2"], store=False)
    assert route.calls == {}  # all of them in the one pass
    got = {(q, run, m): v for q in rows for run, _topic, m, v in rows[q]}
    for (q, run), values in EXPECTED.items():
        for m, value in values.items():
            assert close(got[(q, run, m)], value), (q, run, m, got[(q, run, m)], value)
    assert compare(by_hand, list(REMOVED), parsed, ["r1", "r2"]) == len(got)


# --------------------------------------------------------------------------- TREC-8

@pytest.fixture(scope="module")
def trec8_many(trec8_db, tmp_path_factory):
    """A copy of the TREC-8 warehouse with leave-one-team-out qrels of two pooled teams, a
    take-one-team qrels and a depth-10 pool."""
    path = str(tmp_path_factory.mktemp("trec8many") / "t8.duckdb")
    shutil.copy(trec8_db, path)
    with Warehouse(path) as w:
        teams = sorted(w.teams("trec8", "pooled"))[::20][:2]
        w.pool("leave-out", "t8-lo-", "trec8", "pooled", depth=100, teams=teams)
        w.pool("take", "t8-take-", "trec8", "pooled", depth=100, teams=teams[:1])
        w.pool("depth", "t8-depth-10", "trec8", "all", depth=10)
        names = w.qrels_names("t8-*")
    return path, names


def test_trec8_derived_qrels_equal_per_qrels_evaluation(trec8_many, monkeypatch):
    path, names = trec8_many
    route = Route(monkeypatch)
    with Warehouse(path) as w:
        runs = w.run_ids("all", qrels="trec8")
        parsed = measures.parse_all(["AP", "P@10", "nDCG@10", "nDCG(discount=jk)@1000", "RBP(p=0.8)",
                                     "Bpref", "RPrec", "RR", "Bpref@100", "R@50", "Judged@10",
                                     "FirstUnjudged"])
        evaluate_many_rows(w.con, names, parsed, runs, store=False)
        assert route.calls == {}  # every one of them in the one pass
        assert compare(w.con, names, parsed, runs) == len(names) * len(runs) * 50 * len(parsed)
        assert compare(w.con, names[:2], measures.parse_all(["AP", "Bpref", "RPrec"]), runs, max_docs=100) > 0


def test_means_by_numbers_equal_means_by_rows(fx):
    """Result.aggregate groups the many-qrels table by its columns' numbers; the means, their
    order and n are those of grouping the rows themselves."""
    from irwarehouse.result import Result

    path, names, runs = fx
    con = schema.connect(path)
    per = many.evaluate_many(con, names, measures.parse_all(["AP", "P@10", "Bpref", "nDCG@5"]), runs,
                             store=False)
    con.close()
    assert set(per._codes) >= {"qrels", "run_id", "measure"}
    plain = Result(per.columns, per.rows())
    for how in ("mean", "gm", "gm_trec"):
        means = per.aggregate(how).rows()
        assert len(means) == len(names) * len(runs) * 4
        assert means == plain.aggregate(how).rows()
