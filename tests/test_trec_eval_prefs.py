"""trec_eval 10.0's preference and judgment-group measures: ``irw trec-eval -R prefs |
qrels_prefs | qrels_jg`` byte for byte, and ``irw eval`` on a qrels loaded as prefs.

- trec_eval 10.0's own test folder (in its source, built by the ``trec_eval_10`` fixture):
  its preference cases against their expected outputs, byte for byte;
- generated preference files -- judgment groups of one sub-group and of several (partial
  orders, with their transitive preferences), non-relevant documents (level 0) more and fewer
  than the relevant ones, documents judged but not retrieved, ties in the runs' scores --
  against the binary under the usual flags (-q, -c, -M);
- a qrels file read as preferences (-R qrels_prefs), its second field the judgment group;
- judgment-group files (-R qrels_jg): map, P and Rprec_mult of each group, averaged;
- the measures in a warehouse (``irw eval``), equal to what trec_eval prints per topic.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from irwarehouse import Warehouse
from irwarehouse.trec_families import PREFS_MEASURES

from test_trec_eval import irw, trec_eval

PREFS = [name for name, _ in PREFS_MEASURES]

# expected output in trec_eval's test folder: the arguments that produced it (its Makefile)
SUITE = {
    "prefs": ("out.test.prefs", ["-m", "all_prefs", "-q", "-R", "prefs", "prefs.test", "prefs.results.test"]),
    "prefs with comments": ("out.test.prefs", ["-m", "all_prefs", "-q", "-R", "prefs", "prefs.comment.test",
                                               "prefs.results.test"]),
    "qrels_prefs": ("out.test.qrels_prefs", ["-m", "all_prefs", "-q", "-R", "qrels_prefs", "qrels.test",
                                             "results.test"]),
    "qrels_jg": ("out.test.qrels_jg", ["-m", "qrels_jg", "-q", "-R", "qrels_jg", "qrels.123", "results.test"]),
    "qrels_jg with comments": ("out.test.qrels_jg", ["-m", "qrels_jg", "-q", "-R", "qrels_jg",
                                                     "qrels.comments.123", "results.test"]),
}


def _test_folder(binary: str) -> Path:
    return Path(binary).parent / "test"


@pytest.mark.parametrize("case", list(SUITE))
def test_the_test_folder_byte_for_byte(trec_eval_10, capsysbinary, case):
    folder = _test_folder(trec_eval_10)
    expected, args = SUITE[case]
    args = [str(folder / a) if (folder / a).exists() else a for a in args]
    code, out, err = irw(capsysbinary, *args)
    assert code == 0, err
    assert out == (folder / expected).read_bytes()
    assert trec_eval(trec_eval_10, *args)[1] == out


# ------------------------------------------------------------------------ generated


def generate(seed: int, n_topics: int = 6) -> tuple[str, str]:
    """A preference file and a run: per topic a few judgment groups, each of one sub-group
    (levels 0-3, ties) or of several sub-groups judging subsets of the documents by one
    hidden order (consistent, so partial orders whose transitive closure is acyclic); the run
    retrieves part of the judged documents among unjudged ones, with tied scores."""
    rng = random.Random(seed)
    prefs, run = [], []
    for t in range(n_topics):
        topic = f"{t + 1}.t"
        docs = [f"D{t}-{i:02d}" for i in range(rng.randint(4, 14))]
        for g in range(rng.randint(1, 4)):
            jg = f"u{g}"
            judged = rng.sample(docs, rng.randint(2, len(docs)))
            level = {d: rng.choice([0, 0, 1, 2, 3, 0.5]) for d in judged}
            if rng.random() < 0.5:  # one sub-group
                prefs += [f"{topic} {jg} s {d} {level[d]}" for d in judged]
            else:
                for s in range(rng.randint(2, 4)):
                    part = rng.sample(judged, rng.randint(2, len(judged)))
                    prefs += [f"{topic} {jg} s{s} {d} {level[d]}" for d in part]
        retrieved = rng.sample(docs, rng.randint(0, len(docs))) + [f"U{t}-{i}" for i in range(rng.randint(0, 5))]
        rng.shuffle(retrieved)
        for rank, d in enumerate(retrieved, 1):
            run.append(f"{topic} Q0 {d} {rank} {rng.choice([1.5, 2.0, 2.5, 3.0, 0.25])} sys")
    rng.shuffle(prefs)
    return "\n".join(prefs) + "\n", "\n".join(run) + "\n"


FLAGS = (["-q", "-m", "all_prefs"], ["-q", "-c", "-m", "all_prefs"], ["-q", "-c", "-M", "4", "-m", "all_prefs"],
         ["-c", "-m", "prefs"], ["-q", "-c", "-m", "prefs_avgjg_Rnonrel", "-m", "prefs_pair_imp"])


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_generated_prefs_against_trec_eval_10(trec_eval_10, capsysbinary, tmp_path, seed):
    text, run_text = generate(seed)
    prefs, run = tmp_path / "prefs", tmp_path / "run"
    prefs.write_text(text)
    # every topic in the run (trec_eval 10.0 stops on a topic the run lacks without -c)
    topics = sorted({line.split()[0] for line in text.splitlines()})
    run.write_text(run_text + "".join(f"{t} Q0 NOTJUDGED 1 0.1 sys\n" for t in topics))
    compared = 0
    for flags in FLAGS:
        args = [*flags, "-R", "prefs", prefs, run]
        code, out, err = irw(capsysbinary, *args)
        want = trec_eval(trec_eval_10, *args)
        assert want[0] == 0, want[2]
        assert code == 0, err
        assert out.decode() == want[1].decode(), " ".join(map(str, flags))
        compared += len(out.splitlines())
    assert compared > 300


def test_minus_c_evaluates_the_topics_the_run_lacks(trec_eval_10, capsysbinary, tmp_path):
    text, run_text = generate(7)
    prefs, run = tmp_path / "prefs", tmp_path / "run"
    prefs.write_text(text)
    run.write_text("".join(line + "\n" for line in run_text.splitlines() if not line.startswith("1.t ")))
    args = ["-q", "-c", "-m", "all_prefs", "-R", "prefs", prefs, run]
    code, out, err = irw(capsysbinary, *args)
    assert code == 0, err
    assert b"\t1.t\t" in out
    assert out == trec_eval(trec_eval_10, *args)[1]


def test_a_qrels_file_read_as_preferences(trec_eval_10, capsysbinary, tmp_path):
    """-R qrels_prefs: a qrels file whose second field names the judgment group."""
    rng = random.Random(11)
    lines, run = [], []
    for t in range(1, 6):
        docs = [f"d{t}x{i}" for i in range(12)]
        for g in ("0", "a", "b")[:rng.randint(1, 3)]:
            lines += [f"{t} {g} {d} {rng.choice([0, 0, 1, 2])}" for d in rng.sample(docs, 8)]
        run += [f"{t} Q0 {d} {r} {rng.choice([3, 2, 1])} x" for r, d in enumerate(rng.sample(docs, 7), 1)]
    qrels, results = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("\n".join(lines) + "\n")
    results.write_text("\n".join(run) + "\n")
    args = ["-q", "-m", "all_prefs", "-R", "qrels_prefs", qrels, results]
    code, out, err = irw(capsysbinary, *args)
    assert code == 0, err
    assert out == trec_eval(trec_eval_10, *args)[1]


def test_a_bad_preference_line_is_one_line(capsysbinary, tmp_path):
    prefs, run = tmp_path / "prefs", tmp_path / "run"
    prefs.write_text("1 u1 s1 d1 3\n1 u1 s1 d2 high\n")
    run.write_text("1 Q0 d1 1 2.0 r\n")
    code, out, err = irw(capsysbinary, "-R", "prefs", prefs, run)
    assert code == 2 and out == b""
    assert err.strip() == (f"error: {prefs}, line 2: preference level 'high' (field 5) is not a "
                           "number: write a decimal number, optionally with an exponent (12.5, -3, 1.2e-05)")


@pytest.mark.parametrize("flags", [["-q", "-m", "qrels_jg"], ["-q", "-c", "-M", "5", "-m", "qrels_jg"],
                                   ["-q", "-l", "2", "-m", "map_avgjg", "-m", "P_avgjg.3,7"],
                                   ["-q", "-m", "Rprec_mult_avgjg.0.5,1.5", "-m", "num_q"]])
def test_judgment_groups_averaged_against_trec_eval_10(trec_eval_10, capsysbinary, tmp_path, flags):
    """-R qrels_jg: map, P and Rprec_mult of each judgment group, averaged over the groups
    judging a topic (one, two or three of them), with ties and unjudged documents."""
    rng = random.Random(len(flags))
    lines, run = [], []
    for t in range(1, 7):
        docs = [f"d{t}x{i}" for i in range(15)]
        for g in ("g1", "g2", "g3")[:rng.randint(1, 3)]:
            lines += [f"{t} {g} {d} {rng.choice([0, 0, 1, 2])}" for d in rng.sample(docs, 9)]
        run += [f"{t} Q0 {d} {r} {rng.choice([3, 2, 1])} x" for r, d in enumerate(rng.sample(docs, 11), 1)]
    qrels, results = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("\n".join(lines) + "\n")
    results.write_text("\n".join(run) + "\n")
    args = [*flags, "-R", "qrels_jg", qrels, results]
    code, out, err = irw(capsysbinary, *args)
    want = trec_eval(trec_eval_10, *args)
    assert code == want[0] == 0, err
    assert out == want[1]


def test_judgment_group_measures_read_judgment_group_files(capsysbinary, tmp_path):
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("1 u1 d1 1\n")
    run.write_text("1 Q0 d1 1 2.0 r\n")
    code, out, err = irw(capsysbinary, "-R", "qrels_jg", "-m", "map", qrels, run)
    assert (code, out) == (4, b"")
    assert err.strip() == ("error: trec_eval measure map cannot be computed from -R qrels_jg "
                           "judgments: -R qrels_jg serves map_avgjg, P_avgjg and Rprec_mult_avgjg")
    code, out, err = irw(capsysbinary, "-m", "map_avgjg", qrels, run)
    assert (code, out) == (4, b"") and "it reads -R qrels_jg files" in err
    qrels.write_text("1 u1 d1 1\n1 u1 d2\n")
    code, out, err = irw(capsysbinary, "-R", "qrels_jg", "-m", "qrels_jg", qrels, run)
    assert (code, out) == (2, b"")
    assert err.strip() == f"error: {qrels}, line 2: expected 4 fields (topic jg docno rel), rel an integer"


# ------------------------------------------------------------------------ irw eval


def test_eval_on_a_warehouse_qrels_of_kind_prefs(trec_eval_10, tmp_path):
    """The prefs measures of a qrels loaded as prefs, per topic, are trec_eval's (as it
    prints them), and a graded measure is refused on it in one line."""
    text, run_text = generate(5)
    prefs, run = tmp_path / "prefs", tmp_path / "run"
    prefs.write_text(text)
    run.write_text(run_text)
    done = trec_eval(trec_eval_10, "-q", "-c", "-m", "all_prefs", "-R", "prefs", prefs, run)
    want = {}
    for line in done[1].decode().splitlines():
        label, topic, value = line.split("\t")
        if topic != "all" and label.strip().startswith("prefs"):
            want[(topic, label.strip())] = value
    with Warehouse(str(tmp_path / "w.duckdb")) as w:
        w.load_qrels(str(prefs), "p", format="prefs")
        w.load_runs([str(run)])
        got = {}
        for _, topic, measure, value in w.eval(PREFS, "p", store=False, topics="all").rows():
            got[(topic, measure)] = str(int(value)) if measure.startswith("prefs_num") else f"{value:6.4f}"
        assert got == want
        with pytest.raises(Exception, match="measure AP reads trec judgments"):
            w.eval(["AP"], "p", store=False)


def test_the_measure_macros_from_a_plain_duckdb_client(tmp_path):
    """measure.prefs_* (the schema's table macros, rendered from the same templates) give
    what irw eval gives, read by a DuckDB client that knows nothing of irw."""
    import duckdb

    text, run_text = generate(9)
    prefs, run = tmp_path / "prefs", tmp_path / "run"
    prefs.write_text(text)
    run.write_text(run_text)
    path = str(tmp_path / "w.duckdb")
    with Warehouse(path) as w:
        w.load_qrels(str(prefs), "p", format="prefs")
        w.load_runs([str(run)])
        engine = {(r, t, m): v for r, t, m, v in w.eval(PREFS, "p", store=False).rows()}
    con = duckdb.connect(path, read_only=True)
    try:
        macros = {(r, t, name): v for name in PREFS
                  for _, r, t, v in con.execute(f"SELECT * FROM measure.{name}('p')").fetchall()}
        assert macros == engine and len(engine) > 50
        only = con.execute("SELECT DISTINCT run_id FROM measure.prefs_pair('p', runs := ['sys'])").fetchall()
        assert only == [("sys",)]
    finally:
        con.close()


def test_they_are_evaluated_apart_from_other_kinds():
    """(Spark computes them too: tests/test_spark.py compares it with DuckDB.)"""
    from irwarehouse import measures
    from irwarehouse.engine import rendering
    from irwarehouse.errors import IrwError

    with pytest.raises(IrwError, match="evaluated apart"):
        rendering.render_sql(measures.parse_all(["prefs_simp", "AP"]))
