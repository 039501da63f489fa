"""``irw experiment NAME ... --out DIR``: the papers' analyses.

Each module of :mod:`irwarehouse.experiments` with a ``register(experiment_app)`` function
adds its command here.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Callable

import pandas as pd
import typer

from .. import experiments, output
from ..experiments.base import Experiment, ExperimentContext
from .app import app, check_format, open_warehouse, say

experiment_app = typer.Typer(help="The meta-evaluation analyses of the papers: tables, figures and a report.",
                             no_args_is_help=True)
app.add_typer(experiment_app, name="experiment")

OutOpt = typer.Option(..., "--out", "-o", help="Output directory (tables as CSV, figures as PNG, report.md).")
FormatOpt = typer.Option("table", "--format", "-f", help="table | csv | json: also print the main table on stdout.")


def run_experiment(ctx: typer.Context, experiment: Experiment, out: str, fmt: str,
                   body: Callable[[ExperimentContext], str], read_only: bool = False) -> None:
    """Run ``body`` (which returns the name of its main table), write the report, print."""
    check_format(fmt)
    with open_warehouse(ctx, create=True) as con:  # the experiment's tables are kept in it
        ectx = ExperimentContext(con, experiment, out)
        main = body(ectx)
        report = ectx.finish()
    say(f"{experiment.title}: {len(ectx.tables)} tables in {out}; report: {report}")
    output.emit(ectx.tables.get(main, pd.DataFrame()), fmt)


for _info in pkgutil.iter_modules(experiments.__path__):
    _module = importlib.import_module(f"{experiments.__name__}.{_info.name}")
    if hasattr(_module, "register"):
        _module.register(experiment_app)
