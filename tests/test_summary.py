"""`irw summary`: per run and per topic n, mean, standard deviation, minimum and maximum,
against hand computation, `irw eval` and SQL over the stored scores."""

from __future__ import annotations

import json
import math

import pytest

from conftest import FIXTURES
from irwarehouse import summary


def test_hand_case():
    rows = [("r1", "t1", "AP", 0.5), ("r1", "t2", "AP", 1.0), ("r2", "t1", "AP", 0.0),
            ("r1", "t1", "P@5", 0.2), ("r1", "t2", "P@5", 0.6), ("r2", "t1", "P@5", 0.4)]
    sd = math.sqrt(2 * 0.25**2 / 1)  # r1 AP: mean 0.75, deviations +-0.25, n - 1 = 1
    assert summary.summarize_rows(rows, "run", ["P@5", "AP"]) == [
        {"run_id": "r1", "measure": "P@5", "n": 2, "mean": pytest.approx(0.4), "sd": pytest.approx(math.sqrt(0.08)),
         "min": 0.2, "max": 0.6},
        {"run_id": "r1", "measure": "AP", "n": 2, "mean": 0.75, "sd": pytest.approx(sd), "min": 0.5, "max": 1.0},
        {"run_id": "r2", "measure": "P@5", "n": 1, "mean": 0.4, "sd": None, "min": 0.4, "max": 0.4},
        {"run_id": "r2", "measure": "AP", "n": 1, "mean": 0.0, "sd": None, "min": 0.0, "max": 0.0}]
    by_topic = summary.summarize_rows(rows, "topic", ["AP", "P@5"])
    assert [(r["topic"], r["measure"], r["n"]) for r in by_topic] == [
        ("t1", "AP", 2), ("t1", "P@5", 2), ("t2", "AP", 1), ("t2", "P@5", 1)]
    assert by_topic[0]["mean"] == 0.25 and by_topic[0]["sd"] == pytest.approx(sd)


@pytest.fixture()
def loaded(cli):
    cli("load", "qrels", FIXTURES / "qrels.txt", "--name", "fx")
    cli("load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv")
    return cli


def sql(cli, query):
    return json.loads(cli("sql", query, "--format", "json").stdout)


@pytest.mark.parametrize("topics", ["qrels", "run"])
def test_per_run_and_per_topic_equal_eval_and_sql(loaded, topics):
    measures = ["-m", "AP", "-m", "nDCG(discount=jk)@10"]
    runs = json.loads(loaded("summary", *measures, "--topics", topics, "--format", "json").stdout)
    means = json.loads(loaded("eval", *measures, "--topics", topics, "--format", "json").stdout)
    # the same numbers (to the last bits: DuckDB's parallel sums of one evaluation and the next
    # may add the per-topic terms in another order)
    assert [(r["run_id"], r["measure"], r["n"]) for r in runs] == \
        [(e["run_id"], e["measure"], e["n_topics"]) for e in means]
    assert [r["mean"] for r in runs] == pytest.approx([e["value"] for e in means], rel=1e-12, abs=1e-15)
    # `irw eval` stored the per-topic scores: SQL's aggregates over them
    expected = sql(loaded, "SELECT run_id, measure, count(*) AS n, stddev_samp(value) AS sd, min(value) AS lo, "
                           "max(value) AS hi FROM scores GROUP BY ALL ORDER BY run_id, measure")
    got = sorted(runs, key=lambda r: (r["run_id"], r["measure"]))
    assert len(got) == len(expected) == 16
    for r, e in zip(got, expected):
        assert (r["run_id"], r["measure"], r["n"], r["min"], r["max"]) == (e["run_id"], e["measure"], e["n"], e["lo"], e["hi"])
        assert r["sd"] == pytest.approx(e["sd"], rel=1e-12)
    # delta2 did not answer topic 104 (0 under the qrels's topic set; left out with `run`,
    # which also has topic 106, without a relevant document)
    assert {r["topic"] for r in sql(loaded, "SELECT DISTINCT topic FROM scores WHERE run_id = 'delta2'")} == \
        ({"101", "102", "103", "104", "105"} if topics == "qrels" else {"101", "102", "103", "105", "106"})

    per_topic = json.loads(loaded("summary", *measures, "--topics", topics, "--by", "topic", "--format", "json").stdout)
    expected = sql(loaded, "SELECT topic, measure, count(*) AS n, avg(value) AS mean, stddev_samp(value) AS sd, "
                           "min(value) AS lo, max(value) AS hi FROM scores GROUP BY ALL ORDER BY topic, measure")
    got = sorted(per_topic, key=lambda r: (r["topic"], r["measure"]))
    assert len(got) == len(expected) == (10 if topics == "qrels" else 12)
    for r, e in zip(got, expected):
        assert (r["topic"], r["measure"], r["n"], r["min"], r["max"]) == (e["topic"], e["measure"], e["n"], e["lo"], e["hi"])
        assert (r["mean"], r["sd"]) == (pytest.approx(e["mean"], rel=1e-12), pytest.approx(e["sd"], rel=1e-12))
    assert {r["n"] for r in per_topic if r["topic"] == "104"} == {8 if topics == "qrels" else 7}


def test_read_only_and_bad_input(loaded, tmp_path):
    table = loaded("summary", "-m", "AP", "--by", "topic").stdout
    assert table.splitlines()[0].split() == ["topic", "measure", "n", "mean", "sd", "min", "max"]
    assert sql(loaded, "SELECT count(*) AS n FROM scores") == [{"n": 0}]  # nothing stored
    bad = loaded("summary", "-m", "AP", "--by", "team", ok=False)
    assert bad.exit_code == 1 and "unknown --by 'team'; valid: run, topic" in bad.stderr
    (tmp_path / "q0").write_text("101 0 d1 0\n")
    loaded("load", "qrels", tmp_path / "q0", "--name", "q0")
    empty = loaded("summary", "-m", "AP", "-q", "q0")
    assert empty.stdout == "(no rows)\n" and "no rows: qrels q0 has no relevant document" in empty.stderr
