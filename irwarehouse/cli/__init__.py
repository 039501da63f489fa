"""The ``irw`` command line: ``main`` is the console entry point (``irw = irwarehouse.cli:main``);
``app`` is the typer application it runs.

Each module registers its commands on the shared application in ``app.py``. They are
imported by :func:`main` after it has taken Ctrl-C in hand (and on first use of ``app``), so
that an interrupt while the program starts ends it with one line, not a traceback.
"""

import sys

__all__ = ["app", "main"]


def _load():
    from . import core  # noqa: F401  (registers the commands)
    from . import pools  # noqa: F401
    from . import stats  # noqa: F401
    from . import judges  # noqa: F401
    from . import experiments  # noqa: F401
    from . import standardize  # noqa: F401
    from . import export  # noqa: F401
    from . import report  # noqa: F401
    from . import spark  # noqa: F401
    from .app import app

    globals()["app"] = app  # (importing the submodule .app bound its name to the module)
    return app


def __getattr__(name):
    if name == "app":
        return _load()
    raise AttributeError(f"module 'irwarehouse.cli' has no attribute {name!r}")


def _interrupt(signum, frame):
    raise KeyboardInterrupt


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
    it with status 130 and one line (the commands keep what they committed: db.Interrupts)."""
    import atexit
    import os
    import signal

    signal.signal(signal.SIGINT, _interrupt)
    try:
        if sys.argv[1:2] == ["trec-eval"]:  # trec_eval's command line: without typer (trec_eval.py)
            from .trec_eval import run

            code = run(sys.argv[2:], wait=_number(os.environ.get("IRW_WAIT")),
                       memory_limit=os.environ.get("IRW_MEMORY_LIMIT") or None)
        else:
            app = _load()
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
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (irw ... | head) or stream
            pass
    os._exit(code)
