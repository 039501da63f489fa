"""Judgments read through ir_datasets (``irds:DATASET_ID``): datasets registered here from
small files through ir_datasets' own classes, so nothing is downloaded."""

from __future__ import annotations

import json
import uuid

import pytest

from conftest import FIXTURES, error_of

ir_datasets = pytest.importorskip("ir_datasets", reason="ir_datasets is not installed (pip install 'irwarehouse[irds]')")

from ir_datasets.datasets.base import Dataset  # noqa: E402
from ir_datasets.formats import BaseQrels, TrecQrels, TrecSubQrels  # noqa: E402
from ir_datasets.formats.trec import TrecPrel, TrecQrel  # noqa: E402
from ir_datasets.util import LocalDownload  # noqa: E402


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds-home"))


class Listed(BaseQrels):
    """Qrels records given as a list, of a given class."""

    def __init__(self, records, cls):
        self._records, self._cls = records, cls

    def qrels_iter(self):
        yield from self._records

    def qrels_cls(self):
        return self._cls

    def qrels_defs(self):
        return {}


def register(qrels) -> str:
    """A dataset of its own (a fresh id) holding ``qrels``."""
    ident = f"irw-test-{uuid.uuid4().hex[:8]}/qrels"
    ir_datasets.registry.register(ident, Dataset(qrels))
    return ident


def graded_file(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text((FIXTURES / "qrels.txt").read_text())
    return path


def rows(cli, query):
    return json.loads(cli("sql", query, "--format", "json").stdout)


def test_graded_dataset_loads_as_its_file_does(cli, tmp_path):
    ident = register(TrecQrels(LocalDownload(graded_file(tmp_path)), {}))
    out = cli("load", "qrels", f"irds:{ident}", "--name", "irds").stderr
    assert "loaded qrels irds" in out
    cli("load", "qrels", FIXTURES / "qrels.txt", "--name", "file")
    query = "SELECT topic, docno, rel FROM qrels WHERE qrels = '{}' ORDER BY ALL"
    assert rows(cli, query.format("irds")) == rows(cli, query.format("file")) != []
    info = rows(cli, "SELECT source, judgments FROM qrels_info WHERE qrels = 'irds'")
    assert info == [{"source": f"irds:{ident}", "judgments": "trec"}]


def test_evaluated_from_files_as_the_file_is(cli, tmp_path):
    ident = register(TrecQrels(LocalDownload(graded_file(tmp_path)), {}))
    run = FIXTURES / "runs" / "alpha.txt"
    via = json.loads(cli("eval", f"irds:{ident}", run, "-m", "AP", "-m", "nDCG@5", "--format", "json").stdout)
    direct = json.loads(cli("eval", FIXTURES / "qrels.txt", run, "-m", "AP", "-m", "nDCG@5",
                            "--format", "json").stdout)
    assert via == direct != []
    saved = tmp_path / "saved.duckdb"
    cli("eval", f"irds:{ident}", run, "-m", "AP", "--save", saved)
    from conftest import cli_for
    assert rows(cli_for(str(saved)), "SELECT qrels, source FROM qrels_info") == [
        {"qrels": ident.replace("/", "."), "source": f"irds:{ident}"}]


def test_subtopic_qrels_load_as_diversity_judgments(cli, tmp_path):
    path = tmp_path / "sub.txt"
    path.write_text("1 a d1 1\n1 b d1 2\n1 b d2 1\n2 a d3 0\n")
    ident = register(TrecSubQrels(LocalDownload(path), {}))
    cli("load", "qrels", f"irds:{ident}", "--name", "div")
    assert rows(cli, "SELECT judgments FROM qrels_info WHERE qrels = 'div'") == [{"judgments": "diversity"}]
    assert rows(cli, "SELECT topic, intent, docno, rel FROM qrels_intents WHERE qrels = 'div' ORDER BY ALL") == [
        {"topic": "1", "intent": "a", "docno": "d1", "rel": 1},
        {"topic": "1", "intent": "b", "docno": "d1", "rel": 2},
        {"topic": "1", "intent": "b", "docno": "d2", "rel": 1},
        {"topic": "2", "intent": "a", "docno": "d3", "rel": 0}]
    # the graded view: a document's largest grade over the intents
    assert rows(cli, "SELECT docno, rel FROM qrels WHERE qrels = 'div' ORDER BY docno") == [
        {"docno": "d1", "rel": 2}, {"docno": "d2", "rel": 1}, {"docno": "d3", "rel": 0}]
    line = error_of(cli("load", "qrels", f"irds:{ident}", "--name", "x", "--format", "trec", ok=False))
    assert "its qrels are diversity judgments" in line and "leave out --format" in line
    # files in, scores out: the dataset's qrels read as the kind of its records
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 d2 1 3.0 r\n1 Q0 d1 2 2.0 r\n2 Q0 d3 1 1.0 r\n")
    out = cli("eval", f"irds:{ident}", run, "-m", "AP", "-m", "StRecall@1", "--per-topic", "--format", "csv").stdout
    assert out.splitlines()[1:] == ["r,1,AP,1.0", "r,1,StRecall@1,0.5"]
    line = error_of(cli("eval", f"irds:{ident}", run, "-m", "AP", "--qrels-format", "trec", ok=False))
    assert "its qrels are diversity judgments" in line


def test_statap_judgments_load_graded_with_a_note(cli):
    ident = register(Listed([TrecPrel("1", "d1", 1, 0, 0.5), TrecPrel("1", "d2", 0, 1, 0.25)], TrecPrel))
    result = cli("load", "qrels", f"irds:{ident}", "--name", "mq")
    assert "inclusion probabilities left out" in result.stderr
    assert rows(cli, "SELECT docno, rel FROM qrels WHERE qrels = 'mq' ORDER BY docno") == [
        {"docno": "d1", "rel": 1}, {"docno": "d2", "rel": 0}]


def test_a_bad_record_is_named_by_the_source_and_its_position(cli):
    cli("load", "qrels", FIXTURES / "qrels.txt", "--name", "kept")
    before = cli("sql", "SELECT count(*) AS n FROM qrels", "--format", "json").stdout
    ident = register(Listed([TrecQrel("1", "d1", 1, "0"), TrecQrel("1", "d2", "high", "0")], TrecQrel))
    line = error_of(cli("load", "qrels", f"irds:{ident}", "--name", "bad", ok=False))
    assert line.startswith(f"error: irds:{ident}, line 2") and "irds-home" not in line, line
    ident = register(Listed([TrecQrel("1", "d 1", 1, "0")], TrecQrel))
    line = error_of(cli("load", "qrels", f"irds:{ident}", "--name", "bad", ok=False))
    assert f"irds:{ident}, record 1: a field is empty or holds white space" in line
    assert cli("sql", "SELECT count(*) AS n FROM qrels", "--format", "json").stdout == before


def test_what_ir_datasets_cannot_give_is_one_line(cli):
    assert "knows no dataset 'no-such/dataset'" in error_of(
        cli("load", "qrels", "irds:no-such/dataset", "--name", "x", ok=False))
    assert "name a dataset after irds:" in error_of(cli("load", "qrels", "irds:", "--name", "x", ok=False))

    class Broken(Listed):
        def qrels_iter(self):
            raise OSError("download refused: no network")
            yield  # pragma: no cover

    ident = register(Broken([], TrecQrel))
    line = error_of(cli("load", "qrels", f"irds:{ident}", "--name", "x", ok=False))
    assert "ir_datasets could not give the qrels: OSError: download refused: no network" in line
    ident = register(Listed([], tuple))
    assert "are not judgments irw reads" in error_of(
        cli("load", "qrels", f"irds:{ident}", "--name", "x", ok=False))
    assert "load runs from files" in error_of(cli("load", "runs", f"irds:{ident}", ok=False))


def test_python_api_takes_the_source(tmp_path):
    from irwarehouse import Warehouse

    ident = register(TrecQrels(LocalDownload(graded_file(tmp_path)), {}))
    with Warehouse(str(tmp_path / "w.duckdb")) as w:
        summary = w.load_qrels(f"irds:{ident}", "g")
        assert summary["qrels"] == "g" and summary["topics"] > 0
