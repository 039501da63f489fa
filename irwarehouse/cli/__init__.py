"""The ``irw`` command line: ``main`` is the console entry point (``irw = irwarehouse.cli:main``);
``app`` is the typer application it runs.

Each module registers its commands on the shared application in ``app.py``.
"""

import sys

from . import core  # noqa: F401  (registers the commands)
from . import pools  # noqa: F401
from . import stats  # noqa: F401
from . import experiments  # noqa: F401
from . import standardize  # noqa: F401
from . import export  # noqa: F401
from . import report  # noqa: F401
from . import spark  # noqa: F401
from .app import app

__all__ = ["app", "main"]


def main() -> None:
    """Run ``irw``, then leave without tearing the interpreter down: unloading the modules and
    the final garbage collection take longer than a short command's own work. Exit handlers
    still run and the output is flushed first."""
    import atexit
    import os

    try:
        app(prog_name="irw")
        code = 0
    except SystemExit as exc:
        code = exc.code
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
