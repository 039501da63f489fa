"""Rendered SQL kept between processes (irwarehouse.sql.kept): a command that renders what an
earlier one rendered reads the text from the user's cache directory and does not import
Jinja2; the text is the rendering's; the cache follows the templates, irw's code and its
version, and a damaged cache is rendered again."""

from __future__ import annotations

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
    monkeypatch.setattr(sql._Kept, "entries", {})
    monkeypatch.setattr(sql._Kept, "new", {})
    return tmp_path / "cache"


def _kept_on_disk() -> dict[str, str]:
    """The renderings in the cache directory: key text -> SQL."""
    out = {}
    for path in sql.cache_dir().glob("*.sql"):
        key, _, text = path.read_text().partition("\0")
        assert path.name == sql._entry_name(key)
        out[key] = text
    return out


def test_the_second_command_renders_nothing(tmp_path):
    first, rendered = _eval_files(tmp_path)
    assert rendered and "beta1" in first
    [cache] = (tmp_path / "irwarehouse").glob("sql-*")
    assert cache.name == f"sql-{sql.fingerprint()}" and len(list(cache.glob("*.sql"))) >= 3
    second, rendered_again = _eval_files(tmp_path)
    assert second == first
    assert not rendered_again, "the second command imported Jinja2"


def test_kept_text_is_the_rendering(fresh_cache):
    measures = [parse(m) for m in ("AP", "nDCG@10", "RBP(p=0.8)", "P(rel=2)@5")]
    direct = sql._env("duckdb").get_template("stage_runs.sql").render()
    assert sql.render("stage_runs.sql") == direct
    first = rendering.render_sql(measures, topics="all", max_docs=100)
    assert sql._Kept.new
    sql._write_cache()
    assert not sql._Kept.new
    sql._Kept.entries = {}  # as a new process: read from the files
    assert rendering.render_sql(measures, topics="all", max_docs=100) == first
    assert not sql._Kept.new, "read, not rendered"
    assert rendering.render_sql(measures[:2], topics="all", max_docs=100) != first
    assert rendering.render_sql(measures, topics="qrels", max_docs=100) != first
    saved = _kept_on_disk()
    assert first in saved.values()
    assert len(sql._Kept.new) == 2  # the two renderings since are not written yet
    sql._write_cache()
    now = _kept_on_disk()
    assert len(set(now) - set(saved)) == 2
    assert all(now[key] == text for key, text in sql._Kept.entries.items())


def test_the_cache_keeps_the_latest_renderings(fresh_cache, monkeypatch):
    monkeypatch.setattr(sql, "CACHE_ENTRIES", 3)
    for i in range(5):
        sql.kept(("n", i), lambda: f"SELECT {i}")
        sql._write_cache()
    assert sorted(_kept_on_disk().values()) == ["SELECT 2", "SELECT 3", "SELECT 4"]


def test_a_key_of_other_values_is_not_kept(fresh_cache):
    calls = []
    assert sql.kept(("x", object()), lambda: calls.append(1) or "SELECT 1") == "SELECT 1"
    assert sql.kept(("x", object()), lambda: calls.append(1) or "SELECT 1") == "SELECT 1"
    assert calls == [1, 1] and not sql._Kept.new
    assert sql.kept(("x", [1, "a", None, {"b": 2.5}]), lambda: calls.append(2) or "SELECT 2") == "SELECT 2"
    assert sql.kept(("x", [1, "a", None, {"b": 2.5}]), lambda: calls.append(2) or "no") == "SELECT 2"
    assert sql.kept(("x", [1.0, "a", None, {"b": 2.5}]), lambda: "SELECT 3") == "SELECT 3"  # 1.0 is not 1


def _fingerprints_anew() -> None:
    """Forget the fingerprints this process computed (as a new process)."""
    sql._fingerprints.clear()
    sql._digests.clear()


def test_the_cache_follows_templates_code_and_version(tmp_path, monkeypatch):
    import shutil

    copy = tmp_path / "sql"
    shutil.copytree(sql.sql_dir(), copy)
    monkeypatch.setattr(sql, "sql_dir", lambda: copy)
    before = sql.fingerprint()
    with open(copy / "measures" / "AP.sql", "a") as f:
        f.write("\n")
    _fingerprints_anew()
    changed = sql.fingerprint()
    assert changed != before
    monkeypatch.setattr(sql, "__version__", "0.0.0-other")
    _fingerprints_anew()
    assert sql.fingerprint() not in (before, changed)
    monkeypatch.undo()
    _fingerprints_anew()
    package = Path(sql.__file__).parent
    here = sql.fingerprint()
    stamp = package / "engine" / "rendering.py"
    info = stamp.stat()
    try:
        import os

        os.utime(stamp, ns=(info.st_atime_ns, info.st_mtime_ns + 1000))
        _fingerprints_anew()
        assert sql.fingerprint() != here  # the code that builds the contexts changed
    finally:
        os.utime(stamp, ns=(info.st_atime_ns, info.st_mtime_ns))
        _fingerprints_anew()


def test_a_damaged_cache_is_rendered_again(fresh_cache):
    key = repr(("statement", "load.sql", "staged_run_ids", (), {}, "duckdb"))
    path = sql.cache_dir() / sql._entry_name(key)
    path.parent.mkdir(parents=True)
    for damaged in ("SELECT 'no key'", f"{key}\0", "other key\0SELECT 'another'", b"\xff\xfe"):
        path.write_bytes(damaged if isinstance(damaged, bytes) else damaged.encode())
        sql._Kept.entries = {}
        assert sql.statement("load.sql", "staged_run_ids").startswith("SELECT DISTINCT"), damaged
    path.write_text(f"{key}\0SELECT 'kept'")
    sql._Kept.entries = {}
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
    [cache] = (tmp_path / "cache" / "irwarehouse").glob("sql-*")
    assert len(list(cache.glob("*.sql"))) >= 2
    root = tmp_path / "tmp" / f"irw-{os.getuid()}"
    assert not root.exists() or list(root.iterdir()) == []
