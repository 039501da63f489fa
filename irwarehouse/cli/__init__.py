"""The ``irw`` command line: ``main`` is the console entry point (``irw = irwarehouse.cli:main``);
``app`` is the typer application it runs.

Each module registers its commands on the shared application in ``app.py``. They are
imported by :func:`main` after it has taken Ctrl-C in hand (and on first use of ``app``), so
that an interrupt while the program starts ends it with one line, not a traceback.
"""

import sys

__all__ = ["app", "main"]


MODULES = ("core", "pools", "stats", "judges", "experiments", "standardize", "export", "report", "spark", "repro")

# The modules that register the commands under each first word: `irw eval ...` imports the
# command modules that define what `eval` runs, not all of them (each module costs a short
# command its import, and typer builds every registered command before running one). Any
# other first word (none, --help, a mistyped command) imports them all. tests/test_cli.py
# checks that each entry gives the same commands as the whole application.
COMMANDS = {
    "eval": ("core",), "measures": ("core",), "refresh": ("core",), "sql": ("core",),
    "qrels": ("core", "judges"), "load": ("core", "spark"), "runs": ("core", "pools"),
    "collections": ("core", "standardize"), "pool": ("pools",),
    "ci": ("stats",), "compare": ("stats",), "correlate": ("stats",), "discpower": ("stats",),
    "power": ("stats",), "pvalues": ("stats",), "summary": ("stats",), "ties": ("stats",),
    "experiment": ("experiments",),
    "splits": ("standardize",), "standardize": ("standardize",), "export": ("export",),
    "publish": ("export",), "report": ("report",), "spark": ("spark",), "trec-eval": ("core",),
    "repro": ("repro",),
}
# The options of `irw` itself that take a value (they may come before the command).
_VALUED = ("--db", "--wait", "--memory-limit")


def command_word(args: list[str]) -> str | None:
    """The command of an ``irw`` command line (its first word after irw's own options)."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in _VALUED:
            i += 2
        elif arg.startswith("-"):
            i += 1
        else:
            return arg
    return None


def _load(args: list[str] | None = None):
    """The application, with the commands that ``args`` (a command line) may run registered
    (see COMMANDS); all of them when ``args`` is None. For a command line whose first word
    is a command, an application of that command (or group) alone: typer builds every
    command of the application it runs, and those the line cannot run are left out."""
    import importlib

    word = command_word(args) if args is not None else None
    modules = COMMANDS.get(word, MODULES) if args is not None else MODULES
    for name in modules:
        importlib.import_module(f"{__name__}.{name}")  # registers its commands
    from .app import app

    if modules == MODULES:
        globals()["app"] = app  # (importing the submodule .app bound its name to the module)
    if word in COMMANDS:
        return _only(app, word)
    return app


def _only(app, word: str):
    """A copy of the typer application ``app`` holding only the command or group named
    ``word`` (its callback, irw's own options, as they are)."""
    import copy

    alone = copy.copy(app)
    alone.registered_commands = [c for c in app.registered_commands if c.name == word]
    alone.registered_groups = [g for g in app.registered_groups if g.name == word]
    return alone


def __getattr__(name):
    if name == "app":
        return _load()
    raise AttributeError(f"module 'irwarehouse.cli' has no attribute {name!r}")


_signals: list[int] = []  # the signals that interrupted this process (SIGINT, SIGTERM)


def _interrupt(signum, frame):
    """Ctrl-C (SIGINT) before a command takes it in hand, and SIGTERM throughout: an interrupt
    as irwarehouse.errors.Interrupts treats it (the queries under way stopped, then
    KeyboardInterrupt; only noted while a COMMIT runs)."""
    from ..errors import Interrupts

    _signals.append(signum)
    Interrupts.handler(signum, frame)


def _status(code: int) -> int:
    """The exit status of an interrupted command: 130 for SIGINT, 143 for SIGTERM (128 + the
    signal's number, as a shell reports a process the signal ended)."""
    import signal

    if code == 130 and signal.SIGTERM in _signals:
        return 128 + signal.SIGTERM
    return code


def _number(text):
    """IRW_WAIT as a number (the application checks it; here a bad one is left to it)."""
    try:
        return float(text) if text else None
    except ValueError:
        return None


def main() -> None:
    """Run ``irw``, then leave without tearing the interpreter down: unloading the modules and
    the final garbage collection take longer than a short command's own work. Exit handlers
    still run and the output is flushed first. Ctrl-C before a command changed anything ends
    it with status 130 and one line (the commands keep what they committed:
    irwarehouse.errors.Interrupts); SIGTERM the same, with status 143. The queries under way
    are stopped at once (irwarehouse.connection.settings.interrupt_all), and the transaction
    in progress is rolled back."""
    import atexit
    import os
    import signal

    from .. import errors  # noqa: F401  (loaded before a signal's handler needs it)

    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        if sys.argv[1:2] == ["trec-eval"]:  # trec_eval's command line: without typer (trec_eval.py)
            from .trec_eval import run

            code = run(sys.argv[2:], wait=_number(os.environ.get("IRW_WAIT")),
                       memory_limit=os.environ.get("IRW_MEMORY_LIMIT") or None)
        else:
            app = _load(sys.argv[1:])
            app(prog_name="irw")
            code = 0
    except SystemExit as exc:
        code = exc.code
    except KeyboardInterrupt:
        print("error: interrupted; nothing was changed", file=sys.stderr)
        code = 130
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    code = _status(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (irw ... | head) or stream
            pass
    os._exit(code)
