"""Files that are not plain, in real processes: what a command killed (-9) while writing its
output leaves beside it is removed by the next irw command (files.file_beside), and process
substitution and a closed standard input are taken as the user meant."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"

# irw, killed (-9) at the moment it renames a file onto the name KILL_AT: its output is then
# complete under its temporary name beside the target.
KILLED_AT_RENAME = """
import os, sys
real = os.replace
def replace(src, dst, *args, **kwargs):
    if os.path.basename(str(dst)) == os.environ["KILL_AT"]:
        os.kill(os.getpid(), 9)
    return real(src, dst, *args, **kwargs)
os.replace = replace
sys.argv = ["irw", *sys.argv[1:]]
from irwarehouse.cli import main
main()
"""
IRW = [sys.executable, "-c", "import sys; sys.argv[0] = 'irw'; from irwarehouse.cli import main; main()"]


def _env(tmp_path: Path, **more) -> dict:
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir(exist_ok=True)
    return {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmpdir), **more}


@pytest.mark.parametrize("command, out", [
    (["publish", "{out}"], "published.duckdb"),
    (["export", "{out}"], "exported"),
    (["report", "-m", "AP", "--qrels", "fixture", "--out", "{out}"], "report.html"),
])
def test_what_a_killed_command_left_beside_its_output_goes_with_the_next_command(
        evaluated_fixtures, tmp_path, command, out):
    db = tmp_path / "w.duckdb"
    shutil.copy(evaluated_fixtures, db)
    target = tmp_path / out
    args = [a.replace("{out}", str(target)) for a in command]
    killed = subprocess.run([sys.executable, "-c", KILLED_AT_RENAME, "--db", str(db), *args],
                            env=_env(tmp_path, KILL_AT=out), capture_output=True, text=True, timeout=300)
    assert killed.returncode == -9, killed.stderr
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith(f".{out}.irw-")]
    assert len(left) == 1 and not target.exists(), sorted(p.name for p in tmp_path.iterdir())
    # a file of the same form that irw did not record is not irw's to remove
    foreign = tmp_path / f".{out}.irw-000000000000.tmp"
    foreign.write_text("not irw's")
    after = subprocess.run([*IRW, "--db", str(db), "sql", "SELECT count(*) FROM runs"], env=_env(tmp_path), capture_output=True,
                           text=True, timeout=300)
    assert after.returncode == 0, after.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["tmpdir", "w.duckdb", foreign.name])


def _bash(script: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", script], cwd=cwd, env=_env(cwd, IRW_DB=str(cwd / "w.duckdb")),
                          capture_output=True, text=True, timeout=300)


IRW_SH = shlex.join(IRW)


def test_a_closed_standard_input_is_one_line(tmp_path):
    """``-`` with standard input closed (``<&-``): one line, not a traceback."""
    qrels = FIXTURES / "qrels.txt"
    for command, status in ((f"eval {qrels} - -m AP", 1), (f"trec-eval {qrels} -", 2)):
        result = _bash(f"{IRW_SH} {command} <&-", tmp_path)
        assert result.returncode == status, result.stderr
        assert result.stderr.startswith("error: standard input is closed") and result.stderr.count("\n") == 1, \
            result.stderr


def test_process_substitution_is_read_where_a_file_is_read_once(evaluated_fixtures, tmp_path):
    """``<(...)`` names a pipe (/dev/fd/N): run metadata and a run spec's @FILE are read once
    and take it; run and qrels files, read more than once, are refused saying so."""
    shutil.copy(evaluated_fixtures, tmp_path / "w.duckdb")
    result = _bash(f"{IRW_SH} load meta <(printf 'run_id\\tteam\\nalpha1\\tpiped\\n') && "
                   f"{IRW_SH} load meta <(printf 'run_id\\tkind\\nbeta1\\tgz\\n' | gzip) && "
                   f"{IRW_SH} sql \"SELECT run_id, team, kind FROM run_meta WHERE run_id IN ('alpha1', 'beta1') "
                   "ORDER BY run_id\" --format csv", tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1:] == ["alpha1,piped,automatic", "beta1,beta,gz"]
    result = _bash(f"{IRW_SH} eval -m AP --runs @<(echo alpha1 beta1) --format csv", tmp_path)
    assert result.returncode == 0, result.stderr
    assert [line.split(",")[0] for line in result.stdout.splitlines()[1:]] == ["alpha1", "beta1"]
    result = _bash(f"{IRW_SH} load runs <(cat {FIXTURES / 'runs' / 'alpha.txt'})", tmp_path)
    assert result.returncode == 1
    assert "a named pipe (FIFO)" in result.stderr and "save the input to a file first" in result.stderr
