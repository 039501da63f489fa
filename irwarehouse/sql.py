"""The SQL of irw: the Jinja2 templates in ``sql/``, rendered for an SQL engine (a dialect),
and the one quoting helper.

Every SQL statement irw runs is rendered from ``sql/``: whole templates (:func:`render`), or
the macros of a template used as a library of named statements (:func:`module`, e.g.
``module("pools.sql").select(...)``). Values supplied by users reach SQL only as bound
parameters, or -- where SQL needs an identifier or a literal inside a template -- through
:func:`quote_ident` / :func:`quote_literal` / :func:`sql_number`. The dialects
(:data:`DIALECTS`) are the branches of ``sql/_dialect.sql``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

from .errors import IrwError

def sql_dir() -> Path:
    """Where the templates are: inside the installed package, or ``sql/`` of a checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "sql", here.parent / "sql"):
        if (candidate / "schema.sql").is_file():
            return candidate
    raise IrwError(f"SQL templates not found next to {here}: the installation is incomplete")


def quote_ident(name: str, dialect: str = "duckdb") -> str:
    """Quote an SQL identifier (the only way a user-supplied name becomes an identifier);
    Spark SQL quotes identifiers with backticks."""
    if dialect == "spark":
        return "`" + str(name).replace("`", "``") + "`"
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

    class Cache(jinja2.FileSystemBytecodeCache):
        """Jinja's per-user temporary cache of compiled templates, kept between processes;
        a cache that cannot be read or written (a full or read-only TMPDIR) is done
        without: the templates are compiled again, and the command goes on."""

        def load_bytecode(self, bucket):
            try:
                super().load_bytecode(bucket)
            except (OSError, EOFError, ValueError):
                bucket.reset()

        def dump_bytecode(self, bucket):
            try:
                super().dump_bytecode(bucket)
            except OSError:
                pass

    try:
        cache = Cache()
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


def run_script(con, template: str, params: dict | None = None, **context) -> None:
    """Run every statement of a rendered template, binding the ``$name`` parameters it uses."""
    _execute(con, render(template, **context), params)


def run(con, template: str, name: str, params: dict | None = None, *args, **kwargs) -> None:
    """Run the statements of the macro ``name`` of ``sql/<template>`` (a library of named
    statements; several separated by ``;`` at line ends), each binding the ``$name``
    parameters of ``params`` it uses."""
    _execute(con, statement(template, name, *args, **kwargs), params)


def rows(con, template: str, name: str, params: dict | None = None, *args) -> list[tuple]:
    """The rows of the query that is the macro ``name`` of ``sql/<template>``, binding the
    ``$name`` parameters of ``params`` it uses."""
    query = statement(template, name, *args)
    return con.execute(query, used(params or {}, query)).fetchall()


def _execute(con, text: str, params: dict | None) -> None:
    """Run the statements of ``text`` one by one, each with the parameters it binds."""
    for stmt in split_statements(text):
        bound = used(params or {}, stmt)
        con.execute(stmt, bound) if bound else con.execute(stmt)


def used(params: dict, sql: str) -> dict:
    """The parameters of ``params`` that the SQL text binds (``$name``; Spark's ``:name``)."""
    import re

    names = set(re.findall(r"(?<![:$\w])[$:]([A-Za-z_]\w*)", sql))
    return {k: v for k, v in params.items() if k in names}


def statement(template: str, name: str, *args, dialect: str = "duckdb", **kwargs) -> str:
    """The SQL of the macro ``name`` of ``sql/<template>`` (a library of named statements),
    rendered for ``dialect``."""
    return str(getattr(module(template, dialect), name)(*args, **kwargs)).strip()
