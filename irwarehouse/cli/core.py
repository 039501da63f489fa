"""Core commands: load, eval, sql, measures, runs list, qrels list/drop."""

from __future__ import annotations

import sys
from typing import List, Optional

import duckdb
import typer

from .. import collection as collections
from .. import loader, output, runsets, state
from .. import evaluate as ev
from .. import measures as ms
from ..api import Warehouse
from ..errors import IrwError
from .app import (CollectionOpt, FormatOpt, LoadCollectionOpt, QrelsOpt, RunsOpt, TopicsOpt, app,
                  check_format, collections_app, command, load_app, open_warehouse, qrels_app,
                  runs_app, say, staging)

# ------------------------------------------------------------------------------- load

EncodingOpt = typer.Option("utf-8", "--encoding", help="Text encoding of the files: utf-8 | latin-1.")


@command(load_app, "runs")
def load_runs(
    ctx: typer.Context,
    paths: List[str] = typer.Argument(..., help="Run files, globs (quote them) or directories; plain text or gzip, bzip2, xz (recognised by content)."),
    meta: Optional[str] = typer.Option(None, "--meta", metavar="TSV", help="TSV with a header: run_id, team, kind, pooled."),
    order: str = typer.Option("trec_eval", "--order", help="Ranking policy: trec_eval | given | score_then_rank."),
    replace: bool = typer.Option(False, "--replace", help="Replace runs that are already loaded (a flag: it takes no value)."),
    ignore_extra_fields: bool = typer.Option(False, "--ignore-extra-fields", help="Accept text after the 6th field (trec_eval ignores it)."),
    encoding: str = EncodingOpt,
    collection: Optional[str] = LoadCollectionOpt,
):
    """Load TREC run files (topic Q0 docno rank score run_id)."""
    with staging(ctx) as stage:
        target, implicit = collections.for_load(stage, collection)
        summary = loader.load_runs(stage.con, paths, policy=order, replace=replace, meta=meta,
                                   extra_fields=ignore_extra_fields, final=stage.attach, encoding=encoding,
                                   collection=target, implicit=implicit)
        say(_runs_loaded(summary, order, None if implicit else target))


def _runs_loaded(summary: dict, order: str, collection: str | None) -> str:
    n = len(summary["runs"])
    return (f"loaded {n} run{'s' if n != 1 else ''}"
            + (f" into collection {collection}" if collection else "")
            + f" ({summary['lines']:,} lines from "
            f"{summary['files']} file{'s' if summary['files'] != 1 else ''}, order {order})"
            + (f", replacing {len(summary['replaced'])}" if summary["replaced"] else "")
            + (f"; metadata for {summary['meta']} runs" if summary.get("meta") else ""))


def _qrels_loaded(s: dict, collection: str | None) -> str:
    return (f"loaded qrels {s['qrels']}" + (f" into collection {collection}" if collection else "")
            + f": {s['judgments']:,} judgments, {s['relevant']:,} relevant, {s['topics']} topics")


@command(load_app, "qrels")
def load_qrels(
    ctx: typer.Context,
    paths: List[str] = typer.Argument(..., help="Qrels files (topic iteration docno rel); plain text or gzip, bzip2, xz (recognised by content)."),
    name: str = typer.Option(..., "--name", "-n", help="Name of the qrels in the warehouse."),
    replace: bool = typer.Option(False, "--replace", help="Replace a qrels of that name (a flag: it takes no value)."),
    description: Optional[str] = typer.Option(None, "--description", help="Free text for the catalogue."),
    encoding: str = EncodingOpt,
    collection: Optional[str] = LoadCollectionOpt,
):
    """Load relevance judgments under a name."""
    with staging(ctx) as stage:
        target, implicit = collections.for_load(stage, collection)
        s = loader.load_qrels(stage.con, paths, name, replace=replace, description=description,
                              final=stage.attach, encoding=encoding, collection=target,
                              implicit=implicit)
        say(_qrels_loaded(s, None if implicit else target))


@command(load_app, "meta")
def load_meta(
    ctx: typer.Context,
    path: str = typer.Argument(..., help="TSV with a header: run_id and any of team, kind, pooled."),
    collection: Optional[str] = LoadCollectionOpt,
):
    """Load run metadata (team, kind, pooled)."""
    with open_warehouse(ctx, create=True) as con:
        n = loader.load_meta(con, path, collection)
        say(f"metadata for {n} run{'s' if n != 1 else ''}")


@command(load_app, "collection")
def load_collection(
    ctx: typer.Context,
    directory: str = typer.Argument(..., help="The collection's directory: a qrels file (qrels*), a directory runs/ and optionally a metadata TSV (*.tsv)."),
    name: str = typer.Option(..., "--name", "-n", help="Name of the collection."),
    qrels_name: Optional[str] = typer.Option(None, "--qrels-name", help="Name of its qrels (default: the collection's name)."),
    qrels_file: Optional[str] = typer.Option(None, "--qrels-file", metavar="FILE", help="The qrels file, if not the directory's qrels* file."),
    runs_dir: Optional[str] = typer.Option(None, "--runs-dir", metavar="DIR", help="The run files' directory, if not DIRECTORY/runs."),
    meta: Optional[str] = typer.Option(None, "--meta", metavar="TSV", help="The run metadata, if not the directory's *.tsv file."),
    order: str = typer.Option("trec_eval", "--order", help="Ranking policy: trec_eval | given | score_then_rank."),
    replace: bool = typer.Option(False, "--replace", help="Replace the qrels and runs of those names in the collection (a flag)."),
    ignore_extra_fields: bool = typer.Option(False, "--ignore-extra-fields", help="Accept text after the 6th field of run lines."),
    encoding: str = EncodingOpt,
    description: Optional[str] = typer.Option(None, "--description", help="Free text for the qrels catalogue."),
):
    """Load a test collection -- qrels, runs and run metadata -- in one go (all or nothing)."""
    files = loader.collection_layout(directory, qrels_file, runs_dir, meta)
    with staging(ctx) as stage:
        summary = loader.load_collection(stage.con, name, files["qrels"], [files["runs"]],
                                         meta=files["meta"], qrels_name=qrels_name, policy=order,
                                         replace=replace, extra_fields=ignore_extra_fields,
                                         final=stage.attach, encoding=encoding,
                                         description=description)
        say(f"collection {name}: " + _qrels_loaded(summary["qrels"], None) + "; "
            + _runs_loaded(summary, order, None))


# ------------------------------------------------------------------------------- eval

@command(app, "eval")
def eval_cmd(
    ctx: typer.Context,
    measure: List[str] = typer.Option(..., "--measure", "-m", help="Measure name, e.g. AP, P@10, 'nDCG(discount=jk)@10'. Repeatable."),
    qrels: Optional[str] = QrelsOpt,
    runs: str = RunsOpt,
    per_topic: bool = typer.Option(False, "--per-topic", help="One row per topic (trec_eval -q)."),
    topics: str = TopicsOpt,
    max_docs: Optional[int] = typer.Option(None, "--max-docs", help="Only the top N documents of each ranking count (trec_eval -M)."),
    rel_level: Optional[int] = typer.Option(None, "--rel-level", help="Relevance threshold for binary measures (trec_eval -l; default 1)."),
    aggregate: str = typer.Option("mean", "--aggregate", help="mean (arithmetic) | gm (geometric: exp(mean(log(x + 1e-5))) - 1e-5) | gm_trec (trec_eval's gm_map: exp(mean(log(max(x, 1e-5)))))."),
    fmt: str = typer.Option("table", "--format", "-f", help="table | csv | json | trec"),
    store: bool = typer.Option(True, "--store/--no-store", help="Keep the per-topic scores in the scores table."),
    standardize: Optional[str] = typer.Option(None, "--standardize", help="Report Phi(z) under this factor set (irw standardize) instead of raw values."),
    collection: Optional[str] = CollectionOpt,
):
    """Evaluate runs: per-topic scores are computed in SQL and kept in the `scores` table."""
    check_format(fmt, output.FORMATS)
    ms.parse_all(measure, rel_level=rel_level)  # a bad measure is reported before the warehouse is opened
    several = Warehouse.several_qrels(qrels)
    if several and fmt == "trec":
        raise IrwError("--format trec shows one qrels; name one with --qrels")
    flat_all: list[dict] = []
    table_all: list[dict] = []
    with open_warehouse(ctx, read_only=not store) as con:
        # plain rows, not a DataFrame: printing them needs no pandas
        for qrels_name, run_ids, parsed, per in Warehouse.attach(con).eval_each(
                measure, qrels, runs, collection=collection, topics=topics, max_docs=max_docs,
                rel_level=rel_level, store=store):
            if not per:
                say(ev.no_rows_reason(con, qrels_name, run_ids, topics, rel_level))
            if standardize:  # per-topic values become Phi(z); the stored scores stay raw
                import pandas as pd

                from ..standardize import apply_factors
                frame = apply_factors(con, pd.DataFrame(per, columns=ev.RESULT_COLUMNS), standardize)
                per = list(frame[list(ev.RESULT_COLUMNS)].itertuples(index=False, name=None))
            labels = [str(m) for m in parsed]
            means = ev.aggregate_rows(per, aggregate)
            if fmt == "trec":
                sys.stdout.write(output.trec_lines(per, means, labels, per_topic))
                return
            flat, table = _eval_tables(per, means, labels, per_topic)
            if several:  # one table for all the qrels, a column saying which
                flat = [{"qrels": qrels_name, **row} for row in flat]
                table = [{"qrels": qrels_name, **row} for row in table]
            flat_all += flat
            table_all += table
    output.emit(flat_all, fmt, table=table_all)


def _eval_tables(per: list[tuple], means: list[tuple], labels: list[str], per_topic: bool):
    """The rows of ``irw eval``'s output: (flat rows for csv/json, the table's rows)."""
    if per_topic:
        return [dict(zip(ev.RESULT_COLUMNS, row)) for row in per], output.pivot(per, ["run_id", "topic"], labels)
    flat = [dict(zip(("run_id", "measure", "value", "n_topics"), row)) for row in means]
    wide = output.pivot([row[:3] for row in means], ["run_id"], labels)
    n_topics: dict[str, int] = {}
    for run_id, _measure, _value, n in means:
        n_topics[run_id] = max(n, n_topics.get(run_id, 0))
    return flat, [{"run_id": row["run_id"], "n_topics": n_topics[row["run_id"]],
                   **{k: v for k, v in row.items() if k != "run_id"}} for row in wide]


# ------------------------------------------------------------------------------- sql

@command(app, "sql")
def sql_cmd(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="An SQL query over the warehouse."),
    fmt: str = FormatOpt,
    write: bool = typer.Option(False, "--write", help="Allow statements that change the warehouse."),
):
    """Run SQL against the warehouse (read-only unless --write)."""
    check_format(fmt)
    with open_warehouse(ctx, read_only=not write) as con:
        w = Warehouse.attach(con)
        frame = w.sql(query, write=write)
        for message in w.notes:
            say(f"note: {message}")
        if frame is None:
            say("ok")
        else:
            output.emit(frame, fmt)


@command(app, "refresh")
def refresh_cmd(ctx: typer.Context):
    """Bring caches and stored scores in line with the tables, and materialize the base
    relation of every loaded qrels (so that readers and the measure macros use it)."""
    with open_warehouse(ctx) as con:  # opening for writing reconciles
        names = ev.ensure_bases(con)
        say(f"warehouse current; base relation materialized for {len(names)} qrels"
            + (f" ({', '.join(names)})" if names else ""))


# ------------------------------------------------------------------------------- catalogue

@command(app, "measures")
def measures_cmd(fmt: str = FormatOpt):
    """The measure catalogue: names, descriptions, parameters and defaults."""
    check_format(fmt)
    rows = []
    for m in ms.CATALOGUE.values():
        rows.append({
            "name": m.name + ("@k" if m.cutoff else ""),
            "description": m.description,
            "parameters": ", ".join(f"{p.name}={ms.format_value(p.default) if p.default is not None else '-'}"
                                    for p in m.params),
            "trec_eval": m.trec_eval,
        })
    if fmt == "table":
        for m in ms.CATALOGUE.values():
            typer.echo(f"{m.name}{'@k' if m.cutoff else ''}" + (f"    (trec_eval: {m.trec_eval})" if m.trec_eval else ""))
            typer.echo(f"    {m.description}")
            for p in m.params:
                default = ms.format_value(p.default) if p.default is not None else "-"
                typer.echo(f"    {p.name} = {default}: {p.help}")
        typer.echo("Condensed (judged-only) forms: Name' or judged_only=True, e.g. AP', nDCG'@10.")
        return
    output.emit(rows, fmt)


@command(runs_app, "list")
def runs_list(ctx: typer.Context, fmt: str = FormatOpt,
              collection: Optional[str] = typer.Option(None, "--collection", metavar="NAME", help="Only the runs of this collection (default: all; the column collection is shown when the warehouse has several).")):
    """The loaded runs with their metadata."""
    check_format(fmt)
    with open_warehouse(ctx, read_only=True) as con:
        if collection is not None:
            collections.only(con, collection)
        shown = "" if collections.single(con) and collection is None else "collection, "
        frame = con.execute(f"SELECT {shown}run_id, team, kind, pooled, ranking_policy, n_topics, n_docs, "
                            "source FROM run_info WHERE ? IS NULL OR collection = ? "
                            "ORDER BY collection, run_id", [collection, collection]).df()
        output.emit(frame, fmt)


@command(runs_app, "drop")
def runs_drop(ctx: typer.Context, spec: str = typer.Argument(
        ..., help="The runs to remove: run ids (comma-separated), team:NAME, pooled, deeply-judged[:M], @FILE or all."),
        collection: Optional[str] = typer.Option(None, "--collection", metavar="NAME", help="Their collection (default: the warehouse's only one).")):
    """Remove runs with their scores; their metadata stays."""
    with open_warehouse(ctx) as con:
        target = collections.only(con, collection)
        run_ids = runsets.resolve(con, spec, collection=target)
        loader.drop_runs(con, run_ids, target)
        say(f"dropped {len(run_ids)} run(s): {', '.join(run_ids)}")


@command(qrels_app, "list")
def qrels_list(ctx: typer.Context, fmt: str = FormatOpt):
    """The qrels catalogue."""
    check_format(fmt)
    with open_warehouse(ctx, read_only=True) as con:
        frame = con.execute("""
            SELECT i.qrels, i.collection, i.kind, i.parent, i.topic_qrels, i.params,
                   count(DISTINCT q.topic) AS topics, count(q.rel) FILTER (WHERE q.rel >= 0) AS judged,
                   count(q.rel) FILTER (WHERE q.rel >= 1) AS relevant, i.source, i.description
            FROM qrels_info i LEFT JOIN qrels q USING (qrels)
            GROUP BY i.qrels, i.collection, i.kind, i.parent, i.topic_qrels, i.params, i.source,
                     i.description, i.created_at
            ORDER BY i.created_at""").df()
        output.emit(frame, fmt)


@command(qrels_app, "drop")
def qrels_drop(ctx: typer.Context, name: str = typer.Argument(..., help="The qrels to remove.")):
    """Remove a qrels with its scores."""
    with open_warehouse(ctx) as con:
        loader.drop_qrels(con, name)
        say(f"dropped qrels {name}")



@command(collections_app, "list")
def collections_list(ctx: typer.Context, fmt: str = FormatOpt):
    """The test collections with their loaded qrels, runs, topics and judgments (view
    collections)."""
    check_format(fmt)
    with open_warehouse(ctx, read_only=True) as con:
        frame = collections.catalogue(con)
        frame["qrels"] = frame["qrels"].map(
            lambda names: ", ".join(names) if isinstance(names, (list, tuple)) or hasattr(names, "tolist") else "")
        output.emit(frame, fmt)
