"""Loading: formats, ranking policies, metadata, and bad input (clear errors, nothing loaded)."""

from __future__ import annotations

import errno
import gzip
import io
import os
from pathlib import Path

import pytest

from conftest import FIXTURES
from irwarehouse.engine import loading
from irwarehouse.errors import IrwError


def write(path, text):
    path.write_text(text)
    return str(path)


def counts(con):
    return tuple(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                 for t in ("runs", "run_loads", "run_topics", "run_meta", "qrels", "qrels_info"))


def ranks(con, run_id="r", topic="1"):
    return [r[0] for r in con.execute(
        "SELECT docno FROM runs WHERE run_id = ? AND topic = ? ORDER BY rank", [run_id, topic]).fetchall()]


def test_any_whitespace_gzip_exponent_and_several_runs_per_file(con, tmp_path):
    plain = write(tmp_path / "a.txt", "1 Q0 d1 1 1.5e-05 r\n\n1\tQ0\t d2 2\t 2E-5  r\r\n   2 Q0 d3 1 3 s  \n")
    gz = tmp_path / "b.gz"
    with gzip.open(gz, "wt") as fh:
        fh.write("1 Q0 d4 1 0.5 t\n")
    summary = loading.load_runs(con, [plain, str(gz)])
    assert summary["runs"] == ["r", "s", "t"]
    assert ranks(con) == ["d2", "d1"]  # 2e-5 > 1.5e-5: the file's rank column is ignored
    assert con.execute("SELECT score FROM runs WHERE docno = 'd1'").fetchone()[0] == pytest.approx(1.5e-5)
    assert con.execute("SELECT n_docs FROM run_topics WHERE run_id = 'r'").fetchone()[0] == 2


def test_ranking_policies(con, tmp_path):
    # given ranks disagree with scores; d2 and d3 tie in score
    text = "1 Q0 d1 3 9 r\n1 Q0 d2 1 5 r\n1 Q0 d3 2 5 r\n"
    loading.load_runs(con, [write(tmp_path / "r", text)], policy="trec_eval")
    assert ranks(con) == ["d1", "d3", "d2"]  # ties: docno descending
    loading.load_runs(con, [write(tmp_path / "r", text)], policy="given", replace=True)
    assert ranks(con) == ["d2", "d3", "d1"]
    loading.load_runs(con, [write(tmp_path / "r", text)], policy="score_then_rank", replace=True)
    assert ranks(con) == ["d1", "d2", "d3"]  # ties: given rank ascending
    assert con.execute("SELECT ranking_policy FROM run_info").fetchone()[0] == "score_then_rank"


def test_trec_eval_9_compares_scores_as_32_bit_floats_and_trec_eval_as_doubles(con, tmp_path):
    # equal as 32-bit floats (as trec_eval 9 stores them), different as doubles
    text = "1 Q0 a 1 100001.3320310 r\n1 Q0 b 2 100001.3309590 r\n"
    loading.load_runs(con, [write(tmp_path / "r", text)], policy="trec_eval_9")
    assert ranks(con) == ["b", "a"]
    loading.load_runs(con, [write(tmp_path / "r", text)], policy="score_then_rank", replace=True)
    assert ranks(con) == ["a", "b"]
    # the default, trec_eval 10.0's order, compares them as doubles; trec_eval_10 names it
    loading.load_runs(con, [write(tmp_path / "r", text)], replace=True)
    assert ranks(con) == ["a", "b"]
    assert con.execute("SELECT ranking_policy FROM run_info").fetchone()[0] == "trec_eval"
    tied = "1 Q0 a 1 0.5 r\n1 Q0 c 2 0.5 r\n1 Q0 b 3 0.5 r\n1 Q0 z 4 0.25 r\n"
    loading.load_runs(con, [write(tmp_path / "r", tied)], policy="trec_eval_10", replace=True)
    assert ranks(con) == ["c", "b", "a", "z"]  # ties: docno descending
    assert con.execute("SELECT ranking_policy FROM run_info").fetchone()[0] == "trec_eval"


def test_an_unknown_ranking_policy_is_one_line_naming_the_valid_ones(con, tmp_path):
    with pytest.raises(IrwError) as info:
        loading.load_runs(con, [write(tmp_path / "r", "1 Q0 a 1 0.5 r\n")], policy="trec_eval_11")
    assert str(info.value) == ("unknown ranking policy 'trec_eval_11'; valid: trec_eval, trec_eval_9, "
                               "given, score_then_rank, trec_eval_10 (= trec_eval)")


@pytest.mark.parametrize("policy", loading.POLICIES)
def test_ranks_counted_are_ranks_sorted(policy):
    """Files in, scores out may rank the judged documents by counting the rows ranked above
    each (_ranking.sql, ranked_by_count): the ranks are those of sorting each ranking, ties
    of score, of 32-bit score and of given rank included."""
    import random

    import duckdb

    from irwarehouse import sql

    rng = random.Random(37)
    scores = [1.0, 1.5, 2.0, 2.0, 100001.3320310, 100001.3309590, -3.25, 1e-5]
    rows, judged = [], set()
    for run in ("r1", "r2"):
        for topic in ("1", "2", "3"):
            docs = rng.sample(range(200), rng.randint(1, 60))
            for doc in docs:
                rows.append((run, topic, f"d{doc}", rng.randint(1, 8), rng.choice(scores)))
                if rng.random() < 0.3:
                    judged.add((topic, f"d{doc}"))
    judged |= {("1", "unretrieved"), ("9", "d1")}
    con = duckdb.connect()
    con.execute("CREATE TABLE staged (run_id VARCHAR, topic VARCHAR, docno VARCHAR, "
                "given_rank BIGINT, score DOUBLE)")
    con.executemany("INSERT INTO staged VALUES (?, ?, ?, ?, ?)", rows)
    con.execute("CREATE TABLE judged (topic VARCHAR, docno VARCHAR)")
    con.executemany("INSERT INTO judged VALUES (?, ?)", sorted(judged))
    ranking = sql.module("_ranking.sql")
    by_sort = con.execute(f"SELECT * FROM ({ranking.ranked('staged', policy)}) WHERE (topic, docno) "
                          "IN (SELECT topic, docno FROM judged) ORDER BY ALL").fetchall()
    by_count = con.execute(f"{ranking.ranked_by_count('staged', 'judged', policy)} ORDER BY ALL").fetchall()
    assert len(by_sort) > 30 and by_count == by_sort
    assert len({r[3] for r in by_sort}) > 20  # ranks well spread, not all 1


def test_directories_globs_and_metadata(con, tmp_path):
    d = tmp_path / "runs"
    d.mkdir()
    write(d / "x.txt", "1 Q0 d1 1 1 x\n")
    write(d / "y.txt", "1 Q0 d1 1 1 y\n")
    meta = write(tmp_path / "m.tsv", "run_id\tteam\tkind\tpooled\nx\tT1\tautomatic\ttrue\ny\tT2\tmanual\tfalse\n")
    loading.load_runs(con, [str(d)], meta=meta)
    assert con.execute("SELECT run_id, team, pooled FROM run_info ORDER BY run_id").fetchall() == \
        [("x", "T1", True), ("y", "T2", False)]
    loading.load_runs(con, [str(tmp_path / "runs" / "*.txt")], replace=True)
    assert con.execute("SELECT count(*) FROM run_info").fetchone()[0] == 2


BAD_RUNS = [
    ("1 Q0 d1 1 1 r\n1 Q0 d2 2 r\n", "line 2: expected 6 fields"),
    ("1 Q0 d1 1 1 r extra\n", "--ignore-extra-fields"),
    ("1 Q0 d1 one 1 r\n", "line 1: rank 'one' (field 4) is not an integer"),
    ("1 Q0 d1 1 1 r\n1 Q0 d2 2 high r\n", "line 2: score 'high' (field 5) is not a number"),
    ("1 Q0 d1 1 nan r\n", "score 'nan' (field 5) is not a number"),
    ("1 Q0 d1 1 1 r\n2 Q0 d1 1 1 r\n1 Q0 d1 2 0.5 r\n", "line 3: document d1 appears twice for run r, topic 1 (first at"),
]


@pytest.mark.parametrize("sep", [" ", "\t"])
@pytest.mark.parametrize("text, message", BAD_RUNS)
def test_bad_run_lines_are_reported_and_nothing_is_loaded(con, tmp_path, text, message, sep):
    good = write(tmp_path / "good", "9 Q0 z 1 1 keep\n")
    loading.load_runs(con, [good])
    before = counts(con)
    bad = write(tmp_path / "bad.txt", text.replace(" ", sep))
    with pytest.raises(IrwError) as info:
        loading.load_runs(con, [bad])
    assert message in str(info.value) and "bad.txt" in str(info.value)
    assert counts(con) == before


LINES = [("1", "Q0", f"d{i:03d}", str(i), f"{(i * 7) % 5 / 2:g}", "r") for i in range(1, 40)] + \
        [("2", "Q0", "d1", "1", "3.5e-1", "r"), ("2", "Q0", "d2", "2", "-2", "r")]


def layouts(lines):
    """The same run lines in the layouts the loader must read alike."""
    tab = ["\t".join(f) for f in lines]
    return {
        "tabs": "\n".join(tab) + "\n",
        "spaces": "\n".join(" ".join(f) for f in lines),  # no final newline
        "crlf": "\r\n".join(tab) + "\r\n",
        "mixed": "\n".join(("  " if i % 3 else "\t ").join(f) + " " * (i % 2) for i, f in enumerate(lines)) + "\n",
        "tabs then spaces": "\n".join(tab[:20] + [" ".join(f) for f in lines[20:]]) + "\n",
        "tabs then mixed newlines": "\n".join(tab[:20]) + "\n" + "\r\n".join(tab[20:]) + "\n",
        "tabs with blank lines": "\n\n".join(tab) + "\n\n",
        "tabs then a space-only line": "\n".join(tab[:5] + ["   "] + tab[5:]) + "\n",
    }


def test_every_layout_loads_alike_and_clean_files_take_the_fast_path(con, tmp_path, monkeypatch):
    used = []
    run_script = loading.staging.run_script
    monkeypatch.setattr(loading.staging, "run_script", lambda c, template, *a, **k: (used.append(template), run_script(c, template, *a, **k))[1])
    loaded = {}
    for name, text in layouts(LINES).items():
        used.clear()
        loading.load_runs(con, [write(tmp_path / "run", text)], replace=True)
        loaded[name] = sorted(con.execute("SELECT topic, docno, rank, score, given_rank FROM runs").fetchall())
        fast = "stage_lines.sql" not in used
        assert fast == (name in ("tabs", "spaces", "crlf", "tabs with blank lines")), name
    assert len(loaded["tabs"]) == len(LINES)
    for name, rows in loaded.items():
        assert rows == loaded["tabs"], name


# Comment lines as trec_eval 10.0 reads them in runs: the first field, after any leading
# whitespace, begins with '#'; a '#' anywhere else is text (TREC RAG 2024 docnos hold one).
COMMENTS = ["# a comment", "#", "   # indented", "#no space", "# Q0 d001 1 9 r",
            "# six fields as a run line has"]


def with_comments(text: str, sep: str = "\n") -> str:
    lines = text.split(sep)
    for at, comment in zip((0, 1, 3, 7, 12, 30), COMMENTS):
        lines.insert(at, comment)
    return sep.join(lines)


@pytest.mark.parametrize("layout", ["tabs", "spaces", "crlf", "mixed", "tabs with blank lines"])
def test_comment_lines_are_skipped_and_counted_on_either_path(con, tmp_path, layout):
    marked = [f[:2] + (f[2] + "#x",) + f[3:] if i % 4 == 0 else f for i, f in enumerate(LINES)]
    text = layouts(marked)[layout]
    summary = loading.load_runs(con, [write(tmp_path / "plain", text)])
    expected = sorted(con.execute("SELECT topic, docno, rank, score FROM runs").fetchall())
    assert summary["comments"] == 0 and summary["lines"] == len(LINES)
    sep = "\r\n" if layout == "crlf" else "\n"
    summary = loading.load_runs(con, [write(tmp_path / "commented", with_comments(text, sep))],
                                replace=True)
    assert summary["comments"] == len(COMMENTS) and summary["lines"] == len(LINES)
    got = sorted(con.execute("SELECT topic, docno, rank, score FROM runs").fetchall())
    assert got == expected and any("#" in row[1] for row in got)


def test_comment_lines_of_the_right_width_take_the_fast_path(con, tmp_path, monkeypatch):
    used = []
    run_script = loading.staging.run_script
    monkeypatch.setattr(loading.staging, "run_script", lambda c, template, *a, **k: (used.append(template), run_script(c, template, *a, **k))[1])
    text = "# Q0 d1 1 9 r\n1 Q0 d#1 1 2 r\n#1 Q0 d2 2 1 r\n1 Q0 d3 3 1 r\n"
    for sep in (" ", "\t"):
        used.clear()
        summary = loading.load_runs(con, [write(tmp_path / "r", text.replace(" ", sep))], replace=True)
        assert "stage_delimited.sql" in used and "stage_lines.sql" not in used
        assert summary["comments"] == 2 and ranks(con) == ["d#1", "d3"]


def test_comment_lines_in_qrels_and_line_numbers_of_errors(con, tmp_path):
    qrels = "# TREC RAG 2024\n1 0 doc#1 2\n#2 0 d 1\n  #\n1 0 d2 0\n"
    summary = loading.load_qrels(con, [write(tmp_path / "q", qrels)], "q")
    assert summary["comments"] == 3 and summary["judgments"] == 2
    assert con.execute("SELECT docno, rel FROM qrels ORDER BY docno").fetchall() == [("d2", 0), ("doc#1", 2)]
    with pytest.raises(IrwError, match=r"bad\.txt, line 4: expected 4 fields"):
        loading.load_qrels(con, [write(tmp_path / "bad.txt", "# a\n#\n1 0 d 1\n1 0 e\n")], "bad")
    with pytest.raises(IrwError, match=r"line 4: document d appears twice for run r, topic 1 \(first at .*line 2\)"):
        loading.load_runs(con, [write(tmp_path / "r.txt", "#\n1 Q0 d 1 1 r\n# 1 Q0 d 1 1 r\n1 Q0 d 2 1 r\n")])
    with pytest.raises(IrwError, match="no run lines found"):
        loading.load_runs(con, [write(tmp_path / "only.txt", "# nothing\n#1 Q0 d 1 1 r\n")])


def test_a_field_holding_the_other_separator_is_an_error(con, tmp_path):
    text = "1\tQ0\td1\t1\t1\tr\n1\tQ0\td2\t2\t1\tmy run\n"
    with pytest.raises(IrwError, match="line 2: expected 6 fields"):
        loading.load_runs(con, [write(tmp_path / "r", text)])
    assert counts(con)[0] == 0


@pytest.mark.parametrize("line, delim", [
    ("1\tQ0\td\t1\t2.5\tr\n", "\t"), ("1 Q0 d 1 2.5 r\r\n", " "), ("1 Q0 d 1 2.5 r", " "),
    ("1  Q0 d 1 2.5 r\n", None), ("1\tQ0 d\t1\t2.5\tr\n", None), ("1 Q0 d 1 2.5\n", None),
    (" 1 Q0 d 1 2.5 r\n", None), ("1\tQ0\td\t1\t2.5\tr\textra\n", None),
])
def test_delimiter_of_the_first_line(tmp_path, line, delim):
    assert loading.reading._delimiter(write(tmp_path / "f", "\n" + line), 6) == delim


def test_qrels_layouts_load_alike(con, tmp_path):
    rows = [("1", "0", f"d{i}", str(i % 3)) for i in range(30)]
    texts = {"spaces": "\n".join(" ".join(r) for r in rows) + "\n",
             "tabs": "\n".join("\t".join(r) for r in rows) + "\n",
             "mixed": "\n".join((" \t" if i % 2 else " ").join(r) for i, r in enumerate(rows)) + "\n"}
    for name, text in texts.items():
        loading.load_qrels(con, [write(tmp_path / name, text)], name)
    got = {name: sorted(con.execute("SELECT topic, docno, rel FROM qrels WHERE qrels = ?", [name]).fetchall())
           for name in texts}
    assert got["spaces"] == got["tabs"] == got["mixed"] and len(got["spaces"]) == 30


def test_duplicate_across_files_names_both(con, tmp_path):
    a = write(tmp_path / "a", "1 Q0 d1 1 1 r\n")
    b = write(tmp_path / "b", "1 Q0 d2 1 1 r\n1 Q0 d1 2 0 r\n")
    with pytest.raises(IrwError, match=r"/b, line 2: document d1 appears twice .*/a, line 1\)"):
        loading.load_runs(con, [a, b])
    assert counts(con)[0] == 0


def test_extra_fields_accepted_on_request(con, tmp_path):
    loading.load_runs(con, [write(tmp_path / "r", "1 Q0 d1 1 1 r trailing words\n")], extra_fields=True)
    assert ranks(con) == ["d1"]


def test_existing_run_needs_replace_and_replace_recomputes_its_scores(con, tmp_path):
    from irwarehouse import measures
    from irwarehouse.engine import evaluation

    q = write(tmp_path / "q", "1 0 d1 1\n")
    loading.load_qrels(con, [q], "q")
    r = write(tmp_path / "r", "1 Q0 d1 1 1 r\n")
    loading.load_runs(con, [r])
    evaluation.evaluate(con, "q", measures.parse_all(["AP"]), ["r"])
    with pytest.raises(IrwError, match=r"already loaded: r \(in .*/r\); use --replace"):
        loading.load_runs(con, [r])
    assert con.execute("SELECT value FROM scores").fetchall() == [(1.0,)]
    loading.load_runs(con, [write(tmp_path / "r", "1 Q0 d0 1 2 r\n1 Q0 d1 2 1 r\n")], replace=True)
    # the stored score is recomputed for the new run, not dropped (a dashboard stays current)
    assert con.execute("SELECT value FROM scores").fetchall() == [(0.5,)]
    per = evaluation.evaluate(con, "q", measures.parse_all(["AP"]), ["r"])
    assert per["value"].tolist() == [0.5]  # the cached base was brought up to date


def test_loading_runs_extends_the_materialized_bases(tmp_path):
    """Runs loaded (or replaced) after a base was materialized are added to it; the other
    runs' rows stay; scores equal those computed afresh from the runs."""
    import duckdb

    from conftest import FIXTURES
    from irwarehouse import measures, schema
    from irwarehouse.engine import evaluation

    path = str(tmp_path / "w.duckdb")
    con = schema.connect(path)
    runs = sorted(p.name for p in (FIXTURES / "runs").iterdir())
    loading.load_qrels(con, [str(FIXTURES / "qrels.txt")], "fixture")
    loading.load_runs(con, [str(FIXTURES / "runs" / r) for r in runs[:3]])
    parsed = measures.parse_all(["AP", "nDCG@5", "Bpref", "RBPres(p=0.8)", "AP'"])
    before = evaluation.evaluate(con, "fixture", parsed, ["alpha1"], store=False)  # materializes the base
    built = con.execute("SELECT built_at FROM irw_base_built").fetchall()
    loading.load_runs(con, [str(FIXTURES / "runs" / r) for r in runs[3:]])
    reversed_scores = "".join(  # alpha.txt with every score negated: the rankings turn around
        " ".join(f[:4] + ["-" + f[4]] + f[5:]) + "\n"
        for f in (line.split() for line in (FIXTURES / "runs" / "alpha.txt").read_text().splitlines()))
    loading.load_runs(con, [write(tmp_path / "alpha.txt", reversed_scores)], replace=True)
    assert con.execute("SELECT built_at FROM irw_base_built").fetchall() == built  # not rebuilt
    after = evaluation.evaluate(con, "fixture", parsed, ["alpha1"], store=False)
    assert not after["value"].equals(before["value"])
    ids = [r[0] for r in con.execute("SELECT run_id FROM run_loads ORDER BY 1").fetchall()]
    cached = evaluation.evaluate(con, "fixture", parsed, ids, store=False)
    con.close()
    fresh = evaluation.evaluate(duckdb.connect(path, read_only=True), "fixture", parsed, ids, store=False)
    assert len(cached) == len(fresh) > 0 and set(cached["run_id"]) == set(ids)
    assert (cached["value"] - fresh["value"]).abs().max() < 1e-12


def test_bad_metadata_rolls_back_the_runs(con, tmp_path):
    r = write(tmp_path / "r", "1 Q0 d1 1 1 r\n")
    meta = write(tmp_path / "m.tsv", "run_id\tteam\tpooled\nr\tT\tmaybe\n")
    with pytest.raises(IrwError, match=r"m.tsv, line 2: pooled must be true or false"):
        loading.load_runs(con, [r], meta=meta)
    assert counts(con) == (0, 0, 0, 0, 0, 0)
    with pytest.raises(IrwError, match="must name a run_id column"):
        loading.load_meta(con, write(tmp_path / "m2.tsv", "run\tteam\nr\tT\n"))


@pytest.mark.parametrize("paths, message", [
    (["nothere.txt"], "nothere.txt: no such file"),
    (["*.nomatch"], "no file matches"),
])
def test_missing_inputs(con, tmp_path, monkeypatch, paths, message):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(IrwError, match=message):
        loading.load_runs(con, paths)


BAD_QRELS = [
    ("1 0 d1 1\n1 0 d2\n", "line 2: expected 4 fields"),
    ("1 0 d1 yes\n", "line 1: relevance 'yes' (field 4) is not an integer"),
    ("1 0 d1 1\n2 0 d1 0\n1 0 d1 0\n", "line 3: document d1 is judged twice for topic 1"),
]


@pytest.mark.parametrize("text, message", BAD_QRELS)
def test_bad_qrels(con, tmp_path, text, message):
    loading.load_qrels(con, [write(tmp_path / "ok", "1 0 d 1\n")], "ok")
    before = counts(con)
    with pytest.raises(IrwError) as info:
        loading.load_qrels(con, [write(tmp_path / "bad", text)], "ok", replace=True)
    assert message in str(info.value) and "bad" in str(info.value)
    assert counts(con) == before
    assert con.execute("SELECT docno FROM qrels WHERE qrels = 'ok'").fetchall() == [("d",)]


def test_qrels_names_and_replace(con, tmp_path):
    loading.load_qrels(con, [write(tmp_path / "a", "1 0 d 1\n2 0 e -1\n")], "a")
    with pytest.raises(IrwError, match="already exists; use --replace"):
        loading.load_qrels(con, [write(tmp_path / "a", "1 0 d 1\n")], "a")
    loading.load_qrels(con, [write(tmp_path / "b", "1 0 d 2\n")], "a", replace=True)
    assert con.execute("SELECT rel FROM qrels WHERE qrels = 'a'").fetchall() == [(2,)]
    assert con.execute("SELECT topic_qrels, kind FROM qrels_info").fetchall() == [("a", "file")]


def test_a_warehouse_of_an_older_layout_gets_a_new_base_cache(tmp_path):
    """Opening a warehouse written with an older schema version replaces the internal base
    cache (rebuilt on demand) and keeps everything loaded."""
    from irwarehouse import connection, measures, schema
    from irwarehouse.engine import evaluation

    path = str(tmp_path / "old.duckdb")
    con = schema.connect(path)
    loading.load_qrels(con, [write(tmp_path / "q", "1 0 d1 1\n1 0 d2 0\n")], "q")
    loading.load_runs(con, [write(tmp_path / "r", "1 Q0 d2 1 2 r\n1 Q0 d1 2 1 r\n")])
    con.execute("DROP TABLE irw_base")
    con.execute("CREATE TABLE irw_base (qrels VARCHAR, docno VARCHAR)")  # an older layout
    con.execute("INSERT INTO irw_base_built VALUES ('q', current_timestamp, 0, 0)")
    con.execute("UPDATE irw_meta SET value = '1' WHERE key = 'schema_version'")
    con.close()
    con = schema.connect(path)
    assert con.execute("SELECT value FROM irw_meta WHERE key = 'schema_version'").fetchone()[0] == connection.SCHEMA_VERSION
    assert "jid" in [r[0] for r in con.execute("DESCRIBE irw_base").fetchall()]
    per = evaluation.evaluate(con, "q", measures.parse_all(["AP"]), ["r"])
    assert per["value"].tolist() == [0.5]
    assert counts(con)[:2] == (2, 1)


@pytest.mark.parametrize("fall_back", [False, True])
def test_progress_counts_every_file_once(con, tmp_path, monkeypatch, fall_back):
    import contextlib

    ticks, labels = [], []

    class Bar:
        label = ""

        def update(self, n):
            ticks.append(n)
            labels.append(self.label)

    monkeypatch.setattr(loading.staging, "_progress_bar",
                        lambda files, label, phases=0: contextlib.nullcontext(Bar()))
    paths = [write(tmp_path / f"r{i:02d}", f"1\tQ0\td{i}\t1\t1\tr{i}\n") for i in range(loading.staging.BATCH + 5)]
    if fall_back:  # the last file's second line is space-separated: everything is re-read
        write(tmp_path / paths[-1], "1\tQ0\tx\t1\t1\tlast\n1 Q0 y 2 0 last\n")
    summary = loading.load_runs(con, paths)
    # each file once, then the phases after reading: checking, ranking, writing
    assert sum(ticks) == len(paths) + 3 and len(ticks) >= 2 + 3
    assert labels[-4:] == ["checking", "ranking", "writing to the warehouse", "done"]
    assert len(summary["runs"]) == len(paths)
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == len(paths) + fall_back
    # every run is recorded with its own file, read BATCH files at a time
    sources = dict(con.execute("SELECT run_id, source FROM run_loads").fetchall())
    assert sources == {("last" if fall_back and i == len(paths) - 1 else f"r{i}"): str(p)
                       for i, p in enumerate(paths)}


# ---------------------------------------------------------------- number syntax, both paths

def _both_layouts(line: str) -> dict[str, str]:
    """A run line as the fast path reads it (single tabs) and as the general path does."""
    fields = line.split()
    return {"tabs": "\t".join(fields) + "\n", "mixed": "  ".join(fields) + " \t\n"}


@pytest.fixture()
def templates(monkeypatch):
    """The staging templates each load used."""
    used = []
    run_script = loading.staging.run_script
    monkeypatch.setattr(loading.staging, "run_script", lambda c, template, *a, **k: (
        used.append(template), run_script(c, template, *a, **k))[1])
    return used


@pytest.mark.parametrize("rank, score, message", [
    ("2.5", "1", "rank '2.5' (field 4) is not an integer"),
    ("0x10", "1", "rank '0x10' (field 4) is not an integer"),
    ("1_000", "1", "rank '1_000' (field 4) is not an integer"),
    ("1e3", "1", "rank '1e3' (field 4) is not an integer"),
    ("\u0661", "1", "rank '\u0661' (field 4) is not an integer"),
    ("9223372036854775808", "1", "rank '9223372036854775808' (field 4) is out of range (-9223372036854775808 to 9223372036854775807)"),
    ("1", "1_000", "score '1_000' (field 5) is not a number"),
    ("1", "0x10", "score '0x10' (field 5) is not a number"),
    ("1", "inf", "score 'inf' (field 5) is not a number"),
    ("1", "-Infinity", "score '-Infinity' (field 5) is not a number"),
    ("1", "nan", "score 'nan' (field 5) is not a number"),
    ("1", "1e999", "score '1e999' (field 5) is out of range"),
    ("1", "1e", "score '1e' (field 5) is not a number"),
    ("1", ".", "score '.' (field 5) is not a number"),
])
def test_numbers_outside_the_syntax_are_errors_on_both_paths(con, tmp_path, templates, rank, score, message):
    first = _both_layouts("1 Q0 d0 1 2 r")
    for layout, text in _both_layouts(f"1 Q0 d1 {rank} {score} r").items():
        text = first[layout] + text
        templates.clear()
        with pytest.raises(IrwError) as info:
            loading.load_runs(con, [write(tmp_path / "bad.txt", text)])
        assert ("stage_lines.sql" in templates) == (layout == "mixed")
        assert f"bad.txt, line 2: {message}" in str(info.value), layout
        assert counts(con)[0] == 0


@pytest.mark.parametrize("rank, score, stored", [
    ("+5", "1.5E+3", (5, 1500.0)), ("-0", "-.5", (0, -0.5)), ("007", "3.", (7, 3.0)),
    ("-9223372036854775808", "1e-999", (-2**63, 0.0)), ("1", "+12", (1, 12.0)),
])
def test_numbers_in_the_syntax_load_alike_on_both_paths(con, tmp_path, templates, rank, score, stored):
    for layout, text in _both_layouts(f"1 Q0 d1 {rank} {score} r").items():
        templates.clear()
        loading.load_runs(con, [write(tmp_path / "r.txt", text)], replace=True)
        assert ("stage_lines.sql" in templates) == (layout == "mixed")
        assert con.execute("SELECT given_rank, score FROM runs").fetchone() == stored, layout


@pytest.mark.parametrize("gzipped", [False, True])
@pytest.mark.parametrize("text, fast", [
    ("1\tQ0\td1\t1\t1\tr\n1\tQ0\td2\t2\t0.5\tr\n", True),
    ("1 Q0 d1 1 1 r\n1 Q0 d2 2 0.5 r\n", True),
    ("1\tQ0\td1\t1\t1\tr\n1\tQ0\t d2\t2\t0.5\tr\n", False),  # a space inside a field
    ("1\tQ0\td1\t1\t1\tr\n1\tQ0\td2\t2\t0.5\tr \n", False),  # a trailing space
    ("1 Q0 d1 1 1 r\n1 Q0 d2\t 2 0.5 r\n", False),  # a tab inside a field
    ("1 Q0 d1 1 1 r\n1 Q0 d2 2 0.5\x0b r\n", False),  # a vertical tab
    ("1\tQ0\td1\t1\t1\tr\n1\tQ0\td2\x0c\t2\t0.5\tr\n", False),  # a form feed
])
def test_whitespace_inside_fields_leaves_the_fast_path(con, tmp_path, templates, text, fast, gzipped):
    """The CSV reader would keep such whitespace inside a field; the file's bytes are looked
    at beside the read, and the whitespace splitter reads the file instead: the same rows."""
    path = tmp_path / ("r.gz" if gzipped else "r.txt")
    path.write_bytes(gzip.compress(text.encode()) if gzipped else text.encode())
    loading.load_runs(con, [str(path)])
    assert ("stage_lines.sql" in templates) == (not fast)
    assert con.execute("SELECT topic, docno, given_rank, score, run_id FROM runs "
                       "ORDER BY docno").fetchall() == [("1", "d1", 1, 1.0, "r"), ("1", "d2", 2, 0.5, "r")]


@pytest.mark.parametrize("grade, message", [
    ("1.5", "relevance '1.5' (field 4) is not an integer (trec_eval would read it as 1)"),
    ("2x", "relevance '2x' (field 4) is not an integer (trec_eval would read it as 2)"),
    ("one", "relevance 'one' (field 4) is not an integer"),
    ("99999999999", "relevance '99999999999' (field 4) is out of range (-2147483648 to 2147483647)"),
    ("1e0", "relevance '1e0' (field 4) is not an integer (trec_eval would read it as 1)"),
])
def test_bad_grades_are_errors(con, tmp_path, grade, message):
    for sep in (" ", "\t", " \t "):
        text = sep.join(["1", "0", "d0", "1"]) + "\n" + sep.join(["1", "0", "d1", grade]) + "\n"
        with pytest.raises(IrwError) as info:
            loading.load_qrels(con, [write(tmp_path / "q.txt", text)], "q")
        assert f"q.txt, line 2: {message}" in str(info.value)
        assert counts(con)[4:] == (0, 0)
    loading.load_qrels(con, [write(tmp_path / "q.txt", "1 0 d1 +2\n1 0 d2 -1\n1 0 d3 007\n")], "q")
    assert sorted(con.execute("SELECT docno, rel FROM qrels").fetchall()) == [("d1", 2), ("d2", -1), ("d3", 7)]


# ---------------------------------------------------------------- whitespace and line ends

def test_whitespace_and_line_ends_are_read_alike_everywhere(con, tmp_path):
    texts = {"plain": "1 Q0 d1 1 1 r\n1 Q0 d2 2 0.5 r\n",
             "vt and ff": "1\x0bQ0\x0cd1 1 1 r\n1 Q0 d2\x0b\x0c2 0.5 r\n",
             "lone carriage returns": "1 Q0 d1 1 1 r\r1 Q0 d2 2 0.5 r\r",
             "crlf and blank": "\r\n1\tQ0\td1\t1\t1\tr\r\n\r\n1\tQ0\td2\t2\t0.5\tr\r\n",
             "byte order mark": "\ufeff1\tQ0\td1\t1\t1\tr\n1\tQ0\td2\t2\t0.5\tr\n"}
    for name, text in texts.items():
        loading.load_runs(con, [write(tmp_path / "r.txt", text)], replace=True)
        assert con.execute("SELECT docno, given_rank, score FROM runs ORDER BY docno").fetchall() == \
            [("d1", 1, 1.0), ("d2", 2, 0.5)], name
    with pytest.raises(IrwError, match=r"r.txt, line 2: expected 6 fields .* found 3"):
        loading.load_runs(con, [write(tmp_path / "r.txt", "1 Q0 d1 1 1 r\n1 Q0 d2\r2 0.5 r\n")], replace=True)


def test_a_full_temporary_disk_is_named(con, tmp_path, monkeypatch):
    """A compressed file is decompressed into the temporary directory first: a full disk
    there is said as such, and nothing is loaded."""
    path = tmp_path / "r.gz"
    path.write_bytes(gzip.compress(b"1 Q0 d1 1 1 r\n"))

    class Full(io.BytesIO):
        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    real_open = open
    monkeypatch.setattr(loading.reading, "open", lambda f, mode="r", *a, **k: Full() if mode == "wb"
                        else real_open(f, mode, *a, **k), raising=False)
    with pytest.raises(IrwError, match=r"r\.gz: no space left in .* to decompress the file "
                                       r"\(TMPDIR names another directory\)"):
        loading.load_runs(con, [str(path)])
    assert counts(con)[0] == 0


def test_a_very_long_line_is_named(con, tmp_path):
    text = "1 Q0 d1 1 1 r\n1 Q0 " + "x" * 6_000_000 + " 2 1 r\n"
    with pytest.raises(IrwError) as info:
        loading.load_runs(con, [write(tmp_path / "long.txt", text)])
    assert str(info.value) == (f"{tmp_path}/long.txt, line 2: the line is 6,000,011 bytes long, irw "
                               "reads lines of up to 2,097,152 bytes (is this a run or qrels file?)")
    assert counts(con)[0] == 0


# ---------------------------------------------------------------- encodings

def test_encodings(con, tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes("1 Q0 d1 1 2 r\n1 Q0 caf\u00e9 2 1 r\n".encode("latin-1"))
    with pytest.raises(IrwError) as info:
        loading.load_runs(con, [str(path)])
    assert str(info.value) == (f"{path}, line 2: byte 0xe9 (column 9) is not valid UTF-8; if the "
                               "file is Latin-1, load it with --encoding latin-1")
    loading.load_runs(con, [str(path)], encoding="latin-1")
    assert ranks(con) == ["d1", "caf\u00e9"]
    path.write_bytes(b"1 0 d1 1\n1 0 \x93quoted\x94 1\n")
    with pytest.raises(IrwError, match=r"line 2: byte 0x93 \(column 5\) is a control code, not a Latin-1"):
        loading.load_qrels(con, [str(path)], "q", encoding="latin-1")
    path.write_bytes("1 0 d1 1\n".encode("utf-16"))
    with pytest.raises(IrwError, match=r"line 1: byte 0xff \(column 1\) is not valid UTF-8"):
        loading.load_qrels(con, [str(path)], "q")
    with pytest.raises(IrwError, match="unknown encoding 'cp1252'; valid: utf-8, latin-1"):
        loading.load_qrels(con, [str(path)], "q", encoding="cp1252")
    assert counts(con)[4:] == (0, 0)


# ---------------------------------------------------------------- compression by content

def test_compression_is_recognised_by_content(con, tmp_path):
    import bz2
    import lzma

    text = b"1 Q0 d1 1 2 r\n1 Q0 d2 2 1 r\n"
    files = {"gzip.txt": gzip.compress(text), "plain.gz": text, "bzip2.gz": bz2.compress(text),
             "xz": lzma.compress(text), "tabs.bz2": bz2.compress(text.replace(b" ", b"\t"))}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        loading.load_runs(con, [str(tmp_path / name)], replace=True)
        assert ranks(con) == ["d1", "d2"], name
        assert con.execute("SELECT source FROM run_loads").fetchone()[0] == str(tmp_path / name)
    (tmp_path / "z").write_bytes(b"\x28\xb5\x2f\xfd" + b"\0" * 20)
    with pytest.raises(IrwError, match=r"z: the file is zstd-compressed, which irw does not read; "
                                       r"decompress it first \(zstd -d\)"):
        loading.load_runs(con, [str(tmp_path / "z")])


def _damaged_copies(text: bytes) -> dict[str, tuple[bytes, str]]:
    import bz2

    stored = bytearray(gzip.compress(text, compresslevel=0))  # stored blocks: a flipped byte
    stored[len(stored) // 2] ^= 0x01                          # inflates silently to other text
    early = bytearray(gzip.compress(text))
    early[12] ^= 0xFF
    return {"crc": (bytes(stored), "the gzip data is corrupt (CRC check failed"),
            "early": (bytes(early), "the gzip data is corrupt ("),
            "truncated": (gzip.compress(text)[:-20], "the gzip data ends early: the file is truncated"),
            "header": (b"\x1f\x8b\x09" + gzip.compress(text)[3:], "the gzip data is corrupt (Unknown compression method)"),
            "bzip2": (bz2.compress(text)[:-10], "the bzip2 data ends early: the file is truncated")}


@pytest.mark.parametrize("damage", ["crc", "early", "truncated", "header", "bzip2"])
def test_a_damaged_stream_is_one_line_naming_the_file(con, tmp_path, damage):
    runs = b"".join(b"1 Q0 d%d %d %d r\n" % (i, i, 1000 - i) for i in range(400))
    qrels = b"".join(b"1 0 d%d %d\n" % (i, i % 2) for i in range(400))
    for kind, text in (("runs", runs), ("qrels", qrels)):
        data, message = _damaged_copies(text)[damage]
        path = tmp_path / f"{kind}.gz"
        path.write_bytes(data)
        with pytest.raises(IrwError) as info:
            if kind == "runs":
                loading.load_runs(con, [str(path)])
            else:
                loading.load_qrels(con, [str(path)], "q")
        assert str(info.value).startswith(f"{path}: {message}"), str(info.value)
        assert "\n" not in str(info.value)
        assert counts(con) == (0, 0, 0, 0, 0, 0)


def test_memory_limit_default_option_and_bad_value(tmp_path, monkeypatch):
    from irwarehouse import connection, schema

    monkeypatch.delenv("IRW_MEMORY_LIMIT", raising=False)
    default = connection.memory_limit()
    assert default.endswith("MiB") and 0 < int(default[:-3]) <= 2048
    monkeypatch.setenv("IRW_MEMORY_LIMIT", "300MB")
    con = schema.connect(str(tmp_path / "w.duckdb"))
    assert con.execute("SELECT current_setting('memory_limit')").fetchone()[0] == "286.1 MiB"
    spill = con.execute("SELECT current_setting('temp_directory')").fetchone()[0]
    from irwarehouse import files

    assert os.path.basename(spill).startswith("spill-")  # in this process's owner directory
    assert Path(spill).parent.parent == files.temp_root()
    con.close()
    with connection.Staging(str(tmp_path / "w.duckdb"), memory="1GB", prepare=schema.prepare) as staging:
        assert staging.con.execute("SELECT current_setting('memory_limit')").fetchone()[0] == "953.6 MiB"
    with pytest.raises(IrwError, match="memory limit 'lots' is not a size"):
        connection.Staging(str(tmp_path / "new.duckdb"), memory="lots", prepare=schema.prepare)
    assert not (tmp_path / "new.duckdb").exists()


def test_a_load_larger_than_the_memory_limit_spills_and_loads_alike(tmp_path):
    """400,000 lines staged under a 32 MB limit (their staged rows take several times that):
    DuckDB spills to the private directory, which is gone afterwards, and the warehouse holds
    the same rankings as one loaded without a limit."""
    from irwarehouse import connection, schema

    lines = [f"{t} Q0 D{(d * 7919 + t) % 100000} {d} {(d * 37 % 1000) / 7:.3f} run{r}\n"
             for r in range(40) for t in range(100) for d in range(100)]
    write(tmp_path / "runs.txt", "".join(lines))
    rankings = []
    for name, limit in (("small.duckdb", "32MB"), ("large.duckdb", "4GB")):
        with connection.Staging(str(tmp_path / name), memory=limit, prepare=schema.prepare) as staging:
            spill = staging.con.execute("SELECT current_setting('temp_directory')").fetchone()[0]
            loading.load_runs(staging.con, [str(tmp_path / "runs.txt")], final=staging.attach)
        assert not os.path.exists(spill)
        con = schema.connect(str(tmp_path / name), read_only=True)
        rankings.append(con.execute("SELECT * FROM runs ORDER BY ALL").fetchall())
        con.close()
    assert len(rankings[0]) == 400_000 and rankings[0] == rankings[1]


# ---------------------------------------------------------------- loading in batches

def _tables(con):
    """What a load leaves in the warehouse, in a comparable order (load times left out)."""
    return {
        "runs": con.execute("SELECT * FROM runs ORDER BY collection, run_id, topic, rank").fetchall(),
        "run_topics": con.execute("SELECT * FROM run_topics ORDER BY ALL").fetchall(),
        "run_loads": con.execute("SELECT * EXCLUDE (loaded_at) FROM run_loads ORDER BY ALL").fetchall(),
        "state": con.execute("SELECT * FROM irw_run_state ORDER BY ALL").fetchall(),
    }


def _split_run(tmp_path):
    """The fixture runs, with the lines of alpha.txt (runs alpha1 and alpha2) dealt over two files that other files separate
    (topic by topic alternately, and one topic's lines over both), so that a batch of one file
    holds part of a (run, topic)."""
    from conftest import FIXTURES

    lines = (FIXTURES / "runs" / "alpha.txt").read_text().splitlines(keepends=True)
    first, second = lines[0::2], lines[1::2]
    paths = [write(tmp_path / "a1.txt", "".join(first))]
    paths += sorted(str(p) for p in (FIXTURES / "runs").iterdir() if p.name != "alpha.txt")
    paths += [write(tmp_path / "a2.txt", "".join(second))]
    return paths


@pytest.mark.parametrize("policy", ["trec_eval", "given", "score_then_rank"])
def test_loading_in_batches_equals_loading_at_once(tmp_path, monkeypatch, policy):
    from irwarehouse import schema

    paths = _split_run(tmp_path)
    at_once = schema.connect(":memory:")
    loading.load_runs(at_once, paths, policy=policy)
    monkeypatch.setattr(loading.runs, "BATCH_SHARE", 1e-12)  # every file a batch of its own
    assert len(loading.runs._batches(at_once, paths)) == len(paths)
    batched = schema.connect(":memory:")
    summary = loading.load_runs(batched, paths, policy=policy)
    assert _tables(batched) == _tables(at_once)
    # the fingerprint sums taken batch by batch are those of the rows stored
    assert batched.execute("SELECT collection, run_id, n_rows, rows_sum FROM irw_run_state "
                           "ORDER BY ALL").fetchall() == \
        batched.execute("SELECT * FROM irw_run_rows() ORDER BY ALL").fetchall()
    # every topic of alpha1 and alpha2 had lines in two batches: ranked again over all of them
    assert batched.execute("SELECT count(*), count(DISTINCT topic), max(rank) FROM runs "
                           "WHERE run_id = 'alpha1'").fetchone() == (180, 6, 30)
    assert summary["lines"] == 1290


def test_a_duplicate_across_batches_is_found(tmp_path, monkeypatch, con):
    a = write(tmp_path / "a.txt", "1 Q0 d1 1 2 r\n1 Q0 d2 2 1 r\n")
    b = write(tmp_path / "b.txt", "1 Q0 d3 3 0.5 r\n1 Q0 d1 4 0.2 r\n")
    monkeypatch.setattr(loading.runs, "BATCH_SHARE", 1e-12)
    with pytest.raises(IrwError, match=r"b.txt, line 2: document d1 appears twice for run r, topic 1 "
                                       r"\(first at .*a.txt, line 1\)"):
        loading.load_runs(con, [a, b])
    assert counts(con)[:3] == (0, 0, 0)
    # the same lines without the duplicate: one ranking over both files
    write(tmp_path / "b.txt", "1 Q0 d3 3 0.5 r\n2 Q0 d1 4 0.2 r\n")
    loading.load_runs(con, [a, b])
    assert ranks(con) == ["d1", "d2", "d3"]
    assert con.execute("SELECT n_docs FROM run_topics WHERE topic = '1'").fetchone()[0] == 3


def test_a_load_of_several_batches_stages_its_ranked_rows_in_a_file(tmp_path, monkeypatch):
    """The ranked rows of a load of several batches wait for the final transaction in a
    database file in a private temporary directory (DuckDB writes them there compressed and
    holds no memory for them), those of one batch in memory; the directory is gone after the
    load, whether it succeeds or fails, and the warehouse is the same either way."""
    import tempfile

    from irwarehouse import schema

    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    staged = []
    check = loading.runs._check_run_ids

    def look(con, files, encoding):  # after the last batch is ranked, before the final transaction
        path = con.execute("SELECT path FROM duckdb_databases() "
                           "WHERE database_name = 'irw_staging'").fetchone()[0]
        rows = con.execute("SELECT count(*) FROM irw_staging.irw_ranked").fetchone()[0]
        staged.append((path, path and os.path.getsize(path), rows))
        return check(con, files, encoding)

    monkeypatch.setattr(loading.runs, "_check_run_ids", look)
    paths = _split_run(tmp_path)
    at_once = schema.connect(":memory:")
    loading.load_runs(at_once, paths)
    assert staged == [(None, None, 1290)]
    monkeypatch.setattr(loading.runs, "BATCH_SHARE", 1e-12)  # every file a batch of its own
    batched = schema.connect(":memory:")
    loading.load_runs(batched, paths)
    path, size, rows = staged[-1]
    # in this process's owner directory, in irw's temporary root in TMPDIR
    owner = Path(path).parent.parent
    assert owner.parent == temp / f"irw-{os.getuid()}" and size > 0 and rows == 1290
    assert os.path.basename(os.path.dirname(path)).startswith("stage-")
    assert not os.path.exists(os.path.dirname(path))
    assert _tables(batched) == _tables(at_once)
    # a failed load (a docno twice, found after the last batch) removes its file too
    twice = write(tmp_path / "twice.txt", "401 Q0 d1 1 1 late\n")
    write(tmp_path / "twice2.txt", "401 Q0 d1 2 0.5 late\n")
    with pytest.raises(IrwError, match="document d1 appears twice for run late"):
        loading.load_runs(batched, [twice, str(tmp_path / "twice2.txt")])
    assert not [p for p in os.listdir(owner) if p.startswith("stage-")]
    assert _tables(batched) == _tables(at_once)


def test_batches_follow_the_memory_limit(tmp_path):
    from irwarehouse import schema

    con = schema.connect(":memory:", memory="64MB")  # a budget of 8 MB of text per batch
    big = tmp_path / "big.gz"
    with gzip.open(big, "wt") as fh:  # 6 MB of text in a file of a few kB
        fh.write("1 Q0 d 1 1 r\n" * 500_000)
    small = write(tmp_path / "small.txt", "1 Q0 d 1 1 s\n")
    assert loading.runs._text_size(str(big)) == 13 * 500_000
    assert loading.runs._batches(con, [str(big), str(big), small]) == [[str(big)], [str(big), small]]
    assert loading.runs._batches(con, [small, small]) == [[small, small]]


def test_bulk_work_keeps_no_insertion_order_and_users_sql_does(monkeypatch):
    """A load, the base and an evaluation run without insertion order (DuckDB then writes in
    parallel, in less memory); the connection keeps it for everything else -- users' SQL,
    exports -- as any DuckDB client does."""
    from conftest import FIXTURES
    from irwarehouse import Warehouse, sql

    setting = "SELECT current_setting('preserve_insertion_order')"
    seen: list[bool] = []
    inner = sql._execute

    def spy(con, text, params=None):
        if "INSERT INTO irw_staging.irw_ranked" in text or "INSERT INTO irw_base" in text:
            seen.append(con.execute(setting).fetchone()[0])
        return inner(con, text, params)

    monkeypatch.setattr(sql, "_execute", spy)
    with Warehouse(":memory:") as w:
        w.load_qrels(str(FIXTURES / "qrels.txt"), "fixture")
        w.load_runs(str(FIXTURES / "runs"))
        w.eval("AP")
        assert len(seen) >= 2 and not any(seen)
        assert w.con.execute(setting).fetchone()[0] is True
        assert w.sql(setting + " AS kept").rows() == [(True,)]


def test_load_messages_count_comment_lines(cli, tmp_path):
    d = tmp_path / "c"
    (d / "runs").mkdir(parents=True)
    (d / "qrels.txt").write_text("# judged by hand\n1 0 a#1 1\n1 0 b 0\n")
    (d / "runs" / "r.txt").write_text("# run r\n#\n1 Q0 a#1 1 2 r\n1 Q0 c 2 1 r\n")
    done = cli("load", "collection", d, "--name", "c")
    assert done.stderr == ("collection c: loaded qrels c: 2 judgments, 1 relevant, 1 topics, 1 comment "
                           "line skipped; loaded 1 run (2 lines from 1 file, 2 comment lines skipped, "
                           "order trec_eval)\n")
    assert cli("load", "qrels", d / "qrels.txt", "--name", "q2").stderr.endswith(", 1 comment line skipped\n")
    assert "comment" not in cli("load", "runs", FIXTURES / "runs" / "beta1.txt").stderr


# ---------------------------------------------------------------- a qrels file among runs

QRELS_TEXT = "1 0 d1 1\n1 0 d2 0\n2 Q0 d1 2\n"


def test_a_qrels_file_in_a_directory_of_runs_is_skipped_with_a_note(con, tmp_path):
    """The common layout keeps the qrels beside the runs: a directory's file of 4 fields a
    line, an iteration and an integer grade, is skipped with a note naming it."""
    from irwarehouse.errors import IrwNote

    for d in ("d", "e", "only"):
        (tmp_path / d).mkdir()
    run = write(tmp_path / "d" / "run.txt", "1 Q0 d1 1 2.0 r\n1 Q0 d2 2 1.0 r\n")
    qrels = write(tmp_path / "d" / "qrels.txt", QRELS_TEXT)
    with pytest.warns(IrwNote) as notes:
        summary = loading.load_runs(con, [str(tmp_path / "d")])
    assert summary["runs"] == ["r"] and summary["files"] == 1
    assert [str(n.message) for n in notes] == [
        f"note: skipped {qrels}: it looks like a qrels file (4 fields); load it with irw load qrels"]
    # a file of 4 fields that is no qrels (no iteration, no integer grade) is a run's error
    write(tmp_path / "e" / "run.txt", "1 Q0 d1 1 2.0 r\n")
    write(tmp_path / "e" / "bad.txt", "1 Q0 d1 x\n")
    with pytest.raises(IrwError, match=r"bad\.txt, line 1: expected 6 fields .* found 4$"):
        loading.load_runs(con, [str(tmp_path / "e")], replace=True)
    only = tmp_path / "only"
    write(only / "qrels.txt", QRELS_TEXT)
    with pytest.raises(IrwError, match="holds no run files, only qrels files"), pytest.warns(IrwNote):
        loading.load_runs(con, [str(only)], replace=True)
    assert run and counts(con)[0] == 2


def test_a_qrels_file_named_as_a_run_fails_saying_it_is_qrels(con, tmp_path):
    qrels = write(tmp_path / "qrels.txt", QRELS_TEXT)
    with pytest.raises(IrwError) as error:
        loading.load_runs(con, [qrels])
    assert str(error.value) == (
        f"{qrels}, line 1: expected 6 fields (topic Q0 docno rank score run_id), found 4: {qrels} "
        "looks like a qrels file (4 fields: topic, iteration, docno, grade); load it with irw load qrels")
    assert counts(con)[0] == 0
