"""The Python API (irwarehouse.Warehouse): the notebook session of docs/python.md runs as written;
DataFrames load in PyTerrier, ir_measures and trec_eval conventions; the numbers equal the
command line's."""

from __future__ import annotations

import doctest
import json
import re

import pandas as pd
import pytest

from conftest import FIXTURES, ROOT, cli_for
from irwarehouse import Warehouse
from irwarehouse.errors import IrwError


def test_notebook_example_runs(monkeypatch):
    text = (ROOT / "docs" / "python.md").read_text()
    block = re.search(r"<!-- notebook-example -->\n```python\n(.*?)```", text, re.S).group(1)
    monkeypatch.chdir(ROOT)
    pd.set_option("display.width", 80)
    parser = doctest.DocTestParser()
    test = parser.get_doctest(block, {}, "notebook example", "docs/python.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 10 and result.failed == 0


@pytest.fixture()
def w():
    with Warehouse() as wh:
        wh.load_qrels(str(FIXTURES / "qrels.txt"), name="fixture")
        wh.load_runs(str(FIXTURES / "runs"), meta=str(FIXTURES / "runs.tsv"))
        yield wh


def _alpha1(w, **renames):
    frame = w.sql("SELECT topic, docno, score, rank FROM runs WHERE run_id = 'alpha1'")
    return frame.rename(columns=renames)


@pytest.mark.parametrize("convention", ["pyterrier", "ir_measures", "trec_eval"])
def test_dataframes_in_each_convention_load_as_the_file(w, convention):
    if convention == "pyterrier":
        run = _alpha1(w, topic="qid")
        run["rank"] = run["rank"] - 1  # PyTerrier ranks from 0
        qrels = w.sql("SELECT topic AS qid, docno, rel AS label FROM qrels WHERE qrels = 'fixture'")
        w.load_runs(run, run_id="copy")
    elif convention == "ir_measures":
        run = _alpha1(w, topic="query_id", docno="doc_id").drop(columns="rank")
        qrels = w.sql("SELECT topic AS query_id, docno AS doc_id, rel AS relevance FROM qrels "
                      "WHERE qrels = 'fixture'")
        w.load_runs(run, run_id="copy")
    else:
        run = _alpha1(w)
        run["run_id"] = "copy"
        qrels = w.sql("SELECT topic, docno, rel FROM qrels WHERE qrels = 'fixture'")
        w.load_runs(run)
    w.load_qrels(qrels, name="copy-qrels")
    assert w.sql("SELECT count(*) AS n FROM qrels WHERE qrels = 'copy-qrels'")["n"][0] == 194
    a = w.eval(["AP", "nDCG@10", "P@5"], qrels="fixture", runs="alpha1,copy", per_topic=True)
    wide = a.pivot(index=["topic", "measure"], columns="run_id", values="value")
    assert (wide["alpha1"] == wide["copy"]).all()
    b = w.eval(["AP", "nDCG@10"], qrels="copy-qrels", runs="alpha1", per_topic=False, store=False)
    c = w.eval(["AP", "nDCG@10"], qrels="fixture", runs="alpha1", per_topic=False, store=False)
    assert b["value"].tolist() == c["value"].tolist()


def test_bad_dataframes_are_errors_naming_the_row(w):
    run = _alpha1(w, topic="qid")
    run.loc[3, "score"] = float("nan")
    with pytest.raises(IrwError, match=r"the DataFrame, row 3, column 'score': the score is missing"):
        w.load_runs(run, run_id="bad")
    with pytest.raises(IrwError, match="name the run with run_id="):
        w.load_runs(_alpha1(w))
    with pytest.raises(IrwError, match="no docno column"):
        w.load_runs(_alpha1(w).drop(columns="docno"), run_id="x")
    twice = pd.concat([_alpha1(w), _alpha1(w).head(1)], ignore_index=True)
    with pytest.raises(IrwError, match=r"the DataFrame, row \d+: .*twice"):
        w.load_runs(twice, run_id="twice")
    assert w.sql("SELECT count(*) AS n FROM run_loads")["n"][0] == 8  # nothing loaded


def test_ir_measures_objects(w):
    """ir_measures measure objects are read by their names (a stand-in when it is absent)."""
    try:
        import ir_measures
        measures = [ir_measures.AP, ir_measures.nDCG @ 10, ir_measures.P(rel=2) @ 5, ir_measures.Rprec]
    except ImportError:
        class _M:
            __module__ = "ir_measures.measures.base"

            def __init__(self, text):
                self.text = text

            def __str__(self):
                return self.text
        measures = [_M("AP"), _M("nDCG@10"), _M("P(rel=2)@5"), _M("Rprec")]
    got = w.eval(measures, per_topic=False, store=False)
    want = w.eval(["AP", "nDCG@10", "P(rel=2)@5", "RPrec"], per_topic=False, store=False)
    assert got.equals(want)
    with pytest.raises(IrwError, match="not a measure"):
        w.eval([object()])


def test_api_and_command_line_agree(tmp_path):
    path = str(tmp_path / "w.duckdb")
    cli = cli_for(path)
    cli("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture")
    cli("load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv")
    cli_dp = json.loads(cli("discpower", "-m", "AP", "-m", "P@10", "--format", "json").stdout)
    cli_ci = json.loads(cli("ci", "-m", "AP", "--format", "json").stdout)
    cli_cor = json.loads(cli("correlate", "-m", "AP", "-m", "P@10", "--format", "json").stdout)
    with Warehouse(path, read_only=True) as w:
        for frame, records in ((w.discpower(["AP", "P@10"]), cli_dp), (w.ci("AP"), cli_ci),
                               (w.correlate("AP", "P@10"), cli_cor)):
            pd.testing.assert_frame_equal(frame.reset_index(drop=True), pd.DataFrame(records),
                                          check_dtype=False, rtol=1e-15)
        with pytest.raises(Exception):
            w.sql("DELETE FROM runs")  # read-only
    with Warehouse(path) as w:
        made = w.pool("leave-out", "lo-", teams=["alpha", "beta"], depth=10)
        assert made["qrels"].tolist() == ["lo-alpha", "lo-beta"]
        assert w.qrels()["qrels"].tolist() == ["fixture", "lo-alpha", "lo-beta"]
        # a change made with SQL is reconciled right after: the stored scores follow it
        w.eval("AP", runs="alpha1")
        w.sql("DELETE FROM runs WHERE run_id = 'alpha1' AND topic = '101'")
        assert w.notes and "ranked again alpha1" in w.notes[-1]
        stored = w.sql("SELECT value FROM scores WHERE run_id = 'alpha1' AND topic = '101'")
        assert stored["value"].tolist() == [0.0]


def test_several_qrels_in_one_call(tmp_path):
    """eval --qrels with names and patterns (and Warehouse.eval with a list): each qrels's
    rows are those of evaluating it alone."""
    cli = cli_for(str(tmp_path / "w.duckdb"))
    cli("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture")
    cli("load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv")
    cli("pool", "leave-out", "--all-teams", "--depth", "10")
    both = json.loads(cli("eval", "-m", "AP", "-m", "nDCG@10", "--qrels", "fixture,fixture-lo-*",
                          "--per-topic", "--no-store", "--format", "json").stdout)
    names = ["fixture", "fixture-lo-alpha", "fixture-lo-beta", "fixture-lo-delta", "fixture-lo-gamma"]
    assert list(dict.fromkeys(r["qrels"] for r in both)) == names
    for q in names:
        alone = json.loads(cli("eval", "-m", "AP", "-m", "nDCG@10", "--qrels", q, "--per-topic",
                               "--no-store", "--format", "json").stdout)
        assert [{k: v for k, v in r.items() if k != "qrels"} for r in both if r["qrels"] == q] == alone
    bad = cli("eval", "-m", "AP", "--qrels", "fixture-x*", ok=False)
    assert "no qrels matches 'fixture-x*'" in bad.stderr
    with Warehouse(cli.db_path, read_only=True) as w:
        frame = w.eval("AP", qrels=["fixture-lo-alpha", "fixture"], per_topic=False)
        assert frame["qrels"].unique().tolist() == ["fixture-lo-alpha", "fixture"]
        one = w.eval("AP", qrels="fixture", per_topic=False)
        assert frame[frame["qrels"] == "fixture"]["value"].tolist() == one["value"].tolist()


def test_a_warehouse_serves_one_thread_at_a_time(w, monkeypatch):
    """A call while another thread's call is under way is refused with an IrwError saying
    so, not a DuckDB error from a connection shared between threads; the first call ends as
    it would have, and the warehouse serves the next call (of any thread)."""
    import threading

    from irwarehouse.engine import evaluation

    entered, release = threading.Event(), threading.Event()
    evaluate = evaluation.evaluate

    def slow(*args, **kwargs):
        entered.set()
        release.wait(30)
        return evaluate(*args, **kwargs)

    monkeypatch.setattr(evaluation, "evaluate", slow)
    out = {}
    worker = threading.Thread(target=lambda: out.setdefault("eval", w.eval("AP", runs="alpha1", per_topic=False)))
    worker.start()
    try:
        assert entered.wait(30)
        for call in (lambda: w.runs(), lambda: w.sql("SELECT 1"), lambda: w.eval("P@5"),
                     lambda: w.load_runs(str(FIXTURES / "runs"), replace=True)):
            with pytest.raises(IrwError, match="in use by another thread"):
                call()
    finally:
        release.set()
        worker.join(30)
    assert out["eval"]["value"].tolist() == w.eval("AP", runs="alpha1", per_topic=False)["value"].tolist()
    done = []
    other = threading.Thread(target=lambda: done.append(len(w.runs())))
    other.start()
    other.join(30)
    assert done == [len(w.runs())]


def test_the_options_of_the_rankings_are_declared_once(w):
    """The options of ``irw qrels rankings`` are one dataclass (RankingOptions) that the
    command line builds, the API takes (whole, or by name) and Spark and the analysis
    receive: no door declares them again."""
    import dataclasses
    import inspect

    from irwarehouse import api, judges, spark
    from irwarehouse.options import RankingOptions

    w.pool("leave-out", qrels="fixture", teams=["alpha"])
    o = RankingOptions(what="correlation", top_k=3, rbo_p=0.8)
    by_object = w.compare_rankings("fixture", "fixture-lo-alpha", ["AP"], options=o).df()
    by_name = w.compare_rankings("fixture", "fixture-lo-alpha", ["AP"], what="correlation", top_k=3, rbo_p=0.8).df()
    assert len(by_object) and by_object.equals(by_name)
    assert RankingOptions.of(o, what="groups", B=None).what == "groups"
    assert RankingOptions.of(o, top_k=None).top_k == 3  # None: not given
    with pytest.raises(TypeError, match="unknown option"):
        w.compare_rankings("fixture", "fixture-lo-alpha", ["AP"], permutation=10)
    with pytest.raises(IrwError, match="top k"):
        w.compare_rankings("fixture", "fixture-lo-alpha", ["AP"], options=RankingOptions(top_k=1))
    assert api.RankingOptions is RankingOptions
    fields = {f.name for f in dataclasses.fields(RankingOptions)} - {"what"}
    for fn in (api.Warehouse.compare_rankings, spark.SparkWarehouse.compare_rankings,
               judges.compare_rankings, judges.table):
        assert not fields & set(inspect.signature(fn).parameters), fn.__qualname__
