"""The documentation runs: every ``$ command`` transcript in README.md and docs/*.md is run on
the bundled fixtures and its output compared with the one printed.

A transcript is a ```` ```text ```` block whose lines starting with ``$ `` are commands; the
lines up to the next command are its output (stdout and stderr, as a terminal shows them).
The README runs first, in a directory holding a copy of ``fixtures/``; every guide then
continues from a copy of the directory the README's tour left (its guides say so), top to
bottom. Commands run through ``bash`` with ``irw`` of this environment and the DuckDB CLI of
the ``duckdb-cli`` package on ``PATH``; ``export NAME=VALUE`` sets a variable for the rest of
the document.

A command must reproduce its output exactly (trailing spaces aside), except those named in
:data:`NOT_EXACT` with the reason; at least 95% of the commands reproduce exactly.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# (document, command) -> why its output is not reproduced exactly. The command still runs
# (later commands may need what it does).
NOT_EXACT: dict[tuple[str, str], str] = {
    ("docs/sql-and-bi.md", "irw --wait 1 eval -m AP"):
        "shows the message while another process holds the warehouse: no process does here, "
        "and the holder's process id and command differ from run to run",
}

# What the Java virtual machine and Spark print on starting, which irw neither prints nor
# controls (stderr of `irw spark ...`): left out of the comparison.
JVM_NOISE = re.compile(r"WARNING: Using incubator modules|Setting default log level to|"
                       r"To adjust logging level use sc\.setLogLevel|\d\d/\d\d/\d\d \d\d:\d\d:\d\d WARN ")


@dataclass
class Command:
    doc: str
    line: int
    text: str
    expected: list[str]


def transcripts(path: Path) -> list[Command]:
    """The commands of one document's ``text`` blocks, with their printed output."""
    name = str(path.relative_to(ROOT))
    commands: list[Command] = []
    fence, current = None, None
    for number, line in enumerate(path.read_text().split("\n"), 1):
        if line.startswith("```"):
            fence, current = (None if fence is not None else line[3:].strip()), None
        elif fence == "text" and line.startswith("$ "):
            current = Command(name, number, line[2:], [])
            commands.append(current)
        elif current is not None:
            current.expected.append(line)
    return commands


def _clean(lines: list[str]) -> list[str]:
    lines = [line.rstrip() for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _run(command: Command, cwd: Path, env: dict) -> list[str]:
    export = re.fullmatch(r"export (\w+)=(\S+)", command.text)
    if export:
        env[export.group(1)] = export.group(2)
        return []
    done = subprocess.run(["bash", "-c", command.text], cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=600)
    return done.stdout.split("\n")


@pytest.fixture(scope="module")
def environment(duckdb_cli) -> dict:
    path = os.pathsep.join([str(Path(sys.executable).parent), str(Path(duckdb_cli).parent),
                            os.environ.get("PATH", "")])
    env = {k: v for k, v in os.environ.items() if not k.startswith("IRW_")}
    return {**env, "PATH": path, "PYTHONUNBUFFERED": "1", "COLUMNS": "100"}


def _output(command: Command, cwd: Path, env: dict) -> list[str]:
    lines = _run(command, cwd, env)
    if command.text.startswith("irw spark "):
        lines = [line for line in lines if not JVM_NOISE.match(line)]
    return _clean(lines)


def _run_document(path: Path, cwd: Path, env: dict) -> list[tuple[Command, list[str]]]:
    return [(c, _output(c, cwd, env)) for c in transcripts(path)]


@pytest.fixture(scope="module")
def outcomes(environment, tmp_path_factory) -> list[tuple[Command, list[str]]]:
    tour = tmp_path_factory.mktemp("tour")
    shutil.copytree(FIXTURES, tour / "fixtures")
    tour_env = dict(environment)
    results = _run_document(DOCS[0], tour, tour_env)

    def guide(path: Path) -> list[tuple[Command, list[str]]]:
        cwd = tmp_path_factory.mktemp(path.stem) / "work"
        shutil.copytree(tour, cwd)
        return _run_document(path, cwd, dict(tour_env))

    # each guide continues the README's tour in a copy of its own: two at a time
    with ThreadPoolExecutor(2) as pool:
        for part in pool.map(guide, DOCS[1:]):
            results += part
    return results


def test_every_transcript_reproduces(outcomes):
    wrong = []
    for command, got in outcomes:
        if (command.doc, command.text) in NOT_EXACT:
            continue
        expected = _clean(command.expected)
        if got != expected:
            diff = "\n".join(f"  - {e}" for e in expected) + "\n" + "\n".join(f"  + {g}" for g in got)
            wrong.append(f"{command.doc}:{command.line}: $ {command.text}\n{diff}")
    assert not wrong, f"{len(wrong)} transcripts differ:\n\n" + "\n\n".join(wrong)


def test_exceptions_are_few_and_named():
    commands = [(c.doc, c.text) for path in DOCS for c in transcripts(path)]
    assert len(commands) >= 100
    stale = [key for key in NOT_EXACT if key not in commands]
    assert not stale, f"NOT_EXACT names commands the documents no longer hold: {stale}"
    assert all(reason.strip() for reason in NOT_EXACT.values())
    assert len(NOT_EXACT) <= 0.05 * len(commands)


def test_guides_say_where_they_start():
    """Every guide with transcripts says they continue the README's tour."""
    for path in DOCS[1:]:
        if transcripts(path):
            assert "continue the [tour](../README.md#a-tour)" in " ".join(path.read_text().split()), path
