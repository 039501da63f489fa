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

import functools
import os
import re
import shutil
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Iterable

from . import catalogue, connection, files, names, runsets, schema, sql, statements
from . import measures as ms
from .catalogue import DEFAULT_COLLECTION
from .connection import DEFAULT_DB, DEFAULT_WAIT, memory_limit_text, transaction
from .engine import base, evaluation, files_in, loading, many, pools
from .errors import IrwError, StatusError, note
from . import trec_eval as te
from .result import Batches, Result
from .trec_eval import TREC_EVAL_VERSION
from .significance_tests import CORRECTIONS, TESTS
from .systems import check_unit, system_scores

if TYPE_CHECKING:
    from .report import JudgesReport, Report
    from .trec_eval import TrecEvalReport

__all__ = ["Warehouse", "DEFAULT_DB", "DEFAULT_WAIT", "TESTS", "CORRECTIONS", "TREC_EVAL_VERSION", "check_settings",
           "measure_names", "measure_labels", "measure_catalogue", "format_value", "memory_limit_text"]

# DataFrame column conventions: the first name present is used.
RUN_COLUMNS = {"topic": ("qid", "query_id", "topic"), "docno": ("docno", "doc_id"),
               "score": ("score",), "rank": ("rank",), "run_id": ("run_id", "name", "run")}
QRELS_COLUMNS = {"topic": ("qid", "query_id", "topic"), "docno": ("docno", "doc_id"),
                 "rel": ("label", "relevance", "rel")}

POOL_KINDS = pools.KINDS
POOL_STATS = pools.STATS
TOPIC_POLICIES = ("qrels", "run", "all")


def check_settings(wait: float | None = None, memory_limit: str | None = None) -> None:
    """Check the settings of opening a warehouse (``--wait``, ``--memory-limit``): an
    IrwError saying what is wrong."""
    import math

    if wait is not None and not (isinstance(wait, (int, float)) and math.isfinite(wait) and wait >= 0):
        raise IrwError(f"{wait!r} is not a number of seconds >= 0")
    if memory_limit is not None:
        connection.memory_limit(memory_limit)


def _column(frame, role: str, names: tuple[str, ...], what: str, required: bool = True):
    for name in names:
        if name in frame.columns:
            return name
    if required:
        raise IrwError(f"the {what} DataFrame has no {role} column (one of {', '.join(names)}); "
                       f"its columns: {', '.join(map(str, frame.columns))}")
    return None


def measure_names(measures) -> list[str]:
    """Measure names from names and ir_measures measure objects (str(ir_measures.nDCG@10)
    is 'nDCG@10'; ``Rprec`` is the catalogue's RPrec)."""
    if isinstance(measures, (str, bytes)) or not isinstance(measures, Iterable):
        measures = [measures]
    out = []
    for m in measures:
        if isinstance(m, str):
            out.append(m)
            continue
        if isinstance(m, ms.Measure):
            out.append(str(m))
            continue
        if type(m).__module__.split(".")[0] != "ir_measures":
            raise IrwError(f"not a measure: {m!r} (give a name such as 'nDCG@10', or an ir_measures measure)")
        text = str(m)
        name = re.match(r"[A-Za-z_]+", text).group(0)
        if ms.catalogue_name(name) is None:
            raise IrwError(f"ir_measures measure {text} has no counterpart in the catalogue (irw measures)")
        out.append(ms.catalogue_name(name) + text[len(name):])
    return out


def _parsed(measures, rel_level: int | None = None) -> list[ms.Measure]:
    return ms.parse_all(measure_names(measures), rel_level=rel_level)


def _conditions(con, conditions) -> list[tuple[ms.Measure, str]]:
    """The conditions of a correlation matrix: each ``MEASURE:QRELS`` (a string) or a
    (measure, qrels) pair, its qrels existing; a condition given twice is an error."""
    if isinstance(conditions, str):
        conditions = [conditions]
    out = []
    for item in conditions:
        if isinstance(item, str):
            measure, qrels = ms.parse_condition(item)
        else:
            measure, qrels = item
            measure = _parsed([measure])[0]
        catalogue.qrels_info(con, qrels)
        if (measure, qrels) in out:
            raise IrwError(f"the condition {measure}:{qrels} is given twice")
        out.append((measure, qrels))
    if not out:
        raise IrwError("no condition given: name each as MEASURE:QRELS, e.g. AP@100:trec8-d10")
    return out


def measure_labels(measures, rel_level: int | None = None) -> list[str]:
    """The canonical names of ``measures`` (names or ir_measures objects), in order, without
    repeats: the names ``scores.measure`` stores. A bad name is an IrwError."""
    return [str(m) for m in _parsed(measures, rel_level)]


def measure_catalogue() -> list:
    """The definitions of the catalogue's measures (irwarehouse.measures.MeasureDef)."""
    return list(ms.CATALOGUE.values())


format_value = ms.format_value


_spec = runsets.spec_of


_SANDBOX_KEPT = ("this in-memory warehouse ran SQL in DuckDB's sandbox (Warehouse.sql), which "
                 "lasts as long as the warehouse: it reads and writes no file any more. Load "
                 "files and write copies before the first sql call, or use a warehouse file")


def _atomic(method=None, *, files: bool = False):
    """One call, one transaction: a call that fails leaves the warehouse as it was, scores it
    would have stored on the way included (nested calls join the outer transaction). The
    first call also makes the warehouse ready (schema.prepare), in the same transaction.
    ``files``: the call reads or writes files through DuckDB (an export, a factor file), so
    its connection must be out of the sandbox of an earlier sql call (Warehouse._connection)."""
    if method is None:
        return functools.partial(_atomic, files=files)

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        con = self._connection(files=files)
        with transaction(con):
            if not self._prepared:
                schema.prepare(con, self.path, self.read_only, self._notify)
            result = method(self, *args, **kwargs)
        self._prepared = True
        return result
    return call


class Warehouse:
    """An irwarehouse warehouse: a DuckDB file (or ``":memory:"``) with the runs, qrels, scores
    and every view and macro of the SQL product.

    ``Warehouse(path)`` opens or creates a file (``path`` None: ``$IRW_DB``, else
    ``irw.duckdb``); ``read_only=True`` opens it for reading only (several readers may share
    it; nothing is stored); ``create=False`` refuses a missing file; ``wait`` and
    ``memory_limit`` are the command line's ``--wait`` and ``--memory-limit``. What irw notes
    on opening (changes made outside irw, say) goes to ``notify`` (default: the list
    :attr:`notes`). The file is opened on first use, and a load releases it while it reads
    its files. Use it as a context manager, or call :meth:`close`."""

    def __init__(self, path: str | os.PathLike | None = ":memory:", *, read_only: bool = False,
                 create: bool = True, wait: float | None = None, memory_limit: str | None = None,
                 notify=None, _throwaway: bool = False):
        # _throwaway: an in-memory warehouse for one evaluation (eval_files), without measure
        # macros and caches (connection.mark_throwaway)
        check_settings(wait, memory_limit)
        self.path = connection.resolve_path(None if path is None else str(path))
        self.read_only = read_only
        self.create = create and not read_only
        self.wait, self.memory_limit = wait, memory_limit
        self.notes: list[str] = []
        self._notify = notify or self.notes.append
        self._con = None
        self._box = None  # DuckDB's sandbox the connection is in (users' SQL: sql())
        self._prepared = False
        self._throwaway = _throwaway and self.path == ":memory:"
        if self.path == ":memory:":
            self.con  # noqa: B018 - an in-memory warehouse exists only while it is open

    @classmethod
    def attach(cls, con, path: str | None = None) -> "Warehouse":
        """A Warehouse over a connection that is open (and ready) already."""
        w = cls.__new__(cls)
        w.path, w.notes, w._con, w._prepared, w._box = path or "", [], con, True, None
        w._notify = w.notes.append
        w.read_only = base.con_is_read_only(con)
        w.create, w.wait, w.memory_limit, w._throwaway = False, None, None, False
        return w

    @property
    def con(self):
        """The DuckDB connection to the warehouse (opened on first use)."""
        if self._con is None:
            self._con = connection.connect(self.path, read_only=self.read_only, create=self.create,
                                           wait=self.wait, memory=self.memory_limit)
            self._prepared = False
            if self.path == ":memory:":
                if self._throwaway:
                    connection.mark_throwaway(self._con)
                with transaction(self._con):
                    schema.prepare(self._con, self.path, False, self._notify,
                                   measure_macros=not self._throwaway)
                self._prepared = True
        return self._con

    @property
    def engine(self) -> connection.DuckDBEngine:
        return connection.DuckDBEngine(self.con)

    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None
            self._box = None

    def _connection(self, box: "connection.Sandbox | None" = None, files: bool = False):
        """The connection: in DuckDB's sandbox ``box`` (users' SQL); or, with ``files``, out
        of any (a call that reads or writes files through DuckDB); else as it is. A
        connection enters a sandbox for good (DuckDB cannot lift it), so a warehouse file is
        opened anew to leave one, or to enter another, between calls (a connection taken
        before, ``w.con``, is then closed); an in-memory warehouse, which lives in its
        connection, stays in the sandbox of its first SQL."""
        if self._con is not None and self._box is not None and (
                (box is not None and box != self._box) or (box is None and files)):
            if self.path not in (":memory:", "") and not connection.in_transaction(self._con):
                self.close()
            elif box is not None:
                raise IrwError("this warehouse's DuckDB is in the sandbox of an earlier sql call, "
                               "which it keeps while it is open (an in-memory warehouse: always): "
                               "name every file its SQL may use in that first call")
            else:
                raise IrwError(_SANDBOX_KEPT)
        con = self.con
        if box is not None and self._box is None:
            box.apply(con)
            self._box = box
        elif files and connection.in_sandbox(con):
            # the file's DuckDB, shared by this process's connections to it, is in the
            # sandbox of another one's sql call: this connection, opened meanwhile, may be
            # what keeps it
            if self.path not in (":memory:", "") and not connection.in_transaction(con):
                self.close()
                con = self.con
        if files and box is None and connection.in_sandbox(con):
            raise IrwError(f"another connection of this process to {self.path} (another Warehouse, or "
                           "a connection taken from one) keeps DuckDB's sandbox of an earlier sql "
                           "call, which reads and writes no file: close it first")
        return con

    def __enter__(self) -> "Warehouse":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Warehouse({self.path!r}{', read_only=True' if self.read_only else ''})"

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
        return Result(list(ms.LISTING_COLUMNS), ms.listing_rows())

    # ------------------------------------------------------------------ loading

    @contextmanager
    def _staging(self, *sources):
        """A load's staging connection: the warehouse's own when it is in memory; otherwise
        an in-memory one, the file released meanwhile and attached for the final transaction
        (connection.Staging). ``sources``: what is loaded (files, or DataFrames)."""
        if self.read_only:
            raise IrwError("this warehouse is open read-only: open it for writing to load")
        if self.path == ":memory:":
            if self._box is not None and any(
                    isinstance(s, (str, os.PathLike)) or hasattr(s, "read")
                    or (isinstance(s, (list, tuple)) and s) for s in sources):
                raise IrwError(_SANDBOX_KEPT)
            stage = connection.Staging(self.path, con=self._connection())
        else:
            self.close()  # released while the files are read
            stage = connection.Staging(self.path, wait=self.wait, notify=self._notify, create=self.create,
                                       memory=self.memory_limit, prepare=schema.prepare)
        try:
            yield stage
        finally:
            stage.close()

    def _target(self, stage, collection: str | None) -> tuple[str, bool]:
        return catalogue.collection_for_load(self.path, stage.con if stage.attach is None else None,
                                             collection, self.wait)

    def load_qrels(self, source, name: str, *, collection: str | None = None, replace: bool = False,
                   description: str | None = None, encoding: str = "utf-8") -> dict:
        """Load judgments from files (paths or globs) or a DataFrame under ``name``; a summary
        (qrels, collection, topics, judgments, relevant, comments: the comment lines skipped)."""
        with self._staging(source) as stage, _source_files(source, "qrels") as paths:
            target, implicit = self._target(stage, collection)
            return loading.load_qrels(stage.con, paths, name, replace=replace, description=description,
                                      final=stage.attach, encoding=encoding, collection=target,
                                      implicit=implicit)

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

    def sql(self, query: str, params=None, *, write: bool | None = None, files=(),
            batches: bool | int = False) -> "Result | Batches | None":
        """Run SQL; its result (None for a statement without one).

        The SQL runs in DuckDB's own sandbox (irwarehouse.connection.Sandbox): it reads and
        writes the warehouse and nothing else -- no file, no other database, no extension
        -- but, with ``write``, the directories and files named in ``files`` (none of which
        may be or hold a DuckDB database: irwarehouse.statements.allowed). ``write``
        (default: whether the warehouse is open for writing) allows statements that change
        something; without it only statements that read run. The call is one transaction:
        after statements that change the tables, irw's caches and stored scores are brought
        in line (as ``irw sql --write`` does), and tables left in a state no load would
        accept (a document twice in a ranking, a document judged twice, a table of the
        schema removed) are an error that undoes the call. The sandbox lasts as long as the
        warehouse's DuckDB connection: a warehouse file is opened anew for other calls, an
        in-memory one keeps it (``w.con`` runs SQL outside it, without irw's checks).

        ``batches`` (True, or the number of rows per batch): the result streamed, as an
        :class:`irwarehouse.result.Batches` -- its columns at once, its rows in batches as
        DuckDB produces them, so that memory holds one batch whatever the result's size. The
        call's transaction stays open until the batches are read to the end (then it
        commits) or closed (then it is rolled back)."""
        import duckdb

        write = (not self.read_only) if write is None else bool(write)
        if write and self.read_only:
            raise IrwError("this warehouse is open read-only: open it for writing to change it")
        if isinstance(files, (str, os.PathLike)):
            files = [files]
        if files and not write:
            raise IrwError("files may be read and written by SQL that runs with --write (write=True) only")
        directories, paths = statements.allowed(files)
        con = self._connection(connection.Sandbox(directories, paths))

        def failed(exc: BaseException) -> BaseException:
            if isinstance(exc, duckdb.PermissionException):
                return IrwError(statements.outside(exc, write))
            if isinstance(exc, duckdb.Error):
                return IrwError(f"SQL error: {str(exc).strip().splitlines()[0]}")
            return exc

        open_transaction = ExitStack()
        open_transaction.enter_context(transaction(con))

        def finish(error: BaseException | None) -> None:
            if error is None:
                try:
                    if write:
                        for message in schema.reconcile(con, edited=True):
                            self._notify(message)
                except BaseException as exc:
                    open_transaction.__exit__(type(exc), exc, exc.__traceback__)
                    raise
                open_transaction.close()
                self._prepared = True
            else:
                open_transaction.__exit__(type(error), error, error.__traceback__)

        try:
            if not self._prepared:
                schema.prepare(con, self.path, self.read_only, self._notify)
            statements.check(con, query, write)
            connection.settle(con)
            try:
                rel = con.sql(query, params=params) if params is not None else con.sql(query)
                if rel is not None and batches:
                    text = rel.sql_query()
                    con.execute(text, params) if params is not None else con.execute(text)
                    return Batches(rel.columns, rel.types, con.fetchmany, finish,
                                   None if batches is True else batches, failed)
                result = None if rel is None else Result(rel.columns, rel.fetchall())
            except duckdb.Error as exc:
                raise failed(exc) from None
        except BaseException as exc:
            finish(exc)
            raise
        finish(None)
        return result

    # ------------------------------------------------------------------ evaluation

    @_atomic
    def eval(self, measures, qrels=None, runs="all", *, collection: str | None = None,
             per_topic: bool = True, topics: str = "qrels", max_docs: int | None = None,
             rel_level: int | None = None, aggregate: str = "mean", store: bool = True,
             standardize: str | None = None, by: str = "run") -> Result:
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
        max of its runs' means (``runs``, ``run_sd``, ``run_min``, ``run_max``)."""
        check_unit(by)
        parsed = _parsed(measures, rel_level)
        store = store and not self.read_only
        if catalogue.several(qrels):
            names = catalogue.expand_qrels(self.con, qrels)
            run_ids = {q: runsets.resolve(self.con, _spec(runs), qrels=q, collection=collection)
                       for q in names}
            per = many.evaluate_many(self.con, names, parsed, run_ids, topics=topics,
                                     max_docs=max_docs, rel_level=rel_level, store=store,
                                     collection=collection)
            present = set(per.column("qrels"))
        else:
            q = qrels or catalogue.default_qrels(self.con)
            names, run_ids = [q], {q: runsets.resolve(self.con, _spec(runs), qrels=q, collection=collection)}
            per = evaluation.evaluate(self.con, q, parsed, run_ids[q], topics=topics, max_docs=max_docs,
                                      rel_level=rel_level, store=store, collection=collection)
            present = {q} if len(per) else set()
        for q in names:  # why a qrels gave no rows, said rather than left to guess
            if q not in present:
                note(evaluation.no_rows_reason(self.con, q, run_ids[q], topics, rel_level), "no rows")
        if standardize:
            from .standardize import apply_factors

            per = Result.of(apply_factors(self.con, per.df(), standardize))
        if by == "system":
            groups = {q: catalogue.systems_of(self.con, run_ids[q],
                                              catalogue.collection_of(self.con, q, collection))
                      for q in names}
            return system_scores(per, groups, per_topic, aggregate)
        return per if per_topic else per.aggregate(aggregate)

    @staticmethod
    def eval_files(qrels, runs, measures, *, name: str | None = None, meta=None, save=None,
                   replace: bool = False, run_spec="all", order: str = "trec_eval",
                   extra_fields: bool = False, encoding: str = "utf-8", wait: float | None = None,
                   memory_limit: str | None = None, **options) -> Result:
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
        ``memory_limit``: as for :class:`Warehouse`."""
        parsed = _parsed(measures, options.get("rel_level"))  # a bad measure: before any reading
        if replace and save is None:
            raise IrwError("--replace replaces what --save DB holds: name the warehouse with --save")
        name = name or _file_qrels_name(qrels)

        def evaluate(con, path, collection):
            if path is None:  # files in, scores out without a warehouse
                return files_in.evaluate(con, name, parsed, run_spec=run_spec, **options)
            return Warehouse.attach(con, path).eval(measures, name, run_spec,
                                                    store=save is not None, **options)

        # run metadata, a warehouse to keep the scores in, options of eval's alone and the
        # deeply-judged run specs (which read every ranked line) load a warehouse
        fast = set(options) <= set(files_in.OPTIONS) and "deeply-judged" not in str(run_spec)
        return _files_in(qrels, runs, name, evaluate, fast=fast, meta=meta, save=save,
                         replace=replace, order=order, extra_fields=extra_fields,
                         encoding=encoding, wait=wait, memory_limit=memory_limit)

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
        the run id ignored, ranked as trec_eval 10.0 ranks: order ``trec_eval_10``) into an
        in-memory database, as :meth:`eval_files` reads them without a warehouse, and evaluated
        by the engine; nothing is written. Where the run
        lacks a topic of the qrels and ``complete`` is not set, the topics both have are
        evaluated and a note names the others (trec_eval 10.0 stops there). Errors are
        :class:`irwarehouse.errors.StatusError` where trec_eval has a status of its own."""
        te.check_formats(rel_info_format, results_format)
        measures = te.plan(measures)
        for option, value in (("-M", max_docs), ("-l", rel_level)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < (1 if option == "-M" else 0)):
                raise StatusError(f"{option} takes an integer >= {1 if option == '-M' else 0}, got {value!r}", te.USAGE)
        z = te.read_zscores(str(zscores)) if zscores is not None else None
        name = _file_qrels_name(qrels)
        values = _files_in(
            qrels, run, name, lambda con, path, collection: te.compute(
                con, name, collection, measures, complete=complete, max_docs=max_docs,
                rel_level=rel_level, judged_only=judged_only, num_docs=num_docs),
            order="trec_eval_10", extra_fields=True, wait=wait, memory_limit=memory_limit)
        return te.report(values, measures, zscores=z)

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
        if kind not in POOL_KINDS:
            raise IrwError(f"unknown kind of derived qrels {kind!r}; valid: {', '.join(POOL_KINDS)}")
        parent = qrels or catalogue.default_qrels(self.con)
        spec = "all" if kind == "shallow" else (_spec(runs) or "all")
        if kind == "leave-out":
            if teams == "all":
                teams = list(catalogue.teams_of(self.con, runsets.resolve(self.con, spec, qrels=parent),
                                                catalogue.collection_of(self.con, parent)))
            targets = pools.leave_out_targets(parent, list(teams or []), name, prefix)
        else:
            if not name:
                raise IrwError("a derived qrels needs a name (--name)")
            targets = [(name, list(teams or []) if kind == "take" else [])]
        rows = pools.build_many(self.con, kind, parent, targets, spec, depth, replace, description)
        return Result.of(rows)

    @_atomic
    def pool_stats(self, what: str = "topics", qrels=None, runs="all", depth: int = 100) -> Result:
        """Pool statistics: topics | multiplicity | teams | unique | judged | collection |
        qrels (``qrels``: one qrels, or for ``qrels`` several, as a list)."""
        if what not in POOL_STATS:
            raise IrwError(f"unknown statistics {what!r}; valid: {', '.join(POOL_STATS)}")
        names = [qrels] if qrels is None or isinstance(qrels, str) else list(qrels)
        if len(names) > 1 and what != "qrels":
            raise IrwError(f"pool stats {what} takes one --qrels (several: pool stats qrels)")
        out = None
        for name in names:
            q = name or catalogue.default_qrels(self.con)
            pools.check_parent(self.con, q)
            run_ids = runsets.resolve(self.con, _spec(runs), qrels=q)
            if what == "qrels":
                part = pools.qrels_stats(self.con, q, run_ids)
            else:
                rel = pools.stats(self.engine, what, q, run_ids, depth)
                part = Result(rel.columns, rel.fetchall())
            out = part if out is None else Result(out.columns, out.rows() + part.rows())
        return out

    @_atomic
    def deeply_judged(self, qrels: str | None = None, depth: int = 50) -> list[str]:
        """Runs with at least ``depth`` documents for every topic, all of their top ``depth``
        judged."""
        return pools.deeply_judged(self.con, qrels or catalogue.default_qrels(self.con), depth)

    # ------------------------------------------------------------------ significance

    def _qrels_runs(self, qrels, runs) -> tuple[str, list[str]]:
        q = qrels or catalogue.default_qrels(self.con)
        return q, runsets.resolve(self.con, _spec(runs), qrels=q)

    @_atomic
    def discpower(self, measures, qrels: str | None = None, runs="all", *, test: str = "t",
                  correction: str = "none", alpha: float = 0.05, B: int | None = None, seed: int = 0,
                  topics: str = "qrels", reference_qrels: str | None = None,
                  reference_measure=None, save: str | None = None, progress=None,
                  by: str = "run", level: float = 0.95) -> Result:
        """Discriminative power per measure (and agreement with a reference condition), with
        the matrix's residual variance V_E, the smallest significant difference and the
        median |d_z|; ``by="system"`` over systems. ``save`` keeps the rows in
        discpower_results and every pair behind them in pair_tests, both under that name,
        with the interval of each difference and its effect sizes at ``level``
        (``.info['pairs']``: that table)."""
        from . import significance

        check_unit(by)
        parsed = _parsed(measures)
        ref = ms.parse(measure_names(reference_measure)[0]) if reference_measure is not None else None
        q, run_ids = self._qrels_runs(qrels, runs)
        if save and self.read_only:
            raise IrwError("this warehouse is open read-only: open it for writing to --save")
        out = significance.discpower(self.con, q, parsed, run_ids, test, correction, alpha, B, seed,
                                     topics, reference_qrels, ref, progress, by=by,
                                     pairs=bool(save), level=level)
        if not save:
            return Result.of(out)
        frame, pairs = out
        params = {"runs": runs if isinstance(runs, str) else list(runs), "topics": topics,
                  "seed": seed, "by": by, "level": level}
        self._save(significance, "discpower_results", save, frame, params)
        self._save(significance, "pair_tests", save, pairs,
                   {**params, "correction": correction, "alpha": alpha, "B": B})
        return Result.of(frame, info={"pairs": pairs})

    def _save(self, significance, table: str, name: str, frame, params: dict) -> None:
        if self.read_only:
            raise IrwError("this warehouse is open read-only: open it for writing to --save")
        significance.save(self.con, table, name, frame, params)

    @_atomic
    def pvalues(self, measure, qrels: str | None = None, runs="all", *, test: str = "t",
                correction: str = "none", alpha: float = 0.05, B: int | None = None, seed: int = 0,
                topics: str = "qrels", save: str | None = None, progress=None, level: float = 0.95,
                by: str = "run") -> Result:
        """Every run pair with its mean difference and its interval at ``level`` (the test's
        own: ``TESTS[test].interval``), Cohen's d_z with its exact interval, Sakai's effect
        size over the residual variance (``effect_size_residual``), p-value and adjusted
        p-value; ``by="system"``: every pair of systems, with their runs and whether the
        difference is within their spread. ``save`` keeps them in pair_tests."""
        from . import significance

        check_unit(by)
        m = self._one(measure)
        q, run_ids = self._qrels_runs(qrels, runs)
        frame = significance.pvalues(self.con, q, m, run_ids, test, correction, alpha, B, seed,
                                     topics, progress, level, by)
        if save:
            self._save(significance, "pair_tests", save, frame,
                       {"runs": runs if isinstance(runs, str) else list(runs), "topics": topics,
                        "correction": correction, "alpha": alpha, "B": B, "seed": seed,
                        "by": by, "level": level})
        return Result.of(frame)

    @_atomic
    def compare(self, run_a: str, run_b: str, measures, qrels: str | None = None, *,
                tests=("t",), alpha: float = 0.05, B: int | None = None, seed: int = 0,
                topics: str = "qrels", rbp_p: float = 0.8, judged_k: int = 10,
                level: float = 0.95, by: str = "run") -> Result:
        """Two runs (``by="system"``: two systems) per measure: means, difference with its
        interval at ``level`` (that of the first test), d_z with its exact interval,
        p-values, RBP residual and Judged@k."""
        from . import significance

        check_unit(by)
        q = qrels or catalogue.default_qrels(self.con)
        if by == "run":
            runsets.resolve(self.con, _spec([run_a, run_b]), qrels=q)
        return Result.of(significance.compare(self.con, q, run_a, run_b, _parsed(measures),
                                              [tests] if isinstance(tests, str) else list(tests),
                                              alpha, B, seed, topics, rbp_p, judged_k, level, by))

    @_atomic
    def correlate(self, measure_a, measure_b=None, qrels: str | None = None, qrels_b: str | None = None,
                  runs="all", *, topics: str = "qrels", rbo_p: float = 0.9) -> Result:
        """Rank correlation (tau-b, tau-a, tau_AP, RBO, Pearson) of the run orderings by
        ``measure_a`` on ``qrels`` and ``measure_b`` (default: a) on ``qrels_b`` (default: qrels)."""
        from . import significance

        a = self._one(measure_a)
        b = self._one(measure_b) if measure_b is not None else a
        q, run_ids = self._qrels_runs(qrels, runs)
        return Result.of([significance.correlate(self.con, a, q, b, qrels_b or q, run_ids, topics, rbo_p)])

    @_atomic
    def correlation_matrix(self, measures=None, qrels=None, runs="all", *, conditions=None,
                           topics: str = "qrels", rbo_p: float = 0.9, of: str = "scores",
                           statistics=None, save: str | None = None) -> Result:
        """``irw correlate --matrix``: every cell over the conditions, one row per cell and
        statistic. The conditions are every measure of ``measures`` at every qrels of
        ``qrels`` (a list; default the only loaded qrels), measures outer; or the list
        ``conditions``, each ``MEASURE:QRELS`` (e.g. ``AP@100:trec8-d10``) or a (measure,
        qrels) pair, in the order given. ``of`` scores (run orderings) or pvalues (orderings
        of the run pairs by paired t-test p-value); ``save`` keeps the cells in table
        correlation_matrices."""
        from . import significance

        if conditions is not None:
            if measures is not None or qrels is not None:
                raise IrwError("give the conditions as measures and qrels or as a list of "
                               "conditions, not both")
            pairs = _conditions(self.con, conditions)
            qs = list(dict.fromkeys(q for _, q in pairs))
        else:
            if not measures:
                raise IrwError("no measure given: name the measures (-m), or the conditions "
                               "(--condition MEASURE:QRELS)")
            parsed = _parsed(measures)
            qs = catalogue.expand_qrels(self.con, qrels)
            pairs = [(m, q) for m in parsed for q in qs]
        run_ids = runsets.resolve(self.con, _spec(runs), qrels=qs[0])
        wanted = list(statistics) if statistics else (
            ["kendall_tau", "tau_ap", "rbo"] if of == "scores" else ["kendall_tau"])
        frame = significance.correlation_matrix(self.con, pairs, run_ids, topics, rbo_p, of, wanted,
                                                notify=self._notify_note)
        if save:
            params = ({"conditions": [f"{m}:{q}" for m, q in pairs]} if conditions is not None else
                      {"measures": [str(m) for m in parsed], "qrels": qs})
            self._save(significance, "correlation_matrices", save, frame,
                       {**params, "runs": runs if isinstance(runs, str) else list(runs),
                        "topics": topics, "rbo_p": rbo_p})
        return Result.of(frame)

    @_atomic
    def power(self, measures, delta, qrels: str | None = None, runs="all", *, alpha: float = 0.05,
              beta: float = 0.2, topics: str = "qrels", by: str = "run", anova: bool = False,
              systems: int | None = None) -> Result:
        """Topic set size design (Sakai 2016; ``irw power``): from the runs x topics matrix of
        each measure, the residual variance V_E of the two-way ANOVA without replication;
        per difference in ``delta`` (a number or a list), the topics a two-sided paired
        t-test at ``alpha`` needs to detect it with power 1 - ``beta`` (exact noncentral t,
        a pair's differences of variance 2 V_E; None beyond irwarehouse.power.MAX_TOPICS),
        the power with the collection's topics, and the minimum detectable difference with
        them. ``anova``: also the one-way ANOVA design over ``systems`` systems (default:
        the runs, or systems, of the matrix), ``delta`` the range between the best and the
        worst. ``by="system"``: the matrix of the runs' systems."""
        from . import significance

        check_unit(by)
        deltas = [delta] if isinstance(delta, (int, float)) else list(delta)
        q, run_ids = self._qrels_runs(qrels, runs)
        return Result.of(significance.power_design(self.con, q, _parsed(measures), run_ids,
                                                   [float(d) for d in deltas], alpha, beta, topics,
                                                   by, anova, systems))

    @staticmethod
    def _notify_note(message: str) -> None:
        note(message)

    @_atomic
    def ci(self, measure, qrels: str | None = None, runs="all", *, topics: str = "qrels",
           level: float = 0.95, by: str = "run") -> Result:
        """Each run's mean with its t-distribution confidence interval; ``by="system"``: each
        system's, with its number of runs and their spread."""
        from . import significance

        check_unit(by)
        q, run_ids = self._qrels_runs(qrels, runs)
        return Result.of(significance.mean_intervals(self.con, q, self._one(measure), run_ids, topics,
                                                     level, by))

    @_atomic
    def summary(self, measures, qrels: str | None = None, runs="all", *, topics: str = "qrels",
                by: str = "run") -> Result:
        """Per run (over its topics) or per topic (over the runs): n, mean, sd, min and max of
        each measure (``irw summary``). When there are no rows, a note says why."""
        from . import summary

        q, run_ids = self._qrels_runs(qrels, runs)
        parsed = _parsed(measures)
        rows = summary.summary(self.con, q, parsed, run_ids, topics, by)
        if not rows:
            note(evaluation.no_rows_reason(self.con, q, run_ids, topics), "no rows")
            key = "run_id" if by == "run" else "topic"
            return Result([key, "measure", "n", "mean", "sd", "min", "max"], [])
        return Result.of(rows)

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
    def compare_rankings(self, qrels_a: str, qrels_b: str, measures, runs="all", what: str = "runs", *,
                         by: str = "team", topics: str = "qrels", test: str = "t",
                         correction: str = "none", alpha: float = 0.05, B: int | None = None,
                         seed: int = 0, top_k: int = 10, rbo_p: float = 0.9,
                         permutations: int = 10000, bias_correction: str = "holm",
                         progress=None) -> Result:
        """Two judgment sets as rankings of the runs (``irw qrels rankings``), ``qrels_a`` the
        reference, both evaluated together: ``what`` is ``runs`` (each run's mean score and
        rank under each, and its rank shift), ``groups`` (per group of runs -- the metadata
        column ``by`` -- the mean shift and its permutation test: ``permutations`` draws,
        ``seed``, p-values adjusted over the groups by ``bias_correction``), ``correlation``
        (tau-b, tau-a, tau_AP, tau on A's ``top_k``, RBO(``rbo_p``), Pearson) or
        ``decisions`` (every run pair's significance decision under B against A's: ``test``,
        ``correction``, ``alpha``, ``B``). The per-topic scores are kept in ``scores``
        unless the warehouse is read-only."""
        from . import judges

        run_ids = runsets.resolve(self.con, _spec(runs), qrels=qrels_a)
        return Result.of(judges.compare_rankings(
            self.con, qrels_a, qrels_b, _parsed(measures), run_ids, what, by=by, topics=topics, test=test,
            correction=correction, alpha=alpha, B=B, seed=seed, top_k=top_k, rbo_p=rbo_p,
            permutations=permutations, bias_correction=bias_correction, progress=progress))

    # ------------------------------------------------------------------ standardization

    @_atomic
    def standardize(self, name: str, measures, qrels: str | None = None, *, reference="all",
                    replace: bool = False, description: str | None = None) -> Result:
        """Compute a factor set (per measure and topic, the reference runs' mean and sd);
        returns its summary per measure (topics, n_ref, mean mu and sigma, zero sigmas), with
        ``.info`` the set as stored (factors, qrels, measures, topics, reference)."""
        from . import standardize as st

        info = st.create_factor_set(self.con, name, _parsed(measures),
                                    qrels=qrels or catalogue.default_qrels(self.con),
                                    reference=_spec(reference) or "all", replace=replace,
                                    description=description)
        return Result.of(st.factor_summary(self.con, name), info=info)

    @_atomic
    def factor_sets(self) -> Result:
        """The factor sets in the warehouse."""
        from . import standardize as st

        return Result.of(st.list_factor_sets(self.con))

    @_atomic
    def factors(self, name: str, measure: str | None = None) -> Result:
        """The factors of a set: per measure and topic, mu, sigma and n_ref."""
        from . import standardize as st

        return Result.of(st.factors_frame(self.con, name, measure))

    @_atomic
    def standardized_scores(self, factors: str, measures=None, runs="all", *,
                            per_topic: bool = False) -> Result:
        """Standardized scores Phi(z) under a factor set (views std_scores / std_score_means);
        runs without stored scores are evaluated first."""
        from . import standardize as st

        info = st.factor_set_info(self.con, factors)
        run_ids = runsets.resolve(self.con, _spec(runs), qrels=info["qrels"])
        return Result.of(st.standardized_scores(self.con, factors, measure_names(measures) if measures else None,
                                                run_ids, per_topic=per_topic))

    @_atomic(files=True)
    def export_factors(self, name: str, path, *, file_format: str | None = None,
                       replace: bool = False) -> int:
        """Write a factor set to a CSV or Parquet file (through the output guard); the number
        of factors written."""
        from . import standardize as st

        return st.export_factor_set(self.con, name, str(path), file_format, replace=replace)

    @_atomic(files=True)
    def import_factors(self, path, *, name: str | None = None, qrels: str | None = None,
                       replace: bool = False, description: str | None = None,
                       file_format: str | None = None) -> dict:
        """Import a published factor set (all or nothing)."""
        from . import standardize as st

        return st.import_factor_set(self.con, str(path), name=name, qrels=qrels, replace=replace,
                                    description=description, fmt=file_format)

    @_atomic
    def drop_factors(self, name: str) -> None:
        """Remove a factor set."""
        from . import standardize as st

        st.drop_factor_set(self.con, name)

    @_atomic
    def reference_size(self, measure, qrels: str | None = None, runs="all", *, reference=None,
                       sizes=(2, 5, 10, 20), samples: int = 1000, seed: int = 0,
                       progress=None) -> Result:
        """How many standardizing systems: tau of n sampled reference runs vs all of them."""
        from . import standardize as st

        q = qrels or catalogue.default_qrels(self.con)
        return Result.of(st.reference_size_experiment(self.con, q, self._one(measure), _spec(runs) or "all",
                                                      _spec(reference), sizes=list(sizes),
                                                      samples=samples, seed=seed, progress=progress))

    @_atomic
    def split(self, parent: str, name: str, *, topics: str | None = None, half: int | None = None,
              rest: str | None = None, description: str | None = None,
              replace: bool = False) -> Result:
        """A topic split of ``parent`` (and its rest): one row per split created."""
        from . import standardize as st

        return Result.of(st.split_collection(self.con, parent, name, topics=topics, half_seed=half,
                                             rest=rest, description=description, replace=replace))

    @_atomic
    def splits(self) -> Result:
        """The topic splits (qrels of kind 'topics') with their topic counts."""
        return self.engine.read(sql.statement("catalogue.sql", "splits"))

    @_atomic
    def compare_splits(self, c: str, d: str, measure, *, raw=None, runs="all",
                       reference=None, factors: str | None = None, alpha: float = 0.05,
                       per_run: bool = False) -> Result:
        """The same runs on two qrels: RMSE, dRMSE and t-test false positives per form of the
        measure (``per_run``: one row per run and form)."""
        from . import standardize as st

        if reference and factors:
            raise IrwError("give --reference (self-standardization) or --factors, not both")
        cc, cd = catalogue.collection_of(self.con, c), catalogue.collection_of(self.con, d)
        if cc != cd:
            self._notify(f"comparing the runs of collection {cc} on {c} with the runs of the same "
                         f"ids in collection {cd} on {d}")
        summary, rows = st.compare_collections(self.con, c, d, self._one(measure), _spec(runs) or "all",
                                               raw=raw, reference=_spec(reference), factors=factors,
                                               alpha=alpha)
        return Result.of(rows if per_run else summary)

    @_atomic
    def random_splits(self, measure, qrels: str | None = None, *, raw=None, runs="all",
                      reference=None, factors: str | None = None, splits: int = 2000, seed: int = 0,
                      size: int | None = None, alpha: float = 0.05, progress=None) -> Result:
        """Random topic-set splits: mean and upper percentiles of dRMSE and false positives."""
        from . import standardize as st

        if reference and factors:
            raise IrwError("give --reference (self-standardization) or --factors, not both")
        q = qrels or catalogue.default_qrels(self.con)
        return Result.of(st.random_splits_experiment(self.con, q, self._one(measure), _spec(runs) or "all",
                                                     raw=raw, reference=_spec(reference), factors=factors,
                                                     splits=splits, seed=seed, size=size, alpha=alpha,
                                                     progress=progress))

    # ------------------------------------------------------------------ reports, experiments, copies

    @_atomic
    def report(self, measures, qrels: str | None = None, runs="all", *, topics: str = "qrels",
               test: str = "t", correction: str | None = None, alpha: float = 0.05, B: int | None = None,
               seed: int = 0, level: float = 0.95, judged_k: int = 10, rbp_p: float = 0.8,
               format: str = "html", out=None, replace: bool = False, against: str | None = None,
               by: str | None = None, top_k: int = 10, permutations: int = 10000,
               bias_correction: str = "holm", rel_level: int = 1, intervals: bool = False,
               effects: bool = False, highlight=None, progress=None) -> "Report | JudgesReport":
        """The report of ``irw report`` (irwarehouse.report.Report): its frames
        (``leaderboard``, ``pairs`` -- with each difference's interval and effect sizes at
        ``level`` --, ``correlations``, ``coverage``, ``power``) and ``to_html()``,
        ``to_latex()``, ``to_markdown()``. With ``out``, it is also written there in
        ``format`` (never over a database or, without ``replace``, an existing file); the
        paper table (latex, markdown) shows each mean's interval with ``intervals`` and each
        run's d_z against the measure's best with ``effects``. ``by="system"``: a report on
        the runs' systems (``by`` default ``run``). Without ``correction``, Holm's with more
        than 10 runs, none below; ``highlight``: run ids the page marks.

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
                                       highlight=highlight)
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

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _one(measure) -> ms.Measure:
        names = measure_names(measure)
        if len(names) != 1:
            raise IrwError(f"one measure expected, got {len(names)}")
        parsed = ms.parse_all(names)
        if len(parsed) != 1:
            raise IrwError(f"one measure expected, got {len(parsed)} ({', '.join(map(str, parsed))})")
        return parsed[0]


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


def _files_in(qrels, runs, name: str, then, *, fast: bool = True, meta=None, save=None,
              replace: bool = False, order: str = "trec_eval", extra_fields: bool = False,
              encoding: str = "utf-8", wait: float | None = None, memory_limit: str | None = None):
    """Files in: what ``then(con, path, collection)`` computes over the qrels file ``qrels``
    (as ``name``) and the runs ``runs`` read with every check of a load. With ``fast`` and
    neither run metadata ``meta`` nor a warehouse ``save``, without a warehouse
    (engine.files_in.staged: ``path`` is None, ``con`` holds the files as views named as a
    warehouse's tables, of which ``runs`` may hold the ranked rows of judged documents only);
    else loaded into an in-memory warehouse (or the warehouse ``save``), in the load's
    transaction."""
    if fast and meta is None and save is None:
        with _source_files(qrels, "qrels") as qrels_paths, _source_files(runs, "runs") as run_paths:
            if len(qrels_paths) != 1:
                raise IrwError(f"one qrels file expected, got {len(qrels_paths)}")
            with files_in.staged(qrels_paths[0], run_paths, name=name, policy=order,
                                 extra_fields=extra_fields, encoding=encoding,
                                 memory=memory_limit) as con:
                return then(con, None, DEFAULT_COLLECTION)
    with Warehouse(":memory:" if save is None else save, wait=wait, memory_limit=memory_limit,
                   _throwaway=save is None) as w:
        with w._staging() as stage, _source_files(qrels, "qrels") as qrels_paths, \
                _source_files(runs, "runs") as run_paths, _meta_file(meta) as meta_path:
            if len(qrels_paths) != 1:
                raise IrwError(f"one qrels file expected, got {len(qrels_paths)}")
            target, implicit = w._target(stage, None)
            loaded = loading.load_collection(
                stage.con, target, qrels_paths[0], run_paths, meta=meta_path, qrels_name=name,
                policy=order, replace=replace, extra_fields=extra_fields, final=stage.attach,
                encoding=encoding, implicit=implicit,
                then=lambda con: then(con, w.path, target))
        return loaded["then"]


def _file_qrels_name(source) -> str:
    """The name a qrels file evaluated directly takes: its file name without a compression
    suffix (``qrels.trec8.gz``: ``qrels.trec8``); ``qrels`` for a DataFrame or a name that a
    list of qrels could not address."""
    if not isinstance(source, (str, os.PathLike)):
        return "qrels"
    stem = re.sub(r"\.(gz|bz2|xz)$", "", os.path.basename(str(source)))
    return "qrels" if names.qrels_problem(stem) else stem


def _stream_name(stream) -> str:
    """How messages name a stream read as a file: standard input, or its name."""
    name = getattr(stream, "name", None)
    return "standard input" if name in ("<stdin>", 0) or not isinstance(name, str) else name


@contextmanager
def _source_files(source, kind: str, run_id: str | None = None):
    """What to load: the paths given; a binary stream (``sys.stdin.buffer``, an
    ``io.BytesIO``; also in a list of paths), written to a file in a temporary directory
    first, which errors then name (standard input or the stream's name); or a DataFrame,
    loaded as data (engine.loading.Frame: its columns found by the conventions above;
    errors name 'the DataFrame', the row and the column)."""
    if isinstance(source, (str, os.PathLike)):
        yield [str(source)]
        return
    streams = isinstance(source, (list, tuple)) and any(hasattr(s, "read") for s in source)
    if isinstance(source, (list, tuple)) and not streams and all(isinstance(s, (str, os.PathLike)) for s in source):
        yield [str(s) for s in source]
        return
    if hasattr(source, "read") or streams:
        items = list(source) if streams else [source]
        if not all(hasattr(s, "read") or isinstance(s, (str, os.PathLike)) for s in items):
            raise IrwError(f"load {kind} from paths, binary streams or a pandas DataFrame")
        tmp = files.temp_dir("stream")
        names: dict[str, str] = {}
        try:
            paths = []
            for number, item in enumerate(items):
                if not hasattr(item, "read"):
                    paths.append(str(item))
                    continue
                path = os.path.join(tmp, f"stream{number}")
                with open(path, "wb") as out:
                    try:
                        shutil.copyfileobj(item, out)
                    except TypeError:  # a text stream: a file holds bytes
                        raise IrwError(f"read {kind} from a binary stream (sys.stdin.buffer, "
                                       "open(path, 'rb')), not a text stream") from None
                names[path] = _stream_name(item)
                paths.append(path)
            yield paths
        except IrwError as exc:
            text = str(exc)
            for path, name in names.items():
                text = text.replace(path, name)
            raise IrwError(text) from None
        finally:
            files.remove_temp(tmp)
        return
    if isinstance(source, Result):  # what a method returned, loaded again
        source = source.df()
    if not hasattr(source, "columns"):
        raise IrwError(f"load {kind} from paths or a pandas DataFrame, not {type(source).__name__}")
    cols = RUN_COLUMNS if kind == "runs" else QRELS_COLUMNS
    found = {role: _column(source, role, names, kind, required=role not in ("rank", "run_id"))
             for role, names in cols.items()}
    if kind == "runs" and found["run_id"] is None and not run_id:
        raise IrwError("the runs DataFrame has no run_id (or name) column: name the run with run_id=...")
    fields = ({"topic": found["topic"], "docno": found["docno"], "run_id": found["run_id"],
               "given_rank": found["rank"], "score": found["score"]} if kind == "runs" else
              {"topic": found["topic"], "docno": found["docno"], "rel": found["rel"]})
    yield [loading.Frame(source, kind, fields, run_id=run_id if found.get("run_id") is None else None)]


@contextmanager
def _meta_file(source):
    """Run metadata: the TSV path given, or a DataFrame, read as data (None: none)."""
    if source is None or isinstance(source, (str, os.PathLike)):
        yield None if source is None else str(source)
        return
    if isinstance(source, Result):
        source = source.df()
    if not hasattr(source, "columns"):
        raise IrwError(f"run metadata comes from a TSV file or a pandas DataFrame, not {type(source).__name__}")
    yield source
