"""Commands that copy the warehouse for other tools: export, publish. Both only read it."""

from __future__ import annotations

import typer

from .app import app, command, open_warehouse, say


@command(app, "export")
def export_cmd(
    ctx: typer.Context,
    directory: str = typer.Argument(..., help="Directory to write (new or empty)."),
    fmt: str = typer.Option("parquet", "--format", "-f", help="parquet | csv"),
    replace: bool = typer.Option(False, "--replace", help="Replace an earlier export in DIRECTORY."),
):
    """Every public table as Parquet or CSV files, with the SQL that recreates the warehouse
    (tables, views, macros): IMPORT DATABASE 'DIRECTORY' in any DuckDB."""
    with open_warehouse(ctx, read_only=True) as w:
        info = w.export(directory, format=fmt, replace=replace)
    n = len(info["tables"])
    say(f"exported {n} table{'s' if n != 1 else ''} ({sum(info['tables'].values()):,} rows) as "
        f"{fmt} with {info['schema_file']} and {info['load_file']} to {info['directory']}; recreate with: "
        f"duckdb NEW.duckdb \"IMPORT DATABASE '{info['directory']}'\"")


@command(app, "publish")
def publish_cmd(
    ctx: typer.Context,
    out: str = typer.Argument(..., help="The DuckDB file to write."),
    replace: bool = typer.Option(False, "--replace", help=(
        "Replace OUT, a copy irw publish wrote: the new copy is renamed onto it when complete; "
        "connections open on the old one keep it until they close.")),
):
    """A compact copy for dashboards and BI tools: every public table, view and macro, in a
    storage format DuckDB 1.4.2 and later read; without caches."""
    with open_warehouse(ctx, read_only=True) as w:
        info = w.publish(out, replace=replace)
    n = len(info["tables"])
    say(f"published {n} table{'s' if n != 1 else ''} ({sum(info['tables'].values()):,} rows), "
        f"{info['views']} views and {info['macros']} macros to {info['file']} "
        f"({info['bytes'] / 1e6:.1f} MB, storage {info['storage_version']}: {info['readers']})")
