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
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import duckdb

from .errors import IrwError

DEFAULT_DB = "irw.duckdb"
SCHEMA_VERSION = "3"
# Templates run (in order) whenever a warehouse is opened for writing: tables, then views.
SCHEMA_TEMPLATES = ["schema.sql", "views.sql", "pools.sql"]
SCHEMA_TEMPLATES.append("standardize_schema.sql")  # score standardization (issue 5)


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


def quote_literal(value: str) -> str:
    """Quote an SQL string literal (for the rare places a bound parameter cannot go)."""
    return "'" + str(value).replace("'", "''") + "'"


def sql_number(value) -> str:
    """Render a validated number as an SQL literal; anything else is refused."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"not a number: {value!r}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"not a finite number: {value!r}")
        return repr(float(value)) + "::DOUBLE"
    return str(int(value))


@lru_cache(maxsize=1)
def _env() -> "jinja2.Environment":
    import jinja2

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
    env.filters["literal"] = quote_literal
    env.filters["num"] = sql_number
    return env


def module(template: str):
    """A template as a module of macros (used for the measure files)."""
    return _env().get_template(template).module


def render(template: str, **context) -> str:
    """Render ``sql/<template>`` with ``context``."""
    return _env().get_template(template).render(**context)


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


def connect(path: str | None = None, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open (and if needed create) the warehouse; the schema is created on first write."""
    path = resolve_path(path)
    if read_only and path != ":memory:" and not Path(path).exists():
        raise IrwError(f"no warehouse at {path}: load runs or qrels first (irw load ...)")
    try:
        con = duckdb.connect(path, read_only=read_only and path != ":memory:")
    except duckdb.Error as exc:
        raise IrwError(f"cannot open the warehouse {path}: {exc}") from exc
    if not read_only or path == ":memory:":
        ensure_schema(con)
    return con


def schema_fingerprint() -> str:
    """A digest of everything ensure_schema creates: the layout version, the SQL templates
    and the measure catalogue."""
    from .measures import catalogue_rows  # local import: measures imports db

    digest = hashlib.sha256(f"{SCHEMA_VERSION}\n{SCHEMA_TEMPLATES}\n".encode())
    for path in sorted(sql_dir().rglob("*.sql")):
        digest.update(f"{path.relative_to(sql_dir())}\n".encode() + path.read_bytes())
    digest.update(repr(catalogue_rows()).encode())
    return digest.hexdigest()


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create the tables, views and macros (idempotent) and refresh the measure catalogue --
    unless the warehouse was last set up from the same templates and catalogue (its
    fingerprint is kept in irw_meta), which saves every command the rendering."""
    from .measures import catalogue_rows  # local import: measures imports db

    fingerprint = schema_fingerprint()
    stored = _stored_meta(con)
    if stored.get("schema_fingerprint") == fingerprint and stored.get("schema_version") == SCHEMA_VERSION:
        return
    with transaction(con):
        if stored.get("schema_version") not in (None, SCHEMA_VERSION):
            # caches are rebuilt on demand, so a new layout simply replaces them
            con.execute("DROP TABLE IF EXISTS irw_base")
            con.execute("DROP TABLE IF EXISTS irw_base_built")
        for template in SCHEMA_TEMPLATES:
            run_script(con, template)
        con.execute("DELETE FROM measures")
        con.executemany("INSERT INTO measures VALUES (?, ?, ?, ?, ?)", catalogue_rows())
        con.executemany("INSERT OR REPLACE INTO irw_meta VALUES (?, ?)",
                        [("schema_version", SCHEMA_VERSION), ("schema_fingerprint", fingerprint)])


def _stored_meta(con) -> dict[str, str]:
    try:  # (not via information_schema: as a connection's first query that costs 50 ms)
        return dict(con.execute("SELECT key, value FROM irw_meta").fetchall())
    except duckdb.CatalogException:  # a new warehouse
        return {}


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection):
    """All or nothing: commit on success, roll back on any exception."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    else:
        con.execute("COMMIT")


def update_bases(con: duckdb.DuckDBPyConnection, run_ids: list[str]) -> None:
    """Bring every materialized base up to date after ``run_ids`` were loaded, replaced or
    dropped: their rows are recomputed from what ``runs`` now holds; the other runs' rows
    stay (a run's base rows depend on that run only)."""
    params = {"ids": list(run_ids)}
    for (qrels,) in con.execute("SELECT qrels FROM irw_base_built ORDER BY qrels").fetchall():
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
