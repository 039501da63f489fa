"""``irw experiment NAME ... --out DIR``: the papers' analyses.

The commands are made from the declarations of :data:`irwarehouse.experiments.REGISTRY`
(name, summary, options): each parses its options, calls
:meth:`irwarehouse.api.Warehouse.experiment` and prints the outcome. An experiment's module
(numpy, pandas, scipy, matplotlib) is imported only when it runs.
"""

from __future__ import annotations

import inspect
from typing import List, Optional

import typer

from .. import experiments, output
from .app import app, check_format, command, open_warehouse, say

experiment_app = typer.Typer(help="The meta-evaluation analyses of the papers: tables, figures and a report.",
                             no_args_is_help=True)
app.add_typer(experiment_app, name="experiment")

OutOpt = typer.Option(..., "--out", "-o", help="Output directory (tables as CSV, figures as PNG, report.md).")
FormatOpt = typer.Option("table", "--format", "-f", help="table | csv | json: also print the main table on stdout.")


def _parameter(option: experiments.Option) -> inspect.Parameter:
    if option.kind == "list":
        annotation = Optional[List[str]]
    else:
        annotation = option.kind if option.default is not None else Optional[option.kind]
    return inspect.Parameter(option.name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation,
                             default=typer.Option(option.default, *option.flags, help=option.help))


def _command(spec: experiments.ExperimentSpec) -> None:
    def run(ctx: typer.Context, out: str, fmt: str, **params):
        check_format(fmt)
        params = {k: (list(v) or None) if isinstance(v, (list, tuple)) else v for k, v in params.items()}
        with open_warehouse(ctx, create=True) as w:  # the experiment's tables are kept in it
            outcome = w.experiment(spec.name, out, **params)
        say(f"{outcome.title}: {len(outcome.tables)} tables in {out}; report: {outcome.report}")
        output.emit(outcome.main_table(), fmt)

    fixed = [inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context),
             inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, annotation=str, default=OutOpt)]
    params = fixed + [_parameter(o) for o in spec.options] + [
        inspect.Parameter("fmt", inspect.Parameter.KEYWORD_ONLY, annotation=str, default=FormatOpt)]
    run.__signature__ = inspect.Signature(params)
    run.__annotations__ = {p.name: p.annotation for p in params}
    run.__doc__ = spec.summary
    run.__name__ = spec.name.replace("-", "_")
    command(experiment_app, spec.name)(run)


for _spec in experiments.REGISTRY.values():
    _command(_spec)
