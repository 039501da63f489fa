"""The Python API: :class:`Warehouse`, the one door to the warehouse.

Every command of the ``irw`` command line parses its arguments, calls one method of this
class and prints what it returns; a notebook calls the same methods and gets the same
numbers::

    from irwarehouse import Warehouse

    with Warehouse("irw.duckdb") as w:
        w.load_qrels("qrels.txt", name="robust04")
        w.load_runs(pyterrier_results, run_id="bm25")      # a DataFrame: qid, docno, score
        w.eval(["AP", "nDCG@10"], per_topic=False).df()

Every table a method computes is an :class:`irwarehouse.result.Result`: ``.df()`` gives the
pandas DataFrame, ``.rows()`` tuples, and DataFrame methods reach the frame. Every call is
one transaction: a call that fails leaves the warehouse as it was.

Runs and qrels load from files or from DataFrames in the column conventions users already
have: PyTerrier (``qid, docno, score[, rank]``; qrels ``qid, docno, label``), ir_measures /
ir_datasets (``query_id, doc_id, score``; qrels ``query_id, doc_id, relevance``) and
trec_eval's (``topic, docno, score[, rank][, run_id]``; qrels ``topic, docno, rel``).
Measures are names (``"nDCG(discount=jk)@10"``) or, when ir_measures is installed, its
measure objects (``ir_measures.nDCG@10``). A load reads, checks and ranks its files in a
connection of its own and locks the warehouse file only for its final transaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from . import catalogue, citations, files, measure_rows, runsets, sql
from . import measures as ms
from .connection import DEFAULT_DB, DEFAULT_WAIT, memory_limit_text
from .door import _atomic, _files_in, _owned, check_settings
from .door_standardization import StandardizationDoor
from .door_statistics import StatisticsDoor
from .engine import base, evaluation, files_in, loading, many, pools
from .errors import IrwError, StatusError, note
from .inputs import _file_qrels_name, _meta_file, _parsed, _source_files, qrels_kind, measure_labels, measure_names, parse_measures
from . import trec_eval as te
from .options import TIE_POLICIES, RankingOptions, tie_policy
from .result import Result
from .trec_eval import TREC_EVAL_VERSION
from .significance_tests import CORRECTIONS, TESTS
from .systems import check_unit, system_scores

if TYPE_CHECKING:
    from .report import JudgesReport, Report
    from .trec_eval import TrecEvalReport

__all__ = ["Warehouse", "RankingOptions", "TIE_POLICIES", "DEFAULT_DB", "DEFAULT_WAIT", "TESTS", "CORRECTIONS", "TREC_EVAL_VERSION", "check_settings",
           "measure_names", "measure_labels", "parse_measures", "measure_catalogue", "format_value", "memory_limit_text"]


POOL_KINDS = pools.KINDS
POOL_STATS = pools.STATS
TOPIC_POLICIES = ("qrels", "run", "all")


def measure_catalogue() -> list:
    """The definitions of the catalogue's measures (irwarehouse.measures.MeasureDef)."""
    return list(ms.CATALOGUE.values())


format_value = ms.format_value


_spec = runsets.spec_of


class Warehouse(StatisticsDoor, StandardizationDoor):
    """An irwarehouse warehouse: a DuckDB file (or ``":memory:"``) with the runs, qrels, scores
    and every view and macro of the SQL product.

    ``Warehouse(path)`` opens or creates a file (``path`` None: ``$IRW_DB``, else
    ``irw.duckdb``); ``read_only=True`` opens it for reading only (several readers may share
    it; nothing is stored); ``create=False`` refuses a missing file; ``wait`` and
    ``memory_limit`` are the command line's ``--wait`` and ``--memory-limit``. What irw notes
    on opening (changes made outside irw, say) goes to ``notify`` (default: the list
    :attr:`notes`). The file is opened on first use, and a load releases it while it reads
    its files. Use it as a context manager, or call :meth:`close`."""

    # ------------------------------------------------------------------ names

    @_atomic
    def qrels_name(self, qrels: str | None = None) -> str:
        """``qrels``, or the only qrels loaded from a file."""
        return qrels or catalogue.default_qrels(self.con)

    @_atomic
    def qrels_names(self, qrels: str | Iterable[str] | None = None) -> list[str]:
        """Several qrels: a list of names, or a string of comma-separated names and glob
        patterns (``"trec8-lo-*"``), each of which must match; None: the only loaded qrels."""
        return catalogue.expand_qrels(self.con, qrels)

    @staticmethod
    def several_qrels(qrels) -> bool:
        """Does ``qrels`` name several qrels (a list, or names and patterns with commas)?"""
        return catalogue.several(qrels)

    @_atomic
    def run_ids(self, runs: str | Iterable[str] | None = "all", qrels: str | None = None,
                collection: str | None = None) -> list[str]:
        """The run ids of a run spec ('all', 'pooled', 'team:NAME', ids, comma-separated) or
        a list of run ids, among the runs of ``collection`` (default: the qrels's)."""
        return runsets.resolve(self.con, _spec(runs), qrels=qrels, collection=collection)

    @_atomic
    def teams(self, qrels: str | None = None, runs="all") -> dict[str, list[str]]:
        """team -> its runs among the runs (of the qrels's collection)."""
        q = self.qrels_name(qrels)
        return catalogue.teams_of(self.con, self.run_ids(runs, qrels=q), catalogue.collection_of(self.con, q))

    @_atomic
    def systems(self, qrels: str | None = None, runs="all") -> dict[str, list[str]]:
        """system -> its runs among the runs (of the qrels's collection), systems by name:
        a run's system is run_meta.system (``load_meta``, column system), and a run without
        one is its own system. What ``by="system"`` groups the runs by (see
        :mod:`irwarehouse.systems`)."""
        q = self.qrels_name(qrels)
        return catalogue.systems_of(self.con, self.run_ids(runs, qrels=q),
                                    catalogue.collection_of(self.con, q)).as_dict()

    # ------------------------------------------------------------------ catalogue

    @_atomic
    def runs(self, collection: str | None = None) -> Result:
        """The loaded runs with their metadata (view run_info)."""
        if collection is not None:
            catalogue.only_collection(self.con, collection)
        return self.engine.read(sql.statement("catalogue.sql", "runs"), {"c": collection})

    @_atomic
    def qrels(self) -> Result:
        """The qrels catalogue with each qrels's topics, judged and relevant documents."""
        return self.engine.read(sql.statement("catalogue.sql", "qrels"))

    @_atomic
    def collections(self) -> Result:
        """The test collections (view collections), their qrels a comma-separated list."""
        return self.engine.read(sql.statement("catalogue.sql", "collections"))

    @staticmethod
    def measures() -> Result:
        """The measure catalogue (no warehouse needed): each measure as written (``AP@k``),
        its description, parameters with defaults, trec_eval name, graded, ideal, paper."""
        return Result(list(measure_rows.LISTING_COLUMNS), measure_rows.listing_rows())

    @staticmethod
    def explain_measure(name: str) -> str:
        """The long explanation of a measure (``irw measures NAME``; no warehouse needed):
        ``name`` a catalogue name, a trec_eval name or a measure as written."""
        return citations.explain(ms.definition_of(name), ms.format_value)

    # ------------------------------------------------------------------ loading

    @_owned
    def load_qrels(self, source, name: str, *, collection: str | None = None, replace: bool = False,
                   description: str | None = None, encoding: str = "utf-8",
                   format: str | None = None) -> dict:
        """Load judgments from files (paths or globs), a DataFrame or ir_datasets (a source
        ``irds:DATASET_ID``) under ``name``; a summary
        (qrels, collection, topics, judgments, relevant, comments: the comment lines skipped;
        for a kind with a detail table also format, table and lines). ``format``: the kind
        of judgments the files hold (irwarehouse.judgment_kinds.KINDS: trec, the default,
        diversity, prels, prefs, jg); an ir_datasets source is loaded as the kind of its
        records (irwarehouse.irds.SHAPES)."""
        kind = qrels_kind(source, format)
        with self._staging(source) as stage, _source_files(source, "qrels", judgments=kind) as paths:
            target, implicit = self._target(stage, collection)
            return loading.load_qrels(stage.con, paths, name, replace=replace, description=description,
                                      final=stage.attach, encoding=encoding, collection=target,
                                      implicit=implicit, kind=kind)

    @_owned
    def load_runs(self, source, *, run_id: str | None = None, collection: str | None = None,
                  order: str = "trec_eval", replace: bool = False, meta=None,
                  extra_fields: bool = False, encoding: str = "utf-8") -> dict:
        """Load runs from files (paths, globs, directories) or a DataFrame (``run_id`` names
        the run when the frame has no run column), with their metadata (``meta``: a TSV or a
        DataFrame) in the same transaction; a summary (collection, runs, lines, files,
        comments: the comment lines skipped, replaced, refreshed[, meta])."""
        with self._staging(source, meta) as stage, _source_files(source, "runs", run_id) as paths, \
                _meta_file(meta) as meta_path:
            target, implicit = self._target(stage, collection)
            return loading.load_runs(stage.con, paths, policy=order, replace=replace, meta=meta_path,
                                     extra_fields=extra_fields, final=stage.attach, encoding=encoding,
                                     collection=target, implicit=implicit)

    @_atomic
    def load_meta(self, source, *, collection: str | None = None) -> int:
        """Run metadata (run_id and any of team, kind, pooled, system) from a TSV or a
        DataFrame; it changes only the columns it names. Returns the number of runs
        described."""
        with _meta_file(source) as path:
            return loading.load_meta(self.con, path, collection)

    @_owned
    def load_collection(self, directory, name: str, *, qrels_name: str | None = None,
                        qrels_file=None, runs_dir=None, meta=None, order: str = "trec_eval",
                        replace: bool = False, extra_fields: bool = False,
                        encoding: str = "utf-8", description: str | None = None) -> dict:
        """A test collection in the common layout (DIR/qrels*, DIR/runs/, DIR/*.tsv; the
        arguments name other files), all or nothing."""
        layout = loading.collection_layout(str(directory), qrels_file and str(qrels_file),
                                           runs_dir and str(runs_dir), meta and str(meta))
        with self._staging(directory) as stage:
            return loading.load_collection(stage.con, name, layout["qrels"], [layout["runs"]],
                                           meta=layout["meta"], qrels_name=qrels_name, policy=order,
                                           replace=replace, extra_fields=extra_fields,
                                           final=stage.attach, encoding=encoding,
                                           description=description)

    @_atomic(files=True)
    def load_results(self, directory, *, replace: bool = False) -> dict:
        """Store what ``irw spark`` wrote to ``directory`` (derived qrels; scores with their
        evaluations), all or nothing."""
        from .spark import load_results

        return load_results(self.con, str(directory), replace=replace)

    @_atomic
    def drop_runs(self, runs, *, collection: str | None = None) -> list[str]:
        """Remove runs (a run spec: a blank one is an error) with their scores; their metadata
        stays. Returns the run ids removed."""
        target = catalogue.only_collection(self.con, collection)
        run_ids = runsets.resolve(self.con, _spec(runs), collection=target)
        loading.drop_runs(self.con, run_ids, target)
        return run_ids

    @_atomic
    def drop_qrels(self, name: str) -> None:
        """Remove a qrels and its scores (refused while qrels or factor sets made from it
        exist)."""
        loading.drop_qrels(self.con, name)

    @_atomic
    def refresh(self) -> list[str]:
        """Bring caches and stored scores in line with the tables (as opening for writing
        does) and materialize the base relation of every loaded qrels; their names."""
        if self.read_only:
            raise IrwError("this warehouse is open read-only: open it for writing to refresh it")
        return base.ensure_bases(self.con)

    # ------------------------------------------------------------------ evaluation

    @_atomic
    def eval(self, measures, qrels=None, runs="all", *, collection: str | None = None,
             per_topic: bool = True, topics: str = "qrels", max_docs: int | None = None,
             rel_level: int | None = None, aggregate: str = "mean", store: bool = True,
             standardize: str | None = None, by: str = "run", ties: str | None = None) -> Result:
        """Evaluate: per topic (run_id, topic, measure, value), or with ``per_topic=False`` the
        means over the topics (run_id, measure, value, n_topics; ``aggregate``: mean, gm or
        gm_trec). The per-topic scores are kept in the table ``scores`` unless
        ``store=False`` (or the warehouse is read-only). ``qrels`` may name several qrels (a
        list, or names and glob patterns separated by commas): the table then starts with a
        column ``qrels``, and derived qrels of one root are evaluated in one pass.
        ``standardize``: values are Phi(z) under this factor set (the stored scores stay
        raw). ``by="system"``: rows of systems instead of runs (``system`` first), each
        system's per-topic score the mean of its runs' (the runs' scores are what is
        stored); the means then also give each system's number of runs and the sd, min and
        max of its runs' means (``runs``, ``run_sd``, ``run_min``, ``run_max``). ``ties``: the
        tie policy (irwarehouse.options.TIE_POLICIES; default trec_eval, the stored ranking);
        the stored scores record it."""
        check_unit(by)
        parsed = _parsed(measures, rel_level)
        ties = tie_policy(ties)
        store = store and not self.read_only
        if catalogue.several(qrels) and ties.reranks:
            raise IrwError(f"ties {ties.name} are ranked for one qrels at a time: name one qrels")
        if catalogue.several(qrels):
            names = catalogue.expand_qrels(self.con, qrels)
            run_ids = {q: runsets.resolve(self.con, _spec(runs), qrels=q, collection=collection)
                       for q in names}
            per = many.evaluate_many(self.con, names, parsed, run_ids, topics=topics,
                                     max_docs=max_docs, rel_level=rel_level, store=store,
                                     collection=collection)
            present = set(per.column("qrels"))
        else:
            q = qrels or catalogue.default_qrels(self.con, {m.definition.reads for m in parsed})
            names, run_ids = [q], {q: runsets.resolve(self.con, _spec(runs), qrels=q, collection=collection)}
            per = evaluation.evaluate(self.con, q, parsed, run_ids[q], topics=topics, max_docs=max_docs,
                                      rel_level=rel_level, store=store, collection=collection, ties=ties)
            present = {q} if len(per) else set()
        for q in names:  # why a qrels gave no rows, said rather than left to guess
            if q not in present:
                note(evaluation.no_rows_reason(self.con, q, run_ids[q], topics, rel_level), "no rows")
        if standardize:
            from .standardize import apply_factors

            per = Result.of(apply_factors(self.con, per.df(), standardize))
        for q in names:  # the default threshold on graded qrels: said once, when scores are given
            if q in present and evaluation.note_default_threshold(self.con, q, parsed):
                break
        orders = {}
        for q in names:
            orders.update(evaluation.run_orders(self.con, catalogue.collection_of(self.con, q, collection),
                                                run_ids[q]))
        how = {"ranking_policy": orders, "ties": ties.name}
        if by == "system":
            groups = {q: catalogue.systems_of(self.con, run_ids[q],
                                              catalogue.collection_of(self.con, q, collection))
                      for q in names}
            return Result.of(system_scores(per, groups, per_topic, aggregate), info=how)
        return Result.of(per if per_topic else per.aggregate(aggregate), info=how)

    @staticmethod
    def eval_files(qrels, runs, measures, *, name: str | None = None, meta=None, save=None,
                   replace: bool = False, run_spec="all", order: str = "trec_eval",
                   extra_fields: bool = False, encoding: str = "utf-8", wait: float | None = None,
                   memory_limit: str | None = None, qrels_format: str | None = None,
                   **options) -> Result:
        """Evaluate files without a warehouse, as ``trec_eval QRELS RUN`` does: the qrels
        file (or DataFrame) ``qrels``, the run files ``runs`` (paths, globs, directories,
        compressed or not) and their metadata ``meta`` (a TSV or DataFrame, for run specs
        such as ``team:NAME``) are read with every check of :meth:`load_collection` into an
        in-memory database and evaluated as :meth:`eval` evaluates (``options``: its keyword
        arguments, e.g. ``per_topic``, ``topics``, ``max_docs``), by the same engine
        (engine.files_in; with ``meta``, in an in-memory warehouse); nothing is written.
        ``save``: a warehouse file to load them into instead (created if missing), where the
        scores are then kept: the load and the evaluation are one transaction (``replace``:
        replacing a qrels and runs of those names there). ``name``: the qrels's name
        (default: the file's name without a compression suffix). ``wait``,
        ``memory_limit``: as for :class:`Warehouse`. A tie policy that ranks ties otherwise
        (``ties``) reads every ranked line, in an in-memory warehouse. ``qrels_format``: the
        qrels file's judgment kind, as :meth:`load_qrels`'s ``format`` (trec, the default;
        diversity, prels, prefs, jg)."""
        parsed = _parsed(measures, options.get("rel_level"))  # a bad measure: before any reading
        kind = qrels_kind(qrels, qrels_format)
        ties = tie_policy(options.pop("ties", None))
        if replace and save is None:
            raise IrwError("--replace replaces what --save DB holds: name the warehouse with --save")
        name = name or _file_qrels_name(qrels)

        def evaluate(con, path, collection):
            if path is None:  # files in, scores out without a warehouse, ranked under `order`
                per = files_in.evaluate(con, name, parsed, run_spec=run_spec, **options)
                if len(per):
                    evaluation.note_default_threshold(con, name, parsed)
                ranked = loading.ranking_policy(order)
                return Result.of(per, info={"ranking_policy": {r: ranked for r in set(per.column("run_id"))},
                                            "ties": ties.name})
            return Warehouse.attach(con, path).eval(parsed, name, run_spec,
                                                    store=save is not None, ties=ties.name, **options)

        # run metadata, a warehouse to keep the scores in, options of eval's alone and the
        # deeply-judged run specs (which read every ranked line) load a warehouse
        fast = (set(options) <= set(files_in.OPTIONS) and "deeply-judged" not in str(run_spec)
                and not ties.reranks)
        return _files_in(qrels, runs, name, evaluate, fast=fast, meta=meta, save=save,
                         replace=replace, order=order, extra_fields=extra_fields,
                         encoding=encoding, wait=wait, memory_limit=memory_limit,
                         batched=run_spec == "all", kind=kind)

    @staticmethod
    def on_files(qrels, runs: list, then, *, order: str = "trec_eval", extra_fields: bool = False,
                 encoding: str = "utf-8", wait: float | None = None,
                 memory_limit: str | None = None):
        """What ``then(warehouse, qrels_name, run_ids)`` gives on a throw-away in-memory
        warehouse holding the qrels file ``qrels`` (as ``qrels_name``) and the run files
        ``runs`` (``run_ids``: the run ids of each file, a list per file, in their order), read with every check of :meth:`load_collection`; nothing is written. The
        statistics on files are so those of a warehouse (``irw compare QRELS RUN_A RUN_B``)."""
        name = _file_qrels_name(qrels)

        def then_(con, path, collection):
            w = Warehouse.attach(con, path)
            return then(w, name, files_in.runs_of_each(w.runs().records(), list(runs)))
        return _files_in(qrels, list(runs), name, then_, fast=False, order=order,
                         extra_fields=extra_fields, encoding=encoding, wait=wait,
                         memory_limit=memory_limit)

    @staticmethod
    def trec_eval(qrels, run, measures=None, *, complete: bool = False, max_docs: int | None = None,
                  rel_level: int | None = None, judged_only: bool = False,
                  num_docs: int | None = None, zscores=None,
                  rel_info_format: str = "qrels", results_format: str = "trec_results",
                  wait: float | None = None, memory_limit: str | None = None) -> "TrecEvalReport":
        """What trec_eval 10.0 prints for the qrels file ``qrels`` and the run ``run`` (a
        file, or a binary stream such as ``sys.stdin.buffer``), as a
        :class:`irwarehouse.trec_eval.TrecEvalReport` (its lines per topic and its summary
        lines): ``measures`` are trec_eval's ``-m`` arguments (names, ``name.params``,
        nicknames ``official`` (the default), ``all_trec``, ``set``), ``complete`` is ``-c``,
        ``max_docs`` ``-M``, ``rel_level`` ``-l``, ``judged_only`` ``-J``, ``num_docs``
        ``-N``, ``zscores`` ``-Z``'s file. The files are read with every check of :meth:`load_collection` (fields after
        the run id ignored, ranked as trec_eval 10.0 ranks: order ``trec_eval``) into an
        in-memory database, as :meth:`eval_files` reads them without a warehouse, and evaluated
        by the engine; nothing is written. Where the run
        lacks a topic of the qrels and ``complete`` is not set, the topics both have are
        evaluated and a note names the others (trec_eval 10.0 stops there). Errors are
        :class:`irwarehouse.errors.StatusError` where trec_eval has a status of its own."""
        te.check_formats(rel_info_format, results_format)
        kind = te.judgment_kind(rel_info_format)
        measures = te.plan(measures)
        te.check_grouping(rel_info_format, measures)
        for option, value in (("-M", max_docs), ("-l", rel_level)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < (1 if option == "-M" else 0)):
                raise StatusError(f"{option} takes an integer >= {1 if option == '-M' else 0}, got {value!r}", te.USAGE)
        z = te.read_zscores(str(zscores)) if zscores is not None else None
        name = _file_qrels_name(qrels)
        with _source_files(qrels, "qrels") as qrels_paths, _source_files(run, "runs") as run_paths, \
                te.as_read(qrels_paths + run_paths) as (paths, encoding, plain):
            def evaluate(qrels_path, run_path):
                return _files_in(
                    qrels_path, [run_path], name, lambda con, path, collection: te.compute(
                        con, name, collection, measures, complete=complete, max_docs=max_docs,
                        rel_level=rel_level, judged_only=judged_only, num_docs=num_docs),
                    order="trec_eval", extra_fields=True, wait=wait, memory_limit=memory_limit,
                    kind=kind, fast=kind is None)  # -R prefs | qrels_jg: the path verified byte for byte
            try:
                if kind is not None:  # read by the loader of its kind alone
                    values = evaluate(paths[0], paths[1])
                elif rel_info_format == te.GROUPED_FORMAT:  # each judgment group a qrels
                    values = te.by_judgment_group(paths[0], lambda group: evaluate(group, paths[1]))
                else:
                    values = te.evaluated(paths[0], paths[1], measures, evaluate, complete=complete,
                                          max_docs=max_docs, plain=plain)
            except StatusError as exc:  # trec_eval stopped: the topics' lines before the stop
                if getattr(exc, "values", None) is not None:
                    exc.report = te.report(exc.values, measures, zscores=z, encoding=encoding)
                raise
        return te.report(values, measures, zscores=z, encoding=encoding)

    @staticmethod
    def trec_eval_measures(measures) -> list[tuple[str, str | None, str]]:
        """What trec_eval's ``-m`` arguments ``measures`` name: (trec_eval label, the catalogue
        measure computing it or None, its description), in trec_eval's print order."""
        return [(m.label, None if m.measure is None else str(m.measure),
                 m.measure.definition.description if m.measure is not None else te.DESCRIPTIONS.get(m.family, ""))
                for m in te.plan(measures)]

    @_atomic
    def no_rows_reason(self, qrels: str | None = None, runs="all", *, topics: str = "qrels",
                       rel_level: int | None = None, collection: str | None = None) -> str:
        """Why an evaluation of ``qrels`` gives no rows, in words."""
        q = qrels or catalogue.default_qrels(self.con)
        run_ids = runsets.resolve(self.con, _spec(runs), qrels=q, collection=collection)
        return evaluation.no_rows_reason(self.con, q, run_ids, topics, rel_level)

    # ------------------------------------------------------------------ pools

    @_atomic
    def pool(self, kind: str, name: str | list[str] | None = None, qrels: str | None = None,
             runs="all", *, depth: int = 100, teams: list[str] | str | None = None,
             prefix: str | None = None, replace: bool = False,
             description: str | None = None) -> Result:
        """Derived qrels: kind 'depth' (J ∩ pool(S, depth)), 'shallow' (the pool of all runs),
        'leave-out' (J − U_t for each of ``teams``, ``"all"`` for every team of the run set:
        ``name`` a list of names, one per team, or a prefix string -- names ``name`` + team
        (or ``prefix`` + team; by default QRELS-lo-TEAM)), or 'take' (J ∩ ∪ D_t). One row per
        qrels created."""
        parent = qrels or catalogue.default_qrels(self.con)
        planned = pools.targets(self.con, kind, parent, runs, name, teams, prefix)
        rows = pools.build_many(self.con, kind, parent, planned.targets, planned.spec, depth, replace,
                                description)
        return Result.of(rows)

    @_atomic
    def pool_stats(self, what: str = "topics", qrels=None, runs="all", depth: int = 100) -> Result:
        """Pool statistics: topics | multiplicity | teams | unique | judged | collection |
        qrels (``qrels``: one qrels, or for ``qrels`` several, as a list)."""
        names = [qrels] if qrels is None or isinstance(qrels, str) else list(qrels)
        return pools.stats_of(self.con, what, [q or catalogue.default_qrels(self.con) for q in names],
                              _spec(runs), depth)

    @_atomic
    def deeply_judged(self, qrels: str | None = None, depth: int = 50) -> list[str]:
        """Runs with at least ``depth`` documents for every topic, all of their top ``depth``
        judged."""
        return pools.deeply_judged(self.con, qrels or catalogue.default_qrels(self.con), depth)

    # ------------------------------------------------------------------ judging the judges

    @_atomic
    def compare_qrels(self, qrels_a: str, qrels_b: str, what: str = "agreement", *, rel_level: int = 1,
                      B: int = 1000, seed: int = 0, level: float = 0.95, per_topic: bool = False) -> Result:
        """Two judgment sets as assessors (``irw qrels compare``), ``qrels_a`` the reference:
        ``what`` is ``agreement`` (per topic and ``all``: documents judged by both and by one
        only, Cohen's kappa at grade >= ``rel_level``, weighted kappa, Krippendorff's alpha),
        ``intervals`` (bootstrap over topics: ``B`` samples, ``seed``, ``level``),
        ``confusion`` (the matrix of grades; ``per_topic`` adds each topic's), ``only-a`` or
        ``only-b`` (the documents one set judged)."""
        from . import judges

        return Result.of(judges.compare_qrels(self.con, qrels_a, qrels_b, what, rel_level, B, seed,
                                              level, per_topic))

    @_atomic
    def compare_rankings(self, qrels_a: str, qrels_b: str, measures, runs="all", what: str | None = None, *,
                         options: RankingOptions | None = None, progress=None, **settings) -> Result:
        """Two judgment sets as rankings of the runs (``irw qrels rankings``), ``qrels_a`` the
        reference, both evaluated together. The options (irwarehouse.options.RankingOptions:
        ``options``, and any of its fields by name in ``settings``, ``what`` among them):
        ``what`` is ``runs`` (each run's mean score and rank under each, and its rank shift),
        ``groups`` (per group of runs -- the metadata column ``by`` -- the mean shift and its
        permutation test: ``permutations`` draws, ``seed``, p-values adjusted over the groups
        by ``bias_correction``), ``correlation`` (tau-b, tau-a, tau_AP, tau on A's
        ``top_k``, RBO(``rbo_p``), Pearson) or ``decisions`` (every run pair's significance
        decision under B against A's: ``test``, ``correction``, ``alpha``, ``B``). The
        per-topic scores are kept in ``scores`` unless the warehouse is read-only."""
        from . import judges

        o = RankingOptions.of(options, what=what, **settings)
        run_ids = runsets.resolve(self.con, _spec(runs), qrels=qrels_a)
        return Result.of(judges.compare_rankings(self.con, qrels_a, qrels_b, _parsed(measures), run_ids, o,
                                                 progress))

    # ------------------------------------------------------------------ reports, experiments, copies

    @_atomic
    def report(self, measures, qrels: str | None = None, runs="all", *, topics: str = "qrels",
               test: str = "t", correction: str | None = None, alpha: float = 0.05, B: int | None = None,
               seed: int = 0, level: float = 0.95, judged_k: int = 10, rbp_p: float = 0.8,
               format: str = "html", out=None, replace: bool = False, against: str | None = None,
               by: str | None = None, top_k: int = 10, permutations: int = 10000,
               bias_correction: str = "holm", rel_level: int = 1, intervals: bool = False,
               effects: bool = False, highlight=None, progress=None,
               ties: str | None = None) -> "Report | JudgesReport":
        """The report of ``irw report`` (irwarehouse.report.Report): its frames
        (``leaderboard``, ``pairs`` -- with each difference's interval and effect sizes at
        ``level`` --, ``correlations``, ``coverage``, ``power``) and ``to_html()``,
        ``to_latex()``, ``to_markdown()``. With ``out``, it is also written there in
        ``format`` (never over a database or, without ``replace``, an existing file); the
        paper table (latex, markdown) shows each mean's interval with ``intervals`` and each
        run's d_z against the measure's best with ``effects``. ``by="system"``: a report on
        the runs' systems (``by`` default ``run``). Without ``correction``, Holm's with more
        than 10 runs, none below; ``highlight``: run ids the page marks; ``ties``: the tie
        policy of every score (default trec_eval), which the page and the caption name.

        With ``against`` (a second judgment set B, ``qrels`` the reference A), the page
        judging it (irwarehouse.report.JudgesReport, html only): agreement as assessors
        (``rel_level``; intervals at ``level``), the two leaderboards side by side, the
        scores under both, the significance decisions, and the groups of runs (the metadata
        column ``by``, default ``team``) whose rank shift a permutation test flags
        (``permutations``, ``bias_correction``); its frames are those of
        :meth:`compare_qrels` and :meth:`compare_rankings`."""
        from . import report as reports

        if format not in reports.FORMATS:
            raise IrwError(f"unknown format {format!r}; valid: {', '.join(reports.FORMATS)}")
        _report_options(against, format, judged_k=judged_k, rbp_p=rbp_p, top_k=top_k,
                        permutations=permutations, bias_correction=bias_correction, rel_level=rel_level,
                        intervals=intervals, effects=effects)
        if against is None:
            if by not in (None, "run", "system"):
                raise IrwError(f"--by: only with --against (the page judging a second judgment set) "
                               f"can a metadata column ({by!r}) group the runs; without it, --by is "
                               "run or system")
            by = by or "run"
            if (intervals or effects) and format == "html":
                raise IrwError("--intervals and --effect-sizes shape the paper table (--format latex or "
                               "markdown); the page shows both")
        else:
            by = by or "team"
            if tie_policy(ties).reranks:
                raise IrwError("--ties applies to the runs' report; the page of --against ranks ties as stored")
        protected = (self.path,)
        if out is not None:  # refused before the work, not after it
            files.check_target(str(out), replace=replace, what=f"{format} report", protected=protected)
        if against is not None:
            rep = reports.build_judges_report(
                self.con, measure_names(measures), qrels or catalogue.default_qrels(self.con), against,
                runs=_spec(runs) or "all", topics=topics, test=test, correction=correction, alpha=alpha,
                B=B, seed=seed, level=level, by=by, top_k=top_k, permutations=permutations,
                bias_correction=bias_correction, rel_level=rel_level, progress=progress)
        else:
            rep = reports.build_report(self.con, measure_names(measures),
                                       qrels=qrels or catalogue.default_qrels(self.con),
                                       runs=_spec(runs) or "all", topics=topics, test=test,
                                       correction=correction, alpha=alpha, B=B, seed=seed, level=level,
                                       judged_k=judged_k, rbp_p=rbp_p, progress=progress, by=by,
                                       highlight=highlight, ties=ties)
        if out is not None:
            text = rep.render(format) if against is not None else rep.render(format, intervals, effects)
            files.write_text(str(out), text, replace=replace, what=f"{format} report",
                             protected=protected)
        return rep

    @_atomic(files=True)
    def experiment(self, name: str, out, *, replace: bool = False, **params):
        """Run the experiment ``name`` of the registry (irwarehouse.experiments.REGISTRY) with
        ``params`` (its options, by name), writing its tables, figures and report section to
        ``out`` and its tables to the warehouse; returns the outcome (title, tables, main
        table, report path)."""
        from . import experiments

        if self.read_only:
            raise IrwError("this warehouse is open read-only: an experiment keeps its tables in it")
        return experiments.run(self.con, name, str(out), params, replace=replace)

    @_atomic(files=True)
    def export(self, directory, *, format: str = "parquet", replace: bool = False) -> dict:
        """Every public table as Parquet or CSV files with the SQL that recreates the
        warehouse (``IMPORT DATABASE``)."""
        from . import export as copies

        return copies.export(self.con, str(directory), format, replace=replace)

    @_atomic(files=True)
    def publish(self, out, *, replace: bool = False) -> dict:
        """A compact copy for dashboards and BI tools (storage v1.4.0, read by DuckDB 1.4.2 and
        later), the base relation materialized in it."""
        from . import export as copies

        return copies.publish(self.con, str(out), replace=replace, wait=self.wait)


# The options of Warehouse.report that one kind of report takes, with their defaults: the
# report on one qrels (coverage), and the page judging a second judgment set (--against).
_ONE_QRELS_OPTIONS = {"judged_k": 10, "rbp_p": 0.8, "intervals": False, "effects": False}
_AGAINST_OPTIONS = {"top_k": 10, "permutations": 10000, "bias_correction": "holm", "rel_level": 1}


def _report_options(against, format: str, **given) -> None:
    """An option of the other kind of report, given another value than its default, is an
    error (it would be ignored); so is a paper table of two judgment sets."""
    unused = _ONE_QRELS_OPTIONS if against is not None else _AGAINST_OPTIONS
    wrong = [name for name, default in unused.items() if given[name] != default]
    if wrong:
        flags = ", ".join("--" + name.replace("_", "-") for name in wrong)
        where = "not with --against" if against is not None else "only with --against"
        raise IrwError(f"{flags}: {where} (the page judging a second judgment set)")
    if against is not None and format != "html":
        raise IrwError(f"the report of two judgment sets is an html page, not {format!r} (its tables: "
                       "irw qrels compare, irw qrels rankings, or irw experiment judges)")










