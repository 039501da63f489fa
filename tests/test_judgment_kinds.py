"""Judgment kinds as data (irwarehouse.judgment_kinds): every kind loads into its detail table
and the graded rows of qrels it gives, its bad lines are named, and a measure reading a kind
the qrels does not hold is refused in one line."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, cli_for, snapshot
from irwarehouse import Warehouse, judgment_kinds, measures
from irwarehouse.errors import IrwError

FILES = {
    "diversity": "1 1 d1 1\n1 2 d1 0\n1 2 d2 2\n1 3 d3 0\n2 1 d4 1\n",
    "prels": "1 0 d1 1 1\n1 0 d2 2 -1\n1 0 d3 2 0\n2 0 d4 1 2\n",
    "prefs": "1 u1 s1 d1 3.0\n1 u1 s1 d2 2\n1 u1 s2 d1 1e0\n2 u2 s1 d4 0\n",
    "jg": "1 u1 d1 1\n1 u2 d1 0\n1 u2 d2 2\n",
}


def write(tmp_path, text: str, name: str = "j.txt") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_every_kind_is_an_entry_the_loader_reads():
    assert list(judgment_kinds.KINDS) == ["trec", "diversity", "prels", "prefs", "jg"]
    for kind in judgment_kinds.KINDS.values():
        assert kind.help and kind.reference and kind.graded_help
        assert {"topic", "docno"} <= set(kind.key) <= set(kind.kept)
        assert kind.detail in ("", *judgment_kinds.DETAIL_TABLES)
    with pytest.raises(IrwError, match="unknown judgment format 'foo'; formats: trec"):
        judgment_kinds.kind("foo")


def test_detail_tables_and_graded_rows(tmp_path):
    with Warehouse(":memory:") as w:
        for name, text in FILES.items():
            summary = w.load_qrels(write(tmp_path, text, f"{name}.txt"), name, format=name)
            assert summary["format"] == name and summary["lines"] == len(text.splitlines())
        kinds = dict(w.sql("SELECT qrels, judgments FROM qrels_info").rows())
        assert kinds == {k: k for k in FILES}
        graded = sorted(w.sql("SELECT qrels, topic, docno, rel FROM qrels").rows())
        # diversity: a document's largest grade over its intents; prels: its rel (-1 kept);
        # prefs and jg: no graded rows
        assert graded == [("diversity", "1", "d1", 1), ("diversity", "1", "d2", 2), ("diversity", "1", "d3", 0),
                          ("diversity", "2", "d4", 1), ("prels", "1", "d1", 1), ("prels", "1", "d2", -1),
                          ("prels", "1", "d3", 0), ("prels", "2", "d4", 2)]
        assert sorted(w.sql("SELECT topic, intent, docno, rel FROM qrels_intents").rows())[:2] == [
            ("1", "1", "d1", 1), ("1", "2", "d1", 0)]
        assert sorted(w.sql("SELECT docno, stratum, rel FROM qrels_strata").rows())[:2] == [
            ("d1", 1, 1), ("d2", 2, -1)]
        prefs = sorted(w.sql("SELECT qrels, topic, jg, jsg, docno, rel FROM qrels_prefs").rows(),
                       key=lambda r: (r[0], r[1], r[2], r[3] or "", r[4]))
        assert prefs[0] == ("jg", "1", "u1", None, "d1", 1.0)
        assert ("prefs", "1", "u1", "s2", "d1", 1.0) in prefs
        w.drop_qrels("diversity")
        assert w.sql("SELECT count(*) FROM qrels_intents").rows() == [(0,)]


@pytest.mark.parametrize("kind, text, problem", [
    ("diversity", "1 1 d1 1\n1 1 d1\n", "line 2: expected 4 fields (topic intent docno rel), found 3"),
    ("diversity", "1 1 d1 x\n", "line 1: relevance 'x' (field 4) is not an integer"),
    ("diversity", "1 1 d1 1\n1 2 d1 1\n1 1 d1 0\n",
     "line 3: document d1 is judged twice for topic 1, intent 1 (first at"),
    ("prels", "1 0 d1 1\n", "line 1: expected 5 fields (topic iteration docno stratum rel), found 4"),
    ("prels", "1 0 d1 s 1\n", "line 1: stratum 's' (field 4) is not an integer"),
    ("prels", "1 0 d1 1 1\n1 0 d1 2 0\n", "line 2: document d1 is judged twice for topic 1 (first at"),
    ("prefs", "1 u1 s1 d1 high\n", "line 1: preference level 'high' (field 5) is not a number"),
    ("prefs", "1 u1 s1 d1 1\n1 u1 s1 d1 2\n", "line 2: document d1 is judged twice for topic 1, jg u1, jsg s1"),
    ("jg", "1 u1 d1 1.5\n", "line 1: relevance '1.5' (field 4) is not an integer"),
    ("jg", "1 u1 d1 1\n1 u1 d1 1\n", "line 2: document d1 is judged twice for topic 1, jg u1"),
])
def test_bad_lines_name_file_line_and_problem_and_change_nothing(tmp_path, kind, text, problem):
    db = str(tmp_path / "w.duckdb")
    invoke = cli_for(db)
    invoke("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture")
    before = snapshot(db)
    path = write(tmp_path, text)
    result = invoke("load", "qrels", path, "--name", "bad", "--format", kind, ok=False)
    assert result.exit_code != 0
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}, {problem}"), result.output
    assert snapshot(db) == before


def test_the_cli_loads_a_kind_and_says_where_its_lines_are(tmp_path):
    invoke = cli_for(str(tmp_path / "w.duckdb"))
    out = invoke("load", "qrels", write(tmp_path, FILES["diversity"]), "--name", "d", "--format", "diversity").output
    assert out.strip() == ("loaded qrels d: 4 judgments, 3 relevant, 2 topics; "
                           "5 diversity lines in table qrels_intents")
    out = invoke("load", "qrels", FIXTURES / "qrels.txt", "--name", "t").output
    assert "table" not in out


def test_a_measure_of_a_kind_the_qrels_does_not_hold_is_refused_in_one_line(tmp_path):
    with Warehouse(":memory:") as w:
        w.load_qrels(write(tmp_path, FILES["prefs"]), "pf", format="prefs")
        w.load_runs(str(FIXTURES / "runs"))
        with pytest.raises(IrwError) as caught:
            w.eval(["AP"], qrels="pf")
        text = str(caught.value)
        assert "\n" not in text
        assert text == ("measure AP reads trec judgments, which qrels pf (loaded as prefs) does not "
                        "hold: load them with irw load qrels FILE --name NAME --format trec or "
                        "--format diversity or --format prels")


def test_the_default_qrels_is_the_only_one_serving_the_measures(tmp_path):
    """Graded qrels and a judgment-group file of the same collection: a graded measure takes
    the graded qrels and a preference measure the other, unasked; a measure no loaded qrels
    serves names what is loaded."""
    with Warehouse(":memory:") as w:
        w.load_qrels(str(FIXTURES / "qrels.txt"), "graded")
        w.load_runs(str(FIXTURES / "runs"))
        with pytest.raises(IrwError, match=r"^measure prefs_simp reads prefs judgments, which "
                                           r"qrels graded \(loaded as trec\) does not hold"):
            w.eval(["prefs_simp"], store=False)  # the only qrels: refused for what it holds
        w.load_qrels(str(FIXTURES / "auto-qrels.txt"), "auto")
        with pytest.raises(IrwError, match=r"^no qrels loaded holds prefs judgments \(loaded: "
                                           r"graded \(trec\), auto \(trec\)\)"):
            w.eval(["prefs_simp"], store=False)
        w.drop_qrels("auto")
        w.load_qrels(str(FIXTURES / "qrels.txt"), "groups", format="jg")
        def same(measure, qrels):
            unasked = w.eval([measure], store=False, rel_level=1).df()
            assert len(unasked) and unasked.equals(w.eval([measure], qrels=qrels, store=False,
                                                          rel_level=1).df())

        same("AP", "graded")
        same("prefs_simp", "groups")
        w.load_qrels(str(FIXTURES / "auto-qrels.txt"), "auto")
        with pytest.raises(IrwError, match=r"several qrels are loaded \(graded, auto\)"):
            w.eval(["AP"], store=False)
        same("prefs_simp", "groups")


def test_a_dataframe_of_another_kind_is_refused():
    pd = pytest.importorskip("pandas")
    with Warehouse(":memory:") as w, pytest.raises(IrwError, match="load diversity judgments from files"):
        w.load_qrels(pd.DataFrame({"topic": ["1"], "docno": ["d"], "rel": [1]}), "x", format="diversity")


def test_measures_list_their_kind_and_reference():
    with Warehouse(":memory:") as w:
        listing = w.measures().df().set_index("name")
        assert listing.loc["AP@k", "judgments"] == "trec"
        assert listing.loc["AP@k", "reference"] == "trec_eval 10.0"
        table = dict(w.sql("SELECT name, judgments FROM measures").rows())
        assert listing.loc["Q@k", "reference"] in ("", None)  # no trec_eval measure: its paper defines it
    assert table == {m.name: m.reads for m in measures.CATALOGUE.values()}
    text = Warehouse.explain_measure("AP")
    assert "reads trec judgments" in text and "Spark)" in text
