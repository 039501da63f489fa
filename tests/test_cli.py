"""The `irw` command line on the bundled fixtures, driven as a user would."""

from __future__ import annotations

import csv
import io
import json

import duckdb
import pytest

from irwarehouse.measures import CATALOGUE

from conftest import FIXTURES


@pytest.fixture()
def loaded(cli):
    cli("load", "qrels", FIXTURES / "qrels.txt", "--name", "fixture")
    cli("load", "runs", FIXTURES / "runs", "--meta", FIXTURES / "runs.tsv")
    return cli


def test_eval_formats(loaded):
    table = loaded("eval", "-m", "AP", "-m", "P@10", "-m", "RBP(p=0.8)").stdout
    assert table.splitlines()[0].split() == ["run_id", "n_topics", "AP", "P@10", "RBP(p=0.8)"]
    assert len(table.splitlines()) == 2 + 8
    records = json.loads(loaded("eval", "-m", "AP", "--format", "json").stdout)
    assert {r["run_id"] for r in records} == {"alpha1", "alpha2", "beta1", "beta2", "gamma1",
                                              "gamma2", "delta1", "delta2"}
    # each record names the ranking order of its run and the tie policy of its score
    assert set(records[0]) == {"run_id", "measure", "value", "n_topics", "ranking_policy", "ties"}
    assert {(r["ranking_policy"], r["ties"]) for r in records} == {("trec_eval", "trec_eval")}
    assert all(r["n_topics"] == 5 for r in records)  # topic 106 has no relevant document
    per = json.loads(loaded("eval", "-m", "AP", "--per-topic", "--runs", "delta2", "--format", "json").stdout)
    assert set(per[0]) == {"run_id", "topic", "measure", "value", "ranking_policy", "ties"}
    assert [r["topic"] for r in per] == ["101", "102", "103", "104", "105"]
    assert [r["value"] for r in per if r["topic"] == "104"] == [0.0]  # delta2 lacks topic 104
    rows = list(csv.DictReader(io.StringIO(loaded("eval", "-m", "AP", "--format", "csv").stdout)))
    assert rows[0].keys() == {"run_id", "measure", "value", "n_topics"}
    mean = sum(r["value"] for r in per) / len(per)
    assert float(next(r for r in rows if r["run_id"] == "delta2")["value"]) == pytest.approx(mean)


def test_trec_format_matches_trec_eval_layout(loaded):
    out = loaded("eval", "-m", "AP", "-m", "P@5", "--per-topic", "--format", "trec",
                 "--runs", "alpha1", "--topics", "run").stdout.splitlines()
    assert out[0].split("\t") == ["runid                 ", "all", "alpha1"]
    fields = [line.split("\t") for line in out[1:]]
    assert [f[1] for f in fields[:2]] == ["101", "101"]
    assert fields[-1][1] == "all" and fields[-1][0].strip() == "P@5"
    assert all(len(f[2].split(".")[1]) == 4 for f in fields)


def test_scores_are_stored_and_queryable(loaded):
    loaded("eval", "-m", "AP", "-m", "nDCG@10")
    out = json.loads(loaded("sql", "SELECT measure, count(*) AS n FROM scores GROUP BY ALL ORDER BY 1",
                            "--format", "json").stdout)
    assert out == [{"measure": "AP", "n": 40}, {"measure": "nDCG@10", "n": 40}]
    # re-evaluating replaces, never duplicates
    loaded("eval", "-m", "AP", "--runs", "alpha1")
    assert json.loads(loaded("sql", "SELECT count(*) AS n FROM scores WHERE measure = 'AP'",
                             "--format", "json").stdout) == [{"n": 40}]


def test_sql_is_read_only_unless_asked(loaded):
    result = loaded("sql", "DELETE FROM runs", ok=False)
    assert result.exit_code == 1 and "read-only" in result.stderr.lower()
    loaded("sql", "CREATE TABLE notes AS SELECT 1 AS x", "--write")
    assert json.loads(loaded("sql", "SELECT * FROM notes", "--format", "json").stdout) == [{"x": 1}]


def test_errors_are_clean(loaded):
    for args, text in [(("eval", "-m", "Nope"), "unknown measure"),
                       (("eval", "-m", "AP", "--qrels", "x"), "unknown qrels 'x'; known: fixture"),
                       (("eval", "-m", "AP", "--runs", "team:omega"), "unknown team 'omega'; teams: alpha"),
                       (("eval", "-m", "AP", "--format", "xml"), "unknown format"),
                       (("load", "runs", "/no/such/file"), "no such file")]:
        result = loaded(*args, ok=False)
        assert result.exit_code == 1, args
        assert result.stderr.startswith("error: ") and text in result.stderr, result.stderr
        assert "Traceback" not in result.output


def test_run_specs(loaded):
    def runs(spec):
        return sorted({r["run_id"] for r in json.loads(
            loaded("eval", "-m", "AP", "--runs", spec, "--format", "json", "--no-store").stdout)})
    assert runs("team:delta") == ["delta1", "delta2"]
    assert runs("pooled") == ["alpha1", "alpha2", "beta1", "beta2", "delta2", "gamma1"]
    assert runs("alpha1,gamma2") == ["alpha1", "gamma2"]


def test_run_list_file(loaded, tmp_path):
    path = tmp_path / "list.txt"
    path.write_text("beta1\nbeta2\n")
    records = json.loads(loaded("eval", "-m", "AP", "--runs", f"@{path}", "--format", "json").stdout)
    assert sorted(r["run_id"] for r in records) == ["beta1", "beta2"]


def test_runs_drop(loaded):
    def means(spec="all"):
        rows = json.loads(loaded("eval", "-m", "AP", "-m", "nDCG@5", "--runs", spec, "--format", "json").stdout)
        return {(r["run_id"], r["measure"]): r["value"] for r in rows}

    before = means()  # also materializes the base
    out = loaded("runs", "drop", "team:delta,beta1")
    assert "dropped 3 run(s): delta1, delta2, beta1" in out.stdout + out.stderr
    left = {r["run_id"] for r in json.loads(loaded("runs", "list", "--format", "json").stdout)}
    assert left == {"alpha1", "alpha2", "beta2", "gamma1", "gamma2"}
    counts = json.loads(loaded("sql", "SELECT (SELECT count(*) FROM scores WHERE run_id LIKE 'delta%') AS s, "
                               "(SELECT count(*) FROM irw_base WHERE run_id = 'beta1') AS b, "
                               "(SELECT count(*) FROM run_meta WHERE run_id = 'beta1') AS m", "--format", "json").stdout)
    assert counts == [{"s": 0, "b": 0, "m": 1}]
    assert means() == {k: v for k, v in before.items() if k[0] in left}
    assert "unknown run" in loaded("runs", "drop", "delta1", ok=False).stderr
    loaded("load", "runs", FIXTURES / "runs" / "delta.txt")  # loads again, with its metadata
    assert means("delta1,delta2") == {k: v for k, v in before.items() if k[0].startswith("delta")}


def test_catalogue_and_lists(loaded):
    cat = json.loads(loaded("measures", "--format", "json").stdout)
    names = [m["name"] for m in cat]
    assert "AP@k" in names and "RPrec" in names and "Q@k" in names
    runs = json.loads(loaded("runs", "list", "--format", "json").stdout)
    assert len(runs) == 8 and {r["team"] for r in runs} == {"alpha", "beta", "gamma", "delta"}
    qrels = json.loads(loaded("qrels", "list", "--format", "json").stdout)
    assert qrels[0]["qrels"] == "fixture" and qrels[0]["topics"] == 6


def test_database_works_without_the_package(loaded):
    loaded("eval", "-m", "AP")
    con = duckdb.connect(loaded.db_path, read_only=True)
    assert con.execute("SELECT count(*) FROM run_info WHERE pooled").fetchone()[0] == 6
    assert con.execute("SELECT count(*) FROM topic_sets WHERE qrels = 'fixture'").fetchone()[0] == 5
    assert con.execute("SELECT count(*) FROM score_means WHERE measure = 'AP'").fetchone()[0] == 8
    assert con.execute("SELECT count(*) FROM judged_ranking('fixture')").fetchone()[0] > 0
    unjudged = con.execute("SELECT count(*) FROM ranking('fixture') WHERE grade IS NULL").fetchone()[0]
    assert unjudged > 0
    assert con.execute("SELECT count(*) FROM measures").fetchone()[0] == len(CATALOGUE)


def _command_paths(command, prefix=()):
    yield prefix
    for name, sub in getattr(command, "commands", {}).items():
        yield from _command_paths(sub, prefix + (name,))


def test_version_and_help_without_type_tags(cli):
    import typer

    from irwarehouse import __version__
    from irwarehouse.cli import app

    assert cli("--version").stdout.strip() == f"irw {__version__}"
    paths = list(_command_paths(typer.main.get_command(app)))
    assert len(paths) > 30
    for path in paths:
        text = cli(*path, "--help").stdout
        for tag in ("<bool>", "<str>", "<int>", "<float>", "<list", "{"):
            assert tag not in text, (path, tag)
    runs_help = cli("load", "runs", "--help").stdout
    assert "PATHS..." in runs_help and "--order ORDER" in " ".join(runs_help.split())
    assert "gm_trec" in cli("eval", "--help").stdout


def test_small_things_say_what_is_wrong(loaded, tmp_path, monkeypatch):
    result = loaded("load", "runs", "--replace", "true", FIXTURES / "runs" / "alpha.txt", ok=False)
    assert result.stderr == "error: true: no such file (options such as --replace are flags: they take no value)\n"
    result = loaded("load", "runs", FIXTURES / "runs" / "alpha.txt", ok=False)
    assert result.stderr == (f"error: run(s) already loaded: alpha1 (in {FIXTURES}/runs/alpha.txt); "
                             f"alpha2 (in {FIXTURES}/runs/alpha.txt); use --replace to replace them\n")
    (tmp_path / "q0").write_text("101 0 d1 0\n101 0 d2 0\n")
    loaded("load", "qrels", tmp_path / "q0", "--name", "q0")
    result = loaded("eval", "-m", "AP", "--qrels", "q0")
    assert result.stdout == "(no rows)\n"
    assert result.stderr.startswith("no rows: qrels q0 has no relevant document (grade >= 1), so the "
                                    "default topic set, the topics with a relevant document, is empty")
    assert "AP" in loaded("eval", "-m", "AP", "--qrels", "q0", "--topics", "all").stdout
    from irwarehouse.engine import loading

    monkeypatch.setattr(loading, "load_meta", lambda *a: (_ for _ in ()).throw(ValueError("boom\nmore")))
    result = loaded("load", "meta", FIXTURES / "runs.tsv", ok=False)
    assert result.exit_code == 1 and result.stderr.startswith("error: unexpected ValueError: boom\n")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output


def test_a_database_that_is_not_a_warehouse_is_refused_and_left_alone(tmp_path):
    from conftest import cli_for
    from irwarehouse import connection, schema

    other = str(tmp_path / "other.duckdb")
    con = duckdb.connect(other)
    con.execute("CREATE TABLE r (x INTEGER)")
    con.close()
    for args in (("runs", "list"), ("load", "runs", FIXTURES / "runs" / "alpha.txt")):
        result = cli_for(other)(*args, ok=False)
        assert result.stderr == (f"error: {other} is a DuckDB database but not an irw warehouse "
                                 "(it holds r); choose another --db\n")
    con = duckdb.connect(other)
    assert con.execute("SELECT table_name FROM information_schema.tables").fetchall() == [("r",)]
    con.close()
    newer = str(tmp_path / "newer.duckdb")
    schema.connect(newer).close()
    con = duckdb.connect(newer)
    con.execute("UPDATE irw_meta SET value = '99' WHERE key = 'schema_version'")
    con.close()
    result = cli_for(newer)("runs", "list", ok=False)
    assert result.stderr == (f"error: {newer} was written by a newer irwarehouse (warehouse schema "
                             f"version 99; this one reads up to {connection.SCHEMA_VERSION}): upgrade irwarehouse\n")
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")
    result = cli_for(str(text))("runs", "list", ok=False)
    assert result.stderr == f"error: {text} is not a DuckDB database, so not an irw warehouse: choose another --db\n"


def test_each_command_word_loads_the_modules_that_register_it():
    """`irw WORD ...` imports only the command modules listed for WORD (cli.COMMANDS): read
    from the source, every module that registers a command under WORD is listed, and every
    word of the application is."""
    import ast
    from pathlib import Path

    from irwarehouse import cli

    folder = Path(cli.__file__).parent
    top: dict[str, str] = {"app": ""}  # a typer group's variable -> its first word ('' = irw itself)
    registers: dict[str, set[str]] = {}  # first word -> the modules registering under it
    calls = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and (isinstance(node.func, ast.Name) or (
                    isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name))):
                calls.append((path.stem, node))
    for _ in range(3):  # groups added to groups: resolved outwards
        for module, node in calls:
            if isinstance(node.func, ast.Attribute) and node.func.attr == "add_typer":
                parent = node.func.value.id
                name = next(k.value.value for k in node.keywords if k.arg == "name")
                child = node.args[0].id
                if parent in top:
                    top[child] = name if top[parent] == "" else top[parent]
    for module, node in calls:
        if isinstance(node.func, ast.Name) and node.func.id == "command":
            groups = [node.args[0].id] + [a.elts[0].id for k in node.keywords if k.arg == "aliases"
                                          for a in k.value.elts]
            for group in groups:
                word = top[group] or node.args[1].value
                registers.setdefault(word, set()).add(module)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "command" and node.func.value.id in top:
            word = top[node.func.value.id] or node.args[0].value  # @app.command("trec-eval")
            registers.setdefault(word, set()).add(module)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "add_typer":
            word = top[node.args[0].id]
            registers.setdefault(word, set())
    assert {w: set(m) for w, m in cli.COMMANDS.items()} == registers
    assert cli.command_word(["--db", "x.duckdb", "--wait=3", "eval", "-m", "AP"]) == "eval"
    assert cli.command_word(["--version"]) is None
