"""Files in, scores out (``irw eval QRELS RUN...``, Warehouse.eval_files): the same loader
checks and the same engine as a warehouse, in an in-memory one. The scores equal those of
loading the files into a warehouse and evaluating there, for every catalogue measure, on the
fixtures and on TREC-8; nothing is written unless ``--save`` names a warehouse, and then the
qrels and runs go in together or not at all.
"""

from __future__ import annotations

import gzip
import os
import shutil

import pytest

from conftest import FIXTURES, cli_for, snapshot
from irwarehouse import Warehouse
from irwarehouse import measures as ms
from irwarehouse.errors import IrwError
from test_sql_product import CASES, GRADED_MEASURES

ALL = [name for name, _, _ in CASES]  # every catalogue measure at several settings
QRELS, RUNS = str(FIXTURES / "qrels.txt"), str(FIXTURES / "runs")


def test_every_catalogue_measure_is_in_the_cases():
    assert {ms.parse_all([name])[0].name for name in ALL} == set(GRADED_MEASURES)


@pytest.fixture(scope="module")
def fixture_warehouse(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("files") / "fx.duckdb")
    with Warehouse(path) as w:
        w.load_qrels(QRELS, "fixture")
        w.load_runs(RUNS)
    return path


@pytest.mark.parametrize("options", [
    {}, {"topics": "run", "max_docs": 5}, {"topics": "all", "rel_level": 2},
], ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults")
def test_files_equal_the_warehouse_for_every_measure(fixture_warehouse, options, monkeypatch):
    from irwarehouse.engine import loading

    with Warehouse(fixture_warehouse, read_only=True) as w:
        loaded = w.eval(ALL, "fixture", **options)
    assert len(loaded) > 0
    # the judged documents' ranks sorted (dense judgments), then counted (sparse ones)
    for pairs in (0, 10**9):
        monkeypatch.setattr(loading.runs, "COUNT_PAIRS", pairs)
        assert Warehouse.eval_files(QRELS, [RUNS], ALL, **options).rows() == loaded.rows(), pairs
    # every file a batch of its own: every ranked line kept, and runs across files ranked again
    monkeypatch.setattr(loading.runs, "BATCH_SHARE", 1e-12)
    assert Warehouse.eval_files(QRELS, [RUNS], ALL, **options).rows() == loaded.rows()


# Measures of every kind of ranking input for the options of batches beyond the defaults
# (batches part the runs, never a measure): ranks, ranking lengths, unjudged documents, gains.
SOME = ["AP", "P@5", "RR", "nDCG@10", "Bpref", "infAP", "RBP(p=0.8)", "Judged@10", "NumRet", "ERR@10"]


@pytest.mark.parametrize("options, measures", [
    pytest.param({}, ALL, id="defaults"),
    pytest.param({"topics": "run", "max_docs": 5}, SOME, id="topics=run,max_docs=5"),
    pytest.param({"per_topic": False, "topics": "all", "rel_level": 2}, SOME,
                 id="per_topic=False,topics=all,rel_level=2")])
def test_runs_in_batches_score_what_one_batch_scores(options, measures, monkeypatch, tmp_path):
    """Files in, scores out reads, checks and evaluates the runs in batches bounded by the
    memory limit: with a tiny share of it every file is a batch of its own, and the scores
    (and their order) are those of one batch; a run whose lines are in files of two batches
    is read again with every file. Every measure under the defaults; SOME under the other
    options."""
    from irwarehouse.engine import files_in, loading

    one = Warehouse.eval_files(QRELS, [RUNS], measures, **options).rows()
    assert len(one) > 0
    staged: list[list[str]] = []
    stage = loading.collection._stage_runs
    monkeypatch.setattr(loading.collection, "_stage_runs",
                        lambda con, files, *a, **k: staged.append(files) or stage(con, files, *a, **k))
    monkeypatch.setattr(files_in, "BATCH_SHARE", 1e-12)
    assert Warehouse.eval_files(QRELS, [RUNS], measures, **options).rows() == one
    assert len(staged) == len(os.listdir(RUNS))  # a batch per file, none read again
    # alpha1 and alpha2 split by topic into two files: read again, all files at once
    lines = open(os.path.join(RUNS, "alpha.txt")).read().splitlines(keepends=True)
    topics = sorted({line.split()[0] for line in lines})
    runs = tmp_path / "runs"
    shutil.copytree(RUNS, runs)
    os.remove(runs / "alpha.txt")
    for part in (0, 1):
        (runs / f"alpha_{part}.txt").write_text(
            "".join(line for line in lines if (line.split()[0] in topics[::2]) == (part == 0)))
    staged.clear()
    assert Warehouse.eval_files(QRELS, [str(runs)], measures, **options).rows() == one
    assert len(staged[-1]) == len(os.listdir(runs)) > len(staged[-2])


def test_files_equal_the_warehouse_on_trec8(trec8, trec8_db):
    names = [ms.CATALOGUE[m].examples[0] for m in GRADED_MEASURES]  # every graded measure once
    files = Warehouse.eval_files(str(trec8 / "qrels.trec8.gz"), [str(trec8 / "runs")], names)
    with Warehouse(trec8_db, read_only=True) as w:
        loaded = w.eval(names, "trec8")
    assert len(files) == 129 * 50 * len(set(map(str, ms.parse_all(names))))
    assert files.rows() == loaded.rows()


def test_files_in_views_have_the_warehouses_columns(fixture_warehouse):
    """The views files in, scores out reads (sql/files_in.sql) have the names, columns and
    column types of the warehouse's tables and views they stand in for."""
    import duckdb

    from irwarehouse.engine import files_in

    names = ("qrels", "qrels_info", "runs", "run_topics", "run_loads", "run_info")

    def columns(con, name):
        return [(c, str(t)) for c, t, *_ in con.execute(f"DESCRIBE {name}").fetchall()]

    warehouse = duckdb.connect(fixture_warehouse, read_only=True)
    try:
        expected = {name: columns(warehouse, name) for name in names}
    finally:
        warehouse.close()
    with files_in.staged(QRELS, [RUNS], name="fixture") as con:
        assert {name: columns(con, name) for name in names} == expected


# Each judgment kind's fixture: its qrels file, run files and measures of its family.
KIND_CASES = {
    "diversity": ("diversity/qrels.txt", ["diversity/runs"],
                  ["alpha_nDCG@10", "ERR_IA@20", "NRBP", "nNRBP", "P_IA@5", "AP_IA", "StRecall@10", "AP", "P@5"]),
    "prels": ("sampled/prels.txt", ["sampled/runA.txt", "sampled/runB.txt", "sampled/runC.txt"],
              ["infAP", "xinfAP", "infNDCG", "iP@10", "iNumRel", "AP"]),
    "prefs": ("prefs/prefs.txt", ["prefs/run_a.txt", "prefs/run_b.txt"], ["prefs_simp", "prefs_pair", "prefs_avgjg"]),
}


@pytest.mark.parametrize("kind", sorted(KIND_CASES))
def test_every_judgment_kind_from_files_equals_the_warehouse(kind, monkeypatch, tmp_path):
    """--qrels-format KIND: the qrels file read as a load of that kind reads it, without a
    warehouse, its graded rows and lines the views of tables qrels and of its detail table;
    per topic the scores of the loaded files, in one batch and in a batch per file; the
    command prints them too."""
    from irwarehouse.engine import loading

    qrels, runs, measures = KIND_CASES[kind]
    qrels, runs = str(FIXTURES / qrels), [str(FIXTURES / r) for r in runs]
    with Warehouse(":memory:") as w:
        w.load_qrels(qrels, "q", format=kind)
        w.load_runs(runs)
        loaded = w.eval(measures, "q", store=False)
    assert len(loaded) > 0 and len({r[2] for r in loaded.rows()}) == len(measures)
    files = Warehouse.eval_files(qrels, runs, measures, name="q", qrels_format=kind)
    assert files.rows() == loaded.rows()
    monkeypatch.setattr(loading.runs, "BATCH_SHARE", 1e-12)
    assert Warehouse.eval_files(qrels, runs, measures, name="q", qrels_format=kind).rows() == loaded.rows()
    w = cli_for(str(tmp_path / "unused.duckdb"))
    out = w("eval", qrels, *runs, *[a for m in measures for a in ("-m", m)], "--qrels-format", kind,
            "--per-topic", "--format", "csv").stdout.splitlines()
    assert out[0] == "run_id,topic,measure,value"
    assert {tuple(line.split(",")[:3]): float(line.split(",")[3]) for line in out[1:]} == \
        {(r, t, m): v for r, t, m, v in loaded.rows()}
    assert not os.path.exists(tmp_path / "unused.duckdb")


def test_a_judgment_kind_its_measures_need_is_named_from_files():
    """Without --qrels-format a diversity file is read as trec qrels (and so refused, its
    documents judged twice for a topic); a measure the kind cannot serve, and a DataFrame
    given as a kind with lines of its own, are one-line errors."""
    qrels, runs = str(FIXTURES / "diversity" / "qrels.txt"), [str(FIXTURES / "diversity" / "runs")]
    with pytest.raises(IrwError, match="judged twice"):
        Warehouse.eval_files(qrels, runs, ["alpha_nDCG@10"])
    with pytest.raises(IrwError, match="reads prels judgments.*--format prels"):
        Warehouse.eval_files(qrels, runs, ["xinfAP"], qrels_format="diversity")
    with pytest.raises(IrwError, match="unknown judgment format 'ndeval'"):
        Warehouse.eval_files(qrels, runs, ["alpha_nDCG@10"], qrels_format="ndeval")
    import pandas as pd
    frame = pd.DataFrame([("1", "0", "d", 1)], columns=["topic", "iteration", "docno", "rel"])
    with pytest.raises(IrwError, match="a DataFrame is loaded as trec judgments"):
        Warehouse.eval_files(frame, runs, ["alpha_nDCG@10"], qrels_format="diversity")


def test_files_in_set_up_no_warehouse(monkeypatch, tmp_path):
    """Files in, scores out reads the files into an in-memory database and evaluates them
    through views over what it staged (engine.files_in): no schema is set up, no base
    relation materialized; irw trec-eval (Warehouse.trec_eval) too. With run metadata it loads them into a throw-away warehouse
    (schema without the measure macros: users' SQL calls them, and there is none), which
    computes the base within the evaluation's query too; a saved evaluation, and any other
    warehouse, materializes the base."""
    from irwarehouse import connection, schema, sql

    statements: list[str] = []
    inner = sql._execute

    def spy(con, text, params=None):
        statements.append(text)
        return inner(con, text, params)

    monkeypatch.setattr(sql, "_execute", spy)
    created: list[bool] = []
    prepare = schema.prepare
    monkeypatch.setattr(schema, "prepare", lambda *a, **k: (created.append(k.get("measure_macros", True)),
                                                              prepare(*a, **k))[1])
    files = Warehouse.eval_files(QRELS, RUNS, ["AP", "nDCG@10"])
    assert len(files) > 0 and created == []
    assert not any("INSERT INTO irw_base" in s for s in statements)
    # irw trec-eval takes the same path (its relstring and -c's stand-in from ranking lengths)
    report = Warehouse.trec_eval(QRELS, str(FIXTURES / "runs" / "beta1.txt"), ["official", "relstring"],
                                 complete=True)
    assert report.summary_lines and created == []
    assert not any("INSERT INTO irw_base" in s for s in statements)
    with_meta = Warehouse.eval_files(QRELS, RUNS, ["AP", "nDCG@10"], meta=str(FIXTURES / "runs.tsv"))
    assert with_meta.rows() == files.rows() and created == [False]
    assert not any("INSERT INTO irw_base" in s for s in statements)
    statements.clear()
    saved = Warehouse.eval_files(QRELS, RUNS, ["AP", "nDCG@10"], save=str(tmp_path / "kept.duckdb"))
    assert saved.rows() == files.rows()
    assert any("INSERT INTO irw_base" in s for s in statements)
    with Warehouse(":memory:") as w:
        assert connection.engine_of(w.con).caches_base
        assert w.sql("SELECT count(*) FROM duckdb_functions() WHERE schema_name = 'measure'").rows()[0][0] > 0


def test_means_options_and_data_frames():
    import pandas as pd

    per = Warehouse.eval_files(QRELS, RUNS, ["AP", "P@10"], run_spec="alpha1,beta1", per_topic=False)
    assert sorted({r[0] for r in per.rows()}) == ["alpha1", "beta1"]
    assert per.columns == ["run_id", "measure", "value", "n_topics"]
    qrels = pd.read_csv(QRELS, sep=" ", header=None, names=["topic", "iteration", "docno", "rel"],
                        dtype={"topic": str})
    assert (Warehouse.eval_files(qrels, RUNS, ["AP"]).rows()
            == Warehouse.eval_files(QRELS, RUNS, ["AP"]).rows())


# --------------------------------------------------------------------------- the command


@pytest.fixture()
def invoke(tmp_path, monkeypatch):
    """The CLI in an empty directory, IRW_DB naming a warehouse that must stay unwritten."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IRW_DB", str(tmp_path / "never.duckdb"))
    return cli_for(str(tmp_path / "never.duckdb"))


def test_the_command_prints_what_the_warehouse_prints(invoke, tmp_path):
    loaded = cli_for(str(tmp_path / "w.duckdb"))
    loaded("load", "qrels", QRELS, "--name", "fixture")
    loaded("load", "runs", RUNS)
    for args in (["-m", "AP", "-m", "P@10"],
                 ["-m", "AP", "-m", "nDCG@10", "--per-topic", "--format", "trec"],
                 ["-m", "Bpref", "--format", "csv", "--runs", "alpha1,gamma1", "--max-docs", "5"],
                 ["-m", "AP", "--aggregate", "gm_trec", "--format", "json"]):
        files = invoke("eval", QRELS, str(FIXTURES / "runs" / "*.txt*"), *args)
        assert files.stdout == loaded("eval", *args, "--no-store").stdout, args
        assert files.stdout.strip()
    assert sorted(os.listdir(tmp_path)) == ["w.duckdb"]  # nothing else written


def test_several_files_globs_and_compressed_files(invoke, tmp_path):
    qrels = tmp_path / "qrels.gz"
    with open(QRELS, "rb") as src, gzip.open(qrels, "wb") as dst:
        shutil.copyfileobj(src, dst)
    out = invoke("eval", str(qrels), str(FIXTURES / "runs" / "alpha.txt"),
                 str(FIXTURES / "runs" / "gamma1.txt.gz"), "-m", "AP", "--format", "csv").stdout
    assert [line.split(",")[0] for line in out.splitlines()[1:]] == ["alpha1", "alpha2", "gamma1"]


def test_save_loads_all_or_nothing(invoke, tmp_path):
    saved = str(tmp_path / "saved.duckdb")
    invoke("eval", QRELS, RUNS, "-m", "AP", "--save", saved, "--qrels", "fx")
    with Warehouse(saved, read_only=True) as w:
        assert w.qrels_names() == ["fx"]
        assert w.sql("SELECT count(*) AS n FROM scores WHERE qrels = 'fx'")["n"][0] == 8 * 5  # the 5 topics with relevant documents
        assert len(w.run_ids()) == 8
    before = snapshot(saved)
    # the qrels is new, the runs are not: neither goes in
    failed = invoke("eval", QRELS, RUNS, "-m", "AP", "--save", saved, "--qrels", "other", ok=False)
    assert "already loaded" in failed.stderr and "--replace" in failed.stderr
    assert snapshot(saved) == before
    invoke("eval", QRELS, RUNS, "-m", "AP", "--save", saved, "--qrels", "fx", "--replace")
    assert not os.path.exists(tmp_path / "never.duckdb")


def test_a_failed_evaluation_saves_nothing(invoke, tmp_path):
    """The load and the evaluation are one transaction: a run spec that selects nothing
    undoes the load, and a warehouse created for it is removed."""
    saved = tmp_path / "saved.duckdb"
    failed = invoke("eval", QRELS, RUNS, "-m", "AP", "--save", saved, "--runs", "team:alpha", ok=False)
    assert "unknown team 'alpha'" in failed.stderr
    assert not saved.exists() and not (tmp_path / "saved.duckdb.wal").exists()
    out = invoke("eval", QRELS, RUNS, "-m", "AP", "--save", saved, "--runs", "team:alpha",
                 "--meta", FIXTURES / "runs.tsv", "--format", "csv").stdout
    assert [line.split(",")[0] for line in out.splitlines()[1:]] == ["alpha1", "alpha2"]
    with Warehouse(str(saved), read_only=True) as w:
        assert w.sql("SELECT DISTINCT run_id FROM scores ORDER BY 1").rows() == [("alpha1",), ("alpha2",)]
        assert w.teams()["alpha"] == ["alpha1", "alpha2"]


@pytest.mark.parametrize("args, message", [
    ([QRELS, "-m", "AP"], "takes a qrels file and run files"),
    ([QRELS, RUNS, "-m", "AP", "--collection", "c"], "--collection reads a warehouse"),
    ([QRELS, RUNS, "-m", "AP", "--standardize", "f"], "--standardize reads a warehouse"),
    ([QRELS, RUNS, "-m", "AP", "--replace"], "--replace replaces what --save DB holds"),
    ([QRELS, RUNS, "-m", "AP", "--qrels", "a,b"], "--qrels names the one qrels file"),
    (["-m", "AP", "--order", "given"], "--order applies to files evaluated directly"),
    (["-m", "AP", "--save", "x.duckdb"], "--save applies to files evaluated directly"),
    (["-m", "AP", "--meta", "x.tsv"], "--meta applies to files evaluated directly"),
    ([QRELS, RUNS, "-m", "nDCG(discount=nope)"], "discount"),
])
def test_usage_errors(invoke, tmp_path, args, message):
    result = invoke("eval", *args, ok=False)
    assert message in result.stderr
    assert not os.path.exists(tmp_path / "never.duckdb")


def test_bad_input_names_the_file_and_line(invoke, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("101 Q0 d1 1 2.5 r1\n101 Q0 d2 2 nope r1\n")
    result = invoke("eval", QRELS, str(bad), "-m", "AP", ok=False)
    assert f"{bad}, line 2" in result.stderr and "score" in result.stderr
    twice = tmp_path / "twice.txt"
    twice.write_text("101 Q0 d1 1 2.5 r1\n101 Q0 d1 2 1.5 r1\n")
    result = invoke("eval", QRELS, str(twice), "-m", "AP", ok=False)
    assert f"{twice}, line 2" in result.stderr and "twice" in result.stderr
    assert sorted(os.listdir(tmp_path)) == ["bad.txt", "twice.txt"]


def test_a_run_from_a_stream_or_standard_input(tmp_path):
    """A run read from a binary stream (``-``: standard input on the command line) gives what
    the file gives; errors name the stream."""
    import io
    import subprocess
    import sys

    alpha = FIXTURES / "runs" / "alpha.txt"
    from_file = Warehouse.eval_files(QRELS, [str(alpha)], ["AP", "P@5"])
    with open(alpha, "rb") as fh:
        assert Warehouse.eval_files(QRELS, fh, ["AP", "P@5"]).rows() == from_file.rows()
    mixed = Warehouse.eval_files(QRELS, [io.BytesIO(alpha.read_bytes()), str(FIXTURES / "runs" / "beta1.txt")], ["AP"])
    assert {r[0] for r in mixed.rows()} == {"alpha1", "alpha2", "beta1"}
    with pytest.raises(IrwError, match="read runs from a binary stream"):
        Warehouse.eval_files(QRELS, io.StringIO("101 Q0 d 1 1 r\n"), ["AP"])
    irw = [sys.executable, "-c", "from irwarehouse.cli import main; main()"]
    done = subprocess.run([*irw, "eval", QRELS, "-", "-m", "AP", "-m", "P@5", "--format", "csv"],
                          input=alpha.read_bytes(), capture_output=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    by_file = subprocess.run([*irw, "eval", QRELS, str(alpha), "-m", "AP", "-m", "P@5", "--format", "csv"],
                             capture_output=True, cwd=tmp_path)
    assert done.stdout == by_file.stdout and b"alpha1" in done.stdout
    bad = subprocess.run([*irw, "eval", QRELS, "-", "-m", "AP"], input=b"101 Q0 d1 1 x r\n",
                         capture_output=True, cwd=tmp_path)
    assert bad.returncode == 1
    assert bad.stderr.decode().startswith("error: standard input, line 1: score 'x' (field 5)")
    assert os.listdir(tmp_path) == []


def test_files_of_little_text_are_evaluated_on_one_thread(monkeypatch, tmp_path):
    """A second thread has nothing to do on less text than a row group holds
    (files_in.ONE_THREAD_TEXT): such files are evaluated on one, larger ones (or a
    directory, whose size is not looked up) on DuckDB's default; the scores are the same."""
    import gzip

    from irwarehouse.engine import files_in

    def threads(qrels, runs) -> int:
        with files_in.staged(qrels, runs, name="q") as con:
            return con.execute("SELECT current_setting('threads')").fetchone()[0]

    beta = str(FIXTURES / "runs" / "beta1.txt")
    default = threads(QRELS, [RUNS])
    assert threads(QRELS, [beta]) == 1 and threads(QRELS, iter([beta])) == 1
    packed = tmp_path / "beta1.txt.gz"
    packed.write_bytes(gzip.compress(open(beta, "rb").read()))
    assert files_in._text_size([str(packed)]) == packed.stat().st_size * files_in.COMPRESSION
    one = Warehouse.eval_files(QRELS, [beta], ALL).rows()
    monkeypatch.setattr(files_in, "ONE_THREAD_TEXT", 0)
    assert threads(QRELS, [beta]) == default
    if default > 1:
        assert Warehouse.eval_files(QRELS, [beta], ALL).rows() == one
def test_a_qrels_from_a_stream_is_recorded_by_its_name(tmp_path):
    """The catalogue records a stream's name as the qrels's source, not the temporary copy
    irw read it from."""
    import io

    with open(QRELS, "rb") as fh:
        stream = io.BytesIO(fh.read())
    stream.name = "judged-today"
    with Warehouse(str(tmp_path / "w.duckdb")) as w:
        w.load_qrels(stream, "q")
        assert w.sql("SELECT source FROM qrels_info").rows() == [("judged-today",)]
