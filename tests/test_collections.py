"""Many test collections in one warehouse: every command's numbers on a collection equal those
of a warehouse holding that collection alone; the same run id lives in two collections."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import duckdb
import pytest

from conftest import FIXTURES, cli_for

# Collection fx: the bundled fixtures. Collection fx2: the same run ids and judgments, every
# score negated (so every ranking is reversed and every number differs).


def _reversed_copy(dst: Path) -> Path:
    """The fixture collection with every run's scores negated, in the layout of
    `irw load collection` (qrels file, runs/, runs.tsv)."""
    (dst / "runs").mkdir(parents=True)
    shutil.copy(FIXTURES / "qrels.txt", dst / "qrels.txt")
    shutil.copy(FIXTURES / "runs.tsv", dst / "runs.tsv")
    for path in sorted((FIXTURES / "runs").iterdir()):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt") as fh:
            lines = []
            for line in fh:
                f = line.split()
                if len(f) == 6:
                    f[4] = repr(-float(f[4]))
                lines.append(" ".join(f))
        (dst / "runs" / path.name.removesuffix(".gz")).write_text("\n".join(lines) + "\n")
    return dst


@pytest.fixture(scope="module")
def warehouses(tmp_path_factory):
    """alone: {qrels: invoke} of one-collection warehouses; both: one warehouse holding both."""
    base = tmp_path_factory.mktemp("collections")
    reversed_dir = _reversed_copy(base / "fx2-data")
    alone = {"fixture": cli_for(str(base / "fx.duckdb")), "fixture2": cli_for(str(base / "fx2.duckdb"))}
    alone["fixture"]("load", "collection", FIXTURES, "--name", "fx", "--qrels-name", "fixture")
    alone["fixture2"]("load", "collection", reversed_dir, "--name", "fx2", "--qrels-name", "fixture2")
    both = cli_for(str(base / "both.duckdb"))
    both("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture", "--collection", "fx")
    both("load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv", "--collection", "fx")
    both("load", "qrels", reversed_dir / "qrels.txt", "--name", "fixture2", "--collection", "fx2")
    both("load", "runs", reversed_dir / "runs", "--collection", "fx2")
    both("load", "meta", reversed_dir / "runs.tsv", "--collection", "fx2")
    return alone, both


def _json(invoke, *args):
    """A command's JSON rows, numbers rounded to 12 significant digits (DuckDB's parallel sums
    may add in another order from one evaluation to the next: the last bits can differ)."""
    return _rounded(json.loads(invoke(*args, "--format", "json").stdout))


def _rounded(value):
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


COMMANDS = {  # name -> the arguments after the qrels (all read-only or idempotent)
    "eval means": ("eval", "-m", "AP", "-m", "P@10", "-m", "nDCG(discount=jk)@10", "-m", "RBP(p=0.8)",
                   "-m", "Bpref", "--no-store"),
    "eval per topic": ("eval", "-m", "AP", "-m", "RBPres(p=0.8)", "-m", "Judged@10", "--per-topic",
                       "--no-store"),
    "eval topics all": ("eval", "-m", "RR", "-m", "NumRet", "--topics", "all", "--no-store"),
    "discpower": ("discpower", "-m", "AP", "-m", "P@10", "--test", "t"),
    "discpower bootstrap": ("discpower", "-m", "AP", "--test", "bootstrap", "-B", "200"),
    "pvalues": ("pvalues", "-m", "AP", "--correction", "holm"),
    "ci": ("ci", "-m", "nDCG@10"),
    "correlate": ("correlate", "-m", "AP", "-m", "P@10"),
    "pool stats multiplicity": ("pool", "stats", "multiplicity", "--depth", "5"),
    "pool stats teams": ("pool", "stats", "teams", "--depth", "5"),
    "pool stats unique": ("pool", "stats", "unique", "--depth", "5"),
    "pool stats judged": ("pool", "stats", "judged", "--depth", "5"),
    "deeply judged": ("runs", "deeply-judged", "--depth", "3"),
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("qrels", ["fixture", "fixture2"])
def test_commands_see_their_collection_only(warehouses, command, qrels):
    alone, both = warehouses
    args = COMMANDS[command]
    if args[0] == "pool":
        args = (*args, "--qrels", qrels)
    else:
        args = (*args, "--qrels", qrels)
    got, want = _json(both, *args), _json(alone[qrels], *args)
    assert got == want
    if command == "eval means":
        assert sorted({r["run_id"] for r in got}) == sorted({r["run_id"] for r in want}) and len(
            {r["run_id"] for r in got}) == 8


def test_the_two_collections_differ(warehouses):
    """(Else the comparisons above could not tell the collections apart.)"""
    _, both = warehouses
    a = _json(both, "eval", "-m", "AP", "--qrels", "fixture", "--no-store")
    b = _json(both, "eval", "-m", "AP", "--qrels", "fixture2", "--no-store")
    assert [r["run_id"] for r in a] == [r["run_id"] for r in b]
    assert all(x["value"] != y["value"] for x, y in zip(a, b) if x["value"] > 0)


@pytest.mark.parametrize("qrels", ["fixture", "fixture2"])
def test_derived_qrels_stored_scores_and_factors(warehouses, qrels, tmp_path):
    """Pools, leave-out, take, stored scores, factor sets and measure macros per collection."""
    alone, both = warehouses
    out = {}
    for label, invoke in (("both", both), ("alone", alone[qrels])):
        # work on copies: the module's warehouses stay as loaded
        path = str(tmp_path / f"{label}.duckdb")
        shutil.copy(invoke.db_path, path)
        w = cli_for(path)
        w("pool", "depth", "--qrels", qrels, "--depth", "3", "--runs", "pooled", "--name", f"{qrels}-d3")
        w("pool", "leave-out", "--qrels", qrels, "--team", "alpha", "--depth", "5", "--name", f"{qrels}-lo")
        w("pool", "take", "--qrels", qrels, "--team", "beta", "--depth", "5", "--name", f"{qrels}-take")
        w("eval", "-m", "AP", "-m", "nDCG@10", "--qrels", qrels)
        w("eval", "-m", "AP", "--qrels", f"{qrels}-lo")
        w("standardize", "factors", "-m", "AP", "--name", f"F{qrels}", "--qrels", qrels)
        out[label] = {
            "qrels": w("sql", f"SELECT qrels, collection, topic, docno, rel FROM qrels JOIN qrels_info "
                              f"USING (qrels) WHERE qrels LIKE '{qrels}-%' ORDER BY ALL", "--format", "json").stdout,
            # (rounded to 12 digits: DuckDB's parallel sums may add in another order each time)
            "scores": w("sql", "SELECT * REPLACE (round(mean, 12) AS mean) FROM score_means ORDER BY ALL",
                        "--format", "json").stdout,
            "factors": w("sql", "SELECT measure, topic, round(mu, 12), round(sigma, 12), n_ref FROM std_factors "
                                "ORDER BY ALL", "--format", "json").stdout,
            "std": w("sql", "SELECT run_id, measure, round(mean_phi, 12), n_topics FROM std_score_means "
                            "ORDER BY ALL", "--format", "json").stdout,
            "macro": w("sql", f"SELECT * REPLACE (round(value, 12) AS value) FROM measure.AP('{qrels}-lo') "
                              "ORDER BY ALL", "--format", "json").stdout,
            "macro nDCG": w("sql", f"SELECT * REPLACE (round(value, 12) AS value) FROM measure.nDCG('{qrels}', "
                                   "k := 10) ORDER BY ALL", "--format", "json").stdout,
        }
    both_scores = json.loads(out["both"]["scores"])
    assert {r["collection"] for r in both_scores} == {"fx" if qrels == "fixture" else "fx2"}
    assert out["both"] == out["alone"]
    assert json.loads(out["both"]["qrels"])  # the derived qrels exist, in the parent's collection
    assert {r["collection"] for r in json.loads(out["both"]["qrels"])} == {"fx" if qrels == "fixture" else "fx2"}


def test_same_run_id_in_two_collections(warehouses):
    _, both = warehouses
    runs = _json(both, "runs", "list")
    assert len(runs) == 16 and {r["collection"] for r in runs} == {"fx", "fx2"}
    assert sorted(r["run_id"] for r in runs if r["collection"] == "fx") == \
        sorted(r["run_id"] for r in runs if r["collection"] == "fx2")
    assert len(_json(both, "runs", "list", "--collection", "fx2")) == 8
    cat = {r["collection"]: r for r in _json(both, "collections", "list")}
    assert cat["fx"]["runs"] == cat["fx2"]["runs"] == 8
    assert cat["fx"]["qrels"] == "fixture" and cat["fx2"]["qrels"] == "fixture2"
    assert cat["fx"]["topics"] == 6 and cat["fx"]["judged"] == 187 and cat["fx"]["relevant"] == 68


def test_a_run_evaluated_on_another_collections_qrels(warehouses):
    """--collection names the runs: fx2's runs on fx's qrels are fx2's runs on its own copy of
    the same judgments."""
    alone, both = warehouses
    got = _json(both, "eval", "-m", "AP", "-m", "P@10", "--qrels", "fixture", "--collection", "fx2",
                "--per-topic", "--no-store")
    want = _json(alone["fixture2"], "eval", "-m", "AP", "-m", "P@10", "--qrels", "fixture2",
                 "--per-topic", "--no-store")
    assert got == want
    macro = _json(both, "sql", "SELECT run_id, topic, value FROM measure.AP('fixture', run_collection := 'fx2') "
                               "ORDER BY ALL")
    direct = _json(both, "sql", "SELECT run_id, topic, value FROM measure.AP('fixture2') ORDER BY ALL")
    assert macro == direct


def test_commands_need_the_collection_when_ambiguous(warehouses, tmp_path):
    _, both = warehouses
    bad = both("load", "runs", FIXTURES / "runs", ok=False)
    assert bad.exit_code == 1 and "several collections (fx, fx2)" in bad.stderr and "--collection" in bad.stderr
    bad = both("runs", "drop", "alpha1", ok=False)
    assert "several collections" in bad.stderr
    bad = both("eval", "-m", "AP", "--qrels", "fixture", "--runs", "nope", "--no-store", ok=False)
    assert "unknown run 'nope'" in bad.stderr and "collection 'fx'" in bad.stderr
    bad = both("eval", "-m", "AP", "--qrels", "fixture", "--collection", "fx3", "--no-store", ok=False)
    assert "no runs are loaded in collection 'fx3'" in bad.stderr
    bad = both("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture", "--collection", "fx2",
               ok=False)
    assert "already exists (in collection fx" in bad.stderr
    err = both("sql", "SELECT * FROM measure.AP('fixture', run_collection := 'fx3')", ok=False)
    assert "no runs in that collection" in err.stderr


def test_load_collection_is_all_or_nothing(tmp_path):
    w = cli_for(str(tmp_path / "w.duckdb"))
    broken = _reversed_copy(tmp_path / "broken")
    with open(broken / "runs" / "alpha1", "a") as fh:
        fh.write("101 Q0 doc-x 1 not-a-number alpha1\n")
    bad = w("load", "collection", broken, "--name", "b", ok=False)
    assert bad.exit_code == 1 and "alpha1" in bad.stderr and "line" in bad.stderr
    assert not (tmp_path / "w.duckdb").exists()  # nothing was written, not even the qrels
    two = tmp_path / "two"
    shutil.copytree(FIXTURES, two, ignore=shutil.ignore_patterns("*.py"))
    shutil.copy(FIXTURES / "qrels.txt", two / "qrels-copy.txt")
    bad = w("load", "collection", two, "--name", "b", ok=False)
    assert "expected one qrels file" in bad.stderr and "--qrels-file" in bad.stderr
    w("load", "collection", two, "--name", "b", "--qrels-file", two / "qrels.txt")
    assert _json(w, "collections", "list")[0]["runs"] == 8


def test_a_warehouse_of_an_older_irw_is_upgraded(tmp_path):
    """A schema-version-4 warehouse (no collection columns) becomes collection 'default'."""
    from irwarehouse import sql

    path = str(tmp_path / "old.duckdb")
    w = cli_for(path)
    w("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture")
    w("load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv")
    want = _json(w, "eval", "-m", "AP", "-m", "P@10")
    con = duckdb.connect(path)  # the tables as version 4 had them
    for table in sql.module("migrations/5_collections.sql").TABLES:  # the step's tables
        con.execute(f"CREATE TABLE {table}_v4 AS SELECT * EXCLUDE (collection) FROM {table}")
        con.execute(f"DROP TABLE {table} CASCADE")
        con.execute(f"ALTER TABLE {table}_v4 RENAME TO {table}")
    con.execute("UPDATE irw_meta SET value = '4' WHERE key = 'schema_version'")
    con.close()
    bad = w("eval", "-m", "AP", "--no-store", ok=False)  # a reader cannot upgrade it
    assert "older irwarehouse" in bad.stderr and "irw refresh" in bad.stderr
    w("refresh")
    # the runs were loaded before trec_eval named trec_eval 10.0's order: their order is now
    # named trec_eval_9 (schema step 10), and the same scores come back
    got = _json(w, "eval", "-m", "AP", "-m", "P@10")
    assert {r.pop("ranking_policy") for r in got} == {"trec_eval_9"}
    assert got == [{k: v for k, v in r.items() if k != "ranking_policy"} for r in want]
    assert {r["collection"] for r in _json(w, "runs", "list", "--collection", "default")} == {"default"}
    assert _json(w, "sql", "SELECT DISTINCT collection FROM scores") == [{"collection": "default"}]


# ----------------------------------------------------------------------------- TREC-8


def test_trec8_and_the_fixtures_in_one_warehouse(trec8_db, warehouses, tmp_path):
    """Done when: with TREC-8 and the fixtures in one warehouse, eval and discpower on the
    fixture qrels see exactly the 8 fixture runs, with the numbers of a fixtures-only
    warehouse; TREC-8's numbers are those of the TREC-8-only warehouse."""
    alone, _ = warehouses
    path = str(tmp_path / "mixed.duckdb")
    shutil.copy(trec8_db, path)
    w = cli_for(path)
    w("load", "collection", FIXTURES, "--name", "fixtures", "--qrels-name", "fixture")
    fx = _json(w, "eval", "-m", "AP", "-m", "P@10", "--qrels", "fixture", "--no-store")
    assert len({r["run_id"] for r in fx}) == 8
    assert fx == _json(alone["fixture"], "eval", "-m", "AP", "-m", "P@10", "--qrels", "fixture", "--no-store")
    dp = _json(w, "discpower", "-m", "AP", "--qrels", "fixture", "--test", "t")
    assert dp == _json(alone["fixture"], "discpower", "-m", "AP", "--qrels", "fixture", "--test", "t")
    assert dp[0]["pairs"] == 28 and dp[0]["undefined"] == 0
    t8 = _json(w, "eval", "-m", "AP", "-m", "P@10", "--qrels", "trec8", "--no-store")
    assert len({r["run_id"] for r in t8}) == 129
    assert t8 == _json(cli_for(trec8_db), "eval", "-m", "AP", "-m", "P@10", "--qrels", "trec8", "--no-store")
