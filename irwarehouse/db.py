"""The database: connecting, the schema, rendering the SQL templates in ``sql/``.

All SQL text the package runs is rendered from the Jinja2 templates in ``sql/``. Values
supplied by users reach SQL only as bound parameters, or -- where SQL needs an identifier
or a literal inside a template -- through :func:`quote_ident` / :func:`quote_literal` /
:func:`sql_number`, the one quoting helper.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import duckdb

from .errors import IrwError, shown

DEFAULT_DB = "irw.duckdb"
PUBLISHED_KEY = "published_from"  # irw_meta: this file is a copy irw publish wrote
SCHEMA_VERSION = "5"
# Templates run (in order) whenever a warehouse is opened for writing: tables, then views.
SCHEMA_TEMPLATES = ["schema.sql", "views.sql", "state.sql", "pools.sql", "standardize_schema.sql"]


def sql_dir() -> Path:
    """Where the templates are: inside the installed package, or ``sql/`` of a checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "sql", here.parent / "sql"):
        if (candidate / "schema.sql").is_file():
            return candidate
    raise IrwError(f"SQL templates not found next to {here}: the installation is incomplete")


def quote_ident(name: str) -> str:
    """Quote an SQL identifier (the only way a user-supplied name becomes an identifier)."""
    return '"' + str(name).replace('"', '""') + '"'


def quote_literal(value: str, dialect: str = "duckdb") -> str:
    """Quote an SQL string literal (for the rare places a bound parameter cannot go). Spark SQL
    reads a backslash as an escape and two quotes as two adjacent literals, so there both are
    escaped with a backslash."""
    if dialect == "spark":
        return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"
    return "'" + str(value).replace("'", "''") + "'"


def sql_number(value) -> str:
    """Render a validated number as an SQL literal; anything else is refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"not a number: {value!r}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"not a finite number: {value!r}")
        return f"CAST({float(value)!r} AS DOUBLE)"
    return str(int(value))


# The SQL engines the templates render for (the `dialect` of sql/_dialect.sql).
DIALECTS = ("duckdb", "spark")


@lru_cache(maxsize=len(DIALECTS))
def _env(dialect: str = "duckdb") -> "jinja2.Environment":
    import jinja2

    if dialect not in DIALECTS:
        raise ValueError(f"unknown SQL dialect {dialect!r}; valid: {', '.join(DIALECTS)}")

    try:  # compiled templates are kept between processes (jinja's per-user temporary cache)
        cache = jinja2.FileSystemBytecodeCache()
    except (OSError, RuntimeError):  # no safe temporary directory: compile every time
        cache = None
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(sql_dir())),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        bytecode_cache=cache,
    )
    env.filters["ident"] = quote_ident
    env.filters["literal"] = lambda value: quote_literal(value, dialect)
    env.filters["num"] = sql_number
    env.globals["dialect"] = dialect
    return env


def module(template: str, dialect: str = "duckdb"):
    """A template as a module of macros (used for the measure files), rendered for ``dialect``."""
    return _env(dialect).get_template(template).module


def render(template: str, dialect: str = "duckdb", **context) -> str:
    """Render ``sql/<template>`` with ``context`` for the SQL engine ``dialect`` (DIALECTS)."""
    return _env(dialect).get_template(template).render(**context)


def param(name: str, dialect: str = "duckdb") -> str:
    """The SQL text of the bound parameter ``name`` in ``dialect`` (sql/_dialect.sql)."""
    return str(module("_dialect.sql", dialect).param(name))


def split_statements(sql: str) -> list[str]:
    """Split a rendered script on ``;`` at line ends (templates keep one statement per ``;``)."""
    parts, current = [], []
    for line in sql.splitlines():
        current.append(line)
        if line.rstrip().endswith(";"):
            stmt = "\n".join(current).strip()
            if stmt.strip(";").strip():
                parts.append(stmt)
            current = []
    rest = "\n".join(current).strip()
    if rest:
        parts.append(rest)
    return parts


def run_script(con: duckdb.DuckDBPyConnection, template: str, params: dict | None = None,
               **context) -> None:
    """Run every statement of a rendered template, binding the ``$name`` parameters it uses."""
    params = params or {}
    for stmt in split_statements(render(template, **context)):
        used = {k: v for k, v in params.items() if f"${k}" in stmt}
        con.execute(stmt, used) if used else con.execute(stmt)


def resolve_path(path: str | None) -> str:
    return path or os.environ.get("IRW_DB") or DEFAULT_DB


DEFAULT_WAIT = 30.0  # seconds to wait for a warehouse another process holds

# DuckDB's memory: a share of the machine's memory, capped, so that a load or an evaluation
# holds a bounded resident size whatever the archive (DuckDB spills to disk beyond it).
MEMORY_SHARE = 0.5
MEMORY_CAP = 2 * 2**30  # bytes


_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([KMGT]i?B|B)\s*", re.I)


def memory_limit(limit: str | None = None) -> str:
    """DuckDB's memory limit: ``limit``, else $IRW_MEMORY_LIMIT, else half the machine's
    memory capped at 2 GiB (e.g. '2048MiB'). A limit is a positive size with its unit."""
    if limit is None:
        limit = os.environ.get("IRW_MEMORY_LIMIT") or None
    if limit is not None:
        text = str(limit).strip()
        match = _SIZE.fullmatch(text)
        if not match or float(match.group(1)) <= 0:
            raise IrwError(f"memory limit {shown(text)} is not a size (write e.g. 2GB, 1500MB, 4GiB)")
        return text
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = MEMORY_CAP
    return f"{min(int(total * MEMORY_SHARE), MEMORY_CAP) // 2**20}MiB"


_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def memory_bytes(con: duckdb.DuckDBPyConnection) -> int:
    """The connection's memory limit in bytes (DuckDB shows it as e.g. '1.9 GiB')."""
    text = con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
    match = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]*)\s*", str(text))
    if not match or match.group(2).lower() not in _UNITS:
        return MEMORY_CAP
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


_configured_limit: str | None = None


def memory_limit_text() -> str:
    """The memory limit the last connection was given (for messages)."""
    return _configured_limit or "the default"


def configure(con: duckdb.DuckDBPyConnection, limit: str | None = None) -> None:
    """Settings of every connection irw opens: no progress bar (irw's stdout is its own), the
    memory limit (:func:`memory_limit`), and a private directory, under the system's temporary
    directory, to which DuckDB spills what does not fit (created on demand and removed by
    DuckDB when the connection closes)."""
    import tempfile
    import uuid

    from .files import TEMP_PREFIX, sweep

    con.execute("SET enable_progress_bar = false")
    sweep()  # what killed irw processes left in the temporary directory
    spill = os.path.join(tempfile.gettempdir(), f"{TEMP_PREFIX}spill-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        con.execute(f"SET temp_directory = {quote_literal(spill)}")
    except duckdb.Error:
        pass  # a database this process already opened, and spilled from: it keeps its directory
    global _configured_limit
    value = memory_limit(limit)
    _configured_limit = value
    try:
        con.execute(f"SET memory_limit = {quote_literal(value)}")
    except duckdb.Error:
        raise IrwError(f"memory limit {shown(value)} is not a size (write e.g. 2GB, 1500MB, 4GiB)") from None


def connect(path: str | None = None, read_only: bool = False, notify=None, create: bool = True,
            wait: float | None = None, memory: str | None = None,
            prepared: bool = True) -> duckdb.DuckDBPyConnection:
    """Open the warehouse (creating it only with ``create``); the schema is created on first
    write.

    DuckDB lets one process write a file, or several read it: a file another process holds
    is retried for ``wait`` seconds (default DEFAULT_WAIT, or $IRW_WAIT), then reported with
    the process that holds it. Opening for writing brings the caches and stored scores in
    line with changes made to the tables outside irw (state.reconcile); opening read-only
    notes such changes (the engine then computes from the tables). ``notify(message)`` hears
    about either. ``memory``: DuckDB's memory limit (see :func:`memory_limit`).
    ``prepared=False``: only open and check the file; the caller runs :func:`prepare` (in
    its own transaction)."""
    path = resolve_path(path)
    if path != ":memory:" and not Path(path).exists() and (read_only or not create):
        raise IrwError(f"no warehouse at {path}: create one by loading qrels or runs "
                       "(irw load qrels FILE --name NAME, irw load runs FILES), or choose the file "
                       "with --db or IRW_DB")
    if not read_only and path != ":memory:" and not Path(path).exists():
        from .storage import create_file  # a new file gets the compatible storage version

        _check_new_file(path)
        create_file(path)
    con = _waiting(lambda: duckdb.connect(path, read_only=read_only and path != ":memory:"),
                   path, read_only, wait)
    try:
        configure(con, memory)
        check_warehouse(con, path)
        if prepared:
            with transaction(con):
                prepare(con, path, read_only, notify)
    except BaseException:
        con.close()
        raise
    return con


def prepare(con: duckdb.DuckDBPyConnection, path: str, read_only: bool, notify=None) -> None:
    """What opening a warehouse does before a command uses it: for writing, set up (or
    upgrade) the schema and bring caches and stored scores in line with changes made outside
    irw (state.reconcile); for reading, check the schema version and note such changes. Run
    inside the command's transaction, so that a command that fails leaves none of it."""
    from . import state  # local import: state imports db

    if not read_only or path == ":memory:":
        ensure_schema(con)
        if PUBLISHED_KEY in _stored_meta(con):  # a published copy written to is a warehouse
            con.execute("DELETE FROM irw_meta WHERE key = ?", [PUBLISHED_KEY])
        messages = state.reconcile(con)
    else:
        older = _stored_meta(con).get("schema_version")
        if older is not None and older != SCHEMA_VERSION:
            raise IrwError(f"{path} was written by an older irwarehouse (warehouse schema version "
                           f"{older}, now {SCHEMA_VERSION}): open it for writing once to upgrade "
                           "it (irw refresh)")
        changed = state.changed(con)
        messages = ([f"{', '.join(changed)} changed outside irw since irw last wrote: results "
                     "are computed from the tables (open the warehouse for writing, e.g. "
                     "`irw refresh`, to bring caches and stored scores in line)"]
                    if changed else [])
    if notify:
        for message in messages:
            notify(message)


def _check_new_file(path: str) -> None:
    """A new warehouse file can be made at ``path``, or an error that says why not."""
    parent = Path(path).absolute().parent
    if not parent.is_dir():
        raise IrwError(f"cannot create the warehouse {path}: the directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise IrwError(f"cannot create the warehouse {path}: the directory {parent} is not writable")


def open_problem(path: str, exc: Exception) -> str:
    """One line saying why DuckDB could not open ``path``."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "not a valid DuckDB database file" in text:
        return f"{path} is not a DuckDB database, so not an irw warehouse: choose another --db"
    return f"cannot open the warehouse {path}: {text}"


def check_warehouse(con: duckdb.DuckDBPyConnection, path: str) -> None:
    """Refuse a DuckDB database that is not an irw warehouse (it has tables or views but no
    irw schema version) or that a newer irwarehouse wrote (a newer schema version): irw
    neither reads nor changes them. An empty database is a new warehouse. A refused
    connection is closed."""
    problem = _warehouse_problem(con, path)
    if problem:
        con.close()
        raise IrwError(problem)


def _warehouse_problem(con: duckdb.DuckDBPyConnection, path: str) -> str | None:
    version = _stored_meta(con).get("schema_version")
    if version is None:
        names = {r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_catalog = current_database() AND table_schema = 'main'").fetchall()}
        if not names:
            return None
        shown = ", ".join(sorted(names)[:5]) + (", ..." if len(names) > 5 else "")
        return (f"{path} is a DuckDB database but not an irw warehouse (it holds {shown}); "
                "choose another --db")
    if not version.isdigit() or int(version) > int(SCHEMA_VERSION):
        return (f"{path} was written by a newer irwarehouse (warehouse schema version {version}; "
                f"this one reads up to {SCHEMA_VERSION}): upgrade irwarehouse")
    return None


class Staging:
    """A load's connection: an in-memory DuckDB (spilling beyond the memory limit, see
    :func:`configure`) in which files are read, checked and ranked,
    with the warehouse file attached to it only for the final transaction (``attach``), so
    that the warehouse is locked for that transaction alone and readers may use it while
    the files are read. For a ``:memory:`` warehouse, the warehouse itself (``attach`` None)."""

    def __init__(self, path: str | None = None, wait: float | None = None, notify=None,
                 create: bool = True, memory: str | None = None):
        self.path, self.wait, self.notify = resolve_path(path), wait, notify
        if self.path == ":memory:":
            self.con, self.attach = connect(self.path, notify=notify, memory=memory), None
            return
        if not create and not Path(self.path).exists():
            connect(self.path, create=False)  # the error that says how to create one
        self.con = duckdb.connect(":memory:")
        try:
            configure(self.con, memory)
        except BaseException:
            self.con.close()
            raise
        self.attach = self._attach

    @contextmanager
    def _attach(self):
        if not Path(self.path).exists():  # created only now: a failed first load leaves no file
            from .storage import create_file  # a new file gets the compatible storage version

            _check_new_file(self.path)
            create_file(self.path)
        _waiting(lambda: self.con.execute(f"ATTACH {quote_literal(self.path)} AS irw_warehouse"),
                 self.path, False, self.wait)
        try:
            self.con.execute("USE irw_warehouse")
            problem = _warehouse_problem(self.con, self.path)
            if problem:
                raise IrwError(problem)
            with transaction(self.con):  # the set-up and the load: one transaction
                prepare(self.con, self.path, False, self.notify)
                yield self.con
        finally:
            self.con.execute("USE memory")
            self.con.execute("DETACH irw_warehouse")

    def close(self) -> None:
        self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _waiting(open_fn, path: str, read_only: bool, wait: float | None):
    """``open_fn()``, retried while another process holds the file, for ``wait`` seconds."""
    import re
    import time

    if wait is None:
        text = os.environ.get("IRW_WAIT") or str(DEFAULT_WAIT)
        try:
            wait = float(text)
        except ValueError:
            wait = math.nan
        if not (math.isfinite(wait) and wait >= 0):
            raise IrwError(f"IRW_WAIT {shown(text)} is not a number of seconds >= 0")
    elif not (math.isfinite(wait) and wait >= 0):
        raise IrwError(f"wait {shown(wait)} is not a number of seconds >= 0")
    deadline = time.monotonic() + max(wait, 0.0)
    pause = 0.05
    while True:
        try:
            return open_fn()
        except duckdb.Error as exc:
            text = str(exc)
            if "lock" not in text.lower():
                raise IrwError(open_problem(path, exc)) from None
            if time.monotonic() >= deadline:
                pid = re.search(r"PID (\d+)", text)
                holder = f"process {pid.group(1)}{_command_of(pid.group(1))}" if pid else "another process"
                raise IrwError(
                    f"the warehouse {path} is in use by {holder}, which "
                    + ("is writing it" if read_only else "has it open")
                    + f"; waited {wait:g} s. Try again when it is done, wait longer (--wait SECONDS), "
                    "or read a published copy (irw publish) meanwhile") from None
            time.sleep(pause)
            pause = min(pause * 2, 0.5)


def _command_of(pid: str) -> str:
    """`` (command line)`` of a process, where the system tells it."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            words = fh.read().split(b"\0")
    except OSError:
        return ""
    text = " ".join(w.decode(errors="replace") for w in words if w)
    return f" ({text[:120]})" if text else ""


@lru_cache(maxsize=1)
def schema_statements() -> list[str]:
    """The statements that create the schema -- tables, views, macros, measure macros; each
    idempotent -- in the order they run. The one definition of the schema: :func:`ensure_schema`
    runs it, and ``irw export`` / ``irw publish`` (irwarehouse.export) build their copies from it."""
    from .evaluate import macro_definitions  # local import: evaluate imports db

    text = "".join(render(t) for t in SCHEMA_TEMPLATES)
    text += render("measure_macros.sql", macros=macro_definitions())
    return split_statements(text)


_CREATES = re.compile(r"CREATE\s+(?:OR\s+REPLACE\s+)?(TABLE|VIEW|MACRO)\s+(?:IF\s+NOT\s+EXISTS\s+)?"
                      r'(?:"?(\w+)"?\.)?"?(\w+)"?', re.I)


@lru_cache(maxsize=1)
def schema_objects() -> frozenset[tuple[str, str, str]]:
    """(kind, schema, name) of every table, view and macro the schema creates (kind TABLE,
    VIEW or MACRO)."""
    out = set()
    for statement in schema_statements():
        text = "\n".join(line for line in statement.splitlines() if not line.lstrip().startswith("--"))
        match = _CREATES.match(text.strip())
        if match:
            out.add((match.group(1).upper(), match.group(2) or "main", match.group(3)))
    return frozenset(out)


def missing_objects(con) -> list[str]:
    """The tables, views and macros of the schema that the warehouse lacks (e.g. dropped by a
    statement of ``irw sql --write``), as ``kind name``."""
    have = {("TABLE", r[0], r[1]) for r in con.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE NOT temporary "
        "AND database_name = current_database()").fetchall()}
    have |= {("VIEW", r[0], r[1]) for r in con.execute(
        "SELECT schema_name, view_name FROM duckdb_views() WHERE NOT temporary "
        "AND database_name = current_database()").fetchall()}
    have |= {("MACRO", r[0], r[1]) for r in con.execute(
        "SELECT schema_name, function_name FROM duckdb_functions() WHERE NOT internal "
        "AND database_name = current_database() AND function_type IN ('macro', 'table_macro')").fetchall()}
    return sorted(f"{kind.lower()} {name if schema == 'main' else schema + '.' + name}"
                  for kind, schema, name in schema_objects() - have)


def schema_fingerprint() -> str:
    """A digest of everything ensure_schema creates: the layout version, the SQL templates
    and the measure catalogue (cheap: the templates are not rendered)."""
    from .measures import catalogue_rows  # local import: measures imports db

    digest = hashlib.sha256(f"{SCHEMA_VERSION}\n{SCHEMA_TEMPLATES}\n".encode())
    for path in sorted(sql_dir().rglob("*.sql")):
        digest.update(f"{path.relative_to(sql_dir())}\n".encode() + path.read_bytes())
    digest.update(repr(catalogue_rows()).encode())
    return digest.hexdigest()


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create the tables, views and macros (idempotent) and refresh the measure catalogue;
    nothing to do when the warehouse already has this version's schema."""
    from . import state
    from .measures import catalogue_rows

    fingerprint = schema_fingerprint()
    meta = _stored_meta(con)
    stored = meta.get("schema_version")
    if meta.get("schema_fingerprint") == fingerprint and stored == SCHEMA_VERSION:
        return
    with transaction(con):
        if stored not in (None, SCHEMA_VERSION):
            # caches are rebuilt on demand, so a new layout simply replaces them
            for table in ("irw_base", "irw_base_built", "irw_run_state"):
                con.execute(f"DROP TABLE IF EXISTS {table}")
        moved = _set_aside_without_collection(con) if stored not in (None, SCHEMA_VERSION) else []
        for statement in schema_statements():
            con.execute(statement)
        for table in moved:  # what a warehouse of one collection held: collection 'default'
            con.execute(f"INSERT INTO {table} BY NAME SELECT *, ? AS collection FROM {table}_irw_v4",
                        [DEFAULT_COLLECTION])
            con.execute(f"DROP TABLE {table}_irw_v4")
        con.execute("DELETE FROM measures")
        con.executemany("INSERT INTO measures VALUES (?, ?, ?, ?, ?)", catalogue_rows())
        con.executemany("INSERT OR REPLACE INTO irw_meta VALUES (?, ?)",
                        [("schema_version", SCHEMA_VERSION), ("schema_fingerprint", fingerprint)])
        if stored not in (None, SCHEMA_VERSION):  # runs loaded by an older irw stand as they are
            state.record_runs(con)


# The tables that gained a collection column in schema version 5 (collections, issue of
# many test collections in one warehouse).
COLLECTION_TABLES = ("runs", "run_topics", "run_loads", "run_meta", "qrels_info", "scores",
                     "evaluations", "discpower_results", "pair_tests")
DEFAULT_COLLECTION = "default"


def _set_aside_without_collection(con) -> list[str]:
    """Rename the tables of an older warehouse that lack the collection column (so that the
    schema creates them anew, and their rows are copied into them); returns their names."""
    rows = con.execute(
        "SELECT table_name, bool_or(column_name = 'collection') FROM information_schema.columns "
        "WHERE table_catalog = current_database() AND table_schema = 'main' "
        "AND list_contains($tables, table_name) GROUP BY table_name",
        {"tables": list(COLLECTION_TABLES)}).fetchall()
    moved = sorted(name for name, has in rows if not has)
    for table in moved:
        con.execute(f"ALTER TABLE {table} RENAME TO {table}_irw_v4")
    return moved


def database_path(con) -> str | None:
    """The file of the connection's current database (None in memory)."""
    row = con.execute("SELECT path FROM duckdb_databases() "
                      "WHERE database_name = current_database()").fetchall()
    return row[0][0] if row and row[0][0] else None


def settle(con) -> None:
    """Finish the connection's pending result of execute() (DuckDB 2 refuses its relational
    API, ``con.sql``, while one is open; DuckDB 1.4 has none to finish)."""
    complete = getattr(con, "complete", None)
    if complete is not None:
        complete()


def register(con, name: str, frame) -> None:
    """``con.register(name, frame)`` after finishing a pending result (see :func:`settle`)."""
    settle(con)
    con.register(name, frame)


def unregister(con, name: str) -> None:
    """``con.unregister(name)`` after finishing a pending result (see :func:`settle`)."""
    settle(con)
    con.unregister(name)


def has_table(con, name: str, temporary: bool = False) -> bool:
    """Does the database (or, with ``temporary``, the session) have the table ``name``?
    (Asked rather than tried: inside a transaction a failed query aborts the transaction.)"""
    where = ("temporary" if temporary else
             "NOT temporary AND database_name = current_database() AND schema_name = 'main'")
    return con.execute(f"SELECT count(*) FROM duckdb_tables() WHERE {where} AND table_name = ?",
                       [name]).fetchall()[0][0] > 0


def _stored_meta(con) -> dict[str, str]:
    if not has_table(con, "irw_meta"):  # a new warehouse, or not a warehouse
        return {}
    return dict(con.execute("SELECT key, value FROM irw_meta").fetchall())


_open_transactions: dict[int, int] = {}


class Interrupts:
    """How irw treats Ctrl-C (SIGINT): as an interrupt (KeyboardInterrupt) until something
    is committed. While a COMMIT runs, and in a command after it committed (``keep``), an
    interrupt is only noted (``pending``): the work is kept and the command reports it, so
    that an interrupted command either changed nothing or says what it did."""

    deferring = 0      # > 0: inside a COMMIT
    keep = False       # after a commit, the rest of the command runs on (the command line)
    commits = 0        # transactions that changed a database, committed in this process
    pending = False    # an interrupt arrived while deferred
    requested = False  # an interrupt arrived before anything was committed: no COMMIT follows,
                       # even where code took the interrupt for an error and carried on

    @classmethod
    def handler(cls, signum, frame):
        if cls.deferring or (cls.keep and cls.commits):
            cls.pending = True
            return
        cls.requested = True
        raise KeyboardInterrupt

    @classmethod
    def check(cls) -> None:
        """Raise KeyboardInterrupt when an interrupt was requested (for code that catches a
        query's failure and carries on: an interrupted query fails too)."""
        if cls.requested:
            raise KeyboardInterrupt

    @classmethod
    def reset(cls, keep: bool) -> None:
        cls.keep, cls.commits, cls.pending, cls.requested = keep, 0, False, False

    @classmethod
    @contextmanager
    def deferred(cls):
        """Interrupts are noted, not raised, inside the block (main thread only: elsewhere
        signals do not arrive)."""
        import signal
        import threading

        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = signal.getsignal(signal.SIGINT)
        cls.deferring += 1
        if previous is not cls.handler:
            signal.signal(signal.SIGINT, cls.handler)
        try:
            yield
        finally:
            cls.deferring -= 1
            if previous is not cls.handler:
                signal.signal(signal.SIGINT, previous)


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection):
    """All or nothing: commit on success, roll back on any exception (an interrupt
    included). Nested uses join the outermost transaction (which alone commits or rolls
    back), so that a command is one transaction however its parts are written. The COMMIT
    itself is not interrupted (:class:`Interrupts`)."""
    key = id(con)
    if _open_transactions.get(key):
        _open_transactions[key] += 1
        try:
            yield con
        finally:
            _open_transactions[key] -= 1
        return
    con.execute("BEGIN TRANSACTION")
    _open_transactions[key] = 1
    try:
        yield con
    except BaseException:
        _open_transactions.pop(key, None)
        try:
            con.execute("ROLLBACK")
        except duckdb.Error:  # the connection is gone (closed, or interrupted for good)
            pass
        raise
    else:
        if Interrupts.requested:  # interrupted before: nothing is kept
            _open_transactions.pop(key, None)
            con.execute("ROLLBACK")
            raise KeyboardInterrupt
        _open_transactions.pop(key, None)
        writes = not _read_only(con)
        with Interrupts.deferred():
            con.execute("COMMIT")
            Interrupts.commits += writes


def _read_only(con) -> bool:
    """Is ``con`` a read-only connection (its commits keep nothing)?"""
    return con.execute("SELECT current_setting('access_mode')").fetchall()[0][0] == "read_only"


def in_transaction(con) -> bool:
    """Is an irw transaction open on ``con``?"""
    return bool(_open_transactions.get(id(con)))


def update_bases(con: duckdb.DuckDBPyConnection, collection: str, run_ids: list[str]) -> None:
    """Bring every materialized base of the qrels of ``collection`` up to date after its runs
    ``run_ids`` were loaded, replaced or dropped: their rows are recomputed from what ``runs``
    now holds; the other runs' rows stay (a run's base rows depend on that run only)."""
    params = {"ids": list(run_ids)}
    for (qrels,) in con.execute(
            "SELECT b.qrels FROM irw_base_built b JOIN qrels_info i ON i.qrels = b.qrels "
            "WHERE i.collection = ? ORDER BY b.qrels", [collection]).fetchall():
        params["q"] = qrels
        con.execute("DELETE FROM irw_base WHERE qrels = $q AND list_contains($ids, run_id)", params)
        con.execute("INSERT INTO irw_base SELECT * FROM irw_base_rows($q) "
                    "WHERE run_id IN (SELECT unnest($ids::VARCHAR[]))", params)


def invalidate_bases(con: duckdb.DuckDBPyConnection, qrels: str | None = None) -> None:
    """Forget cached base relations: all of them (runs changed) or one qrels's."""
    if qrels is None:
        con.execute("DELETE FROM irw_base")
        con.execute("DELETE FROM irw_base_built")
    else:
        con.execute("DELETE FROM irw_base WHERE qrels = ?", [qrels])
        con.execute("DELETE FROM irw_base_built WHERE qrels = ?", [qrels])
