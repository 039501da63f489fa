"""The ``irw`` application object and what every command shares: the warehouse connection,
error handling and the ``--format`` convention. Commands live in the sibling modules."""

from __future__ import annotations

import contextlib
import functools
import math
import sys
from typing import Optional

import duckdb
import typer

try:  # typer vendors click in its later releases; before, it depends on it
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover - older typer
    from click import exceptions as click_errors

from .. import api, output
from ..errors import Interrupts, IrwError, IrwNote, duckdb_problem, one_line, shown

def _plain_metavar(param) -> None:
    """Help shows what to type, not Python types: flags take no value (no ``<bool>``), an
    option's value is named after the option (``--order ORDER``), an argument by its name
    (``PATHS...``)."""
    if param.param_type_name == "argument":
        if getattr(param, "_irw_plain", False):
            return
        param._irw_plain = True
        if param.metavar is None:  # an argument's own metavar (e.g. "[QRELS] RUN_A RUN_B") is kept
            param.metavar = param.name.upper() + ("..." if param.nargs != 1 else "")
        if hasattr(param, "display_type_rich"):  # the help's type column: nothing
            param.display_type_rich = lambda ctx: None
        else:  # (typer before 0.29 asks the type for it)
            import copy

            quiet = copy.copy(param.type)
            quiet.get_metavar = lambda *args, **kwargs: ""
            param.type = quiet
    elif param.metavar is not None:
        return
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


def _once_each(command, ctx, args: list[str]) -> None:
    """An option that takes one value may be given once: ``--qrels a --qrels b`` would keep
    the last one silently, so it is a usage error (so are both sides of a flag pair, e.g.
    ``--store --no-store``). Options that take several values are repeatable."""
    names: dict[str, tuple[str, int, str]] = {}  # spelling -> (parameter, side, its name)
    for param in command.get_params(ctx):
        if (getattr(param, "param_type_name", "") == "option" and not getattr(param, "multiple", False)
                and not getattr(param, "count", False)):
            for side, opts in enumerate((param.opts, getattr(param, "secondary_opts", ()))):
                for opt in opts:
                    names[opt] = (param.name, side, max(opts, key=len))
    seen: dict[str, tuple[int, str]] = {}
    for arg in args:
        if arg == "--":
            break
        opt = arg.split("=", 1)[0] if arg.startswith("--") else arg
        if opt not in names:
            continue
        name, side, spelled = names[opt]
        if name in seen:
            first_side, first = seen[name]
            raise click_errors.UsageError(
                f"option {spelled} is given twice" if side == first_side else
                f"options {first} and {spelled} are given together: give one", ctx)
        seen[name] = (side, spelled)


class IrwCommand(_PlainHelp, typer.core.TyperCommand):
    def parse_args(self, ctx, args):
        _once_each(self, ctx, list(args))
        return super().parse_args(ctx, args)


class IrwGroup(_PlainHelp, typer.core.TyperGroup):
    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        """Every failure, usage errors included, is one line ``error: ...`` on stderr (a usage
        error adds one line saying where the help is) with exit status 2 for usage, 1
        otherwise, 130 when interrupted before anything was kept."""
        _reported.clear()
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            if code == 130 and not _reported:  # interrupted outside a command (while parsing)
                typer.echo("error: interrupted; nothing was changed", err=True)
        except click_errors.UsageError as exc:
            _usage_error(exc)
            code = 2
        except click_errors.ClickException as exc:
            typer.echo(f"error: {one_line(exc.format_message())}", err=True)
            code = exc.exit_code
        except typer.Abort:
            typer.echo("error: interrupted; nothing was changed", err=True)
            code = 130
        except BrokenPipeError:
            code = _broken_pipe()
        if not standalone_mode:
            return code
        sys.exit(code if isinstance(code, int) else 0)


def _usage_error(exc) -> None:
    """A usage error: its message, then where the help is (two lines)."""
    message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    typer.echo(f"error: {one_line(message)}", err=True)
    ctx = getattr(exc, "ctx", None)
    words = ctx.command_path.split()[1:] if ctx is not None else []
    typer.echo(f"(see {' '.join(['irw', *words])} --help)", err=True)


def _broken_pipe() -> int:
    """The reader of stdout went away (``irw ... | head``): stop quietly."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 141  # 128 + SIGPIPE, as a shell reports a program a closed pipe stopped


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
qrels_app = typer.Typer(help="Inspect and manage qrels, and compare two judgment sets (e.g. human and automatic): irw qrels compare A B (agreement, kappa), irw qrels rankings A B (the run orderings each gives).", no_args_is_help=True)
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
RelLevelOpt = typer.Option(
    None, "--rel-level", metavar="L",
    help="Relevance threshold of the binary measures (AP, P@k, RR...): grade >= L is relevant "
         "(trec_eval -l; default 1). On qrels graded beyond 1 (TREC DL: 0-3) a note says which "
         "measures count grade 1; giving L, 1 included, silences it.")

TiesOpt = typer.Option(
    "trec_eval", "--ties", metavar="POLICY",
    help="Tie policy: how the documents a ranking's order does not tell apart (equal scores) are "
         "ranked: " + "; ".join(f"{p.name}: {p.means}" for p in api.TIE_POLICIES.values()) + ".")
ByOpt = typer.Option("run", "--by", help="run | system: a row per system (run_meta.system; a run without one is its own), its per-topic score the mean of its runs', with their number and spread.")


def _db_path(ctx: typer.Context) -> str | None:
    return (ctx.find_root().obj or {}).get("db")


_reported: list[str] = []  # the error this process printed


def fail(message: str, status: int = 1) -> None:
    """End the command with ``error: <first line of message>`` on stderr (printable, cut
    when very long: errors.one_line)."""
    _reported.append(one_line(message))
    typer.echo(f"error: {_reported[-1]}", err=True)
    raise typer.Exit(status)


_noted: set[str] = set()


def _show_note(message, category, filename, lineno, file=None, line=None) -> None:
    """Print a note once per command (a command that evaluates several times would repeat
    it); a library's warning is not the user's business on the command line."""
    if issubclass(category, IrwNote):
        text = one_line(str(message))
        if text not in _noted:
            _noted.add(text)
            say(text)


def command(group: typer.Typer, name: str | None = None, aliases: tuple = ()):
    """Register a command. Every failure ends it with one line ``error: ...`` on stderr and
    exit status 1: never a traceback. Ctrl-C before anything was committed ends it with
    status 130 and nothing changed; after the commit the command finishes and reports what
    it kept (Interrupts). Notes (errors.note) are printed as ``note: ...`` on stderr.
    ``aliases``: (group, name) pairs under which the command is also reachable, hidden from
    help (former names)."""
    def wrap(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            import signal
            import warnings

            previous = signal.signal(signal.SIGINT, Interrupts.handler)
            Interrupts.reset(keep=True)
            _noted.clear()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("always", IrwNote)
                    warnings.showwarning = _show_note
                    result = fn(*args, **kwargs)
                if Interrupts.requested and not Interrupts.commits:
                    raise KeyboardInterrupt  # taken for an error somewhere, and carried on
                return result
            except IrwError as exc:
                fail(str(exc))
            except BrokenPipeError:
                raise typer.Exit(_broken_pipe())
            except Exception as exc:
                if type(exc).__module__.split(".")[0] in ("click", "typer"):
                    raise  # exit, abort and usage errors: the command line handles them
                if Interrupts.caused(exc):
                    fail("interrupted; nothing was changed", status=130)
                if isinstance(exc, duckdb.Error):
                    fail(duckdb_problem(exc, api.memory_limit_text()))
                if isinstance(exc, MemoryError):
                    fail(f"out of memory: {exc}; ask for less (fewer samples, runs or topics, "
                         "a smaller --n), or free memory")
                if isinstance(exc, OSError):
                    fail(f"{exc.filename}: {exc.strerror}" if exc.filename else str(exc))
                # a defect: still one line, and how to report it
                fail(f"unexpected {type(exc).__name__}: {exc} (this is a bug in irwarehouse; "
                     "please report it with the command that caused it)")
            except KeyboardInterrupt:
                fail("interrupted; nothing was changed", status=130)
            finally:
                Interrupts.reset(keep=False)
                signal.signal(signal.SIGINT, previous)
        for other, old in aliases:
            other.command(old, cls=IrwCommand, hidden=True)(inner)
        return group.command(name, cls=IrwCommand)(inner)
    return wrap


@contextlib.contextmanager
def open_warehouse(ctx: typer.Context, read_only: bool = False, create: bool = False):
    """The warehouse of one command (irwarehouse.api.Warehouse), closed when the command ends:
    read-only for commands that only read (other readers may share it), created only by
    commands that load. What it notes on opening is printed as ``note: ...``."""
    obj = ctx.find_root().obj or {}
    w = api.Warehouse(_db_path(ctx), read_only=read_only, create=create, wait=obj.get("wait"),
                      memory_limit=obj.get("memory"), notify=lambda message: say(f"note: {message}"))
    try:
        yield w
    finally:
        w.close()


def check_format(fmt: str, allowed=("table", "csv", "json")) -> None:
    if fmt not in allowed:
        raise IrwError(f"unknown format {fmt!r}; valid: {', '.join(allowed)}")


def show(ctx: typer.Context, fmt: str, read, **emit) -> None:
    """What a command that only reads does: check the format, call ``read`` with the warehouse
    opened read-only and print what it returns (``emit``: output.emit's options)."""
    check_format(fmt)
    with open_warehouse(ctx, read_only=True) as w:
        output.emit(read(w), fmt, **emit)


def remove(ctx: typer.Context, what: str, drop) -> None:
    """What a command that removes something does: call ``drop`` with the warehouse opened for
    writing, then say ``dropped WHAT``."""
    with open_warehouse(ctx) as w:
        drop(w)
    say(f"dropped {what}")


progress_callback = output.progress_callback  # a bar on a terminal, None elsewhere


def say(message: str) -> None:
    """Progress and summaries go to stderr, so stdout stays machine-readable, each one
    printable line (output.say)."""
    output.say(message)


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
        help=f"The warehouse file (default ./{api.DEFAULT_DB}; ':memory:' for a throw-away one)."),
    wait: Optional[float] = typer.Option(
        None, "--wait", envvar="IRW_WAIT", metavar="SECONDS",
        help=f"How long to wait for a warehouse another process holds (default {api.DEFAULT_WAIT:g})."),
    memory: Optional[str] = typer.Option(
        None, "--memory-limit", envvar="IRW_MEMORY_LIMIT", metavar="SIZE",
        help="How much memory DuckDB may use before it spills to a temporary directory, e.g. "
             "4GB (default: half the machine's memory, at most 2 GiB)."),
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                 help="Print the version of irwarehouse and exit."),
):
    if db_path is not None and not db_path.strip():
        raise typer.BadParameter("the warehouse's path is empty", param_hint="--db")
    if wait is not None and not (math.isfinite(wait) and wait >= 0):
        raise typer.BadParameter(f"{shown(wait)} is not a number of seconds >= 0", param_hint="--wait")
    if memory is not None:
        try:
            api.check_settings(memory_limit=memory)
        except IrwError as exc:
            raise typer.BadParameter(str(exc), param_hint="--memory-limit") from None
    ctx.obj = {"db": db_path, "wait": wait, "memory": memory}
