"""Core commands: load, eval, sql, refresh, measures, runs list/drop, qrels list/drop,
collections list. Each parses its arguments, calls one method of irwarehouse.api.Warehouse
and prints what it returns."""

from __future__ import annotations

import sys
from typing import List, Optional

import typer

from .. import api, output
from ..errors import IrwError
from .app import (ByOpt, CollectionOpt, FormatOpt, LoadCollectionOpt, RelLevelOpt, RunsOpt, TiesOpt, TopicsOpt, app,
                  check_format, collections_app, command, load_app, open_warehouse, qrels_app,
                  remove, runs_app, say, show)

# ------------------------------------------------------------------------------- load

JUDGMENT_FORMATS = ("The kind of judgments the files hold: trec (topic iteration docno rel), "
                    "diversity (ndeval's topic subtopic docno rel), prels (sample_eval's topic 0 "
                    "docno stratum rel), prefs (trec_eval's -R prefs: topic jg jsg docno rel), jg "
                    "(trec_eval's -R qrels_jg: topic jg docno rel). See docs/concepts.md.")
EncodingOpt = typer.Option("utf-8", "--encoding", help="Text encoding of the files: utf-8 | latin-1.")
OrderOpt = typer.Option("trec_eval", "--order", help="Ranking policy: trec_eval (trec_eval 10.0's order; also trec_eval_10) | trec_eval_9 (scores as 32-bit floats: trec_eval 9, the 1999 official results, pytrec_eval) | given | score_then_rank.")


def _comments(summary: dict) -> str:
    """The comment lines a load skipped, said when there were any."""
    n = summary.get("comments") or 0
    return f", {n:,} comment line{'s' if n != 1 else ''} skipped" if n else ""


def _runs_loaded(summary: dict, order: str, collection: str | None) -> str:
    n = len(summary["runs"])
    return (f"loaded {n} run{'s' if n != 1 else ''}"
            + (f" into collection {collection}" if collection else "")
            + f" ({summary['lines']:,} lines from "
            f"{summary['files']} file{'s' if summary['files'] != 1 else ''}{_comments(summary)}, "
            f"order {summary.get('order', order)})"
            + (f", replacing {len(summary['replaced'])}" if summary["replaced"] else "")
            + (f"; metadata for {summary['meta']} runs" if summary.get("meta") else ""))


def _qrels_loaded(s: dict, collection: str | None) -> str:
    kept = f"; {s['lines']:,} {s['format']} lines in table {s['table']}" if s.get("table") else ""
    return (f"loaded qrels {s['qrels']}" + (f" into collection {collection}" if collection else "")
            + f": {s['judgments']:,} judgments, {s['relevant']:,} relevant, {s['topics']} topics"
            + kept + _comments(s))


@command(load_app, "runs")
def load_runs(
    ctx: typer.Context,
    paths: List[str] = typer.Argument(..., help="Run files, globs (quote them) or directories; plain text or gzip, bzip2, xz (recognised by content); hidden files are skipped."),
    meta: Optional[str] = typer.Option(None, "--meta", metavar="TSV", help="TSV with a header: run_id, team, kind, pooled, system."),
    order: str = OrderOpt,
    replace: bool = typer.Option(False, "--replace", help="Replace runs that are already loaded (a flag: it takes no value)."),
    ignore_extra_fields: bool = typer.Option(False, "--ignore-extra-fields", help="Accept text after the 6th field (trec_eval ignores it)."),
    encoding: str = EncodingOpt,
    collection: Optional[str] = LoadCollectionOpt,
):
    """Load TREC run files (topic Q0 docno rank score run_id)."""
    with open_warehouse(ctx, create=True) as w:
        summary = w.load_runs(list(paths), order=order, replace=replace, meta=meta,
                              extra_fields=ignore_extra_fields, encoding=encoding, collection=collection)
    say(_runs_loaded(summary, order, collection))


@command(load_app, "qrels")
def load_qrels(
    ctx: typer.Context,
    paths: List[str] = typer.Argument(..., help="Qrels files (topic iteration docno rel, or the layout of --format); plain text or gzip, bzip2, xz (recognised by content)."),
    name: str = typer.Option(..., "--name", "-n", help="Name of the qrels in the warehouse."),
    replace: bool = typer.Option(False, "--replace", help="Replace a qrels of that name (a flag: it takes no value)."),
    description: Optional[str] = typer.Option(None, "--description", help="Free text for the catalogue."),
    encoding: str = EncodingOpt,
    collection: Optional[str] = LoadCollectionOpt,
    kind: str = typer.Option(None, "--format", metavar="KIND", help=JUDGMENT_FORMATS),
):
    """Load relevance judgments under a name."""
    with open_warehouse(ctx, create=True) as w:
        summary = w.load_qrels(list(paths), name, replace=replace, description=description,
                               encoding=encoding, collection=collection, format=kind)
    say(_qrels_loaded(summary, collection))


@command(load_app, "meta")
def load_meta(
    ctx: typer.Context,
    path: str = typer.Argument(..., help="TSV with a header: run_id and any of team, kind, pooled, system; it changes only the columns it names."),
    collection: Optional[str] = LoadCollectionOpt,
):
    """Load run metadata (team, kind, pooled, system)."""
    with open_warehouse(ctx, create=True) as w:
        n = w.load_meta(path, collection=collection)
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
    order: str = OrderOpt,
    replace: bool = typer.Option(False, "--replace", help="Replace the qrels and runs of those names in the collection (a flag)."),
    ignore_extra_fields: bool = typer.Option(False, "--ignore-extra-fields", help="Accept text after the 6th field of run lines."),
    encoding: str = EncodingOpt,
    description: Optional[str] = typer.Option(None, "--description", help="Free text for the qrels catalogue."),
):
    """Load a test collection -- qrels, runs and run metadata -- in one go (all or nothing)."""
    with open_warehouse(ctx, create=True) as w:
        summary = w.load_collection(directory, name, qrels_name=qrels_name, qrels_file=qrels_file,
                                    runs_dir=runs_dir, meta=meta, order=order, replace=replace,
                                    extra_fields=ignore_extra_fields, encoding=encoding,
                                    description=description)
    say(f"collection {name}: " + _qrels_loaded(summary["qrels"], None) + "; "
        + _runs_loaded(summary, order, None))


# ------------------------------------------------------------------------------- eval

@command(app, "eval")
def eval_cmd(
    ctx: typer.Context,
    files: Optional[List[str]] = typer.Argument(None, help="Evaluate files directly, as trec_eval does: a qrels file, then run files, globs or directories; - reads a run from standard input (nothing is written; the warehouse is not used)."),
    measure: List[str] = typer.Option(..., "--measure", "-m", help="Measure name, e.g. AP, P@10, 'nDCG(discount=jk)@10'. Repeatable."),
    qrels: Optional[str] = typer.Option(None, "--qrels", "-q", help="Qrels name (default: the only one loaded from a file); several: names and glob patterns, comma-separated. With files: the name the qrels file takes (default: its file name)."),
    runs: str = RunsOpt,
    per_topic: bool = typer.Option(False, "--per-topic", help="One row per topic (trec_eval -q)."),
    topics: str = TopicsOpt,
    max_docs: Optional[int] = typer.Option(None, "--max-docs", help="Only the top N documents of each ranking count (trec_eval -M)."),
    rel_level: Optional[int] = RelLevelOpt,
    aggregate: str = typer.Option("mean", "--aggregate", help="mean (arithmetic) | gm (geometric: exp(mean(log(x + 1e-5))) - 1e-5) | gm_trec (trec_eval's gm_map: exp(mean(log(max(x, 1e-5)))))."),
    fmt: str = typer.Option("table", "--format", "-f", help="table | csv | json | trec"),
    store: bool = typer.Option(True, "--store/--no-store", help="Keep the per-topic scores in the scores table."),
    standardize: Optional[str] = typer.Option(None, "--standardize", help="Report Phi(z) under this factor set (irw standardize) instead of raw values."),
    collection: Optional[str] = CollectionOpt,
    meta: Optional[str] = typer.Option(None, "--meta", metavar="TSV", help="With files: the runs' metadata (run_id, team, kind, pooled, system), for run specs such as team:NAME and --by system."),
    save: Optional[str] = typer.Option(None, "--save", metavar="DB", help="With files: load them into this warehouse (created if missing) and keep the scores there."),
    replace: bool = typer.Option(False, "--replace", help="With --save: replace a qrels and runs of those names there."),
    order: Optional[str] = typer.Option(None, "--order", help="With files: the ranking policy (as irw load runs; default trec_eval)."),
    ignore_extra_fields: bool = typer.Option(False, "--ignore-extra-fields", help="With files: accept text after the 6th field of run lines."),
    encoding: Optional[str] = typer.Option(None, "--encoding", help="With files: their text encoding, utf-8 (default) | latin-1."),
    qrels_format: Optional[str] = typer.Option(None, "--qrels-format", metavar="KIND", help="With files: the qrels file's layout, as irw load qrels --format. " + JUDGMENT_FORMATS),
    by: str = ByOpt,
    ties: str = TiesOpt,
):
    """Evaluate runs: per-topic scores are computed in SQL and kept in the `scores` table.
    Given files (`irw eval QRELS RUN...`), evaluate them without a warehouse."""
    check_format(fmt, output.FORMATS)
    parsed = api.parse_measures(measure, rel_level)  # once, before the warehouse is opened
    labels = [str(m) for m in parsed]
    several = not files and api.Warehouse.several_qrels(qrels)
    if several and fmt == "trec":
        raise IrwError("--format trec shows one qrels; name one with --qrels")
    if by != "run" and fmt == "trec":
        raise IrwError("--format trec shows runs, as trec_eval does: leave out --by, or choose another --format")
    evaluate = dict(per_topic=True, topics=topics, max_docs=max_docs, rel_level=rel_level, ties=ties)
    if by != "run":
        evaluate.update(by=by, per_topic=per_topic, aggregate=aggregate)
    if files:
        per = _eval_files(ctx, files, parsed, qrels, runs, evaluate, standardize=standardize,
                          collection=collection, meta=meta, save=save, replace=replace, order=order,
                          ignore_extra_fields=ignore_extra_fields, encoding=encoding,
                          qrels_format=qrels_format)
    else:
        given = [opt for opt, value in (("--save", save), ("--replace", replace), ("--meta", meta),
                                        ("--order", order),
                                        ("--encoding", encoding), ("--qrels-format", qrels_format),
                                        ("--ignore-extra-fields", ignore_extra_fields)) if value]
        if given:
            raise IrwError(f"{given[0]} applies to files evaluated directly (irw eval QRELS RUN...)")
        with open_warehouse(ctx, read_only=not store) as w:
            per = w.eval(parsed, qrels, runs, collection=collection, store=store,
                         standardize=standardize, **evaluate)
    if by != "run":  # systems: the means with their runs' spread (long), or per topic
        if per_topic:
            output.emit(per.records(), fmt, table=output.wide_scores(per.rows(), labels, several, key="system"))
        else:
            output.emit(per.records(), fmt)
        return
    means = per.aggregate(aggregate)
    if fmt == "trec":
        sys.stdout.write(output.trec_lines(per.rows(), means.rows(), labels, per_topic))
        return
    # JSON records say which ranking order and tie policy produced each run's scores
    shown = means if not per_topic else per
    records = output.with_ranking(shown.records(), per.info) if fmt == "json" else shown.records()
    if not per_topic:
        output.emit(records, fmt, table=output.wide_means(means.rows(), labels, several))
    else:
        output.emit(records, fmt, table=output.wide_scores(per.rows(), labels, several))


def run_sources(paths: list[str]) -> list:
    """Run files as given; ``-`` is standard input (once), as for trec_eval."""
    if paths.count("-") > 1:
        raise IrwError("- (standard input) is named more than once")
    return [api.files.standard_input() if p == "-" else p for p in paths]


def _eval_files(ctx, files: list[str], measure, qrels, runs, evaluate: dict, *, standardize,
                collection, meta, save, replace, order, ignore_extra_fields, encoding, qrels_format):
    """`irw eval QRELS RUN...`: Warehouse.eval_files."""
    if len(files) < 2:
        raise IrwError(f"evaluating files takes a qrels file and run files: only {files[0]} given")
    for opt, value in (("--standardize", standardize), ("--collection", collection)):
        if value:
            raise IrwError(f"{opt} reads a warehouse: evaluating files, use --save DB, then irw eval {opt} there")
    if qrels is not None and api.Warehouse.several_qrels(qrels):
        raise IrwError("with files, --qrels names the one qrels file")
    obj = ctx.find_root().obj or {}
    return api.Warehouse.eval_files(files[0], run_sources(files[1:]), measure, name=qrels, meta=meta, save=save, replace=replace,
                                    run_spec=runs,
                                    order=order or "trec_eval", extra_fields=ignore_extra_fields,
                                    encoding=encoding or "utf-8", wait=obj.get("wait"),
                                    memory_limit=obj.get("memory"), qrels_format=qrels_format,
                                    **evaluate)


# ------------------------------------------------------------------------------- trec-eval

@app.command("trec-eval", add_help_option=False,
             context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                               "allow_interspersed_args": False, "help_option_names": []})
def trec_eval_cmd(ctx: typer.Context):
    """trec_eval 10.0's command line and output, computed by irw (irw trec-eval -h)."""
    from . import trec_eval

    obj = ctx.find_root().obj or {}
    raise typer.Exit(trec_eval.run(list(ctx.args), wait=obj.get("wait"), memory_limit=obj.get("memory")))


# ------------------------------------------------------------------------------- sql

@command(app, "sql")
def sql_cmd(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="An SQL query over the warehouse."),
    fmt: str = FormatOpt,
    write: bool = typer.Option(False, "--write", help="Allow statements that change the warehouse (one transaction, checked as a load is)."),
    files: Optional[List[str]] = typer.Option(None, "--files", metavar="PATH", help="With --write: a directory or file the SQL may read and write (repeatable); none may be or hold a DuckDB database. Without it the SQL touches the warehouse alone."),
):
    """Run SQL against the warehouse (read-only unless --write), in DuckDB's sandbox: it
    reads and writes the warehouse and nothing else, but the files named with --files."""
    check_format(fmt)
    if files and not write:
        raise IrwError("--files names what SQL run with --write may read and write: add --write")
    with open_warehouse(ctx, read_only=not write) as w:
        # a query's rows printed as DuckDB produces them, a batch at a time (output.stream);
        # with --write, once the tables are checked (the notes of what changed come first)
        result = w.sql(query, write=write, files=files or (), batches=not write)
        if result is not None:
            output.stream(result, fmt) if not write else output.emit(result, fmt)
    if result is None:
        say("ok")


@command(app, "refresh")
def refresh_cmd(ctx: typer.Context):
    """Bring caches and stored scores in line with the tables, and materialize the base
    relation of every loaded qrels (so that readers and the measure macros use it)."""
    with open_warehouse(ctx) as w:
        names = w.refresh()
    say(f"warehouse current; base relation materialized for {len(names)} qrels"
        + (f" ({', '.join(names)})" if names else ""))


# ------------------------------------------------------------------------------- catalogue

@command(app, "measures")
def measures_cmd(name: Optional[str] = typer.Argument(None, help="A measure (catalogue name, trec_eval name or a measure as written, e.g. nDCG, ndcg_cut_10, RBP(p=0.9)): its long explanation."),
                 fmt: str = FormatOpt):
    """The measure catalogue: names, descriptions, parameters and defaults, and the paper
    that defines each; with NAME, that measure explained at length (as trec_eval -h -m NAME):
    history, definition, parameters with defaults and ranges, the reference implementation,
    its trec_eval and ir_measures names."""
    check_format(fmt)
    if name is not None:
        sys.stdout.write(api.Warehouse.explain_measure(name))
        return
    if fmt == "table":
        sys.stdout.write(output.measure_listing(api.measure_catalogue(), api.format_value))
        return
    output.emit(api.Warehouse.measures(), fmt)


@command(runs_app, "list")
def runs_list(ctx: typer.Context, fmt: str = FormatOpt,
              collection: Optional[str] = typer.Option(None, "--collection", metavar="NAME", help="Only the runs of this collection (default: all).")):
    """The loaded runs with their metadata."""
    show(ctx, fmt, lambda w: w.runs(collection))


@command(runs_app, "drop")
def runs_drop(ctx: typer.Context, spec: str = typer.Argument(
        ..., help="The runs to remove: run ids (comma-separated), team:NAME, pooled, deeply-judged[:M], @FILE, id:RUN or all."),
        collection: Optional[str] = typer.Option(None, "--collection", metavar="NAME", help="Their collection (default: the warehouse's only one).")):
    """Remove runs with their scores; their metadata stays."""
    with open_warehouse(ctx) as w:
        run_ids = w.drop_runs(spec, collection=collection)
    say(f"dropped {len(run_ids)} run(s): {', '.join(run_ids)}")


@command(qrels_app, "list")
def qrels_list(ctx: typer.Context, fmt: str = FormatOpt):
    """The qrels catalogue."""
    show(ctx, fmt, lambda w: w.qrels())


@command(qrels_app, "drop")
def qrels_drop(ctx: typer.Context, name: str = typer.Argument(..., help="The qrels to remove.")):
    """Remove a qrels with its scores."""
    remove(ctx, f"qrels {name}", lambda w: w.drop_qrels(name))


@command(collections_app, "list")
def collections_list(ctx: typer.Context, fmt: str = FormatOpt):
    """The test collections with their loaded qrels, runs, topics and judgments (view
    collections)."""
    show(ctx, fmt, lambda w: w.collections())
