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

app = typer.Typer(
    help="irwarehouse: load TREC runs and qrels into DuckDB, evaluate them with SQL measures, "
         "and study the evaluation itself.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
load_app = typer.Typer(help="Load runs, qrels and run metadata.", no_args_is_help=True)
runs_app = typer.Typer(help="Inspect the loaded runs.", no_args_is_help=True)
qrels_app = typer.Typer(help="Inspect and manage qrels.", no_args_is_help=True)
app.add_typer(load_app, name="load")
app.add_typer(runs_app, name="runs")
app.add_typer(qrels_app, name="qrels")

FormatOpt = typer.Option("table", "--format", "-f", help="table | csv | json")
QrelsOpt = typer.Option(None, "--qrels", "-q", help="Qrels name (default: the only one loaded from a file).")
RunsOpt = typer.Option("all", "--runs", "-r", help="Run spec: all, pooled, team:NAME, deeply-judged[:M], @FILE or run ids, comma-separated.")
TopicsOpt = typer.Option("qrels", "--topics", help="Topic set: qrels (topics with a relevant document) | run (trec_eval default) | all (trec_eval -c).")


def _db_path(ctx: typer.Context) -> str:
    root = ctx.find_root()
    return (root.obj or {}).get("db") or db.resolve_path(None)


def command(group: typer.Typer, name: str | None = None):
    """Register a command; an IrwError becomes ``error: ...`` on stderr and exit status 1."""
    def wrap(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except IrwError as exc:
                typer.echo(f"error: {exc}", err=True)
                raise typer.Exit(1) from None
            except duckdb.Error as exc:
                typer.echo(f"error: database: {exc}", err=True)
                raise typer.Exit(1) from None
        return group.command(name)(inner)
    return wrap


@contextlib.contextmanager
def open_warehouse(ctx: typer.Context, read_only: bool = False, create: bool = False):
    """The warehouse for one command, closed when the command ends: read-only for commands
    that only read (other readers may share it), created only by commands that load."""
    obj = ctx.find_root().obj or {}
    con = db.connect(_db_path(ctx), read_only=read_only, create=create, wait=obj.get("wait"),
                     notify=lambda message: say(f"note: {message}"))
    try:
        yield con
    finally:
        con.close()


def staging(ctx: typer.Context) -> db.Staging:
    """A load's staging connection, the warehouse attached for the final transaction only
    (created if need be)."""
    obj = ctx.find_root().obj or {}
    return db.Staging(_db_path(ctx), wait=obj.get("wait"), notify=lambda m: say(f"note: {m}"))


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


@app.callback()
def main_callback(
    ctx: typer.Context,
    db_path: Optional[str] = typer.Option(
        None, "--db", envvar="IRW_DB",
        help=f"The warehouse file (default ./{db.DEFAULT_DB}; ':memory:' for a throw-away one)."),
    wait: Optional[float] = typer.Option(
        None, "--wait", envvar="IRW_WAIT", metavar="SECONDS",
        help=f"How long to wait for a warehouse another process holds (default {db.DEFAULT_WAIT:g})."),
):
    ctx.obj = {"db": db.resolve_path(db_path), "wait": wait}
