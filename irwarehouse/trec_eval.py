"""trec_eval 10.0 on irw's engine: what ``irw trec-eval QRELS RUN`` prints
(:meth:`irwarehouse.Warehouse.trec_eval`).

The measures are the catalogue's (``trec_names``: trec_eval's ``-m`` arguments, parameters
and nicknames as catalogue measures, in trec_eval's print order); their per-topic values are
the engine's, computed over the two files as files in, scores out reads them (engine.files_in:
an in-memory database, no warehouse; unjudged documents counted by ranking lengths). What is
trec_eval's own and not a measure lives here: its topic policy (the topics the run and the
qrels share, or with ``-c`` every topic of the qrels, a topic the run lacks evaluated as
trec_eval evaluates it), the values of ``runid``, ``num_q`` and ``relstring``, the summary line
of each measure (a mean, a sum or a geometric mean, accumulated topic by topic in
trec_eval's order so that the printed digits are its own), ``-Z``'s z-scores, and its reading
of the files where the loader would refuse them (:func:`as_read`: ids as bytes;
:func:`evaluated`: a docno twice, huge ranks and scores, a lone carriage return, a run of
comment lines only).

One deliberate difference: trec_eval 10.0 stops with status 4 ("result qid ... not found
in qrels") when the run lacks a topic of the qrels and ``-c`` is not given; irw evaluates
the topics both have, as trec_eval 9 did, and says on stderr which topics the run lacks.
"""

from __future__ import annotations

import codecs
import math
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field

from . import catalogue, files
from . import measures as ms
from . import sql
from .engine import evaluation, loading
from .errors import IrwError, StatusError, note
from .judgment_kinds import KINDS
from .trec_families import BY_JUDGMENT_GROUP
from .trec_names import TrecEvalMeasure, trec_eval_measures, trec_eval_order

TREC_EVAL_VERSION = "10.0-rc3"  # the trec_eval whose output irw trec-eval reproduces
MIN_GEO_MEAN = 1e-5  # trec_eval's floor under a value before its logarithm (gm_map)
MISSING_ZSCORE = -1000000.0  # -Z: no mean and deviation for a measure and topic
DEFAULT_MEASURES = ("official",)
# -R: what irw reads, as the judgment kind (judgment_kinds.KINDS) its file is loaded as:
# qrels_prefs reads a qrels file as preferences, its second field the judgment group.
# qrels_jg: its judgment groups are evaluated each as a qrels (by_judgment_group).
REL_INFO_FORMATS = {"qrels": "trec", "prefs": "prefs", "qrels_prefs": "jg", "qrels_jg": "trec"}
GROUPED_FORMAT = "qrels_jg"
REFUSED_REL_INFO_FORMATS: tuple[str, ...] = ()
RESULTS_FORMATS = ("trec_results",)  # -T
# trec_eval compares and prints the bytes of ids: its files are read as Latin-1, which maps
# each byte to the code point of its value (so the order of code points is the order of
# bytes, strcmp's), and its output is written back as Latin-1 (the bytes read).
ENCODING = "latin-1"
_CHUNK = 1 << 20
_LONE_CR = re.compile(rb"\r(?!\n)")  # (at a chunk's end: read as trec_eval reads, as well)

# trec_eval's exit statuses
USAGE, INPUT, NO_TOPICS = 1, 2, 7
MEASURE_FAILED = 4  # "Can't calculate measure": a docno twice in a topic it evaluates

# -c: trec_eval evaluates a topic the run lacks as a ranking of one document in no qrels
# (sql/trec_eval.sql, stand_in), then sets the values it names so (trec_eval.c: the labels
# num_ret, utility, rbp_resid, those beginning with unj) to 0 and the relstring so named to
# '' -- by the printed label: with parameters (utility_2,-1,0,0, relstring_20) they keep the
# stand-in's values.
CLEARED_WHEN_MISSING = ("num_ret", "utility", "rbp_resid")
CLEARED_PREFIX_WHEN_MISSING = "unj"
CLEARED_STRING_WHEN_MISSING = "relstring"
# -c: trec_eval's num_rel summary counts every judgment graded above 0 in the qrels (whatever
# -l), not the sum of the topics' values.
COUNTED_IN_QRELS_WHEN_COMPLETE = "num_rel"
AGGREGATES = ("mean", "sum", "gm", "count", "none")
# What the values irw trec-eval computes itself are (the others are catalogue measures).
DESCRIPTIONS = {"runid": "the run's id (from its file)",
                "num_q": "the number of topics evaluated",
                "relstring": "the grades of the first N documents retrieved (default 10): 0-9, "
                             "'>' above 9, '.' in the pool but not assessed, '-' not judged"}


@dataclass
class TrecEvalReport:
    """What trec_eval prints for a run: ``topic_lines`` (with ``-q``) and ``summary_lines``
    (topic ``all``), each ``(label, topic, kind, value)`` in trec_eval's order, ``kind``
    one of float (printed ``%6.4f``), long (``%ld``), string and quoted (``'%s'``,
    relstring); ``zscores``: the values are z-scores (``-Z``: labels get a ``Z``). Also the
    run's id, the topics evaluated, the topics of the qrels the run lacks, and the encoding
    that gives the ids back as the files' bytes (:func:`as_read`)."""

    run_id: str
    topics: list[str]
    lacking: list[str]
    topic_lines: list[tuple] = field(default_factory=list)
    summary_lines: list[tuple] = field(default_factory=list)
    zscores: bool = False
    encoding: str = "utf-8"  # how its text is written: the bytes of the files' ids


def plan(specs) -> list[TrecEvalMeasure]:
    """The measures of trec_eval's ``-m`` arguments ``specs`` (default: ``official``), in
    its print order; a name trec_eval does not know is an error (status 1)."""
    chosen: list[TrecEvalMeasure] = []
    for spec in (list(specs) if specs else DEFAULT_MEASURES):
        try:
            chosen += trec_eval_measures(spec)
        except IrwError as exc:
            raise StatusError(str(exc), USAGE) from None
    measures = trec_eval_order(chosen)
    for m in measures:
        if m.aggregate not in AGGREGATES:
            raise AssertionError(f"{m.label}: unknown aggregate {m.aggregate!r}")
    return measures


def engine_measures(measures: list[TrecEvalMeasure], judged_only: bool, rel_level: int | None,
                    num_docs: int | None = None) -> dict[str, ms.Measure]:
    """The catalogue measure each trec_eval label is computed by (``-J``: its condensed form;
    ``-l``: its relevance threshold; ``-N``: the collection's size, ``docs``, of a measure
    that has one), by label; runid, num_q and relstring have none."""
    out = {}
    for m in measures:
        if m.measure is None:
            continue
        measure = m.measure.with_params(judged_only=True) if judged_only else m.measure
        if num_docs is not None:
            measure = measure.with_params(docs=num_docs)
        out[m.label] = ms.parse_all([str(measure)], rel_level)[0]
    return out


def judgment_kind(rel_info_format: str):
    """The judgment kind ``-R``'s file is loaded as: None for qrels (read without a
    warehouse, as files in, scores out reads them), else its entry of judgment_kinds.KINDS."""
    name = REL_INFO_FORMATS[rel_info_format]
    return None if KINDS[name].graded else KINDS[name]


def check_grouping(rel_info_format: str, measures: list[TrecEvalMeasure]) -> None:
    """The families averaged over judgment groups (map_avgjg, ...) read -R qrels_jg files,
    and such a file serves them only (and runid, num_q), as in trec_eval."""
    grouped = rel_info_format == GROUPED_FORMAT
    for m in measures:
        if m.measure is not None and (m.family in BY_JUDGMENT_GROUP) != grouped:
            raise StatusError(f"trec_eval measure {m.family} cannot be computed from -R "
                              f"{rel_info_format} judgments: "
                              + ("-R qrels_jg serves map_avgjg, P_avgjg and Rprec_mult_avgjg"
                                 if grouped else "it reads -R qrels_jg files"), MEASURE_FAILED)


def by_judgment_group(path: str, evaluate) -> "_Values":
    """-R qrels_jg: the values of the file ``path`` (lines ``topic jg docno rel``) as trec_eval
    computes them: ``evaluate(qrels)`` on the judgments of each judgment group (a qrels file
    of its own), and each topic's value the sum over the groups judging it, divided by their
    number when there are several (in the groups' order, as trec_eval adds them)."""
    groups: dict[str, list[str]] = {}
    for number, fields in _lines(path):
        if len(fields) != 4 or not re.fullmatch(r"[+-]?\d+", fields[3]):
            raise StatusError(f"{path}, line {number}: expected 4 fields (topic jg docno rel), "
                              "rel an integer", INPUT)
        groups.setdefault(fields[1], []).append(f"{fields[0]} 0 {fields[2]} {fields[3]}\n")
    tmp = files.temp_dir("trec-eval")
    parts: list[_Values] = []
    try:
        for number, jg in enumerate(sorted(groups)):
            group_path = os.path.join(tmp, f"jg{number}")
            with open(group_path, "w", encoding="utf-8") as out:
                out.writelines(groups[jg])
            try:
                parts.append(evaluate(group_path))
            except StatusError as exc:
                if exc.status != NO_TOPICS:  # a group judging no topic of the run adds nothing
                    raise
    finally:
        files.remove_temp(tmp)
    if not parts:
        raise StatusError("no topic has both results and relevance judgments: the run shares "
                          "no topic with the qrels", NO_TOPICS)
    return _averaged(parts)


def _averaged(parts: list["_Values"]) -> "_Values":
    """The values of several judgment groups' evaluations, averaged per topic."""
    topics = sorted({t for p in parts for t in p.topics})
    lacking = sorted({t for p in parts for t in p.lacking} - set(topics))
    sums: dict[tuple[str, str], float] = {}
    counts: dict[tuple[str, str], int] = {}
    for p in parts:
        for key, value in p.values.items():
            sums[key] = sums.get(key, 0.0) + value
            counts[key] = counts.get(key, 0) + 1
    values = {key: total / counts[key] if counts[key] > 1 else total for key, total in sums.items()}
    return _Values(parts[0].run_id, topics, lacking, set().union(*(p.missing for p in parts)),
                   values, {}, None)


def check_formats(rel_info_format: str, results_format: str) -> None:
    """``-R`` and ``-T``: irw reads qrels, preference files (prefs, qrels_prefs) and TREC
    results."""
    if rel_info_format in REFUSED_REL_INFO_FORMATS:
        raise StatusError(f"-R {rel_info_format}: irw trec-eval reads relevance judgments as "
                          f"{', '.join(REL_INFO_FORMATS)}; use trec_eval itself for judgment-group "
                          "files", INPUT)
    if rel_info_format not in REL_INFO_FORMATS:
        raise StatusError(f"illegal rel_info format {rel_info_format!r} (-R); irw trec-eval reads "
                          f"{', '.join(REL_INFO_FORMATS)}", INPUT)
    if results_format not in RESULTS_FORMATS:
        raise StatusError(f"illegal results format {results_format!r} (-T); irw trec-eval reads "
                          "trec_results", INPUT)


# ------------------------------------------------------------------------- bytes

def _scan(path: str) -> tuple[bool, bool]:
    """Is the file at ``path`` UTF-8 text (decompressed), and does it hold a carriage
    return not before a line feed (which the loader takes for a line's end, and trec_eval
    for a separator of fields)? (True, False) also for what the loader refuses by itself
    (no file, a FIFO or device, a damaged compressed file): it is not opened here."""
    if files.file_kind(path) is not None or not os.path.isfile(path):
        return True, False
    decoder = codecs.getincrementaldecoder("utf-8")()
    utf8, lone_cr = True, False
    try:
        with loading.open_binary(path) as fh:
            while chunk := fh.read(_CHUNK):
                lone_cr = lone_cr or _LONE_CR.search(chunk) is not None
                if utf8:
                    try:
                        decoder.decode(chunk)
                    except UnicodeDecodeError:
                        utf8 = False
            if utf8:
                decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        utf8 = False
    except (OSError, EOFError, ValueError):
        return True, False
    return utf8, lone_cr


@contextmanager
def as_read(paths: list[str]):
    """The files ``paths`` as trec_eval reads them, the encoding that writes what is read
    from them back as their bytes, and whether the loader reads their lines as trec_eval
    does (False: one holds a lone carriage return): the files themselves and UTF-8 when
    every one is UTF-8 text (its byte order is its code points' order); else copies in
    UTF-8 of their bytes read as Latin-1 (ENCODING: a code point per byte, in byte order)
    and Latin-1. An error names the files given, not the copies."""
    scans = [_scan(path) for path in paths]
    plain = not any(lone_cr for _, lone_cr in scans)
    if all(utf8 for utf8, _ in scans):
        yield list(paths), "utf-8", plain
        return
    tmp = files.temp_dir("trec-eval")
    copies = {}
    try:
        for number, path in enumerate(paths):
            copies[path] = copy = os.path.join(tmp, f"file{number}")
            with loading.open_binary(path) as src, open(copy, "w", encoding="utf-8") as out:
                decoder = codecs.getincrementaldecoder(ENCODING)()
                while chunk := src.read(_CHUNK):
                    out.write(decoder.decode(chunk))
        try:
            yield [copies[path] for path in paths], ENCODING, plain
        except IrwError as exc:
            text = str(exc)
            for path, copy in copies.items():
                text = text.replace(copy, path)
            exc.args = (text, *exc.args[1:])
            raise
    finally:
        files.remove_temp(tmp)


# ------------------------------------------------------------------------- duplicates

# The measures whose computation does not look at the documents (trec_eval: they never call
# form_res_rels, which checks for duplicates).
UNCHECKED = ("num_q", "runid")
_FIELDS = re.compile(r"[ \t\r\v\f]+")  # C's isspace within a line: a lone \r separates fields


def _lines(path: str):
    """(line number, fields) of each line of ``path`` as trec_eval 10.0 reads its files: lines
    end at '\n' only, fields are separated by C's white space, and a line blank or whose first
    field begins with '#' is skipped."""
    with loading.open_binary(path) as fh:
        text = fh.read().decode("utf-8")
    for number, line in enumerate(text.split("\n"), 1):
        fields = _FIELDS.split(line.strip(" \t\r\v\f"))
        if fields != [""] and not fields[0].startswith("#"):
            yield number, fields
_TOPIC_NOT_IN_QRELS = "~"  # the topic of the line standing in for an empty run (-c)


class _Unread(Exception):
    """A line trec_eval's reading below does not take: the loader's error stands."""


@dataclass
class _Read:
    """A qrels or run file read as trec_eval 10.0 reads it (get_qrels.c,
    get_trec_results.c): lines end at '\n' only; fields are separated by C's white space
    (a lone '\r' among them); a line blank or whose first field begins with '#' is skipped;
    fields past the 4th (qrels) or 6th (run) are ignored; the rank is not read (any text),
    the score is a double (1e400: infinity). Its lines (line number, fields) by topic, in
    the file's order."""

    path: str
    topics: dict[str, list[tuple[int, list[str]]]] = field(default_factory=dict)

    @classmethod
    def of(cls, path: str, nfields: int) -> "_Read":
        read = cls(path)
        for number, fields in _lines(path):
            if len(fields) < nfields:
                raise _Unread
            fields = fields[:nfields]
            if nfields == 4:
                int(fields[3])
            elif math.isnan(float(fields[4])):  # an order trec_eval's sort has not
                raise _Unread
            read.topics.setdefault(fields[0], []).append((number, fields))
        return read


def _ranked(lines: list[tuple[int, list[str]]], max_docs: int | None) -> list[tuple[int, list[str]]]:
    """A topic's run lines as trec_eval ranks them (score descending, ties by docno
    descending: strcmp, the order of code points here), the first ``max_docs`` (-M)."""
    ranked = sorted(lines, key=lambda line: (float(line[1][4]), line[1][2]), reverse=True)
    return ranked[:max_docs] if max_docs is not None else ranked


def _twice(lines: list[tuple[int, list[str]]]) -> tuple[int, int, str] | None:
    """The first docno of ``lines`` seen twice: (its line, its first line, docno)."""
    seen: dict[str, int] = {}
    for number, fields in sorted(lines, key=lambda line: line[0]):
        if fields[2] in seen:
            return number, seen[fields[2]], fields[2]
        seen[fields[2]] = number
    return None


def _first_kept(lines: list[tuple[int, list[str]]]) -> list[tuple[int, list[str]]]:
    """``lines`` without a repeated docno (the first line of each kept)."""
    seen: set[str] = set()
    return [line for line in lines if not (line[1][2] in seen or seen.add(line[1][2]))]


def _stop(judged: _Read, ranked: _Read, topics: list[str], max_docs: int | None):
    """The first of ``topics`` where trec_eval stops on a docno twice (judged twice, or
    ranked twice among the first ``max_docs``), and why; None if none."""
    for topic in topics:
        twice = _twice(judged.topics[topic])
        where, what = judged.path, "judged twice"
        if twice is None and topic in ranked.topics:
            twice = _twice(_ranked(ranked.topics[topic], max_docs))
            where, what = ranked.path, "ranked twice" + (f" in the first {max_docs}" if max_docs else "")
        if twice is not None:
            number, first, docno = twice
            return topic, (f"{where}, line {number}: document {docno} is {what} in topic {topic} "
                           f"(first at line {first}): trec_eval 10.0 stops there (status "
                           f"{MEASURE_FAILED}, duplicate docs)")
    return None


def _write_read(tmp: str, judged: _Read, ranked: _Read, kept, max_docs: int | None,
                scores: dict[float, int]) -> tuple[str, str]:
    """The files as the loader reads them, of what trec_eval reads of them: the judgments
    of the topics ``kept(topic)``, the rankings of those and of the topics the qrels lacks
    (each docno once, the first ``max_docs``), every score as its place among ``scores``
    (the order is what trec_eval reads of a score) and the rank as the line number; a line
    of a topic in no qrels stands in for a run with no line kept (an empty run, or, under
    -c, one whose topics all come at or after the stop)."""
    q_path, r_path = os.path.join(tmp, "qrels"), os.path.join(tmp, "run")
    with open(q_path, "w", encoding="utf-8") as out:
        for topic, lines in judged.topics.items():
            if kept(topic):
                out.writelines(f"{f[0]} 0 {f[2]} {f[3]}\n" for _, f in _first_kept(lines))
    with open(r_path, "w", encoding="utf-8") as out:
        written = False
        for topic, lines in ranked.topics.items():
            if topic not in judged.topics or kept(topic):
                out.writelines(f"{f[0]} Q0 {f[2]} {n} {scores[float(f[4])]} {f[5]}\n"
                               for n, f in _first_kept(_ranked(lines, max_docs)))
                written = True
        if not written:  # no line, or none of a topic evaluated before a stop (-c)
            stand_in = _TOPIC_NOT_IN_QRELS + max(judged.topics, default="")
            out.write(f"{stand_in} Q0 - 1 0 -\n")
    return q_path, r_path


def evaluated(qrels: str, run: str, measures: list[TrecEvalMeasure], evaluate, *,
              complete: bool, max_docs: int | None, plain: bool = True):
    """``evaluate(qrels, run)`` (what trec_eval prints for the two files), also where the
    loader refuses what trec_eval 10.0 reads (:class:`_Read`: a rank past 64 bits, a score
    past a double's range, a lone carriage return, a run of comment lines only; and a
    docno twice in a topic). trec_eval stops with status 4 at the first topic it evaluates
    (in its order) whose qrels judge a docno twice or whose ranking holds a docno twice
    among the first ``max_docs`` (-M) -- the lines of the topics before it printed -- and
    checks nothing when only num_q and runid are asked for; elsewhere (past -M, in a topic
    it does not evaluate) the duplicates do not count. Not ``plain``: the loader would
    read other lines (as_read), the files are read so at once. A StatusError (status 4) carries
    the topics' values before the stop as ``values`` (None: no topic before it)."""
    refused = None
    if plain:
        try:
            return evaluate(qrels, run)
        except StatusError:
            raise
        except IrwError as exc:
            refused = exc
    try:
        judged, ranked = _Read.of(qrels, 4), _Read.of(run, 6)
    except (_Unread, IrwError, ValueError, OSError, EOFError):
        if refused is None:  # what the loader says of it
            return evaluate(qrels, run)
        raise refused from None
    topics = sorted(t for t in judged.topics if complete or t in ranked.topics)
    stop = None
    if any(m.family not in UNCHECKED for m in measures):
        stop = _stop(judged, ranked, topics, max_docs)
    scores = {score: place for place, score in enumerate(sorted(
        {float(f[4]) for lines in ranked.topics.values() for _, f in lines}))}
    tmp = files.temp_dir("trec-eval")
    try:
        kept = (lambda t: t < stop[0]) if stop else (lambda t: True)
        paths = _write_read(tmp, judged, ranked, kept, max_docs, scores)
        values = None
        if stop is None or any(t < stop[0] for t in topics):
            values = evaluate(*paths)
            if not ranked.topics:
                values.run_id = ""  # trec_eval prints memory it never wrote
    finally:
        files.remove_temp(tmp)
    if stop is None:
        return values
    error = StatusError(stop[1], MEASURE_FAILED)
    error.values = values
    raise error


# ------------------------------------------------------------------------- z-scores

def read_zscores(path: str) -> dict[str, dict[str, tuple[float, float]]]:
    """``-Z``'s file: lines ``qid measure mean std_dev``, by topic and measure label (their
    bytes read as Latin-1, ENCODING)."""
    out: dict[str, dict[str, tuple[float, float]]] = {}
    kind = files.file_kind(path)
    if kind is not None:  # a FIFO would wait for a writer, a device never ends
        raise StatusError(f"{path}: {kind}, not a regular file: give the z-scores as a file",
                          INPUT)
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise StatusError(f"{path}: cannot read the z-scores file ({exc.strerror})", INPUT) from None
    for number, raw in enumerate(data.split(b"\n"), 1):
        fields = raw.split()
        if not fields:
            continue
        try:
            if len(fields) != 4:
                raise ValueError
            topic, label = fields[0].decode(ENCODING), fields[1].decode(ENCODING)
            mean, std = float(fields[2]), float(fields[3])
        except (ValueError, UnicodeDecodeError):
            raise StatusError(f"{path}, line {number}: expected 4 fields (qid measure mean "
                              "std_dev), the last two numbers", INPUT) from None
        out.setdefault(topic, {})[label] = (mean, std)
    return out


def _zscore(value: float, found: tuple[float, float] | None) -> float:
    """trec_eval's z-score of a value against (mean, std_dev); MISSING_ZSCORE without them,
    or with a deviation of 0 and another value than the mean."""
    if found is None:
        return MISSING_ZSCORE
    mean, std = found
    if std:
        return (value - mean) / std
    return 0.0 if value == mean else MISSING_ZSCORE


# ------------------------------------------------------------------------- evaluation

@dataclass
class _Values:
    run_id: str
    topics: list[str]
    lacking: list[str]
    missing: set[str]  # topics evaluated as the run's missing ones (-c)
    values: dict[tuple[str, str], float]  # (topic, trec_eval label) -> value
    relstrings: dict[str, str]
    graded: int | None  # -c: trec_eval's num_rel summary


def compute(con, qrels: str, collection: str, measures: list[TrecEvalMeasure], *,
            complete: bool = False, max_docs: int | None = None, rel_level: int | None = None,
            judged_only: bool = False, num_docs: int | None = None) -> _Values:
    """The values trec_eval prints, computed in ``con``, which holds the qrels ``qrels`` and
    one run of ``collection`` as files in, scores out stages them (engine.files_in.staged:
    the ranked rows of judged documents and every ranking's length)."""
    params = {"qrels": qrels, "collection": collection}
    run_ids = [r[0] for r in sql.rows(con, "trec_eval.sql", "run_ids", params)]
    if len(run_ids) != 1:
        raise StatusError(f"the run file holds {len(run_ids)} runs ({', '.join(run_ids)}), which "
                          "trec_eval would evaluate as one; evaluate them with irw eval QRELS RUN "
                          "(a line per run), or give each its own file", INPUT)
    params["run"] = run_id = run_ids[0]
    held = KINDS[catalogue.judgments_of(con, qrels)]  # without graded rows: its detail table
    rows = sql.rows(con, "trec_eval.sql", "topics", params, "qrels" if held.graded else held.detail)
    lacking = sorted(t for t, in_run in rows if not in_run)
    topics = sorted(t for t, in_run in rows if in_run or complete)
    if not topics:
        raise StatusError("no topic has both results and relevance judgments: the run shares "
                          "no topic with the qrels", NO_TOPICS)
    missing = lacking if complete else []
    if missing and held.graded:  # (without graded rows, the engine ranks them empty: 'all')
        sql.run(con, "trec_eval.sql", "stand_in", {**params, "topics": missing})
    if lacking and not complete:
        shown = ", ".join(lacking[:10]) + (f", ... ({len(lacking) - 10} more)" if len(lacking) > 10 else "")
        note(f"the run lacks {len(lacking)} topic{'s' if len(lacking) != 1 else ''} of the qrels "
             f"({shown}): evaluated the {len(topics)} topics both have, as trec_eval 9 does "
             "(trec_eval 10.0 stops there with status 4); -c counts them too")
    chosen = engine_measures(measures, judged_only, rel_level, num_docs)
    values: dict[tuple[str, str], float] = {}
    if chosen:
        parsed = list(dict.fromkeys(chosen.values()))
        result = evaluation.evaluate(con, qrels, parsed, [run_id],
                                     topics="run" if held.graded or not missing else "all",
                                     max_docs=max_docs, rel_level=rel_level, store=False,
                                     collection=collection)
        by_measure = {(topic, measure): value for _, topic, measure, value in result.rows()}
        values = {(topic, label): by_measure[(topic, str(measure))]
                  for label, measure in chosen.items() for topic in topics}
    relstrings: dict[str, str] = {}
    for m in measures:
        if m.length is not None:  # relstring
            relstrings = {topic: text for (_, topic), text in evaluation.relstrings(
                con, qrels, [run_id], m.length, max_docs, judged_only, collection).items()}
    graded = None
    if complete and any(m.family == COUNTED_IN_QRELS_WHEN_COMPLETE for m in measures):
        graded = sql.rows(con, "trec_eval.sql", "graded_above_zero", params)[0][0]
    return _Values(run_id, topics, lacking, set(missing), values, relstrings, graded)


def report(values: _Values, measures: list[TrecEvalMeasure],
           zscores: dict[str, dict[str, tuple[float, float]]] | None = None,
           encoding: str = "utf-8") -> TrecEvalReport:
    """The lines trec_eval prints for ``values``: per topic in its order, then the summary
    (topic ``all``), each measure's values accumulated topic by topic as trec_eval does."""
    z = zscores is not None
    out = TrecEvalReport(values.run_id, values.topics, values.lacking, zscores=z,
                         encoding=encoding)
    n = len(values.topics)
    sums = {m.label: 0.0 for m in measures}
    for topic in values.topics:
        missing = topic in values.missing
        found = zscores.get(topic.encode(encoding).decode(ENCODING)) if z else None
        for m in measures:
            if m.aggregate == "none":  # runid, relstring: text
                if m.per_query:
                    cleared = missing and m.label == CLEARED_STRING_WHEN_MISSING
                    out.topic_lines.append((m.label, topic, "quoted",
                                            "" if cleared else values.relstrings.get(topic, "")))
                continue
            if m.measure is None:  # num_q
                value = 1.0
            elif missing and (m.label in CLEARED_WHEN_MISSING
                              or m.label.startswith(CLEARED_PREFIX_WHEN_MISSING)):
                value = 0.0
            else:
                value = values.values[(topic, m.label)]
            if m.aggregate == "gm":
                value = math.log(max(value, MIN_GEO_MEAN))
            if z:
                value = _zscore(value, found.get(m.label) if found is not None else None)
            sums[m.label] += value
            if m.per_query:
                out.topic_lines.append((m.label, topic, "float" if z else m.value_kind, value))
    for m in measures:
        if not m.summary:
            continue
        if m.aggregate == "none":
            out.summary_lines.append((m.label, "all", "string", values.run_id))
            continue
        total = sums[m.label]
        if m.aggregate == "count":
            total = float(n)
        elif m.family == COUNTED_IN_QRELS_WHEN_COMPLETE and values.graded is not None:
            total = float(values.graded)
        elif m.aggregate == "mean":
            total = total / n
        elif m.aggregate == "gm":
            total = math.exp(total / n)
        out.summary_lines.append((m.label, "all", "float" if z else m.value_kind, total))
    return out
