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
import os
from functools import lru_cache
from pathlib import Path

from .errors import IrwError
from .version import __version__

@lru_cache(maxsize=None)
def sql_dir() -> Path:
    """Where the templates are: inside the installed package, or ``sql/`` of a checkout
    (looked up once a process)."""
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


# Rendered SQL kept between processes: a command that renders what an earlier one rendered
# takes the text from the cache and does not import Jinja2 at all (see kept()).
CACHE_ENTRIES = 500  # the renderings a cache directory keeps, the latest


def cache_dir() -> Path | None:
    """The cache of rendered SQL for these templates and this irw: ``irwarehouse/sql-<the
    fingerprint>/`` in the user's cache directory ($XDG_CACHE_HOME, else ~/.cache), a file per
    rendering; None where there is no home."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):
        return None
    return Path(base) / "irwarehouse" / f"sql-{fingerprint()}"


def _files(root: str, suffix: str, found: list[str]) -> list[str]:
    with os.scandir(root) as entries:
        for entry in entries:
            if entry.is_dir():
                if entry.name != "__pycache__":
                    _files(entry.path, suffix, found)
            elif entry.name.endswith(suffix):
                found.append(entry.path)
    return found


def template_files(root: str) -> list[str]:
    """The paths of the templates (``*.sql``) under the directory ``root``, unordered."""
    return _files(root, ".sql", [])


_fingerprints: dict[str, str] = {}  # templates directory -> fingerprint()
_digests: dict[str, bytes] = {}  # templates directory -> templates_digest()


def templates_digest() -> bytes:
    """A digest of every template: its path under sql/ and its text (read once a process)."""
    import hashlib

    templates = str(sql_dir())
    if templates not in _digests:
        digest = hashlib.blake2b(digest_size=32)
        start = len(os.path.join(templates, ""))
        for path in sorted(template_files(templates)):
            with open(path, "rb") as f:
                digest.update(path[start:].encode() + b"\0" + f.read() + b"\0")
        _digests[templates] = digest.digest()
    return _digests[templates]


def fingerprint() -> str:
    """A digest of what a rendering depends on beyond its arguments: irw's version, the
    text of every template (:func:`templates_digest`), and irw's Python modules (which build
    the templates' contexts), each by its path, size and modification time, as Python
    checks its bytecode."""
    import hashlib

    templates = str(sql_dir())
    if templates not in _fingerprints:
        digest = hashlib.blake2b(f"{__version__}\n".encode() + templates_digest(), digest_size=16)
        package = os.path.dirname(os.path.abspath(__file__))
        start = len(os.path.join(package, ""))
        for path in sorted(_files(package, ".py", [])):
            info = os.stat(path)
            digest.update(f"{path[start:]} {info.st_size} {info.st_mtime_ns}\n".encode())
        _fingerprints[templates] = digest.hexdigest()
    return _fingerprints[templates]


class _Kept:
    """The renderings this process used (key text -> SQL), each read from its file in the
    cache directory on first use; those it rendered (file name -> file text) are written when
    the process ends."""

    entries: dict[str, str] = {}
    new: dict[str, str] = {}
    registered = False


def _plain(value) -> bool:
    if value is None or isinstance(value, (str, int, float)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def _entry_name(key_text: str) -> str:
    import hashlib

    return hashlib.blake2b(key_text.encode(), digest_size=16).hexdigest() + ".sql"


def kept(key: tuple, build) -> str:
    """The SQL text ``build()`` renders, kept under ``key`` -- everything the rendering
    depends on besides the templates and irw's code (:func:`fingerprint`): plain values
    (strings, numbers, None, lists, tuples and dicts of them), written as ``repr`` writes
    them. A key holding anything else is not kept: the text is rendered every time. A
    rendering is one file of the cache directory (named by a digest of the key; it holds the
    key, a NUL, then the SQL), read only when a command uses it."""
    if not _plain(key):
        return build()
    text = repr(key)
    found = _Kept.entries.get(text)
    if found is None:
        name = _entry_name(text)
        found = _read_entry(name, text)
        if found is None:
            found = build()
            _Kept.new[name] = f"{text}\0{found}"
            if not _Kept.registered:
                _Kept.registered = True
                _write_at_exit()
        _Kept.entries[text] = found
    return found


def _read_entry(name: str, key_text: str) -> str | None:
    """The kept SQL of the key ``key_text`` (None: not kept, unreadable or damaged)."""
    try:
        directory = cache_dir()
        if directory is None:
            return None
        with open(directory / name, encoding="utf-8") as f:
            stored_key, sep, found = f.read().partition("\0")
    except (OSError, ValueError, IrwError):
        return None
    return found if sep and stored_key == key_text and found else None


def _write_at_exit() -> None:
    """Write the new renderings when the process ends, before this process's temporary
    directory is removed (files: the one file guard records there the names it writes to):
    that directory is made first, so that its removal, registered first, runs last."""
    import atexit

    from . import files

    try:
        files.temp_path("sql")
    except IrwError:
        return  # no temporary directory: nothing written, the renderings done again next time
    atexit.register(_write_cache)


def _write_cache() -> None:
    """Write this process's new renderings, each through irw's one file guard
    (files.write_text: written beside, then renamed), and keep the latest CACHE_ENTRIES of the
    directory; a cache that cannot be written is done without. Caches of other fingerprints
    untouched for 30 days are removed."""
    import shutil
    import time

    from . import files

    new, _Kept.new = _Kept.new, {}
    if not new:
        return
    try:
        directory = cache_dir()
        if directory is None:
            return
        directory.mkdir(parents=True, exist_ok=True)
        for name, text in new.items():
            files.write_text(str(directory / name), text, replace=True, what="cache of rendered SQL")
        with os.scandir(directory) as entries:
            kept_files = [(e.stat().st_mtime_ns, e.path) for e in entries if e.name.endswith(".sql")]
        for _, path in sorted(kept_files)[:max(0, len(kept_files) - CACHE_ENTRIES)]:
            os.unlink(path)
        for old in directory.parent.glob("sql-*"):
            if old != directory and old.stat().st_mtime < time.time() - 30 * 86400:
                shutil.rmtree(old) if old.is_dir() else old.unlink()
    except (OSError, IrwError):
        pass


def module(template: str, dialect: str = "duckdb"):
    """A template as a module of macros (used for the measure files), rendered for ``dialect``."""
    return _env(dialect).get_template(template).module


def render(template: str, dialect: str = "duckdb", **context) -> str:
    """Render ``sql/<template>`` with ``context`` for the SQL engine ``dialect`` (DIALECTS);
    kept between processes where the context is plain values (:func:`kept`)."""
    return kept(("render", template, dialect, context),
                lambda: _env(dialect).get_template(template).render(**context))


def param(name: str, dialect: str = "duckdb") -> str:
    """The SQL text of the bound parameter ``name`` in ``dialect`` (sql/_dialect.sql)."""
    return kept(("param", name, dialect), lambda: str(module("_dialect.sql", dialect).param(name)))


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
    rendered for ``dialect``; kept between processes where the arguments are plain values
    (:func:`kept`)."""
    return kept(("statement", template, name, args, kwargs, dialect),
                lambda: str(getattr(module(template, dialect), name)(*args, **kwargs)).strip())
