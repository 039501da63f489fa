"""Sampled judgments (prels, sample_eval's ``topic 0 docno stratum rel``): the measures that
read them -- xinfAP, infNDCG, iP@k, iNumRelRet, iNumRel -- equal NIST's sample_eval.pl
(to the 4 decimals it prints) and, at full precision, a computation of its formulas written
here in Python, per topic, on fixtures/sampled and on generated data with ties, unjudged
documents, strata with nothing sampled, topics without relevant documents and rankings
longer than sample_eval's 1,000 documents."""

from __future__ import annotations

import math
import random
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from conftest import FIXTURES, cli_for, snapshot, unavailable
from irwarehouse import Warehouse, measures
from irwarehouse.errors import IrwError

SAMPLED = FIXTURES / "sampled"
RUNS = sorted(SAMPLED.glob("run*.txt"))
SAMPLE_EVAL = Path(__file__).resolve().parents[2] / "shared" / "tools" / "sample_eval.pl"
DEPTH = 1000  # sample_eval's maxResultSize

# irw's measure -> sample_eval's name in its -q output
PRINTED = {"xinfAP": "infAP", "infNDCG": "infNDCG", "iP@10": "iP10", "iP@50": "iP50",
           "iP@1000": "iP1000", "iNumRelRet": "inum_rel_ret", "iNumRel": "inum_rel"}
LEVELS = [f"iIPrec@{i / 10:.1f}" for i in range(11)]


# ---- sample_eval's formulas, computed directly -------------------------------------------

def reference(prels: str, run: str) -> dict[str, dict[str, float]]:
    """Per topic of the run that the prels list, the measures of PRINTED and LEVELS as
    sample_eval defines them: a rank-by-rank pass keeping counts per stratum and summing
    over all strata afresh at every rank."""
    judged: dict[str, dict[str, tuple[int, int]]] = {}
    fields = prels.split()
    for i in range(0, len(fields), 5):
        topic, _, doc, stratum, rel = fields[i:i + 5]
        judged.setdefault(topic, {})[doc] = (int(stratum), int(rel))
    scores: dict[str, dict[str, float]] = {}
    fields = run.split()
    for i in range(0, len(fields), 6):
        topic, _, doc, _, score, _ = fields[i:i + 6]
        scores.setdefault(topic, {})[doc] = float(score)
    return {t: _topic(judged[t], scores[t]) for t in scores if t in judged}


def _topic(judged: dict[str, tuple[int, int]], scores: dict[str, float]) -> dict[str, float]:
    strata = sorted({s for s, _ in judged.values()})
    size = {s: sum(1 for c, _ in judged.values() if c == s) for s in strata}
    sampled = {s: sum(1 for c, r in judged.values() if c == s and r >= 0) for s in strata}
    relevant = {s: sum(1 for c, r in judged.values() if c == s and r > 0) for s in strata}
    est_r = sum(relevant[s] * size[s] / sampled[s] for s in strata if sampled[s])
    per_grade: dict[int, float] = {}
    for c, r in judged.values():
        if r > 0:
            per_grade[r] = per_grade.get(r, 0.0) + size[c] / sampled[c]
    ideal, start = 0.0, 0
    for grade in sorted(per_grade, key=str, reverse=True):
        count = math.floor(per_grade[grade] + 0.5)
        for r in range(start + 1, start + count + 1):
            ideal += grade / (math.log(r + 1) / math.log(2))
            if r >= DEPTH:
                break
        start += count

    ranking = sorted(scores, key=lambda d: (scores[d], d), reverse=True)[:DEPTH]
    docs = dict.fromkeys(strata, 0)
    seen_sampled = dict.fromkeys(strata, 0)
    seen_relevant = dict.fromkeys(strata, 0)
    precisions = dict.fromkeys(strata, 0.0)
    gains = dict.fromkeys(strata, 0.0)
    pooled = 0
    estimates = []
    for rank, doc in enumerate(ranking, 1):
        stratum, rel = judged.get(doc, (None, -1))
        if rel > 0:
            above = sum(docs[s] / pooled * (seen_relevant[s] + 1e-5) / (seen_sampled[s] + 3e-5)
                        for s in strata if pooled and docs[s])
            precisions[stratum] += 1 / rank + pooled / rank * above
            seen_relevant[stratum] += 1
            gains[stratum] += rel / (math.log(rank + 1) / math.log(2))
        if stratum is not None:
            pooled += 1
            docs[stratum] += 1
            seen_sampled[stratum] += rel >= 0
        estimates.append(sum(docs[s] * (seen_relevant[s] + 1e-5) / (seen_sampled[s] + 3e-5)
                             for s in strata))
    ap = sum(relevant[s] * size[s] / sampled[s] / est_r * precisions[s] / relevant[s]
             for s in strata if sampled[s] and est_r and relevant[s])
    dcg = sum(docs[s] / pooled * gains[s] / seen_sampled[s]
              for s in strata if pooled and seen_sampled[s])
    out = {"xinfAP": ap, "infNDCG": pooled * dcg / ideal if ideal else 0.0,
           "iNumRelRet": estimates[-1], "iNumRel": est_r}
    for k in (10, 50, 1000):
        out[f"iP@{k}"] = (estimates[k - 1] if len(estimates) >= k else estimates[-1]) / k
    out.update(zip(LEVELS, _interpolated(estimates, est_r)))
    return out


def _interpolated(estimates: list[float], est_r: float) -> list[float]:
    """sample_eval's interpolated precision at recall 0, 0.1, ..., 1: walking up from the
    last rank, each level (from the highest the ranking reaches) takes the best estimated
    precision at or below the first rank whose estimate falls short of it, at most one
    level a rank; the levels left take the best precision of the ranking."""
    cut = [i / 10 * est_r for i in range(11)]
    level = 10
    while level >= 0 and cut[level] > estimates[-1]:
        level -= 1
    values, best = [0.0] * 11, 0.0
    for rank in range(len(estimates), 0, -1):
        best = max(best, estimates[rank - 1] / rank)
        if level >= 0 and cut[level] > estimates[rank - 1]:
            values[level] = best
            level -= 1
    for rest in range(level + 1):
        values[rest] = best
    return values


# ---- sample_eval itself ------------------------------------------------------------------

def sample_eval(prels: Path, run: Path) -> dict[str, dict[str, float]]:
    """sample_eval.pl -q's per-topic values (topic -> its name -> value) and its means
    (topic 'all'), or a skip when perl or the script is missing."""
    if shutil.which("perl") is None or not SAMPLE_EVAL.is_file():
        pytest.skip(f"perl and {SAMPLE_EVAL} are needed to compare with sample_eval")
    out = subprocess.run(["perl", str(SAMPLE_EVAL), "-q", str(prels), str(run)],
                         capture_output=True, text=True, check=True).stdout
    values: dict[str, dict[str, float]] = {}
    for line in out.splitlines():
        name, topic, value = line.split()
        values.setdefault(topic, {})[name] = float(value)
    return values


def evaluate(prels: Path, runs: list[Path], measures) -> dict[tuple[str, str], dict[str, float]]:
    """irw's per-topic values: (run, topic) -> measure -> value, over the run's topics that
    the prels list (sample_eval's topic set)."""
    with Warehouse(":memory:") as w:
        w.load_qrels(str(prels), "s", format="prels")
        w.load_runs([str(r) for r in runs])
        rows = w.eval(measures, topics="run").rows()
    out: dict[tuple[str, str], dict[str, float]] = {}
    for run_id, topic, measure, value in rows:
        out.setdefault((run_id, topic), {})[measure] = value
    return out


def check(prels: Path, runs: list[Path]) -> int:
    """Compare irw with the formulas (1e-9) and with sample_eval (its 4 decimals) on every
    run; the number of (run, topic) compared."""
    got = evaluate(prels, runs, list(PRINTED) + LEVELS)
    compared = 0
    for run in runs:
        run_id = run.read_text().split()[5]
        want = reference(prels.read_text(), run.read_text())
        printed = sample_eval(prels, run)
        assert {t for (r, t) in got if r == run_id} == set(want), run_id
        for topic, values in want.items():
            for measure, value in values.items():
                assert got[run_id, topic][measure] == pytest.approx(value, abs=1e-9, rel=1e-12), \
                    (run_id, topic, measure)
            for measure, name in PRINTED.items():
                assert abs(got[run_id, topic][measure] - printed[topic][name]) <= 0.50001e-4, \
                    (run_id, topic, measure, printed[topic][name])
            compared += 1
        for i, measure in enumerate(LEVELS):  # sample_eval prints these as means only
            mean = sum(got[run_id, t][measure] for t in want) / len(want)
            assert abs(mean - printed["all"][f"iprec@rec{i / 10:4.2f}"]) <= 0.50001e-4, (run_id, measure)
        for measure in ("xinfAP", "infNDCG", "iP@10", "iP@50", "iP@1000"):
            mean = sum(got[run_id, t][measure] for t in want) / len(want)
            assert abs(mean - printed["all"][PRINTED[measure]]) <= 0.50001e-4, (run_id, measure)
    return compared


def test_fixture_equals_sample_eval_and_its_formulas():
    assert check(SAMPLED / "prels.txt", RUNS) == 8


def generate(tmp_path: Path, seed: int) -> tuple[Path, list[Path]]:
    """A prels and three runs: strata sampled at different rates (stratum 4: nothing
    sampled), grades 0-2 (topic t5: none relevant), runs with tied scores, unjudged
    documents, a ranking of 1,100 documents and a topic of one run only."""
    rng = random.Random(seed)
    lines, pools = [], {}
    for t in range(1, 7):
        topic = f"t{t}"
        pools[topic] = []
        for i in range(rng.randint(20, 60)):
            doc = f"{topic}-d{i:03d}"
            stratum = rng.choice((1, 1, 2, 2, 3, 4))
            rate = {1: 1.0, 2: 0.5, 3: 0.2, 4: 0.0}[stratum]
            rel = -1
            if rng.random() < rate:
                rel = 0 if topic == "t5" else rng.choice((0, 0, 1, 1, 2))
            lines.append(f"{topic} 0 {doc} {stratum} {rel}")
            pools[topic].append(doc)
    prels = tmp_path / "prels.txt"
    prels.write_text("\n".join(lines) + "\n")
    runs = []
    for r in range(3):
        run_id = f"gen{r}"
        out = []
        for topic, pool in pools.items():
            if r == 2 and topic == "t3":
                continue
            docs = rng.sample(pool, rng.randint(1, len(pool))) + [f"{topic}-x{j}" for j in range(rng.randint(0, 15))]
            if r == 1 and topic == "t1":
                docs = [f"{topic}-y{j:04d}" for j in range(990)] + pool[:40] + [f"{topic}-z{j}" for j in range(70)]
            rng.shuffle(docs) if not (r == 1 and topic == "t1") else None
            for rank, doc in enumerate(docs, 1):
                score = round(rng.random() * 3, 1) if r != 1 or topic != "t1" else 2000 - rank
                out.append(f"{topic} Q0 {doc} {rank} {score} {run_id}")
        if r == 0:
            out.append("t9 Q0 t9-d1 1 1.0 gen0")  # a topic the prels do not list
        path = tmp_path / f"{run_id}.txt"
        path.write_text("\n".join(out) + "\n")
        runs.append(path)
    return prels, runs


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_generated_data_equals_sample_eval_and_its_formulas(tmp_path, seed):
    prels, runs = generate(tmp_path, seed)
    assert check(prels, runs) == 6 + 6 + 5


def test_the_measure_macros_equal_eval():
    macros = {"xinfAP": "", "infNDCG": "", "iP": "k := 10", "iNumRelRet": "", "iNumRel": "",
                "iIPrec": "k := 0.3"}
    labels = {"iP": "iP@10", "iIPrec": "iIPrec@0.3"}
    with Warehouse(":memory:") as w:
        w.load_qrels(str(SAMPLED / "prels.txt"), "s", format="prels")
        w.load_runs([str(r) for r in RUNS])
        got = {(r, t, m): v for r, t, m, v in w.eval([labels.get(m, m) for m in macros]).rows()}
        for name, args in macros.items():
            rows = w.sql(f"SELECT run_id, topic, value FROM measure.{name}('s'{', ' + args if args else ''})").rows()
            assert len(rows) == 6  # topics 401 and 402 of each run (topic 403 has no relevant document)
            for run_id, topic, value in rows:
                assert value == pytest.approx(got[run_id, topic, labels.get(name, name)], abs=1e-12)


def test_the_macros_run_on_a_plain_duckdb_client(tmp_path):
    db = str(tmp_path / "w.duckdb")
    invoke = cli_for(db)
    invoke("load", "qrels", SAMPLED / "prels.txt", "--name", "s", "--format", "prels")
    invoke("load", "runs", *RUNS)
    con = duckdb.connect(db, read_only=True)
    try:
        rows = con.execute("SELECT run_id, topic, round(value, 4) FROM measure.xinfAP('s') "
                           "WHERE run_id = 'runA' ORDER BY topic").fetchall()
    finally:
        con.close()
    assert rows == [("runA", "401", 0.571), ("runA", "402", 0.7143)]


def test_spark_equals_duckdb(tmp_path):
    """The same templates on Spark, over the warehouse as `irw export` writes it (the prels'
    table qrels_strata included)."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        unavailable("pyspark is not installed")
    from irwarehouse import spark as irs

    if not irs.java_available():
        unavailable("Java is not installed (Spark needs Java 17 or later)")
    db, out = str(tmp_path / "w.duckdb"), str(tmp_path / "export")
    invoke = cli_for(db)
    invoke("load", "qrels", SAMPLED / "prels.txt", "--name", "s", "--format", "prels")
    invoke("load", "runs", *RUNS)
    invoke("export", out)
    names = ["xinfAP", "infNDCG", "iP@10", "iNumRelRet", "iNumRel", "iIPrec@0.0", "iIPrec@0.7"]
    with Warehouse(db, read_only=True) as w:
        want = {(r, t, m): v for r, t, m, v in w.eval(names, "s", topics="run", store=False).rows()}
    session = irs.session("local[2]", {"spark.sql.shuffle.partitions": "4", "spark.ui.enabled": "false"})
    wh = irs.SparkWarehouse(session, out)
    got = wh.evaluate("s", measures.parse_all(names), wh.run_ids(), topics="run").toPandas()
    got = {(r, t, m): v for r, t, m, v in zip(got.run_id, got.topic, got.measure, got.value)}
    assert got.keys() == want.keys() and len(want) == 8 * len(names)
    assert all(abs(got[key] - want[key]) <= 1e-9 for key in want), [(k, got[k], want[k]) for k in want]


def test_sampled_measures_need_prels_and_say_so_in_one_line(tmp_path):
    with Warehouse(":memory:") as w:
        w.load_qrels(str(FIXTURES / "qrels.txt"), "t")
        w.load_runs(str(FIXTURES / "runs"))
        for measure in ("xinfAP", "iP@10", "inum_rel"):
            with pytest.raises(IrwError) as caught:
                w.eval([measure], qrels="t")
            assert "\n" not in str(caught.value)
            assert "reads prels judgments" in str(caught.value) and "--format prels" in str(caught.value)


def test_names_and_aliases():
    with Warehouse(":memory:") as w:
        w.load_qrels(str(SAMPLED / "prels.txt"), "s", format="prels")
        w.load_runs([str(r) for r in RUNS])
        got = w.eval(["inum_rel_ret", "inum_rel", "iprec@0.5"], runs="runA").rows()
    assert {m for _, _, m, _ in got} == {"iNumRelRet", "iNumRel", "iIPrec@0.5"}
    with pytest.raises(IrwError, match="measure iP needs a cut-off"):
        measures.parse("iP")
    with pytest.raises(IrwError, match=r"cut-off @0.25 in 'iIPrec@0.25' must be one of 0.0, 0.1, .*, 1.0"):
        measures.parse("iIPrec@0.25")


@pytest.mark.parametrize("text, problem", [
    ("401 0 d1 1\n", "line 1: expected 5 fields (topic iteration docno stratum rel), found 4"),
    ("401 0 d1 1 1\n401 0 d2 2.5 0\n", "line 2: stratum '2.5' (field 4) is not an integer"),
    ("401 0 d1 1 x\n", "line 1: relevance 'x' (field 5) is not an integer"),
    ("401 0 d1 1 1 extra\n", "line 1: expected 5 fields (topic iteration docno stratum rel), found 6"),
])
def test_bad_prels_lines_are_named_and_change_nothing(tmp_path, text, problem):
    db = str(tmp_path / "w.duckdb")
    invoke = cli_for(db)
    invoke("load", "qrels", SAMPLED / "prels.txt", "--name", "s", "--format", "prels")
    before = snapshot(db)
    path = tmp_path / "bad.txt"
    path.write_text(text)
    result = invoke("load", "qrels", path, "--name", "bad", "--format", "prels", ok=False)
    lines = result.output.strip().splitlines()
    assert result.exit_code != 0 and len(lines) == 1
    assert lines[0].startswith(f"error: {path}, {problem}"), result.output
    assert snapshot(db) == before
