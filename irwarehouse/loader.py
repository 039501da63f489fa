"""Loading runs, qrels and run metadata.

The bulk work happens inside DuckDB (``sql/stage_lines.sql``: read, split, cast), so a
whole TREC archive loads in seconds. Every load is one transaction: lines are staged,
checked, and only then moved into the public tables; any problem raises an
:class:`IrwError` naming the file, the line and the problem, and nothing is loaded.
Line numbers are found by re-reading the offending file in Python, only on that error path.
"""

from __future__ import annotations

import contextlib
import csv
import glob
import gzip
import math
import os
import sys
from pathlib import Path
from typing import Iterable

import duckdb

from . import db, state
from .errors import IrwError

# Ranking policies (SPEC section 1), defined in sql/_ranking.sql.
POLICIES = ("trec_eval", "given", "score_then_rank")

BATCH = 16  # files per DuckDB read: large enough to parallelise, small enough for progress

RUN_COLUMNS = [("topic", 1, None), ("docno", 3, None), ("run_id", 6, None),
               ("given_rank", 4, "BIGINT"), ("score", 5, "DOUBLE")]
QRELS_COLUMNS = [("topic", 1, None), ("docno", 3, None), ("rel", 4, "INTEGER")]


def expand_paths(patterns: Iterable[str]) -> list[str]:
    """Files named directly, by glob, or as directories (their non-hidden files)."""
    files: list[str] = []
    for pattern in patterns:
        if os.path.isdir(pattern):
            found = sorted(str(p) for p in Path(pattern).rglob("*")
                           if p.is_file() and not p.name.startswith("."))
            if not found:
                raise IrwError(f"{pattern}: the directory holds no files")
        elif any(ch in pattern for ch in "*?["):
            found = sorted(p for p in glob.glob(pattern) if os.path.isfile(p))
            if not found:
                raise IrwError(f"{pattern}: no file matches this pattern")
        else:
            if not os.path.exists(pattern):
                raise IrwError(f"{pattern}: no such file")
            if not os.path.isfile(pattern):
                raise IrwError(f"{pattern}: not a regular file")
            found = [pattern]
        for f in found:
            if f not in files:
                files.append(f)
    if not files:
        raise IrwError("no input files given")
    for f in files:
        if not os.access(f, os.R_OK):
            raise IrwError(f"{f}: cannot read the file (permission denied)")
    return files


def _open_text(path: str):
    with open(path, "rb") as fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, "rt", encoding="utf-8", errors="replace")


def _lines(path: str):
    """(line number, fields) for every non-blank line, split on any run of whitespace."""
    with _open_text(path) as fh:
        for number, line in enumerate(fh, start=1):
            fields = line.split()
            if fields:
                yield number, fields


def _delimiter(path: str, nfields: int) -> str | None:
    """The delimiter of a file whose first line has ``nfields`` fields separated by single
    tabs or by single spaces (no other whitespace): such files take the fast path of
    :func:`_stage`. None otherwise, or when the file cannot be read here."""
    try:
        with _open_text(path) as fh:
            line = next((text for text in fh if text.strip()), "")
    except (OSError, EOFError, UnicodeError):
        return None
    line = line.rstrip("\r\n")
    for delim, other in (("\t", " "), (" ", "\t")):
        fields = line.split(delim)
        if len(fields) == nfields and all(fields) and not any(other in f or "\r" in f for f in fields):
            return delim
    return None


def _stage(con, target: str, files: list[str], nfields: int, columns, progress) -> None:
    """Read and split ``files`` into the temporary table ``target``. Files separated by single
    tabs or spaces are read by DuckDB's CSV reader (sql/stage_delimited.sql); the others, and
    all of them again if that reader meets a line it cannot stand for, are split on any
    whitespace (sql/stage_lines.sql). Runs outside a transaction: a failed fast read leaves
    the warehouse untouched."""
    shown = 0

    def tick(n: int) -> None:  # a fall-back re-read does not advance the bar past the end
        nonlocal shown
        n = min(n, len(files) - shown)
        if progress and n > 0:
            shown += n
            progress(n)

    step = BATCH if progress else max(len(files), 1)
    by_delim: dict[str | None, list[str]] = {}
    for f in files:
        by_delim.setdefault(_delimiter(f, nfields), []).append(f)
    general = by_delim.pop(None, [])
    try:
        for delim, group in by_delim.items():
            _stage_batches(con, "stage_delimited.sql", target, group, nfields, columns, step,
                           tick, {"delim": delim, "other": " " if delim == "\t" else "\t"})
        fast = con.execute(f"SELECT 1 FROM {target} WHERE nf < 0 LIMIT 1").fetchone() is None
    except duckdb.Error:
        fast = False
    if not fast:
        con.execute(f"DELETE FROM {target}")
        general = files
    _stage_batches(con, "stage_lines.sql", target, general, nfields, columns, step, tick, {},
                   report=True)


def _stage_batches(con, template: str, target: str, files: list[str], nfields: int, columns,
                   step: int, tick, params: dict, report: bool = False) -> None:
    """Run a staging template over ``files``, ``step`` files per statement (all of them in one
    when no progress bar is shown: DuckDB reads the files in parallel). ``report``: a read
    error becomes an IrwError naming the files."""
    for start in range(0, len(files), step):
        batch = files[start:start + step]
        try:
            db.run_script(con, template, {"files": batch, **params}, target=target,
                          nfields=nfields, columns=columns)
        except duckdb.Error as exc:
            if not report:
                raise
            raise IrwError(f"cannot read {', '.join(batch)}: {exc}") from exc
        tick(len(batch))


def _progress_bar(files: list[str], label: str, phases: int = 0):
    """A progress bar on a terminal (stderr), nothing otherwise: one step per file read, and
    one per later phase of the load (see _phase)."""
    import typer

    if len(files) < 2 or not sys.stderr.isatty():
        return contextlib.nullcontext(None)
    return typer.progressbar(length=len(files) + phases, label=label, file=sys.stderr)


def _phase(bar, label: str, advance: bool = True) -> None:
    """Show the next phase's name; ``advance``: the previous phase (not the reading) is done."""
    if bar is not None:
        bar.label = label
        bar.update(1 if advance else 0)


# ---------------------------------------------------------------------------- runs

def _run_line_problem(fields: list[str], extra_ok: bool) -> str | None:
    if len(fields) < 6 or (len(fields) > 6 and not extra_ok):
        return (f"expected 6 fields (topic Q0 docno rank score run_id), found {len(fields)}"
                + ("" if len(fields) < 6 else "; use --ignore-extra-fields to ignore trailing text as trec_eval does"))
    try:
        int(fields[3])
    except ValueError:
        return f"rank {fields[3]!r} is not an integer"
    try:
        score = float(fields[4])
    except ValueError:
        return f"score {fields[4]!r} is not a number"
    if not math.isfinite(score):
        return f"score {fields[4]!r} is not a finite number"
    return None


def _locate_problem(files: list[str], line_problem, key, twice) -> str:
    """The first bad line of ``files``: ``line_problem(fields)`` names what is wrong with a
    line; a repeated ``key(fields)`` is reported by ``twice(fields)``. Empty if none found."""
    seen: dict[tuple, tuple[str, int]] = {}
    for path in files:
        for number, fields in _lines(path):
            problem = line_problem(fields)
            if problem:
                return f"{path}, line {number}: {problem}"
            k = key(fields)
            if k in seen:
                first_path, first_line = seen[k]
                return f"{path}, line {number}: {twice(fields)} (first at {first_path}, line {first_line})"
            seen[k] = (path, number)
    return ""


def _locate_run_problem(files: list[str], extra_ok: bool) -> str:
    return _locate_problem(
        files, lambda f: _run_line_problem(f, extra_ok), lambda f: (f[5], f[0], f[2]),
        lambda f: f"document {f[2]} appears twice for run {f[5]}, topic {f[0]}")


def load_runs(con, patterns: Iterable[str], policy: str = "trec_eval", replace: bool = False,
              meta: str | None = None, extra_fields: bool = False, final=None) -> dict:
    """Load run files; returns a summary {runs, lines, files, replaced, refreshed}.

    The files are read, checked and ranked in temporary tables of ``con``, and moved into
    the warehouse in one final transaction. ``con`` is the warehouse's connection -- or,
    with ``final``, a staging connection and ``final()`` a context manager that attaches the
    warehouse to it (db.Staging.attach): the warehouse is then locked only for the final
    transaction, and readers can use it while the files are read."""
    if policy not in POLICIES:
        raise IrwError(f"unknown ranking policy {policy!r}; valid: {', '.join(POLICIES)}")
    files = expand_paths(patterns)
    con.execute("CREATE OR REPLACE TEMP TABLE irw_staged (filename VARCHAR, nf INTEGER, "
                "topic VARCHAR, docno VARCHAR, run_id VARCHAR, given_rank BIGINT, score DOUBLE)")
    try:
        with _progress_bar(files, "reading runs", phases=3) as bar:
            _stage(con, "irw_staged", files, 6, RUN_COLUMNS, bar.update if bar else None)
            _phase(bar, "checking", advance=False)
            _check_runs(con, files, extra_fields)
            _phase(bar, "ranking")
            db.run_script(con, "rank_runs.sql", policy=policy)
            db.run_script(con, "run_parts_staged.sql", {"policy": policy, "ids": _staged_run_ids(con)})
            _phase(bar, "writing to the warehouse")
            with final() if final else contextlib.nullcontext():
                with db.transaction(con):
                    summary = _insert_runs(con, files, policy, replace)
                    if meta:
                        summary["meta"] = _load_meta(con, meta)
            _phase(bar, "done")
    finally:
        for table in ("irw_staged", "irw_staged_topics", "irw_ranked", "irw_staged_parts"):
            con.execute(f"DROP TABLE IF EXISTS temp.{table}")
    return summary


def _check_runs(con, files: list[str], extra_fields: bool) -> None:
    bad_fields = "nf < 6" if extra_fields else "nf <> 6"
    bad = con.execute(
        f"SELECT filename FROM irw_staged WHERE {bad_fields} OR given_rank IS NULL "
        "OR score IS NULL OR isnan(score) OR isinf(score) LIMIT 1").fetchone()
    if bad is None:
        # ranking lengths, and duplicates: a docno twice in a (run, topic)
        con.execute("CREATE TEMP TABLE irw_staged_topics AS SELECT run_id, topic, "
                    "count(*)::INTEGER AS n_docs, count(DISTINCT docno)::INTEGER AS n_distinct, "
                    "any_value(filename) AS filename FROM irw_staged GROUP BY run_id, topic")
        bad = con.execute("SELECT filename FROM irw_staged_topics WHERE n_docs <> n_distinct "
                          "LIMIT 1").fetchone()
    if bad is not None:
        where = _locate_run_problem(files, extra_fields)
        raise IrwError(where or f"{bad[0]}: malformed run data")
    if con.execute("SELECT count(*) FROM irw_staged").fetchone()[0] == 0:
        raise IrwError(f"{', '.join(files)}: no run lines found")


def _staged_run_ids(con) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT DISTINCT run_id FROM irw_staged_topics ORDER BY run_id").fetchall()]


def _insert_runs(con, files: list[str], policy: str, replace: bool) -> dict:
    run_ids = _staged_run_ids(con)
    existing = [r[0] for r in con.execute(
        "SELECT run_id FROM run_loads WHERE list_contains($ids, run_id) ORDER BY run_id",
        {"ids": run_ids}).fetchall()]
    if existing and not replace:
        raise IrwError(f"run(s) already loaded: {', '.join(existing)}; use --replace to replace them")
    _delete_runs(con, existing, scores=False)
    db.run_script(con, "load_runs.sql", {"policy": policy})
    db.update_bases(con, run_ids)
    state.record_runs(con, run_ids, parts="irw_staged_parts")
    # the scores stored for replaced runs are recomputed, not dropped: they stay current
    refreshed = state.refresh_scores(con, run_ids=existing) if existing else 0
    lines = con.execute("SELECT count(*) FROM irw_staged").fetchone()[0]
    return {"runs": run_ids, "lines": lines, "files": len(files), "replaced": existing,
            "refreshed": refreshed}


def _delete_runs(con, run_ids: list[str], scores: bool = True) -> None:
    """Remove runs' rankings, loading records and (with ``scores``) scores; their metadata
    stays."""
    if run_ids:
        for table in ("runs", "run_topics", "run_loads") + (("scores",) if scores else ()):
            con.execute(f"DELETE FROM {table} WHERE list_contains($ids, run_id)", {"ids": run_ids})


def drop_runs(con, run_ids: list[str]) -> None:
    """Remove runs with their scores and their rows of the materialized bases. Their metadata
    (run_meta) stays, for a later load of the same run ids."""
    with db.transaction(con):
        _delete_runs(con, list(run_ids))
        db.update_bases(con, list(run_ids))
        state.record_runs(con, list(run_ids))


# ---------------------------------------------------------------------------- qrels

def _qrels_line_problem(fields: list[str]) -> str | None:
    if len(fields) != 4:
        return f"expected 4 fields (topic iteration docno rel), found {len(fields)}"
    try:
        int(fields[3])
    except ValueError:
        return f"relevance {fields[3]!r} is not an integer"
    return None


def _locate_qrels_problem(files: list[str]) -> str:
    return _locate_problem(files, _qrels_line_problem, lambda f: (f[0], f[2]),
                           lambda f: f"document {f[2]} is judged twice for topic {f[0]}")


def load_qrels(con, patterns: Iterable[str], name: str, replace: bool = False,
               description: str | None = None, final=None) -> dict:
    """Load qrels files under ``name``; ``con`` and ``final`` as for :func:`load_runs`."""
    files = expand_paths(patterns)
    if not name or not name.strip():
        raise IrwError("a qrels needs a name (--name)")
    con.execute("CREATE OR REPLACE TEMP TABLE irw_staged_qrels (filename VARCHAR, nf INTEGER, "
                "topic VARCHAR, docno VARCHAR, rel INTEGER)")
    try:
        _stage(con, "irw_staged_qrels", files, 4, QRELS_COLUMNS, None)
        bad = con.execute("SELECT filename FROM irw_staged_qrels WHERE nf <> 4 OR rel IS NULL "
                          "LIMIT 1").fetchone()
        if bad is None:
            bad = con.execute("SELECT any_value(filename) FROM irw_staged_qrels "
                              "GROUP BY topic, docno HAVING count(*) > 1 LIMIT 1").fetchone()
        if bad is not None:
            raise IrwError(_locate_qrels_problem(files) or f"{bad[0]}: malformed qrels")
        if con.execute("SELECT count(*) FROM irw_staged_qrels").fetchone()[0] == 0:
            raise IrwError(f"{', '.join(files)}: no qrels lines found")
        with final() if final else contextlib.nullcontext():
            with db.transaction(con):
                _insert_qrels(con, files, name, replace, description)
            stats = con.execute("SELECT count(DISTINCT topic), count(*), count(*) FILTER (WHERE rel >= 1) "
                                "FROM qrels WHERE qrels = ?", [name]).fetchone()
    finally:
        con.execute("DROP TABLE IF EXISTS temp.irw_staged_qrels")
    return {"qrels": name, "topics": stats[0], "judgments": stats[1], "relevant": stats[2]}


def _insert_qrels(con, files: list[str], name: str, replace: bool, description: str | None) -> None:
    info = con.execute("SELECT kind FROM qrels_info WHERE qrels = ?", [name]).fetchone()
    if info and not replace:
        raise IrwError(f"qrels {name!r} already exists; use --replace to replace it")
    if info:  # replaced: the judgments go, the scores stored with them are recomputed
        _check_no_dependents(con, name)
        for table in ("qrels", "qrels_info"):
            con.execute(f"DELETE FROM {table} WHERE qrels = ?", [name])
        db.invalidate_bases(con, name)
    con.execute("INSERT INTO qrels SELECT ?, topic, docno, rel FROM irw_staged_qrels", [name])
    register_qrels(con, name, source=" ".join(files), kind="file", description=description)
    state.record_qrels(con, name)
    if info:
        state.refresh_scores(con, qrels=name)


def register_qrels(con, name: str, source: str | None, kind: str, parent: str | None = None,
                   params: str | None = None, description: str | None = None,
                   own_topics: bool = False) -> None:
    """Add a qrels to the catalogue. A derived qrels takes its topic set from its parent's
    (so that scores with parent and child are comparable) unless ``own_topics`` (a topic
    subset -- a collection -- defines its own)."""
    topic_qrels = name
    if parent is not None and not own_topics:
        row = con.execute("SELECT topic_qrels FROM qrels_info WHERE qrels = ?", [parent]).fetchone()
        if row is None:
            raise IrwError(f"qrels {parent!r} does not exist")
        topic_qrels = row[0]
    con.execute("INSERT INTO qrels_info VALUES (?, ?, ?, ?, ?, ?, ?, current_timestamp)",
                [name, source, parent, kind, params, description, topic_qrels])


def _check_no_dependents(con, name: str) -> None:
    """A qrels that derived qrels or factor sets were made from is neither dropped nor
    replaced: they would silently stand for judgments that are gone."""
    children = [r[0] for r in con.execute(
        "SELECT qrels FROM qrels_info WHERE parent = ? ORDER BY qrels", [name]).fetchall()]
    if children:
        raise IrwError(f"qrels {name!r} has derived qrels ({', '.join(children)}); "
                       "drop them first (irw qrels drop NAME)")
    sets = [r[0] for r in con.execute(
        "SELECT factors FROM std_factor_sets WHERE qrels = ? ORDER BY factors", [name]).fetchall()]
    if sets:
        raise IrwError(f"qrels {name!r} has standardization factor sets ({', '.join(sets)}); "
                       "drop them first (irw standardize drop NAME)")


def drop_qrels(con, name: str, _in_transaction: bool = False) -> None:
    """Remove a qrels, its cached base and its scores."""
    def work():
        if con.execute("SELECT 1 FROM qrels_info WHERE qrels = ?", [name]).fetchone() is None:
            raise IrwError(f"qrels {name!r} does not exist; known: {', '.join(qrels_names(con)) or 'none'}")
        _check_no_dependents(con, name)
        for table in ("qrels", "scores", "qrels_info"):
            con.execute(f"DELETE FROM {table} WHERE qrels = ?", [name])
        db.invalidate_bases(con, name)
        state.record_qrels(con, name)

    if _in_transaction:
        work()
    else:
        with db.transaction(con):
            work()


def qrels_names(con) -> list[str]:
    return [r[0] for r in con.execute("SELECT qrels FROM qrels_info ORDER BY qrels").fetchall()]


# ---------------------------------------------------------------------------- metadata

_TRUE = {"true", "t", "yes", "y", "1"}
_FALSE = {"false", "f", "no", "n", "0", ""}


def _load_meta(con, path: str) -> int:
    """Read a TSV with a header naming run_id and any of team, kind, pooled."""
    if not os.path.isfile(path):
        raise IrwError(f"{path}: no such file")
    rows = []
    with _open_text(path) as fh:
        reader = csv.reader(fh, delimiter="\t")
        header = next(reader, None)
        if header is None:
            raise IrwError(f"{path}: the file is empty")
        header = [h.strip() for h in header]
        known = {"run_id", "team", "kind", "pooled"}
        if "run_id" not in header:
            raise IrwError(f"{path}, line 1: the header must name a run_id column (and any of team, kind, pooled); found {', '.join(header)}")
        unknown = [h for h in header if h not in known]
        if unknown:
            raise IrwError(f"{path}, line 1: unknown column(s) {', '.join(unknown)}; valid: run_id, team, kind, pooled")
        seen = set()
        for number, record in enumerate(reader, start=2):
            if not any(field.strip() for field in record):
                continue
            if len(record) != len(header):
                raise IrwError(f"{path}, line {number}: expected {len(header)} tab-separated fields, found {len(record)}")
            row = dict(zip(header, (f.strip() for f in record)))
            if not row["run_id"]:
                raise IrwError(f"{path}, line {number}: empty run_id")
            if row["run_id"] in seen:
                raise IrwError(f"{path}, line {number}: run {row['run_id']} is described twice")
            seen.add(row["run_id"])
            pooled = None
            if "pooled" in row:
                value = row["pooled"].lower()
                if value in _TRUE:
                    pooled = True
                elif value in _FALSE:
                    pooled = False if value else None
                else:
                    raise IrwError(f"{path}, line {number}: pooled must be true or false, got {row['pooled']!r}")
            rows.append((row["run_id"], row.get("team") or None, row.get("kind") or None, pooled))
    if rows:
        con.executemany("INSERT OR REPLACE INTO run_meta VALUES (?, ?, ?, ?)", rows)
    return len(rows)


def load_meta(con, path: str) -> int:
    with db.transaction(con):
        return _load_meta(con, path)
