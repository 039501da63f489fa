"""The Python API: :class:`Warehouse`, for notebooks and pipelines.

Every command of the ``irw`` command line is a thin layer over a method of this class (or,
for the loads, over the same loader functions), so a notebook gets the numbers the command
line prints -- as pandas DataFrames::

    from irwarehouse import Warehouse

    with Warehouse("irw.duckdb") as w:
        w.load_qrels("qrels.txt", name="robust04")
        w.load_runs(pyterrier_results, run_id="bm25")      # a DataFrame: qid, docno, score
        w.eval(["AP", "nDCG@10"], per_topic=False)

Runs and qrels load from files or from DataFrames in the column conventions users already
have: PyTerrier (``qid, docno, score[, rank]``; qrels ``qid, docno, label``), ir_measures /
ir_datasets (``query_id, doc_id, score``; qrels ``query_id, doc_id, relevance``) and
trec_eval's (``topic, docno, score[, rank][, run_id]``; qrels ``topic, docno, rel``).
Measures are names (``"nDCG(discount=jk)@10"``) or, when ir_measures is installed, its
measure objects (``ir_measures.nDCG@10``).
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from . import collection as collections
from . import db, files, loader, runsets
from . import evaluate as ev
from . import measures as ms
from .errors import IrwError

if TYPE_CHECKING:
    import pandas as pd

# DataFrame column conventions: the first name present is used.
RUN_COLUMNS = {"topic": ("qid", "query_id", "topic"), "docno": ("docno", "doc_id"),
               "score": ("score",), "rank": ("rank",), "run_id": ("run_id", "name", "run")}
QRELS_COLUMNS = {"topic": ("qid", "query_id", "topic"), "docno": ("docno", "doc_id"),
                 "rel": ("label", "relevance", "rel")}

# ir_measures names that differ from the catalogue's
IR_MEASURES_NAMES = {"Rprec": "RPrec", "Success": "Success", "NumQ": None, "nDCG": "nDCG"}


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
        if type(m).__module__.split(".")[0] != "ir_measures":
            raise IrwError(f"not a measure: {m!r} (give a name such as 'nDCG@10', or an ir_measures measure)")
        text = str(m)
        name = re.match(r"[A-Za-z_]+", text).group(0)
        if IR_MEASURES_NAMES.get(name, name) is None or IR_MEASURES_NAMES.get(name, name) not in ms.CATALOGUE:
            raise IrwError(f"ir_measures measure {text} has no counterpart in the catalogue (irw measures)")
        out.append(IR_MEASURES_NAMES.get(name, name) + text[len(name):])
    return out


def _atomic(method):
    """One call, one transaction: a call that fails leaves the warehouse as it was, scores it
    would have stored on the way included (nested calls join the outer transaction)."""
    import functools

    @functools.wraps(method)
    def call(self, *args, **kwargs):
        with db.transaction(self.con):
            return method(self, *args, **kwargs)
    return call


class Warehouse:
    """An irwarehouse warehouse: a DuckDB file (or ``":memory:"``) with the runs, qrels, scores
    and every view and macro of the SQL product.

    ``Warehouse(path)`` opens or creates a file; ``read_only=True`` opens it for reading only
    (several readers may share it; nothing is stored); ``wait`` and ``memory_limit`` are the
    command line's ``--wait`` and ``--memory-limit``. Notes about changes made outside irw
    are kept in :attr:`notes`. Use it as a context manager, or call :meth:`close`."""

    def __init__(self, path: str | os.PathLike = ":memory:", *, read_only: bool = False,
                 create: bool = True, wait: float | None = None, memory_limit: str | None = None):
        self.path = str(path)
        self.notes: list[str] = []
        self.read_only = read_only
        self.con = db.connect(self.path, read_only=read_only, create=create and not read_only,
                              wait=wait, memory=memory_limit, notify=self.notes.append)

    @classmethod
    def attach(cls, con, path: str | None = None) -> "Warehouse":
        """A Warehouse over a connection irw opened (the command line's)."""
        w = cls.__new__(cls)
        w.path, w.notes, w.con = path or "", [], con
        w.read_only = ev.con_is_read_only(con)
        return w

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> "Warehouse":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Warehouse({self.path!r}{', read_only=True' if self.read_only else ''})"

    # ------------------------------------------------------------------ resolving names

    def qrels_name(self, qrels: str | None = None) -> str:
        """``qrels``, or the only qrels loaded from a file."""
        return qrels or ev.default_qrels(self.con)

    def qrels_names(self, qrels: str | Iterable[str] | None = None) -> list[str]:
        """Several qrels: a list of names, or a string of comma-separated names and glob
        patterns (``"trec8-lo-*"``), each of which must match; None: the only loaded qrels."""
        import fnmatch

        if qrels is None:
            return [self.qrels_name()]
        items = [i.strip() for i in qrels.split(",")] if isinstance(qrels, str) else list(qrels)
        known = [r[0] for r in self.con.execute("SELECT qrels FROM qrels_info ORDER BY qrels").fetchall()]
        out: list[str] = []
        for item in items:
            if not item:
                continue
            matched = fnmatch.filter(known, item) if any(c in item for c in "*?[") else [item]
            if not matched:
                raise IrwError(f"no qrels matches {item!r}; known: {', '.join(known) or 'none'}")
            out += [m for m in matched if m not in out]
        if not out:
            raise IrwError(f"no qrels named in {qrels!r}")
        return out

    def run_ids(self, runs: str | Iterable[str] | None = "all", qrels: str | None = None,
                collection: str | None = None) -> list[str]:
        """The run ids of a run spec ('all', 'pooled', 'team:NAME', ids, comma-separated) or
        a list of run ids, among the runs of ``collection`` (default: the qrels's)."""
        if runs is not None and not isinstance(runs, str):
            runs = ",".join(runs)
        return runsets.resolve(self.con, runs, qrels=qrels, collection=collection)

    # ------------------------------------------------------------------ loading

    def load_qrels(self, source, name: str, *, collection: str | None = None, replace: bool = False,
                   description: str | None = None, encoding: str = "utf-8") -> dict:
        """Load judgments from files (paths or globs) or a DataFrame under ``name``."""
        target = collections.only(self.con, collection, new_ok=True)
        with self._files(source, "qrels") as paths:
            return loader.load_qrels(self.con, paths, name, replace=replace, description=description,
                                     encoding=encoding, collection=target)

    def load_runs(self, source, *, run_id: str | None = None, collection: str | None = None,
                  order: str = "trec_eval", replace: bool = False, meta=None,
                  extra_fields: bool = False, encoding: str = "utf-8") -> dict:
        """Load runs from files (paths, globs, directories) or a DataFrame (``run_id`` names
        the run when the frame has no run column). ``meta``: a metadata TSV or DataFrame."""
        target = collections.only(self.con, collection, new_ok=True)
        with self._files(source, "runs", run_id=run_id) as paths, _meta_file(meta) as meta_path:
            # the runs and their metadata: one transaction
            return loader.load_runs(self.con, paths, policy=order, replace=replace, meta=meta_path,
                                    extra_fields=extra_fields, encoding=encoding, collection=target)

    def load_meta(self, source, *, collection: str | None = None) -> int:
        """Run metadata (run_id and any of team, kind, pooled) from a TSV or a DataFrame; it
        changes only the columns it names."""
        with _meta_file(source) as path:
            return loader.load_meta(self.con, path, collection)

    def load_collection(self, directory, name: str, *, qrels_name: str | None = None,
                        qrels_file=None, runs_dir=None, meta=None, order: str = "trec_eval",
                        replace: bool = False, extra_fields: bool = False,
                        encoding: str = "utf-8", description: str | None = None) -> dict:
        """A test collection in the common layout (see ``irw load collection``), all or nothing."""
        layout = loader.collection_layout(str(directory), qrels_file and str(qrels_file),
                                          runs_dir and str(runs_dir), meta and str(meta))
        return loader.load_collection(self.con, name, layout["qrels"], [layout["runs"]], meta=layout["meta"],
                                      qrels_name=qrels_name, policy=order, replace=replace,
                                      extra_fields=extra_fields, encoding=encoding,
                                      description=description)

    class _files:
        """Paths of files to load: the given ones, or a DataFrame written as a TREC file in a
        temporary directory (errors then name 'the DataFrame' and its row)."""

        def __init__(self, source, kind: str, run_id: str | None = None):
            self.source, self.kind, self.run_id, self.tmp = source, kind, run_id, None

        def __enter__(self) -> list[str]:
            source = self.source
            if isinstance(source, (str, os.PathLike)):
                return [str(source)]
            if isinstance(source, (list, tuple)) and all(isinstance(s, (str, os.PathLike)) for s in source):
                return [str(s) for s in source]
            if not hasattr(source, "columns"):
                raise IrwError(f"load {self.kind} from paths or a pandas DataFrame, not {type(source).__name__}")
            self.tmp = files.temp_dir("frame")
            path = os.path.join(self.tmp, "frame")
            _write_trec(source, path, self.kind, self.run_id)
            return [path]

        def __exit__(self, exc_type, exc, tb):
            if self.tmp is not None:
                import shutil

                path = os.path.join(self.tmp, "frame")
                shutil.rmtree(self.tmp, ignore_errors=True)
                if isinstance(exc, IrwError):
                    text = re.sub(re.escape(path) + r", line (\d+)",
                                  lambda m: f"the DataFrame, row {int(m.group(1)) - 1}", str(exc))
                    raise IrwError(text.replace(path, "the DataFrame")) from None
            return False

    # ------------------------------------------------------------------ catalogue

    def sql(self, query: str, params=None, *, write: bool | None = None) -> "pd.DataFrame | None":
        """Run SQL; a result as a DataFrame (None for a statement without one).

        ``write`` (default: whether the warehouse is open for writing) allows statements that
        change something; without it only statements that read run (irwarehouse.statements:
        COPY ... TO, EXPORT DATABASE, ATTACH and the like are refused). The call is one
        transaction: after statements that change the tables, irw's caches and stored scores
        are brought in line (as ``irw sql --write`` does), and tables left in a state no load
        would accept (a document twice in a ranking, a document judged twice) are an error
        that undoes the call."""
        import duckdb

        from . import state, statements

        write = (not self.read_only) if write is None else bool(write)
        if write and self.read_only:
            raise IrwError("this warehouse is open read-only: open it for writing to change it")
        statements.check(self.con, query, write)
        with db.transaction(self.con):
            db.settle(self.con)
            try:
                rel = self.con.sql(query, params=params) if params is not None else self.con.sql(query)
                frame = rel.df() if rel is not None else None
            except duckdb.Error as exc:
                raise IrwError(f"SQL error: {str(exc).strip().splitlines()[0]}") from None
            if write:
                self.notes.extend(state.reconcile(self.con, edited=True))
        return frame

    def runs(self, collection: str | None = None) -> "pd.DataFrame":
        """The loaded runs with their metadata (view run_info)."""
        return self.con.execute("SELECT * EXCLUDE (loaded_at) FROM run_info WHERE ? IS NULL OR collection = ? "
                                "ORDER BY collection, run_id", [collection, collection]).df()

    def qrels(self) -> "pd.DataFrame":
        """The qrels catalogue (table qrels_info)."""
        return self.con.execute("SELECT * EXCLUDE (created_at) FROM qrels_info ORDER BY created_at").df()

    def collections(self) -> "pd.DataFrame":
        """The test collections (view collections)."""
        return collections.catalogue(self.con)

    def measures(self) -> "pd.DataFrame":
        """The measure catalogue."""
        return self.con.execute("SELECT * FROM measures ORDER BY name").df()

    # ------------------------------------------------------------------ evaluation

    @_atomic
    def eval_rows(self, measures, qrels: str | None = None, runs="all", *, collection: str | None = None,
                  topics: str = "qrels", max_docs: int | None = None, rel_level: int | None = None,
                  store: bool = True) -> tuple[str, list[str], list, list[tuple]]:
        """:meth:`eval` without pandas: (qrels, run ids, parsed measures, rows (run_id, topic,
        measure, value))."""
        parsed = ms.parse_all(measure_names(measures), rel_level=rel_level)
        q = self.qrels_name(qrels)
        run_ids = self.run_ids(runs, qrels=q, collection=collection)
        rows = ev.evaluate_rows(self.con, q, parsed, run_ids, topics=topics, max_docs=max_docs,
                                rel_level=rel_level, store=store and not self.read_only,
                                collection=collection)
        return q, run_ids, parsed, rows

    @staticmethod
    def several_qrels(qrels) -> bool:
        """Does ``qrels`` name several qrels (a list, or names and patterns with commas)?"""
        return qrels is not None and (not isinstance(qrels, str) or any(c in qrels for c in ",*?["))

    def eval_each(self, measures, qrels=None, runs="all", *, collection: str | None = None,
                  topics: str = "qrels", max_docs: int | None = None, rel_level: int | None = None,
                  store: bool = True):
        """:meth:`eval_rows` for each qrels ``qrels`` names (one, or several: see
        :meth:`qrels_names`), one result after the other. Several qrels are evaluated together
        (evaluate.evaluate_many: derived qrels of one root in one pass)."""
        if not self.several_qrels(qrels):
            yield self.eval_rows(measures, qrels, runs, collection=collection, topics=topics,
                                 max_docs=max_docs, rel_level=rel_level, store=store)
            return
        with db.transaction(self.con):  # every qrels, one transaction
            parsed, names, run_ids = self._many(measures, qrels, runs, collection, rel_level)
            rows = ev.evaluate_many_rows(self.con, names, parsed, run_ids, topics=topics,
                                         max_docs=max_docs, rel_level=rel_level,
                                         store=store and not self.read_only, collection=collection)
        for q in names:
            yield q, run_ids[q], parsed, rows[q]

    def _many(self, measures, qrels, runs, collection, rel_level):
        """(parsed measures, qrels names, {qrels: run ids}) of an evaluation over several qrels."""
        parsed = ms.parse_all(measure_names(measures), rel_level=rel_level)
        names = self.qrels_names(qrels)
        return parsed, names, {q: self.run_ids(runs, qrels=q, collection=collection) for q in names}

    @_atomic
    def eval(self, measures, qrels: str | None = None, runs="all", *, collection: str | None = None,
             per_topic: bool = True, topics: str = "qrels", max_docs: int | None = None,
             rel_level: int | None = None, aggregate: str = "mean", store: bool = True) -> "pd.DataFrame":
        """Evaluate: per topic a tidy frame (run_id, topic, measure, value), or with
        ``per_topic=False`` the means (run_id, measure, value, n_topics). The per-topic scores
        are kept in the table ``scores`` unless ``store=False`` (or the warehouse is read-only).
        ``qrels`` may name several qrels (a list, or names and glob patterns separated by
        commas, as :meth:`qrels_names`): the frame then starts with a column ``qrels``."""
        import pandas as pd

        several = self.several_qrels(qrels)
        if several and per_topic:
            parsed, names, run_ids = self._many(measures, qrels, runs, collection, rel_level)
            return ev.evaluate_many(self.con, names, parsed, run_ids, topics=topics, max_docs=max_docs,
                                    rel_level=rel_level, store=store and not self.read_only,
                                    collection=collection)
        frames = []
        for q, _, _, rows in self.eval_each(measures, qrels, runs, collection=collection, topics=topics,
                                            max_docs=max_docs, rel_level=rel_level, store=store):
            if per_topic:
                frame = pd.DataFrame(rows, columns=list(ev.RESULT_COLUMNS))
            else:
                frame = pd.DataFrame(ev.aggregate_rows(rows, aggregate),
                                     columns=["run_id", "measure", "value", "n_topics"])
            if several:
                frame.insert(0, "qrels", q)
            frames.append(frame)
        return frames[0] if len(frames) == 1 and not several else pd.concat(frames, ignore_index=True)

    # ------------------------------------------------------------------ pools

    @_atomic
    def pool(self, kind: str, name: str | list[str], qrels: str | None = None, runs="all", *,
             depth: int = 100, teams: list[str] | None = None, replace: bool = False,
             description: str | None = None) -> "pd.DataFrame":
        """Derived qrels: kind 'depth' (J ∩ pool(S, depth)), 'shallow', 'leave-out' (J − U_t for
        each of ``teams``: ``name`` a list of names, one per team, or a prefix string), or
        'take' (J ∩ ∪ D_t). Returns one row per qrels created."""
        import pandas as pd

        return pd.DataFrame(self.pool_rows(kind, name, qrels, runs, depth=depth, teams=teams,
                                           replace=replace, description=description))

    @_atomic
    def pool_rows(self, kind: str, name: str | list[str], qrels: str | None = None, runs="all", *,
                  depth: int = 100, teams: list[str] | None = None, replace: bool = False,
                  description: str | None = None) -> list[dict]:
        """:meth:`pool` without pandas: one dict per qrels created."""
        from . import pools

        parent = self.qrels_name(qrels)
        spec = runs if isinstance(runs, str) else ",".join(runs)
        if kind == "leave-out":
            teams = list(teams or [])
            names = name if isinstance(name, list) else [f"{name}{t}" for t in teams]
            if not teams:
                raise IrwError("name a team with --team, or use --all-teams")
            if len(names) != len(teams):
                raise IrwError("leave-out: give one name per team, or a prefix")
            return pools.build_many(self.con, kind, parent, [(n, [t]) for n, t in zip(names, teams)],
                                    spec, depth, replace, description)
        return [pools.build(self.con, kind, parent, name, "all" if kind == "shallow" else spec,
                            depth, teams=teams, replace=replace, description=description)]

    def teams(self, qrels: str | None = None, runs="all") -> dict[str, list[str]]:
        """team -> its runs among the runs (of the qrels's collection)."""
        from . import pools

        q = self.qrels_name(qrels)
        return pools.teams_of(self.con, self.run_ids(runs, qrels=q), ev.collection_of(self.con, q))

    @_atomic
    def pool_stats(self, what: str = "topics", qrels: str | None = None, runs="all",
                   depth: int = 100) -> "pd.DataFrame":
        """Pool statistics: topics | multiplicity | teams | unique | judged | collection | qrels."""
        from . import pools

        spec = runs if isinstance(runs, str) else ",".join(runs)
        return pools.stats(self.con, what, self.qrels_name(qrels), spec, depth)

    @_atomic
    def deeply_judged(self, qrels: str | None = None, depth: int = 50) -> list[str]:
        """Runs with at least ``depth`` documents for every topic, all of their top ``depth``
        judged."""
        from . import pools

        return pools.deeply_judged(self.con, self.qrels_name(qrels), depth)

    # ------------------------------------------------------------------ significance

    @_atomic
    def discpower(self, measures, qrels: str | None = None, runs="all", *, test: str = "t",
                  correction: str = "none", alpha: float = 0.05, B: int | None = None, seed: int = 0,
                  topics: str = "qrels", reference_qrels: str | None = None,
                  reference_measure=None, save: str | None = None, progress=None) -> "pd.DataFrame":
        """Discriminative power per measure (and agreement with a reference condition);
        ``save`` keeps the rows in discpower_results."""
        from . import significance

        parsed = ms.parse_all(measure_names(measures))
        ref = ms.parse(measure_names(reference_measure)[0]) if reference_measure is not None else None
        q = self.qrels_name(qrels)
        frame = significance.discpower(self.con, q, parsed, self.run_ids(runs, qrels=q), test, correction,
                                       alpha, B, seed, topics, reference_qrels, ref, progress)
        if save:
            significance.save(self.con, "discpower_results", save, frame,
                              {"runs": runs if isinstance(runs, str) else list(runs), "topics": topics,
                               "seed": seed})
        return frame

    @_atomic
    def pvalues(self, measure, qrels: str | None = None, runs="all", *, test: str = "t",
                correction: str = "none", alpha: float = 0.05, B: int | None = None, seed: int = 0,
                topics: str = "qrels", save: str | None = None, progress=None) -> "pd.DataFrame":
        """Every run pair with its mean difference, p-value and adjusted p-value; ``save``
        keeps them in pair_tests."""
        from . import significance

        m = self._one(measure)
        q = self.qrels_name(qrels)
        frame = significance.pvalues(self.con, q, m, self.run_ids(runs, qrels=q), test, correction,
                                     alpha, B, seed, topics, progress)
        if save:
            significance.save(self.con, "pair_tests", save, frame,
                              {"runs": runs if isinstance(runs, str) else list(runs), "topics": topics,
                               "correction": correction, "alpha": alpha, "B": B, "seed": seed})
        return frame

    @_atomic
    def compare(self, run_a: str, run_b: str, measures, qrels: str | None = None, *,
                tests=("t",), alpha: float = 0.05, B: int | None = None, seed: int = 0,
                topics: str = "qrels", rbp_p: float = 0.8, judged_k: int = 10) -> "pd.DataFrame":
        """Two runs per measure: means, difference with its 95% CI, p-values, RBP residual and
        Judged@k."""
        from . import significance

        q = self.qrels_name(qrels)
        self.run_ids(f"{run_a},{run_b}", qrels=q)
        return significance.compare(self.con, q, run_a, run_b, ms.parse_all(measure_names(measures)),
                                    [tests] if isinstance(tests, str) else list(tests), alpha, B, seed,
                                    topics, rbp_p, judged_k)

    @_atomic
    def correlate(self, measure_a, measure_b=None, qrels: str | None = None, qrels_b: str | None = None,
                  runs="all", *, topics: str = "qrels", rbo_p: float = 0.9) -> "pd.DataFrame":
        """Rank correlation (tau-b, tau-a, tau_AP, RBO, Pearson) of the run orderings by
        ``measure_a`` on ``qrels`` and ``measure_b`` (default: a) on ``qrels_b`` (default: qrels)."""
        import pandas as pd

        from . import significance

        a = self._one(measure_a)
        b = self._one(measure_b) if measure_b is not None else a
        q = self.qrels_name(qrels)
        row = significance.correlate(self.con, a, q, b, qrels_b or q, self.run_ids(runs, qrels=q),
                                     topics, rbo_p)
        return pd.DataFrame([row])

    @_atomic
    def correlation_matrix(self, measures, qrels=None, runs="all", *, topics: str = "qrels",
                           rbo_p: float = 0.9, of: str = "scores", statistics=None,
                           save: str | None = None, notify=None) -> "pd.DataFrame":
        """``irw correlate --matrix``: every cell over the conditions measure x qrels (``qrels``
        a list; default the only loaded qrels), one row per cell and statistic; ``of`` scores
        (run orderings) or pvalues (orderings of the run pairs by paired t-test p-value);
        ``save`` keeps the cells in table correlation_matrices."""
        from . import significance

        parsed = ms.parse_all(measure_names(measures))
        qs = self.qrels_names(qrels)
        run_ids = self.run_ids(runs, qrels=qs[0])
        wanted = list(statistics) if statistics else (
            ["kendall_tau", "tau_ap", "rbo"] if of == "scores" else ["kendall_tau"])
        frame = significance.correlation_matrix(self.con, parsed, qs, run_ids, topics, rbo_p, of, wanted,
                                                notify=notify or self.notes.append)
        if save:
            significance.save(self.con, "correlation_matrices", save, frame,
                              {"measures": [str(m) for m in parsed], "qrels": qs,
                               "runs": runs if isinstance(runs, str) else list(runs),
                               "topics": topics, "rbo_p": rbo_p})
        return frame

    @_atomic
    def summary_rows(self, measures, qrels: str | None = None, runs="all", *, topics: str = "qrels",
                     by: str = "run") -> tuple[list[dict], str | None]:
        """:meth:`summary` as rows, and why there are none (None when there are)."""
        from . import summary

        q = self.qrels_name(qrels)
        run_ids = self.run_ids(runs, qrels=q)
        rows = summary.summary(self.con, q, ms.parse_all(measure_names(measures)), run_ids, topics, by)
        return rows, None if rows else ev.no_rows_reason(self.con, q, run_ids, topics)

    @_atomic
    def summary(self, measures, qrels: str | None = None, runs="all", *, topics: str = "qrels",
                by: str = "run") -> "pd.DataFrame":
        """Per run (over its topics) or per topic (over the runs): n, mean, sd, min and max of
        each measure (``irw summary``)."""
        import pandas as pd

        return pd.DataFrame(self.summary_rows(measures, qrels, runs, topics=topics, by=by)[0])

    @_atomic
    def ci(self, measure, qrels: str | None = None, runs="all", *, topics: str = "qrels",
           level: float = 0.95) -> "pd.DataFrame":
        """Each run's mean with its t-distribution confidence interval."""
        from . import significance

        q = self.qrels_name(qrels)
        return significance.mean_intervals(self.con, q, self._one(measure), self.run_ids(runs, qrels=q),
                                           topics, level)

    # ------------------------------------------------------------------ standardization

    @_atomic
    def standardize(self, name: str, measures, qrels: str | None = None, *, reference="all",
                    replace: bool = False, description: str | None = None) -> "pd.DataFrame":
        """Compute a factor set (per measure and topic, the reference runs' mean and sd)."""
        from . import standardize as st

        st.create_factor_set(self.con, name, ms.parse_all(measure_names(measures)),
                             qrels=self.qrels_name(qrels),
                             reference=reference if isinstance(reference, str) else ",".join(reference),
                             replace=replace, description=description)
        return st.list_factor_sets(self.con).query("factors == @name").reset_index(drop=True)

    @_atomic
    def standardized_scores(self, factors: str, measures=None, runs="all", *,
                            per_topic: bool = False) -> "pd.DataFrame":
        """Standardized scores Phi(z) under a factor set (views std_scores / std_score_means)."""
        from . import standardize as st

        info = st.factor_set_info(self.con, factors)
        return st.standardized_scores(self.con, factors, measure_names(measures) if measures else None,
                                      self.run_ids(runs, qrels=info["qrels"]), per_topic=per_topic)

    # ------------------------------------------------------------------ report

    @_atomic
    def report(self, measures, qrels: str | None = None, runs="all", *, topics: str = "qrels",
               test: str = "t", correction: str = "none", alpha: float = 0.05, B: int | None = None,
               seed: int = 0, level: float = 0.95, judged_k: int = 10, rbp_p: float = 0.8,
               progress=None):
        """The report of ``irw report`` (irwarehouse.report.Report): its frames
        (``leaderboard``, ``pairs``, ``correlations``, ``coverage``) and ``to_html()``,
        ``to_latex()``, ``to_markdown()``."""
        from . import report

        return report.build_report(self.con, measure_names(measures), qrels=self.qrels_name(qrels),
                                   runs=runs, topics=topics, test=test, correction=correction,
                                   alpha=alpha, B=B, seed=seed, level=level, judged_k=judged_k,
                                   rbp_p=rbp_p, progress=progress)

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _one(measure) -> ms.Measure:
        names = measure_names(measure)
        if len(names) != 1:
            raise IrwError(f"one measure expected, got {len(names)}")
        return ms.parse(names[0])


@contextmanager
def _meta_file(source):
    """Run metadata as a TSV path: the path given, or a DataFrame written as one (None: none)."""
    if source is None or isinstance(source, (str, os.PathLike)):
        yield None if source is None else str(source)
        return
    with files.temporary_directory("frame") as tmp:
        path = os.path.join(tmp, "meta.tsv")
        source.to_csv(path, sep="\t", index=False)
        yield path


def _write_trec(frame, path: str, kind: str, run_id: str | None) -> None:
    """Write a DataFrame of runs or qrels as a TREC file (the loader reads it as any file)."""
    import duckdb

    cols = RUN_COLUMNS if kind == "runs" else QRELS_COLUMNS
    found = {role: _column(frame, role, names, kind, required=role not in ("rank", "run_id"))
             for role, names in cols.items()}
    if kind == "runs" and found["run_id"] is None and not run_id:
        raise IrwError("the runs DataFrame has no run_id (or name) column: name the run with run_id=...")
    con = duckdb.connect()
    try:
        con.register("frame", frame)
        q = lambda role: db.quote_ident(found[role])  # noqa: E731
        number = "score" if kind == "runs" else "rel"
        missing = con.execute(f"SELECT min(i) FROM (SELECT row_number() OVER () - 1 AS i, {q(number)} AS v "
                              f"FROM frame) WHERE v IS NULL OR isnan(v::DOUBLE)").fetchone()[0]
        if missing is not None:
            raise IrwError(f"the {kind} DataFrame, row {missing}: the {found[number]} is missing (NaN or None)")
        if kind == "runs":
            run = q("run_id") if found["run_id"] else "?"
            rank = (f"{q('rank')}" if found["rank"] else
                    f"row_number() OVER (PARTITION BY {q('topic')}, {run} ORDER BY {q('score')} DESC)")
            select = (f"SELECT CAST({q('topic')} AS VARCHAR), 'Q0', CAST({q('docno')} AS VARCHAR), "
                      f"{rank}, {q('score')}, CAST({run} AS VARCHAR) FROM frame")
            params = [run_id] * select.count("?")
        else:
            select = (f"SELECT CAST({q('topic')} AS VARCHAR), '0', CAST({q('docno')} AS VARCHAR), "
                      f"{q('rel')} FROM frame")
            params = []
        con.execute(f"CREATE TABLE lines AS {select}", params)
        con.execute(f"COPY lines TO {db.quote_literal(path)} (FORMAT csv, DELIMITER ' ', HEADER false, "
                    "QUOTE '')")
    finally:
        con.close()
