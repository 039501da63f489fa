"""Rendered SQL kept between processes (irwarehouse.sql.kept): a command that renders what an
earlier one rendered reads the text from the user's cache directory and does not import
Jinja2; the text is the rendering's; the cache follows the templates, irw's code and its
version, and a damaged cache is rendered again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES
from irwarehouse import sql
from irwarehouse.engine import rendering
from irwarehouse.measures import parse

# irw eval QRELS RUN in a fresh interpreter; prints whether Jinja2 was imported, last
SCRIPT = """
import os, sys
leave = os._exit
def report(code):
    print("jinja2" in sys.modules)
    sys.stdout.flush()
    leave(code)
os._exit = report
sys.argv = ["irw", "eval", %r, %r, "-m", "AP", "-m", "nDCG@10", "-m", "RR"]
from irwarehouse.cli import main
main()
""" % (str(FIXTURES / "qrels.txt"), str(FIXTURES / "runs" / "beta1.txt"))


def _eval_files(cache: Path) -> tuple[str, bool]:
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env={**env, "XDG_CACHE_HOME": str(cache)},
                          cwd=cache, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    *table, jinja = proc.stdout.strip().splitlines()
    return "\n".join(table), jinja == "True"


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """This process's renderings read anew from an empty cache directory."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(sql._Kept, "entries", None)
    monkeypatch.setattr(sql._Kept, "path", None)
    monkeypatch.setattr(sql._Kept, "added", False)
    return tmp_path / "cache"


def test_the_second_command_renders_nothing(tmp_path):
    first, rendered = _eval_files(tmp_path)
    assert rendered and "beta1" in first
    [cache] = (tmp_path / "irwarehouse").glob("sql-*.json")
    assert cache.name == f"sql-{sql.fingerprint()}.json"
    second, rendered_again = _eval_files(tmp_path)
    assert second == first
    assert not rendered_again, "the second command imported Jinja2"


def test_kept_text_is_the_rendering(fresh_cache):
    measures = [parse(m) for m in ("AP", "nDCG@10", "RBP(p=0.8)", "P(rel=2)@5")]
    direct = sql._env("duckdb").get_template("stage_runs.sql").render()
    assert sql.render("stage_runs.sql") == direct
    first = rendering.render_sql(measures, topics="all", max_docs=100)
    assert sql._Kept.added
    sql._write_cache()
    sql._Kept.entries = None  # as a new process: read from the file
    assert rendering.render_sql(measures, topics="all", max_docs=100) == first
    assert rendering.render_sql(measures[:2], topics="all", max_docs=100) != first
    assert rendering.render_sql(measures, topics="qrels", max_docs=100) != first
    saved = json.loads(sql.cache_file().read_text())
    assert set(saved) < set(sql._Kept.entries)  # the two renderings since are not written yet
    sql._write_cache()
    assert json.loads(sql.cache_file().read_text()) == sql._Kept.entries


def test_a_key_of_other_values_is_not_kept(fresh_cache):
    calls = []
    assert sql.kept(("x", object()), lambda: calls.append(1) or "SELECT 1") == "SELECT 1"
    assert sql.kept(("x", object()), lambda: calls.append(1) or "SELECT 1") == "SELECT 1"
    assert calls == [1, 1] and not sql._Kept.added
    assert sql.kept(("x", [1, "a", None, {"b": 2.5}]), lambda: calls.append(2) or "SELECT 2") == "SELECT 2"
    assert sql.kept(("x", [1, "a", None, {"b": 2.5}]), lambda: calls.append(2) or "no") == "SELECT 2"
    assert sql.kept(("x", [1.0, "a", None, {"b": 2.5}]), lambda: "SELECT 3") == "SELECT 3"  # 1.0 is not 1


def test_the_cache_follows_templates_code_and_version(tmp_path, monkeypatch):
    import shutil

    copy = tmp_path / "sql"
    shutil.copytree(sql.sql_dir(), copy)
    monkeypatch.setattr(sql, "sql_dir", lambda: copy)
    before = sql.fingerprint()
    with open(copy / "measures" / "AP.sql", "a") as f:
        f.write("\n")
    sql._fingerprints.clear()
    changed = sql.fingerprint()
    assert changed != before
    monkeypatch.setattr(sql, "__version__", "0.0.0-other")
    sql._fingerprints.clear()
    assert sql.fingerprint() not in (before, changed)
    monkeypatch.undo()
    sql._fingerprints.clear()
    package = Path(sql.__file__).parent
    here = sql.fingerprint()
    stamp = package / "engine" / "rendering.py"
    info = stamp.stat()
    try:
        import os

        os.utime(stamp, ns=(info.st_atime_ns, info.st_mtime_ns + 1000))
        sql._fingerprints.clear()
        assert sql.fingerprint() != here  # the code that builds the contexts changed
    finally:
        os.utime(stamp, ns=(info.st_atime_ns, info.st_mtime_ns))
        sql._fingerprints.clear()


def test_a_damaged_cache_is_rendered_again(fresh_cache):
    path = sql.cache_file()
    path.parent.mkdir(parents=True)
    key = ("statement", "load.sql", "staged_run_ids", (), {}, "duckdb")
    for damaged in ("{not json", json.dumps([1, 2]), json.dumps({repr(key): 3})):
        path.write_text(damaged)
        sql._Kept.entries = None
        assert sql.statement("load.sql", "staged_run_ids").startswith("SELECT")
    path.write_text(json.dumps({repr(key): "SELECT 'kept'"}))
    sql._Kept.entries = None
    assert sql.statement("load.sql", "staged_run_ids") == "SELECT 'kept'"  # read, not rendered


def test_the_cache_written_at_exit_leaves_no_temporary_directory(tmp_path):
    """The cache is written when the process ends, through the one file guard, which
    records the name it writes to in the process's temporary directory: that directory is
    removed after the cache is written, also where nothing else made one."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(XDG_CACHE_HOME=str(tmp_path / "cache"), TMPDIR=str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    script = ("from irwarehouse.engine import rendering; from irwarehouse.measures import parse; "
              "rendering.render_sql([parse('AP'), parse('P@7')])")
    proc = subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert len(list((tmp_path / "cache" / "irwarehouse").glob("sql-*.json"))) == 1
    root = tmp_path / "tmp" / f"irw-{os.getuid()}"
    assert not root.exists() or list(root.iterdir()) == []
