"""What users give, read once at the door: measures (names, parsed measures, ir_measures
objects), the conditions of a correlation matrix, and the sources of a load -- paths, binary
streams and DataFrames in the column conventions users have (PyTerrier, ir_measures,
trec_eval) -- and run metadata.
"""

from __future__ import annotations

import os
import re
import shutil
from contextlib import contextmanager
from typing import Iterable

from . import catalogue, files, irds, judgment_kinds, names
from . import measures as ms
from .engine import loading
from .errors import IrwError
from .result import Result

# DataFrame column conventions: the first name present is used.
RUN_COLUMNS = {"topic": ("qid", "query_id", "topic"), "docno": ("docno", "doc_id"),
               "score": ("score",), "rank": ("rank",), "run_id": ("run_id", "name", "run")}


QRELS_COLUMNS = {"topic": ("qid", "query_id", "topic"), "docno": ("docno", "doc_id"),
                 "rel": ("label", "relevance", "rel")}


def _column(frame, role: str, names: tuple[str, ...], what: str, required: bool = True):
    for name in names:
        if name in frame.columns:
            return name
    if required:
        raise IrwError(f"the {what} DataFrame has no {role} column (one of {', '.join(names)}); "
                       f"its columns: {', '.join(map(str, frame.columns))}")
    return None


def measure_names(measures) -> list[str]:
    """Measure names from names, parsed measures and ir_measures measure objects
    (str(ir_measures.nDCG@10) is 'nDCG@10'; ``Rprec`` is the catalogue's RPrec)."""
    return [str(m) for m in _given(measures)]


def _given(measures) -> list:
    """The measures given: names, and parsed measures (measures.Measure) kept as they are;
    ir_measures measure objects as names."""
    if isinstance(measures, (str, bytes, ms.Measure)) or not isinstance(measures, Iterable):
        measures = [measures]
    out = []
    for m in measures:
        if isinstance(m, (str, ms.Measure)):
            out.append(m)
            continue
        if type(m).__module__.split(".")[0] != "ir_measures":
            raise IrwError(f"not a measure: {m!r} (give a name such as 'nDCG@10', or an ir_measures measure)")
        text = str(m)
        name = re.match(r"[A-Za-z_]+", text).group(0)
        if ms.catalogue_name(name) is None:
            raise IrwError(f"ir_measures measure {text} has no counterpart in the catalogue (irw measures)")
        out.append(ms.catalogue_name(name) + text[len(name):])
    return out


def parse_measures(measures, rel_level: int | None = None) -> list[ms.Measure]:
    """The measures given (names, parsed measures, ir_measures objects) parsed, in order,
    without repeats; ``rel_level`` sets ``rel`` where not given. Parse once at the edge and
    pass the result on: every method takes parsed measures as they are."""
    return ms.parse_all(_given(measures), rel_level=rel_level)


_parsed = parse_measures


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


def _file_qrels_name(source) -> str:
    """The name a qrels file evaluated directly takes: its file name without a compression
    suffix (``qrels.trec8.gz``: ``qrels.trec8``); ``qrels`` for a DataFrame or a name that a
    list of qrels could not address."""
    if not isinstance(source, (str, os.PathLike)):
        return "qrels"
    if irds.is_source(source):  # irds:msmarco-passage/dev/small: msmarco-passage.dev.small
        ident = irds.dataset_id(source).replace("/", ".")
        return "qrels" if names.qrels_problem(ident) else ident
    stem = re.sub(r"\.(gz|bz2|xz)$", "", os.path.basename(str(source)))
    return "qrels" if names.qrels_problem(stem) else stem


def _stream_name(stream) -> str:
    """How messages name a stream read as a file: standard input, or its name."""
    name = getattr(stream, "name", None)
    return "standard input" if name in ("<stdin>", 0) or not isinstance(name, str) else name


def _renamed(exc: IrwError, path: str, name: str) -> None:
    """The same error (its status kept), naming ``name`` where it named the file ``path``."""
    exc.args = (str(exc).replace(path, name), *exc.args[1:])


def _irds_source(source) -> str | None:
    """The ir_datasets source ``irds:ID`` that ``source`` is (alone, or alone in a list),
    else None; one among other sources is an error."""
    if irds.is_source(source):
        return source
    if isinstance(source, (list, tuple)) and any(irds.is_source(s) for s in source):
        if len(source) > 1:
            raise IrwError(f"{next(s for s in source if irds.is_source(s))}: an ir_datasets "
                           "source is loaded on its own, not with files or other sources")
        return source[0]
    return None


def qrels_kind(source, format: str | None) -> judgment_kinds.JudgmentKind:
    """The judgment kind a qrels source is loaded as: ``format`` (default trec), or for an
    ir_datasets source (``irds:ID``) the kind of its records, which ``format`` may only
    repeat."""
    source = _irds_source(source)
    if source is None:
        return judgment_kinds.kind(format)
    found = irds.kind_of(source)
    if format is not None and judgment_kinds.kind(format) is not found:
        raise IrwError(f"{source}: its qrels are {found.name} judgments ({found.help}), "
                       f"not {judgment_kinds.kind(format).name}: leave out --format")
    return found


@contextmanager
def _source_files(source, kind: str, run_id: str | None = None,
                  judgments: judgment_kinds.JudgmentKind | None = None):
    """What to load: the paths given; an ir_datasets source ``irds:ID`` (qrels only),
    written to a file of its kind's layout first (irwarehouse.irds; ``judgments``: the kind
    the caller reads, trec by default), which errors then name by the source; a binary stream (``sys.stdin.buffer``, an
    ``io.BytesIO``; also in a list of paths), written to a file in a temporary directory
    first, which errors then name (standard input or the stream's name); or a DataFrame,
    loaded as data (engine.loading.Frame: its columns found by the conventions above;
    errors name 'the DataFrame', the row and the column)."""
    if _irds_source(source) is not None:
        source = _irds_source(source)
        if kind != "qrels":
            raise IrwError(f"{source}: ir_datasets gives judgments here; load {kind} from files")
        expected = judgments or judgment_kinds.kind(None)
        if irds.kind_of(source) is not expected:
            raise IrwError(f"{source}: its qrels are {irds.kind_of(source).name} judgments; load them "
                           f"into a warehouse first: irw load qrels {source} --name NAME")
        with irds.qrels_file(source, _renamed) as path:
            yield [loading.Named(path, source)]
        return
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
                paths.append(loading.Named(path, names[path]))
            yield paths
        except IrwError as exc:
            for path, name in names.items():
                _renamed(exc, path, name)
            raise
        finally:
            files.remove_temp(tmp)
        return
    if isinstance(source, Result):  # what a method returned, loaded again
        source = source.df()
    if judgments is not None and judgments.detail and hasattr(source, "columns"):
        raise IrwError(f"a DataFrame is loaded as trec judgments (topic, docno, rel); "
                       f"load {judgments.name} judgments from files ({judgments.layout})")
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


def one_measure(measure) -> ms.Measure:
    """One measure (a name, a parsed measure or an ir_measures object), parsed once; several
    are an error."""
    given = _given(measure)
    if len(given) != 1:
        raise IrwError(f"one measure expected, got {len(given)}")
    parsed = ms.parse_all(given)
    if len(parsed) != 1:
        raise IrwError(f"one measure expected, got {len(parsed)} ({', '.join(map(str, parsed))})")
    return parsed[0]
