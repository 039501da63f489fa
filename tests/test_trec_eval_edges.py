"""``irw trec-eval`` on the edges of trec_eval 10.0's reading, against its C code (the
``trec_eval_10`` fixture): generated qrels and runs, seeded, each with one edge class put in
-- a docno twice (judged twice, ranked twice within -M or past it, in a topic the qrels
lacks, under ``-m num_q``), bytes that are not UTF-8 in ids, a rank past 64 bits, scores
beyond a double's range, a lone carriage return between fields, a run of comment lines
only under ``-c`` -- matching every byte of stdout and the exit status; and ``-Z`` refusing
a file that is not a regular one at once.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time

import pytest

from irwarehouse.cli import trec_eval as face


def irw(capsysbinary, *args) -> tuple[int, bytes, str]:
    capsysbinary.readouterr()
    code = face.run([os.fsdecode(a) if isinstance(a, bytes) else str(a) for a in args])
    out, err = capsysbinary.readouterr()
    return code, out, err.decode("utf-8", "replace")


def trec_eval(binary: str, *args) -> tuple[int, bytes]:
    done = subprocess.run([binary, *map(str, args)], capture_output=True, timeout=60)
    return done.returncode, done.stdout


def generate(seed: int, n_topics: int = 4, depth: int = 8) -> tuple[list[bytes], list[bytes]]:
    """(qrels lines, run lines) as bytes: every topic judged and ranked (so that trec_eval
    10.0 evaluates them all), graded judgments, ties, no docno twice."""
    rng = random.Random(seed)
    qrels, run = [], []
    for t in range(n_topics):
        topic = f"{rng.choice([1, 2, 10, 301])}{t}"
        pool = [f"d{topic}-{i:03d}" for i in range(depth * 2)]
        for d in rng.sample(pool, depth):
            qrels.append(f"{topic} 0 {d} {rng.choice([0, 0, 1, 2])}".encode())
        for rank, d in enumerate(rng.sample(pool, depth), 1):
            run.append(f"{topic} Q0 {d} {rank} {rng.choice([1, 2, 3, rng.random()])} gen".encode())
    rng.shuffle(qrels)
    rng.shuffle(run)
    return qrels, run


def _topic(line: bytes) -> bytes:
    return line.split()[0]


def _lines_of(lines: list[bytes], topic: bytes) -> list[int]:
    return [i for i, line in enumerate(lines) if _topic(line) == topic]


# Each edge class: (name, edit(rng, qrels, run) -> (qrels, run), trec_eval's arguments).
def judged_twice(rng, qrels, run):
    at = rng.randrange(len(qrels))
    fields = qrels[at].split()
    qrels.insert(rng.randrange(len(qrels)), b" ".join(fields[:3] + [b"1"]))
    return qrels, run


def ranked_twice(rng, qrels, run):
    at = rng.randrange(len(run))
    fields = run[at].split()
    run.append(b" ".join(fields[:4] + [b"0.0001", fields[5]]))  # ranked last of its topic
    return qrels, run


def ranked_twice_in_no_qrels_topic(rng, qrels, run):
    run += [b"zz Q0 x 1 1 gen", b"zz Q0 x 2 0.5 gen"]
    return qrels, run


def not_utf8(rng, qrels, run):
    topic = _topic(run[0])
    docs = [run[i].split()[2] for i in _lines_of(run, topic)]
    qrels = [line.replace(docs[0], docs[0] + b"\xe9") .replace(docs[1], b"\x85" + docs[1])
             for line in qrels]
    run = [line.replace(docs[0], docs[0] + b"\xe9").replace(docs[1], b"\x85" + docs[1])
           .replace(b" gen", b" g\xffn") for line in run]
    qrels += [b"\xc3\xa9t 0 d 1", b"\xe9t 0 d 1"]
    run += [b"\xc3\xa9t Q0 d 1 1 g\xffn", b"\xe9t Q0 d 1 1 g\xffn", b"\xe9t Q0 d\xff 1 1 g\xffn"]
    return qrels, run


def huge_numbers(rng, qrels, run):
    run[0] = b" ".join(run[0].split()[:3] + [b"99999999999999999999999", b"1e400", b"gen"])
    run[1] = b" ".join(run[1].split()[:4] + [b"-1e400", b"gen"])
    run[2] = b" ".join(run[2].split()[:4] + [b"1e-400", b"gen"])
    return qrels, run


def lone_carriage_return(rng, qrels, run):
    run[0] = run[0].replace(b" Q0 ", b"\rQ0 ")
    run[1] = run[1] + b"\r"
    qrels[0] = qrels[0].replace(b" 0 ", b" 0\r", 1)
    return qrels, run


def comments_only(rng, qrels, run):
    return qrels, [b"# nothing", b"  #x y z"]


EDGES = [
    ("judged twice", judged_twice, ["-q"]),
    ("judged twice, -c", judged_twice, ["-q", "-c", "-m", "all_trec"]),
    ("judged twice, num_q", judged_twice, ["-m", "num_q", "-m", "runid"]),
    ("ranked twice", ranked_twice, ["-q"]),
    ("ranked twice past -M", ranked_twice, ["-q", "-M", "8"]),
    ("ranked twice within -M", ranked_twice, ["-q", "-M", "9"]),
    ("ranked twice, num_q", ranked_twice, ["-m", "num_q"]),
    ("ranked twice in a topic the qrels lacks", ranked_twice_in_no_qrels_topic, ["-q"]),
    ("bytes not UTF-8", not_utf8, ["-q", "-m", "all_trec"]),
    ("a rank past 64 bits, scores past a double", huge_numbers, ["-q"]),
    ("a lone carriage return", lone_carriage_return, ["-q", "-m", "all_trec"]),
    # (not runid: trec_eval 10.0 prints memory it never wrote as the id of a run without lines)
    ("a run of comment lines only, -c", comments_only,
     ["-q", "-c", "-m", "num_q", "-m", "num_ret", "-m", "num_rel", "-m", "map", "-m", "P.5,10",
      "-m", "ndcg", "-m", "recip_rank", "-m", "bpref", "-m", "unj"]),
]


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("name, edit, flags", EDGES, ids=[e[0] for e in EDGES])
def test_edges_against_trec_eval_10(trec_eval_10, capsysbinary, tmp_path, seed, name, edit, flags):
    qrels, run = generate(seed)
    qrels, run = edit(random.Random(seed), qrels, run)
    qrels_file, run_file = tmp_path / "qrels", tmp_path / "run"
    qrels_file.write_bytes(b"\n".join(qrels) + b"\n")
    run_file.write_bytes(b"\n".join(run) + b"\n")
    want = trec_eval(trec_eval_10, *flags, qrels_file, run_file)
    assert want[0] in (0, 4)  # what trec_eval reads (4: a docno twice)
    code, out, err = irw(capsysbinary, *flags, qrels_file, run_file)
    assert (code, out) == want, err
    if want[0] == 4:
        assert "trec_eval 10.0 stops there (status 4, duplicate docs)" in err
        assert len(err.splitlines()) == 1


def test_the_run_id_of_a_run_of_comment_lines_only(capsysbinary, tmp_path):
    """Under -c a run of comment lines only is evaluated (every topic as trec_eval evaluates
    a topic the run lacks); its id is empty (trec_eval 10.0 prints memory it never wrote)."""
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_bytes(b"1 0 a 1\n2 0 b 0\n")
    run.write_bytes(b"# nothing\n")
    code, out, err = irw(capsysbinary, "-c", "-m", "runid", "-m", "num_q", qrels, run)
    assert (code, out, err) == (0, b"runid                 \tall\t\nnum_q                 \tall\t2\n", "")
    code, out, err = irw(capsysbinary, "-m", "runid", qrels, run)
    assert (code, out) == (7, b"")


def test_a_duplicate_where_the_run_lacks_the_topic(trec_eval_10, capsysbinary, tmp_path):
    """A docno judged twice in a topic the run lacks: not evaluated without -c (irw's
    evaluation of the shared topics, trec_eval 9's), so not refused; with -c, status 4."""
    qrels, run = generate(3)
    topic = _topic(run[0])
    lacking = [line.replace(topic + b" ", b"999 ", 1) for line in qrels if _topic(line) == topic]
    qrels_file, run_file, shared = tmp_path / "qrels", tmp_path / "run", tmp_path / "shared"
    qrels_file.write_bytes(b"\n".join(qrels + lacking + lacking[:1]) + b"\n")
    shared.write_bytes(b"\n".join(qrels) + b"\n")
    run_file.write_bytes(b"\n".join(run) + b"\n")
    code, out, err = irw(capsysbinary, "-q", qrels_file, run_file)
    assert (code, out) == trec_eval(trec_eval_10, "-q", shared, run_file)
    assert err.startswith("note: the run lacks 1 topic of the qrels (999)")
    code, out, err = irw(capsysbinary, "-q", "-c", qrels_file, run_file)
    assert (code, out) == trec_eval(trec_eval_10, "-q", "-c", qrels_file, run_file)
    assert code == 4


@pytest.mark.skipif(sys.platform == "win32", reason="named pipes")
@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_minus_z_refuses_what_is_not_a_regular_file(trec_eval_suite, capsysbinary, tmp_path, kind):
    path = {"fifo": tmp_path / "fifo", "device": "/dev/zero", "directory": tmp_path}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    started = time.monotonic()
    code, out, err = irw(capsysbinary, "-Z", path, trec_eval_suite / "qrels.test",
                         trec_eval_suite / "results.test")
    assert (code, out) == (2, b"")
    assert err.startswith(f"error: {path}: a ") and "not a regular file" in err
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("args", [
    ["-q", "-m", "yaap", "-m", "ideal_dcg"],
    ["-q", "-c", "-M", "5", "-m", "yaap", "-m", "ideal_dcg.0=1,1=2,2=3"],
    ["-q", "-J", "-l", "2", "-m", "yaap", "-m", "ideal_dcg", "-m", "ndcg"],
])
@pytest.mark.parametrize("seed", [4, 5])
def test_yaap_and_ideal_dcg_as_trec_eval_10(trec_eval_10, capsysbinary, tmp_path, args, seed):
    """trec_eval's measures outside all_trec: yaap (catalogue YAAP) and ideal_dcg (IDCG), on
    generated files (a topic the run lacks under -c) and trec_eval 10.0's own suite."""
    qrels, run = generate(seed, n_topics=5, depth=12)
    lacking = _topic(run[0])
    run = [line for line in run if _topic(line) != lacking]
    qrels_file, run_file = tmp_path / "qrels", tmp_path / "run"
    qrels_file.write_bytes(b"\n".join(qrels) + b"\n")
    run_file.write_bytes(b"\n".join(run) + b"\n")
    if "-c" not in args:
        qrels_file.write_bytes(b"\n".join(q for q in qrels if _topic(q) != lacking) + b"\n")
    want = trec_eval(trec_eval_10, *args, qrels_file, run_file)
    assert want[0] == 0 and b"yaap" in want[1] and b"ideal_dcg" in want[1]
    assert irw(capsysbinary, *args, qrels_file, run_file)[:2] == want


def test_yaap_and_ideal_dcg_on_the_suite(trec_eval_10, trec_eval_suite, capsysbinary, monkeypatch):
    monkeypatch.chdir(trec_eval_suite)
    for args in (["-q", "-m", "yaap", "-m", "ideal_dcg", "qrels.test", "results.test"],
                 ["-q", "-c", "-m", "yaap", "-m", "ideal_dcg.1=2,2=5", "qrels.test", "results.trunc"],
                 ["-q", "-l2", "-m", "yaap", "-m", "ideal_dcg", "qrels.rel_level", "results.test"]):
        want = trec_eval(trec_eval_10, *args)
        assert want[0] == 0 and want[1].count(b"\n") >= 8
        assert irw(capsysbinary, *args)[:2] == want


def test_a_stop_under_c_where_the_run_holds_only_topics_from_the_stop_on(trec_eval_10, capsysbinary,
                                                                          tmp_path):
    """-c, a docno judged twice in topic 2, the run ranking topic 2 only: trec_eval prints
    topic 1 (which the run lacks) and stops with status 4; nothing of the run is kept
    before the stop, which is still a run to evaluate topic 1 with."""
    qrels_file, run_file = tmp_path / "qrels", tmp_path / "run"
    qrels_file.write_bytes(b"1 0 a 1\n2 0 b 1\n2 0 b 0\n")
    run_file.write_bytes(b"2 Q0 b 1 1 r\n")
    args = ["-c", "-q", "-m", "map", "-m", "P.5", qrels_file, run_file]
    want = trec_eval(trec_eval_10, *args)
    assert want == (4, b"map                   \t1\t0.0000\nP_5                   \t1\t0.0000\n")
    code, out, err = irw(capsysbinary, *args)
    assert (code, out) == want
    assert err.startswith(f"error: {qrels_file}, line 3: document b is judged twice in topic 2")
