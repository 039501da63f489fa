"""The ``irw`` application object and what every command shares: the warehouse connection,
error handling and the ``--format`` convention. Commands live in the sibling modules."""

from __future__ import annotations

import contextlib
import functools
from typing import Optional

import duckdb
import typer

from .. import db
from ..errors import IrwError

def _plain_metavar(param) -> None:
    """Help shows what to type, not Python types: flags take no value (no ``<bool>``), an
    option's value is named after the option (``--order ORDER``), an argument by its name
    (``PATHS...``)."""
    if param.metavar is not None:
        return
    if param.param_type_name == "argument":
        param.metavar = param.name.upper() + ("..." if param.nargs != 1 else "")
        if hasattr(param, "display_type_rich"):  # the help's type column: nothing
            param.display_type_rich = lambda ctx: None
        else:  # (typer before 0.29 asks the type for it)
            import copy

            quiet = copy.copy(param.type)
            quiet.get_metavar = lambda *args, **kwargs: ""
            param.type = quiet
    elif getattr(param, "is_flag", False) or getattr(param, "count", False):
        param.metavar = ""
    else:
        longest = max(param.opts, key=len)
        param.metavar = longest.lstrip("-").upper().replace("-", "_")


class _PlainHelp:
    """Help and usage lines in the conventional form (see :func:`_plain_metavar`)."""

    def get_params(self, ctx):
        params = super().get_params(ctx)
        for param in params:
            _plain_metavar(param)
        return params

    def collect_usage_pieces(self, ctx):
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                pieces.append(param.metavar if param.required else f"[{param.metavar}]")
        return pieces + ([self.subcommand_metavar] if getattr(self, "subcommand_metavar", None) else [])


class IrwCommand(_PlainHelp, typer.core.TyperCommand):
    pass


class IrwGroup(_PlainHelp, typer.core.TyperGroup):
    pass


class _Irw(typer.Typer):
    """The application: its command groups show help as :class:`IrwGroup` does."""

    def add_typer(self, typer_instance, **kwargs):
        kwargs.setdefault("cls", IrwGroup)
        return super().add_typer(typer_instance, **kwargs)


app = _Irw(
    help="irwarehouse: load TREC runs and qrels into DuckDB, evaluate them with SQL measures, "
         "and study the evaluation itself.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=IrwGroup,
)
load_app = typer.Typer(help="Load runs, qrels and run metadata.", no_args_is_help=True)
runs_app = typer.Typer(help="Inspect the loaded runs.", no_args_is_help=True)
qrels_app = typer.Typer(help="Inspect and manage qrels.", no_args_is_help=True)
collections_app = typer.Typer(help="The test collections of the warehouse.", no_args_is_help=True)
app.add_typer(load_app, name="load")
app.add_typer(runs_app, name="runs")
app.add_typer(qrels_app, name="qrels")
app.add_typer(collections_app, name="collections")

FormatOpt = typer.Option("table", "--format", "-f", help="table | csv | json")
QrelsOpt = typer.Option(None, "--qrels", "-q", help="Qrels name (default: the only one loaded from a file).")
RunsOpt = typer.Option("all", "--runs", "-r", help="Run spec: all, pooled, team:NAME, deeply-judged[:M], @FILE or run ids, comma-separated.")
# --collection: a load's target collection; for a command over a qrels, whose runs it uses.
LoadCollectionOpt = typer.Option(
    None, "--collection", metavar="NAME",
    help="The test collection they belong to (default: the warehouse's only collection, or 'default' in a new one).")
CollectionOpt = typer.Option(
    None, "--collection", metavar="NAME",
    help="Use the runs of this collection (default: the qrels's collection).")
TopicsOpt = typer.Option("qrels", "--topics", help="Topic set: qrels (topics with a relevant document) | run (trec_eval default) | all (trec_eval -c).")


def _db_path(ctx: typer.Context) -> str:
    root = ctx.find_root()
    return (root.obj or {}).get("db") or db.resolve_path(None)


def fail(message: str, status: int = 1) -> None:
    """End the command with ``error: <first line of message>`` on stderr."""
    lines = str(message).strip().splitlines() or ["failed"]
    typer.echo(f"error: {lines[0]}", err=True)
    raise typer.Exit(status)


def command(group: typer.Typer, name: str | None = None, aliases: tuple = ()):
    """Register a command. Every failure ends it with one line ``error: ...`` on stderr and
    exit status 1 (130 when interrupted): never a traceback. ``aliases``: (group, name) pairs
    under which the command is also reachable, hidden from help (former names)."""
    def wrap(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except IrwError as exc:
                fail(str(exc))
            except duckdb.Error as exc:
                fail(f"database: {exc}")
            except OSError as exc:
                fail(f"{exc.filename}: {exc.strerror}" if exc.filename else str(exc))
            except KeyboardInterrupt:
                fail("interrupted", status=130)
            except Exception as exc:  # a defect: still one line, and how to report it
                if type(exc).__module__.split(".")[0] in ("click", "typer"):
                    raise  # exit, abort and usage errors: the command line handles them
                fail(f"unexpected {type(exc).__name__}: {exc} (this is a bug in irwarehouse; "
                     "please report it with the command that caused it)")
        for other, old in aliases:
            other.command(old, cls=IrwCommand, hidden=True)(inner)
        return group.command(name, cls=IrwCommand)(inner)
    return wrap


@contextlib.contextmanager
def open_warehouse(ctx: typer.Context, read_only: bool = False, create: bool = False):
    """The warehouse for one command, closed when the command ends: read-only for commands
    that only read (other readers may share it), created only by commands that load."""
    obj = ctx.find_root().obj or {}
    con = db.connect(_db_path(ctx), read_only=read_only, create=create, wait=obj.get("wait"),
                     memory=obj.get("memory"),
                     notify=lambda message: say(f"note: {message}"))
    try:
        yield con
    finally:
        con.close()


def staging(ctx: typer.Context) -> db.Staging:
    """A load's staging connection, the warehouse attached for the final transaction only
    (created if need be)."""
    obj = ctx.find_root().obj or {}
    return db.Staging(_db_path(ctx), wait=obj.get("wait"), memory=obj.get("memory"),
                      notify=lambda m: say(f"note: {m}"))


def check_format(fmt: str, allowed=("table", "csv", "json")) -> None:
    if fmt not in allowed:
        raise IrwError(f"unknown format {fmt!r}; valid: {', '.join(allowed)}")


@contextlib.contextmanager
def progress_callback(label: str):
    """A ``progress(done, total)`` callback drawing a bar on a terminal (stderr), or None
    when not on one."""
    import sys

    if not sys.stderr.isatty():
        yield None
        return
    state: dict = {}

    def update(done: int, total: int) -> None:
        bar = state.get("bar")
        if bar is None:
            bar = typer.progressbar(length=total, label=label, file=sys.stderr)
            bar.__enter__()
            state["bar"] = bar
        bar.update(done - bar.pos)

    try:
        yield update
    finally:
        if "bar" in state:
            state["bar"].__exit__(None, None, None)


def say(message: str) -> None:
    """Progress and summaries go to stderr, so stdout stays machine-readable."""
    typer.echo(message, err=True)


def _print_version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"irw {__version__}")
        raise typer.Exit()


@app.callback()
def main_callback(
    ctx: typer.Context,
    db_path: Optional[str] = typer.Option(
        None, "--db", envvar="IRW_DB", metavar="PATH",
        help=f"The warehouse file (default ./{db.DEFAULT_DB}; ':memory:' for a throw-away one)."),
    wait: Optional[float] = typer.Option(
        None, "--wait", envvar="IRW_WAIT", metavar="SECONDS",
        help=f"How long to wait for a warehouse another process holds (default {db.DEFAULT_WAIT:g})."),
    memory: Optional[str] = typer.Option(
        None, "--memory-limit", envvar="IRW_MEMORY_LIMIT", metavar="SIZE",
        help="How much memory DuckDB may use before it spills to a temporary directory, e.g. "
             "4GB (default: half the machine's memory, at most 2 GiB)."),
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                 help="Print the version of irwarehouse and exit."),
):
    ctx.obj = {"db": db.resolve_path(db_path), "wait": wait, "memory": memory}
