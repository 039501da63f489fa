"""``irw experiment NAME ... --out DIR``: the papers' analyses.

Each module of :mod:`irwarehouse.experiments` with a ``register(experiment_app)`` function
adds its command here. The modules (numpy, pandas, scipy, matplotlib) are imported when an
``irw experiment ...`` command line needs them, not for every ``irw`` command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import typer

from .. import output
from .app import IrwGroup, app, check_format, open_warehouse, say

if TYPE_CHECKING:
    from ..experiments.base import Experiment, ExperimentContext

_registered = False


def _register_experiments() -> None:
    """Import the experiment modules once; each registers its command on experiment_app."""
    global _registered
    if _registered:
        return
    import importlib
    import pkgutil

    from .. import experiments

    for info in pkgutil.iter_modules(experiments.__path__):
        module = importlib.import_module(f"{experiments.__name__}.{info.name}")
        if hasattr(module, "register"):
            module.register(experiment_app)
    _registered = True


class _ExperimentGroup(IrwGroup):
    """``irw experiment``: its commands are registered when it is used."""

    def _load(self) -> None:
        if not self.commands:
            _register_experiments()
            self.commands.update(typer.main.get_group(experiment_app).commands)

    def list_commands(self, ctx):
        self._load()
        return super().list_commands(ctx)

    def get_command(self, ctx, cmd_name):
        self._load()
        return super().get_command(ctx, cmd_name)


experiment_app = typer.Typer(help="The meta-evaluation analyses of the papers: tables, figures and a report.",
                             no_args_is_help=True, cls=_ExperimentGroup)
app.add_typer(experiment_app, name="experiment", cls=_ExperimentGroup)

OutOpt = typer.Option(..., "--out", "-o", help="Output directory (tables as CSV, figures as PNG, report.md).")
FormatOpt = typer.Option("table", "--format", "-f", help="table | csv | json: also print the main table on stdout.")


def run_experiment(ctx: typer.Context, experiment: Experiment, out: str, fmt: str,
                   body: Callable[[ExperimentContext], str], read_only: bool = False) -> None:
    """Run ``body`` (which returns the name of its main table), write the report, print."""
    import pandas as pd

    from ..experiments.base import ExperimentContext

    check_format(fmt)
    with open_warehouse(ctx, create=True) as con:  # the experiment's tables are kept in it
        ectx = ExperimentContext(con, experiment, out)
        main = body(ectx)
        report = ectx.finish()
    say(f"{experiment.title}: {len(ectx.tables)} tables in {out}; report: {report}")
    output.emit(ectx.tables.get(main, pd.DataFrame()), fmt)

