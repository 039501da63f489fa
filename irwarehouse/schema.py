"""The warehouse's schema -- its tables, views and macros, the measure macros among them -- and
keeping what irw derived from the tables in line with them.

This floor sits above what it installs: the schema's statements are the templates of
``sql/`` (SCHEMA_TEMPLATES) and the measure macros rendered by the engine
(irwarehouse.engine.rendering). :func:`connect` opens a warehouse ready for commands:
:func:`prepare` sets up (or upgrades) the schema and brings ranks, caches and stored scores
in line with changes made to the tables outside irw (:func:`reconcile`); opening read-only
notes such changes instead (the engine then computes from the tables).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from dataclasses import dataclass
from functools import lru_cache

import duckdb

from . import catalogue, files, names, sql, state
from .catalogue import DEFAULT_COLLECTION
from .connection import (PUBLISHED_KEY, SCHEMA_VERSION, STORAGE_VERSION, connect as open_file,
                         storage_version, stored_meta, transaction)
from .engine.base import invalidate_bases, update_bases
from .engine.evaluation import refresh_scores
from .engine.rendering import BASE_SOURCES, MACRO_TOPICS, macro_definitions
from .errors import IrwError
from .measure_rows import CATALOGUE_COLUMNS, catalogue_rows

# Templates run (in order) whenever a warehouse is opened for writing: tables, then views.
SCHEMA_TEMPLATES = ["schema.sql", "views.sql", "state.sql", "pools.sql", "standardize_schema.sql"]


@lru_cache(maxsize=2)
def schema_statements(measure_macros: bool = True) -> list[str]:
    """The statements that create the schema -- tables, views, macros, measure macros; each
    idempotent -- in the order they run. The one definition of the schema: :func:`ensure_schema`
    runs it, and ``irw export`` / ``irw publish`` (irwarehouse.export) build their copies from it.
    Without ``measure_macros``: all but the measure macros (users' SQL calls them, irw does
    not; a throw-away warehouse has no users' SQL, see connection.mark_throwaway)."""
    text = "".join(sql.render(t) for t in SCHEMA_TEMPLATES)
    if measure_macros:
        text += sql.render("measure_macros.sql", macros=macro_definitions(), base_sources=list(BASE_SOURCES),
                           topics=MACRO_TOPICS)
    return sql.split_statements(text)


def sequence_statements() -> list[str]:
    """The statements of the schema that create its sequences (a copy of the warehouse runs
    them before its tables: the check of runs draws from one)."""
    return [s for s in schema_statements() if (_CREATES.match(_code(s)) or [None, ""])[1].upper() == "SEQUENCE"]


def _code(statement: str) -> str:
    """A statement without its comment lines."""
    return "\n".join(line for line in statement.splitlines() if not line.lstrip().startswith("--")).strip()


_CREATES = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?(TABLE|VIEW|MACRO|SEQUENCE)\s+(?:IF\s+NOT\s+EXISTS\s+)?"
                      r'(?:"?(\w+)"?\.)?"?(\w+)"?', re.I)


@lru_cache(maxsize=1)
def schema_objects() -> frozenset[tuple[str, str, str]]:
    """(kind, schema, name) of every table, view, macro and sequence the schema creates (kind
    TABLE, VIEW, MACRO or SEQUENCE)."""
    out = set()
    for statement in schema_statements():
        match = _CREATES.match(_code(statement))
        if match:
            out.add((match.group(1).upper(), match.group(2) or "main", match.group(3)))
    return frozenset(out)


def missing_objects(con) -> list[str]:
    """The tables, views, macros and sequences of the schema that the warehouse lacks (e.g. dropped by a
    statement of ``irw sql --write``), as ``kind name``."""
    have = set(con.execute(sql.statement("install.sql", "objects")).fetchall())
    return sorted(f"{kind.lower()} {name if schema == 'main' else schema + '.' + name}"
                  for kind, schema, name in schema_objects() - have)


_schema_fingerprints: dict[bytes, str] = {}


def schema_fingerprint() -> str:
    """A digest of everything ensure_schema creates: the layout version, the SQL templates
    (sql.templates_digest) and the measure catalogue (cheap: the templates are not rendered;
    computed once a process)."""
    templates = sql.templates_digest()
    if templates not in _schema_fingerprints:
        digest = hashlib.sha256(f"{SCHEMA_VERSION}\n{SCHEMA_TEMPLATES}\n".encode() + templates)
        digest.update(repr(catalogue_rows()).encode())
        _schema_fingerprints[templates] = digest.hexdigest()
    return _schema_fingerprints[templates]


def ensure_schema(con: duckdb.DuckDBPyConnection, measure_macros: bool = True) -> tuple[bool, list]:
    """Create the tables, views and macros (idempotent) and refresh the measure catalogue;
    nothing to do when the warehouse already has this version's schema. A warehouse of an
    older schema version is first brought up to date by the steps of :data:`MIGRATIONS`
    (:func:`migrate`), all in this one transaction. ``measure_macros``: see
    :func:`schema_statements`. Returns whether the schema was (re)created, and the steps of
    :data:`MIGRATIONS` it took."""
    fingerprint = schema_fingerprint()
    meta = stored_meta(con)
    stored = meta.get("schema_version")
    if meta.get("schema_fingerprint") == fingerprint and stored == SCHEMA_VERSION:
        return False, []
    with transaction(con):
        steps = pending_migrations(stored)
        migrate(con, steps, measure_macros)
        _fill_measures(con)
        con.executemany(sql.statement("install.sql", "set_meta"),
                        [("schema_version", SCHEMA_VERSION), ("schema_fingerprint", fingerprint)])
        if steps:  # runs loaded by an older irw stand as they are
            state.record_runs(con)
        state.record_unrecorded_derived(con)
    return True, steps


def _fill_measures(con) -> None:
    sql.run(con, "install.sql", "clear_measures")
    con.executemany(sql.statement("install.sql", "measure_row", CATALOGUE_COLUMNS), catalogue_rows())


# ------------------------------------------------------------------------ irw's objects kept true
#
# irw knows what each of its views and macros should say: the schema's statements, rendered
# from the templates. What the running DuckDB release makes of them -- a digest of each
# view's and macro's definition as DuckDB reads it back (duckdb_views().sql,
# duckdb_functions().macro_definition: install.sql, definitions) -- is found once, in a
# scratch database, and kept in irw's temporary root (:func:`expected_definitions`).
# Opening a warehouse compares its objects with them in one query, so that one dropped or
# replaced outside irw (CREATE OR REPLACE MACRO measure.P ... by a BI tool, DROP VIEW
# run_info) is restored when the warehouse is opened for writing (and by irw refresh), and
# named by a command that only reads.

def _shown(kind: str, schema_name: str, name: str) -> str:
    return f"{kind.lower()} {name if schema_name == 'main' else schema_name + '.' + name}"


_expected: dict[str, dict] = {}


def expected_definitions(fingerprint: str | None = None,
                         storage: str | None = None) -> dict[tuple[str, str, str], frozenset[str]]:
    """(kind, schema, name) -> the digests of its definition, of every table, sequence, view
    and macro of this irw's schema under the running DuckDB release: a view's or macro's
    definition as DuckDB reads it back in the session that made it and once the database
    is opened again (they can differ: DuckDB 2.0 stores a macro in the warehouses' storage
    version without its CTEs' MATERIALIZED), a table's or sequence's none. Found in a scratch database
    once per schema fingerprint, DuckDB release and storage version (``storage``, e.g.
    ``v1.0.0+``: a file another DuckDB client made, IMPORT DATABASE's say, keeps its own;
    default :data:`connection.STORAGE_VERSION`) and irw's code (:func:`sql.fingerprint`), and kept in irw's temporary root
    (where there is no room for it, nothing is checked: an empty mapping)."""
    import json

    storage = (storage or STORAGE_VERSION).rstrip("+")
    # irw's code renders the templates too (sql.fingerprint): definitions found by another
    # version of it, or by a process that read newer templates with older code, are not these
    key = f"{(fingerprint or schema_fingerprint())[:20]}-{sql.fingerprint()[:12]}-{duckdb.__version__}-{storage}"
    if key not in _expected:
        cache = None
        try:
            cache = files.temp_root() / f"definitions-{key}.json"
            data = json.loads(cache.read_text(encoding="utf-8"))
            if data.get("key") != key:
                raise ValueError
        except (OSError, ValueError, IrwError):
            try:
                data = {"key": key, "objects": _scratch_definitions(storage)}
            except (OSError, IrwError, duckdb.Error):
                return {}  # no room for the scratch database (a full TMPDIR): nothing checked
            if cache is not None:
                with contextlib.suppress(OSError):
                    tmp = files.temporary_name(cache)
                    tmp.write_text(json.dumps(data), encoding="utf-8")
                    os.replace(tmp, cache)
        _expected[key] = {tuple(o[:3]): frozenset(d for d in o[3] if d) for o in data["objects"]}
    return _expected[key]


def _scratch_definitions(storage: str) -> list:
    """[kind, schema, name, [digests]] of this irw's schema made in a scratch database file
    of the storage version ``storage``, read in the session that made it and after opening
    it again."""
    from .connection import open_duckdb

    found: dict[tuple, set] = {}

    def read(con) -> None:
        for kind, schema_name, name, digest in sql.rows(con, "install.sql", "definitions"):
            found.setdefault((kind, schema_name, name), set()).add(digest)

    with files.temporary_directory("schema") as tmp:
        path = _schema_file(os.path.join(tmp, "scratch.duckdb"), storage, read)
        con = open_duckdb(path)
        try:
            read(con)
        finally:
            con.close()
    ours = schema_objects()
    return [[*k, sorted(d for d in v if d)] for k, v in sorted(found.items()) if k in ours]


def _schema_file(path: str, storage: str, made=None) -> str:
    """Make the database file ``path`` of storage version ``storage`` holding this irw's schema
    and nothing else; ``made(con)`` is called in the session that made it. Returns ``path``."""
    from .connection import open_duckdb

    con = open_duckdb()
    try:
        sql.run(con, "install.sql", "create_file", {}, path, storage)
    finally:
        con.close()
    con = open_duckdb(path)
    try:
        for statement in schema_statements():
            con.execute(statement)
        if made is not None:
            made(con)
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return path


def changed_objects(con, path: str | None = None) -> list[tuple[str, str, str, bool]]:
    """irw's objects the warehouse lacks or holds with another definition than irw's:
    (kind, schema, name, missing). Checked for a warehouse whose schema this irw wrote (its
    schema fingerprint is this irw's); nothing for another. ``path``: the warehouse file,
    whose state is then remembered once found true (:func:`_verified`), so that opening it
    again unchanged skips the comparison."""
    fingerprint = schema_fingerprint()
    if stored_meta(con).get("schema_fingerprint") != fingerprint:
        return []
    expected = expected_definitions(fingerprint, storage_version(con))
    state = _file_state(path, fingerprint)
    if state is not None and _verified(path) == state:
        return []
    held = {tuple(r[:3]): r[3] for r in sql.rows(con, "install.sql", "definitions")}
    wrong = [(*k, k not in held) for k, digests in expected.items()
             if k not in held or (digests and held[k] not in digests)]
    if not wrong and expected and state is not None:
        _verified(path, state)
    return sorted(wrong, key=lambda o: (o[0] != "VIEW", o[0] != "MACRO", o[1], o[2]))


def _file_state(path: str | None, fingerprint: str) -> list | None:
    """What identifies a warehouse file's content without reading it: device, inode, size,
    modification and change times of the file and of its journal (the change time is the
    system's, set on every write; no user can set it back), with this irw's schema
    fingerprint and the DuckDB release. None in memory."""
    if not path or path == ":memory:":
        return None
    state: list = [fingerprint, duckdb.__version__]
    for name in (path, path + ".wal"):
        try:
            st = os.stat(name)
        except FileNotFoundError:
            state.append(None)
            continue
        except OSError:
            return None
        state.append([st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns])
    return state


MAX_VERIFIED = 200  # warehouses remembered


def _verified(path: str, state=None, what: str = "objects"):
    """The state of the warehouse file ``path`` in which ``what`` was last found true (kept
    in irw's temporary root, private to the user); with ``state``, record it. A file written
    since has another state, and is compared again. ``what``: "objects", its views and
    macros (:func:`changed_objects`); "tables", its tables as irw last wrote them, nothing
    to reconcile (:func:`prepare`; recorded with the runs' fingerprint)."""
    import json

    try:
        store = files.temp_root() / "verified.json"
    except IrwError:
        return None
    key = os.path.realpath(path) + ("" if what == "objects" else f"\0{what}")
    try:
        known = json.loads(store.read_text(encoding="utf-8"))
        if not isinstance(known, dict):
            known = {}
    except (OSError, ValueError):
        known = {}
    if state is None:
        return known.get(key)
    known.pop(key, None)
    known[key] = state
    known = dict(list(known.items())[-MAX_VERIFIED:])
    with contextlib.suppress(OSError):
        tmp = files.temporary_name(store)
        tmp.write_text(json.dumps(known), encoding="utf-8")
        os.replace(tmp, store)
    return state


def keep_true(con, read_only: bool, path: str | None = None) -> list[str]:
    """Compare irw's views, macros, tables and sequences with what irw makes of its
    templates. For writing: restore those dropped or changed outside irw, and say so. For
    reading: an object dropped is an error, one changed a note; both name ``irw refresh``.
    Returns the notes. ``path``: the warehouse file (see :func:`changed_objects`)."""
    wrong = changed_objects(con, path)
    if not wrong:
        return []
    missing = [o for o in wrong if o[3]]
    changed = [o for o in wrong if not o[3]]

    def listed(objects) -> str:
        return ", ".join(_shown(*o[:3]) for o in objects)

    if read_only:
        if missing:
            raise IrwError(f"irw's {listed(missing)} {'was' if len(missing) == 1 else 'were'} dropped "
                           "outside irw: run `irw refresh` (it opens the warehouse for writing) to "
                           f"restore {'it' if len(missing) == 1 else 'them'}")
        return [f"irw's {listed(changed)} {'was' if len(changed) == 1 else 'were'} changed outside "
                f"irw: what uses {'it' if len(changed) == 1 else 'them'} (SQL on the warehouse, BI "
                "tools) may give wrong results; run `irw refresh` to restore the definitions"]
    targets = {tuple(o[:3]) for o in wrong}
    with transaction(con):
        for statement in _statements_for(targets):
            con.execute(statement)
        if ("TABLE", "main", "measures") in targets:
            _fill_measures(con)
    empty = " (a table: anew, empty)" if any(o[0] == "TABLE" for o in missing) else ""
    parts = ([f"{listed(changed)}, changed outside irw"] if changed else []) + \
            ([f"{listed(missing)}, dropped outside irw{empty}"] if missing else [])
    return [f"restored irw's {'; and '.join(parts)}"]


def _statements_for(objects) -> list[str]:
    """The schema's statements that create ``objects`` (kind, schema, name), in the
    schema's order, with the schemas they live in."""
    out = []
    for statement in schema_statements():
        code = _code(statement)
        match = _CREATES.match(code)
        if match and (match.group(1).upper(), match.group(2) or "main", match.group(3)) in objects:
            out.append(statement)
        elif re.match(r"CREATE\s+SCHEMA\b", code, re.I):
            out.append(statement)
    return out


# ------------------------------------------------------------------------ migrations


@dataclass(frozen=True)
class Migration:
    """One step of the schema's history: what brings a warehouse of the version before it to
    ``version``. Its template (``sql/migrations/``) has two macros, ``before(columns)`` and
    ``after(columns)``: ``before`` runs before the schema's statements (which create what is
    missing, then the views), ``after`` once they have run -- e.g. a table set aside before
    is created anew by the schema and its rows copied back after. ``columns`` is the
    warehouse's tables and their columns as they were before the first step ran. ``summary``
    says what the step does, for people (what ``irw refresh`` would do)."""

    version: int
    template: str
    summary: str


# The schema's history, oldest first; the last step's version is SCHEMA_VERSION. A change
# of a stored table's columns is a new step here (and the same columns in schema.sql, last),
# so that a warehouse written by any earlier irw keeps what it holds.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(5, "migrations/5_collections.sql",
              "give runs, run metadata, qrels, scores and saved results a collection (what is "
              "loaded becomes collection 'default')"),
    Migration(6, "migrations/6_runs_counted.sql",
              "make the table runs count its writes (measure macros check it without reading it)"),
    Migration(7, "migrations/7_effects_and_systems.sql",
              "add the column system to run_meta, the interval of the difference, the effect "
              "sizes and the systems' runs to pair_tests, and the systems, the residual "
              "variance and effect summaries to discpower_results"),
    Migration(8, "migrations/8_repro.sql",
              "add the tables repro_effects and repro_order (irw repro --save)"),
    Migration(9, "migrations/9_judgment_kinds.sql",
              "record each qrels's judgment kind (qrels_info.judgments) and add the tables of "
              "the other kinds: qrels_intents, qrels_strata, qrels_prefs"),
    Migration(10, "migrations/10_ranking_orders.sql",
              "name the order of the runs loaded under trec_eval before it meant trec_eval "
              "10.0's order trec_eval_9 (their ranks and scores kept), add the column "
              "ranking_policy to evaluations, and the tie policy (ties) to scores and "
              "evaluations"),
    Migration(11, "migrations/11_base_ties.sql",
              "let the base relation (a cache, rebuilt on demand) record its documents' ties"),
)


def pending_migrations(stored: str | None) -> list[Migration]:
    """The steps a warehouse of schema version ``stored`` needs (none for a new warehouse,
    ``stored`` None, or one of this version)."""
    if stored is None or stored == SCHEMA_VERSION:
        return []
    return [m for m in MIGRATIONS if m.version > int(stored)]


def migration_plan(stored: str | None) -> list[str]:
    """What opening a warehouse of schema version ``stored`` for writing (``irw refresh``)
    would do, one line per step."""
    return [f"{m.summary} (version {m.version})" for m in pending_migrations(stored)]


def table_columns(con) -> dict[str, list[str]]:
    """The warehouse's tables (schema main) with their columns, in order."""
    out: dict[str, list[str]] = {}
    for table, column in sql.rows(con, "install.sql", "table_columns"):
        out.setdefault(table, []).append(column)
    return out


def migrate(con, steps: list[Migration], measure_macros: bool = True) -> None:
    """Run the schema's statements with the ``steps`` around them (their ``before`` macros,
    in order, then the statements, then their ``after`` macros), in one transaction. With
    steps, the caches are dropped first (they are rebuilt on demand). A table runs that does
    not count its writes (put in its place outside irw) is set aside and created anew too."""
    with transaction(con):
        if steps:
            sql.run(con, "install.sql", "drop_caches")
        columns = table_columns(con)
        params = {"collection": DEFAULT_COLLECTION}
        for step in steps:
            sql.run(con, step.template, "before", params, columns)
        _create(con, _set_aside(con), measure_macros)
        for step in steps:
            try:
                sql.run(con, step.template, "after", params, columns)
            except duckdb.Error as exc:
                raise IrwError(f"cannot bring the warehouse to schema version {step.version} "
                               f"({str(exc).splitlines()[0]}); nothing was changed") from None


def _set_aside(con) -> list[str]:
    """Set aside the table runs when it does not count its writes (put in its place outside
    irw), so that the schema creates it anew and :func:`_create` copies its rows back."""
    if not sql.rows(con, "install.sql", "runs_uncounted")[0][0]:
        return []
    sql.run(con, "install.sql", "set_aside", {}, "runs")
    return ["runs"]


def _create(con, aside: list[str], measure_macros: bool = True) -> None:
    """Run the schema's statements (which create what is missing) -- in a database that holds
    nothing yet, copy them from the schema's template instead (:func:`schema_template`) --
    then copy the rows of the tables set aside into their new tables."""
    if not (measure_macros and _copy_template(con)):
        for statement in schema_statements(measure_macros):
            con.execute(statement)
    for table in aside:
        try:
            sql.run(con, "install.sql", "copy_back", {}, table, False)
        except duckdb.Error as exc:
            raise IrwError(f"the table {table} was replaced outside irw by one whose rows do not fit "
                           f"its columns ({str(exc).splitlines()[0]}); nothing was changed. Put "
                           f"the table back, or load its rows again") from None


# A new warehouse is a copy of a template: DuckDB parses every statement of the schema, the
# measure macros' large queries above all (about 1 s of CPU), and COPY FROM DATABASE copies
# what it parsed (about 0.1 s).

def schema_template(storage: str | None = None) -> str | None:
    """A database file holding this irw's schema and nothing else, made once per schema
    fingerprint, DuckDB release and storage version (``storage``; default
    :data:`connection.STORAGE_VERSION`) and kept in irw's temporary root; None where there is
    no room for it (the statements are run instead)."""
    storage = (storage or STORAGE_VERSION).rstrip("+")
    try:
        root = files.temp_root()
    except IrwError:
        return None
    key = f"{schema_fingerprint()[:20]}-{duckdb.__version__}-{storage}"
    path = root / f"schema-{key}.duckdb"
    if path.exists():
        return str(path)
    try:
        with files.temporary_directory("schema") as tmp:
            # whole or not at all: another process may make it too
            os.replace(_schema_file(os.path.join(tmp, "schema.duckdb"), storage), path)
    except (OSError, IrwError, duckdb.Error):
        return None
    for old in root.glob("schema-*.duckdb"):  # the templates of earlier schemas or releases
        if old != path:
            with contextlib.suppress(OSError):
                old.unlink()
    return str(path)


def _copy_template(con) -> bool:
    """Copy the schema's template into the connection's database when that holds nothing
    (no table, view, macro or sequence, no schema of irw's) and may read files (not in
    DuckDB's sandbox for users' SQL); whether it did."""
    from .connection import after_transaction, in_sandbox

    if in_sandbox(con) or sql.rows(con, "install.sql", "objects") or sql.rows(con, "install.sql", "own_schemas"):
        return False
    template = schema_template(storage_version(con))
    if template is None:
        return False
    current = con.execute("SELECT current_database()").fetchone()[0]
    sql.run(con, "install.sql", "copy_template", {}, template, current)
    after_transaction(con, sql.statement("install.sql", "drop_template"))
    return True


def prepare(con: duckdb.DuckDBPyConnection, path: str, read_only: bool, notify=None,
            measure_macros: bool = True) -> None:
    """What opening a warehouse does before a command uses it: for writing, set up (or
    upgrade) the schema and bring caches and stored scores in line with changes made outside
    irw (:func:`reconcile`); for reading, check the schema version and note such changes. Run
    inside the command's transaction, so that a command that fails leaves none of it.
    ``measure_macros``: see :func:`schema_statements`."""
    if not read_only or path == ":memory:":
        older = stored_meta(con).get("schema_version")
        created, steps = ensure_schema(con, measure_macros)
        published = PUBLISHED_KEY in stored_meta(con)
        if published:  # a published copy written to is a warehouse
            con.execute(sql.statement("install.sql", "forget_meta"), [PUBLISHED_KEY])

        def check() -> list[str]:
            found = keep_true(con, False, path) if measure_macros and not created else []
            if steps:
                found.insert(0, f"upgraded the warehouse from schema version {older} to "
                                f"{SCHEMA_VERSION}, keeping what it holds; the steps: "
                             + "; ".join(migration_plan(older)))
            return found + reconcile(con)

        # (a schema just made, or a published copy's mark just forgotten: compared as written)
        remembered = measure_macros and not created and not published
        messages = _unless_found_true(con, path, check, remembered)
    else:
        older = stored_meta(con).get("schema_version")
        if older is None:  # an empty database (connection.check_warehouse refuses any other)
            empty_warehouse(con)
            return
        if older != SCHEMA_VERSION:
            raise IrwError(f"{path} was written by an older irwarehouse (warehouse schema version "
                           f"{older}, now {SCHEMA_VERSION}): open it for writing once to upgrade "
                           "it; irw refresh would keep what it holds and "
                           + "; ".join(migration_plan(older)))

        def check() -> list[str]:
            found = keep_true(con, True, path)
            changed = state.changed(con)
            return found + (
                [f"{', '.join(changed)} changed outside irw since irw last wrote: results are "
                 "computed from the tables (open the warehouse for writing, e.g. `irw refresh`, "
                 "to bring caches and stored scores in line)"] if changed else [])

        messages = _unless_found_true(con, path, check)
    if notify:
        for message in messages:
            notify(message)


def _unless_found_true(con, path: str, check, remembered: bool = True) -> list[str]:
    """What ``check()`` finds of the warehouse ``path`` (its notes: its views and macros not
    irw's, its tables not as irw last wrote them), unless the file is in the state in which it
    last found nothing (:func:`_file_state`: not written since): then nothing is checked, and
    the connection takes the runs' fingerprint recorded then. A file found true is
    remembered so (with ``remembered``; an in-memory warehouse never is)."""
    known = _file_state(path, schema_fingerprint()) if remembered else None
    last = _verified(path, what="tables") if known is not None else None
    if isinstance(last, dict) and last.get("state") == known and isinstance(last.get("runs_fp"), int):
        state.set_session(con, last["runs_fp"])
        return []
    messages = check()
    fp = state.session_runs_fp(con) if known is not None and not messages else None
    if fp is not None:
        _verified(path, {"state": known, "runs_fp": fp}, what="tables")
    return messages


def empty_warehouse(con) -> None:
    """Make a read of an empty DuckDB database answer as an empty warehouse, without writing
    to it: the schema's tables, views and macros of schema main are created as temporary
    objects of the connection (which the file never holds; DuckDB looks them up first).
    The measure macros live in a schema of their own, which DuckDB keeps for the database:
    they come with the first write (a load)."""
    with transaction(con):
        for statement in schema_statements(measure_macros=False):
            code = _code(statement)
            match = _CREATES.match(code)
            if match and (match.group(2) or "main") == "main":
                con.execute(_TEMPORARY.sub(r"\1TEMPORARY ", code, count=1))
        _fill_measures(con)


_TEMPORARY = re.compile(r"^(CREATE\s+(?:OR\s+REPLACE\s+)?)", re.I)


def connect(path: str | None = None, read_only: bool = False, notify=None, create: bool = True,
            wait: float | None = None, memory: str | None = None) -> duckdb.DuckDBPyConnection:
    """Open the warehouse ``path`` ready for commands (irwarehouse.connection.connect opens it;
    :func:`prepare` sets it up, in a transaction of its own). ``notify(message)`` hears what
    opening did or noticed."""
    con = open_file(path, read_only=read_only, create=create, wait=wait, memory=memory)
    try:
        with transaction(con):
            prepare(con, path or ":memory:", read_only, notify)
    except BaseException:
        con.close()
        raise
    return con


# ------------------------------------------------------------------------ reconciling



def reconcile(con, edited: bool = False) -> list[str]:
    """Bring ranks, ranking lengths, caches and stored scores in line with the tables after
    changes made outside irw. Returns what was done (one line each; empty: nothing to do).
    Raises IrwError, changing nothing, when the tables hold what no load would accept.
    ``edited``: the changes are those of a statement run just now (``irw sql --write``),
    which the error says is undone (the caller rolls its transaction back)."""
    done: list[str] = []
    if edited:
        _check_tables(con)
    # one query says whether anything is to be done (the usual case: nothing); it does not
    # read `runs` (irw_runs_fp)
    fp, runs_ok, qrels_ok = sql.rows(con, "reconcile.sql", "status")[0]
    state.set_session(con, fp)
    if runs_ok and qrels_ok:
        return done
    with transaction(con):
        _check_qrels(con, edited)
        if not runs_ok:
            if fp is None:  # runs was put in its place without its check: created anew
                _create(con, _set_aside(con))
            done += _reconcile_runs(con, edited)
            # every run is now as irw recorded it, also when what changed the version
            # changed no run (a write that changed nothing, or was rolled back)
            state.record_runs_version(con)
        for name in _unregistered_qrels(con):
            known = catalogue.collection_names(con)
            target = known[0] if len(known) == 1 else DEFAULT_COLLECTION
            catalogue.register_qrels(con, name, source="(inserted with SQL)", kind="file",
                                     collection=target)
            done.append(f"registered qrels {name}, inserted with SQL"
                        + ("" if len(known) == 1 else f", in collection {target}"))
        for name, rec in sql.rows(con, "reconcile.sql", "qrels_changes"):
            if rec is None:
                state.record_qrels(con, name)
            else:
                invalidate_bases(con, name)
                dependents = [r[0] for r in sql.rows(con, "reconcile.sql", "dependents", {"name": name})]
                n = 0
                for q in dependents:
                    n += refresh_scores(con, qrels=q)
                state.record_qrels(con, name)
                done.append(f"qrels {name} changed: its base will be rebuilt"
                            + (f"; {n} stored evaluation(s) recomputed" if n else ""))
    return done


def _check_tables(con) -> None:
    """A statement may change the rows of the warehouse's tables, not remove the tables,
    views and macros of its schema, nor change a view or macro of irw's."""
    gone = missing_objects(con)
    if gone:
        raise IrwError(f"not done: the statement would remove the {gone[0]}, which the "
                       "warehouse needs; nothing was changed")
    changed = [o for o in changed_objects(con) if not o[3]]
    if changed:
        raise IrwError(f"not done: the statement would change irw's {_shown(*changed[0][:3])}, which "
                       "irw keeps as its templates define it (create a view or macro of another "
                       "name); nothing was changed")


def _refuse(problem: str, outside: str, edited: bool):
    """The error for tables that hold what no load would accept: undone when a statement of
    this call made them so (``edited``: the statement would leave ``problem``), else left by
    another client (``outside``: what happened and how to correct it)."""
    if edited:
        raise IrwError(f"not done: the statement would leave {problem}, which no load accepts; "
                       "nothing was changed")
    raise IrwError(outside)


def _check_qrels(con, edited: bool = False) -> None:
    """The judgments changed outside irw hold what a load would accept: no document judged
    twice for a topic (loads refuse such files), and names that can be addressed."""
    dup = next(iter(sql.rows(con, "reconcile.sql", "judged_twice")), None)
    if dup:
        _refuse(f"qrels {dup[0]} judging document {dup[2]} twice for topic {dup[1]}",
                f"the table qrels was changed outside irw and qrels {dup[0]} now judges document "
                f"{dup[2]} twice for topic {dup[1]}; correct it (irw sql --write) or reload the "
                f"qrels (irw load qrels FILE --name {dup[0]} --replace)", edited)


def _unregistered_qrels(con) -> list[str]:
    return [r[0] for r in sql.rows(con, "reconcile.sql", "unregistered_qrels")]


def _reconcile_runs(con, edited: bool = False) -> list[str]:
    recorded = {(r[0], r[1]): r[2:] for r in sql.rows(con, "reconcile.sql", "run_rows", {}, "irw_run_state")}
    current = {(r[0], r[1]): r[2:] for r in sql.rows(con, "reconcile.sql", "run_rows", {}, "irw_run_rows()")}
    loaded = set(sql.rows(con, "reconcile.sql", "loaded_runs"))
    lengths = set(sql.rows(con, "reconcile.sql", "wrong_lengths"))
    policies = set(sql.rows(con, "reconcile.sql", "changed_policies"))
    changed_runs = sorted({r for r in set(current) | set(recorded) | loaded
                           if current.get(r) != recorded.get(r) or (r in current) != (r in loaded)}
                          | lengths | policies)
    present = [r for r in changed_runs if r in current]
    gone = [r for r in changed_runs if r not in current]
    by_collection: dict[str, dict[str, list[str]]] = {}
    for kind, runs in (("present", present), ("gone", gone)):
        for c, run_id in runs:
            by_collection.setdefault(c, {"present": [], "gone": []})[kind].append(run_id)
    n = 0
    for c, ids_of in sorted(by_collection.items()):
        n += _reconcile_collection(con, c, ids_of["present"], ids_of["gone"], edited)
    show = _run_names(con)
    done = []
    if present:
        done.append(f"runs changed outside irw: ranked again {show(present)}"
                    + (f"; {n} stored evaluation(s) recomputed" if n else ""))
    if gone:
        done.append(f"runs removed outside irw: {show(gone)} (their scores are removed too)")
    return done


def _run_names(con):
    """Runs (collection, run id) in words: the run ids, with their collection when the
    warehouse holds several."""
    plain = catalogue.single_collection(con)
    return lambda runs: ", ".join(r if plain else f"{r} ({c})" for c, r in runs)


def _reconcile_collection(con, collection: str, present: list[str], gone: list[str],
                          edited: bool = False) -> int:
    """Rank again the runs ``present`` of ``collection`` changed outside irw, forget those
    ``gone``; returns the number of stored evaluations recomputed."""
    ids = {"ids": present, "collection": collection}
    dup = next(iter(sql.rows(con, "reconcile.sql", "docno_twice", ids)), None)
    advice = "correct it (irw sql --write) or reload the run (irw load runs FILE --replace)"
    if dup:
        _refuse(f"run {dup[0]} holding document {dup[2]} twice for topic {dup[1]}",
                f"the table runs was changed outside irw and run {dup[0]} now holds document "
                f"{dup[2]} twice for topic {dup[1]}; {advice}", edited)
    bad = next(iter(sql.rows(con, "reconcile.sql", "not_finite", ids)), None)
    if bad:
        _refuse(f"run {bad[0]} giving document {bad[2]} of topic {bad[1]} the score {bad[3]}, not a "
                "finite number",
                f"the table runs was changed outside irw and run {bad[0]} now gives document "
                f"{bad[2]} of topic {bad[1]} the score {bad[3]}, which is not a finite number; {advice}",
                edited)
    new_ids = [r[0] for r in sql.rows(con, "reconcile.sql", "new_runs", ids)]
    for run_id in new_ids:
        problem = names.run_id_problem(run_id)
        if problem:
            _refuse(f"a new run whose {problem}",
                    f"the table runs was changed outside irw: {problem}", edited)
    sql.run(con, "reconcile.sql", "rerank", ids, sql.render("rerank.sql").strip())
    if gone:
        sql.run(con, "reconcile.sql", "forget_runs", {"ids": gone, "collection": collection})
    update_bases(con, collection, present + gone)
    state.record_runs(con, collection, present + gone)
    return refresh_scores(con, runs=(collection, present)) if present else 0
