"""``irw trec-eval``: trec_eval 10.0's command line over irw's engine.

It parses trec_eval's options as trec_eval does (GNU getopt: short options that may be
combined and take their value attached or apart, ``-M100``, ``-mP.5,10``, long options,
options after the file names), calls :meth:`irwarehouse.Warehouse.trec_eval` and prints its
lines as trec_eval prints them. Errors are one line on stderr with trec_eval's exit status.
It imports neither typer nor the other commands: ``irw trec-eval`` starts without them
(``irwarehouse.cli.main``), and ``irw --memory-limit ... trec-eval`` reaches it through the
typer application (``core.py``).
"""

from __future__ import annotations

import getopt
import os
import sys
from dataclasses import dataclass
from typing import Callable

from .. import __version__
from ..errors import Interrupts, IrwError, IrwNote, duckdb_problem, one_line

def _set(key, value):
    """An option's effect: ``key`` takes ``value``."""
    return lambda options, _: options.__setitem__(key, value)


def _store(key, convert=lambda option, value: value):
    """An option's effect: ``key`` takes its argument (through ``convert``)."""
    return lambda options, value: options.__setitem__(key, convert(key, value))


def _debug(options: dict, value: str) -> None:
    if value.strip() not in ("0", ""):
        raise _Usage("-D: irw trec-eval prints no debugging output (give -D 0, or leave it out)")


@dataclass(frozen=True)
class Option:
    """One of trec_eval's options: its letter, its long name, the name of its argument (None:
    it takes none), how it changes the parsed options (``apply(options, value)``), and its
    help (None: not in the help)."""

    letter: str
    long: str
    argument: str | None
    apply: Callable[[dict, str], None]
    help: str | None = None


# trec_eval's options, in its order: what the parser reads and the help lists.
OPTIONS = (
    Option("h", "help", None, _set("help", True), "this help, and the measures named with -m"),
    Option("v", "version", None, _set("version", True), "the version"),
    Option("q", "query_eval_wanted", None, _set("query", True), "also print each topic's values"),
    Option("m", "measure", "M", lambda options, value: options["measures"].append(value),
           "the measures: a name (P, map, ndcg_cut, ...), a name with parameters\n"
           "(P.5,10  ndcg.1=3,2=9  utility.2,-1,0,0) or a nickname: official (the default),\n"
           "all_trec, set; repeatable"),
    Option("c", "complete_rel_info_wanted", None, _set("complete", True),
           "average over every topic of the qrels, a topic the run lacks counting as a\n"
           "ranking of nothing (trec_eval's -c)"),
    Option("l", "level_for_rel", "num", _store("rel_level", lambda k, v: _integer("-l", v, 0)),
           "the lowest grade that is relevant (default 1)"),
    Option("n", "nosummary", None, _set("summary", False), "no summary lines"),
    Option("D", "Debug_level", "num", _debug),
    Option("J", "Judged_docs_only", None, _set("judged_only", True),
           "only judged documents count (condensed lists)"),
    Option("N", "Number_docs_in_coll", "num", _store("num_docs", lambda k, v: _integer("-N", v, 0)),
           "the number of documents in the collection (utility)"),
    Option("M", "Max_retrieved_per_topic", "num",
           _store("max_docs", lambda k, v: _integer("-M", v, 1)),
           "only the first num documents of each ranking count"),
    Option("R", "Rel_info_format", "format", _store("rel_info_format"),
           "the relevance judgments' format: qrels (default), prefs, qrels_prefs, qrels_jg"),
    Option("T", "Results_format", "trec_results", _store("results_format"),
           "the format of the results (the only one irw reads)"),
    # -o: trec_eval's old output format, which it no longer has: ignored as it ignores it
    Option("o", "Output_old_results_format", None, lambda options, value: None),
    Option("Z", "Zscore", "file", _store("zscores"),
           "print z-scores against the means and deviations of file (qid measure mean\n"
           "std_dev lines)"),
)
SHORT = "".join(o.letter + (":" if o.argument else "") for o in OPTIONS)
LONG = [o.long + ("=" if o.argument else "") for o in OPTIONS]
_BY_NAME = {**{f"-{o.letter}": o for o in OPTIONS}, **{f"--{o.long}": o for o in OPTIONS}}
DEFAULTS = {"complete": False, "max_docs": None, "rel_level": None, "judged_only": False,
            "zscores": None, "rel_info_format": "qrels", "results_format": "trec_results",
            "query": False, "summary": True, "help": False, "version": False, "num_docs": None}


def _options_help() -> str:
    """The help's table of options, from OPTIONS."""
    lines = []
    for o in OPTIONS:
        if o.help is None:
            continue
        head = f"  -{o.letter}" + (f" {o.argument}" if o.argument else "")
        first, *rest = o.help.split("\n")
        if len(head) > 11:
            lines.append(head)
            head = ""
        lines.append(f"{head:<12}{first}")
        lines += [" " * 12 + more for more in rest]
    return "\n".join(lines) + "\n"


USAGE = """\
Usage: irw trec-eval [-h] [-v] [-q] [-n] [-c] [-J] [-m measure[.params]]... [-l num] [-M num]
       [-N num] [-Z zscores_file] [-R format] [-T trec_results] qrels_file results_file
"""

HELP = USAGE + """
Evaluate the run results_file (- reads it from standard input) against the qrels
qrels_file as trec_eval 10.0 does, and print what it prints: the same lines, in the same
order and format. The measures are irw's catalogue measures (irw measures names the
trec_eval name of each); the files are read as irw load reads them (fields after the run
id are ignored; '#' comment lines are skipped; the documents are ranked by score, compared
at full precision, ties by docno descending, as trec_eval 10.0 ranks them), and as trec_eval
reads them where irw load would refuse them: ids are bytes, a docno twice stops with status
4 where trec_eval stops, a lone carriage return separates fields, the rank is not read.

""" + _options_help() + """
One difference from trec_eval 10.0: when the run lacks a topic of the qrels and -c is not
given, trec_eval 10.0 stops with status 4 ("result qid ... not found in qrels"); irw
evaluates the topics both have, as trec_eval 9 does, and names the others on stderr.
Exit statuses are trec_eval's: 1 usage or measure, 2 input file, 4 a docno twice, 7 no topic
to evaluate.
"""


class _Usage(Exception):
    pass


def _integer(option: str, value: str, low: int) -> int:
    """An option's integer value (trec_eval reads it with atol, which takes garbage for 0:
    irw refuses it)."""
    text = value.strip()
    try:
        number = int(text)
    except ValueError:
        raise _Usage(f"{option} takes an integer, got {value!r}") from None
    if number < low:
        raise _Usage(f"{option} takes an integer >= {low}, got {value!r}")
    return number


def parse(argv: list[str]) -> dict:
    """trec_eval's options and arguments as keyword arguments of Warehouse.trec_eval, plus
    what only the printing needs (query, summary) and the requests for help and version."""
    try:
        pairs, args = getopt.gnu_getopt(list(argv), SHORT, LONG)
    except getopt.GetoptError as exc:
        raise _Usage(str(exc)) from None
    options = {**DEFAULTS, "measures": []}
    for name, value in pairs:
        _BY_NAME[name].apply(options, value)
    if options["version"] or options["help"]:
        return {**options, "files": args}
    if len(args) != 2:
        several = (f"; for several runs: irw eval QRELS RUN... -m MEASURE, and for two: irw compare "
                   f"QRELS RUN_A RUN_B -m MEASURE (the difference, its interval and p-value)"
                   if len(args) > 2 else "")
        raise _Usage(f"expected a qrels file and a results file, got {len(args)} file name"
                     f"{'s' if len(args) != 1 else ''}{several}")
    options["files"] = args
    return options


def _help(options: dict) -> str:
    """The help, then the measures named with -m (trec_eval's -h does the same)."""
    from .. import api

    text = HELP
    if options["measures"]:
        text += "\nMeasures requested:\n"
        for label, name, description in api.Warehouse.trec_eval_measures(options["measures"]):
            text += f"  {label:<22} {name or '':<24} {description}\n"
    return text


def run(argv: list[str], *, wait: float | None = None, memory_limit: str | None = None) -> int:
    """Run ``irw trec-eval`` with the arguments ``argv``: print to stdout what trec_eval
    prints, notes and errors to stderr; the exit status."""
    import warnings

    from .. import api

    Interrupts.reset(keep=False)
    options: dict = {}
    try:
        try:
            options = parse(argv)
        except _Usage as exc:
            sys.stderr.write(f"error: {one_line(str(exc))}\n{USAGE}")
            return 1
        if options["version"]:
            sys.stderr.write(f"trec_eval version {api.TREC_EVAL_VERSION} "
                             f"(irw trec-eval, irwarehouse {__version__})\n")
            return 0
        if options["help"]:
            sys.stdout.write(_help(options))
            return 0
        qrels, run_file = options["files"]
        with warnings.catch_warnings():
            warnings.simplefilter("always", IrwNote)
            warnings.showwarning = _show_note
            report = api.Warehouse.trec_eval(
                qrels, api.files.standard_input() if run_file == "-" else run_file, options["measures"],
                complete=options["complete"], max_docs=options["max_docs"],
                rel_level=options["rel_level"], judged_only=options["judged_only"],
                num_docs=options["num_docs"], zscores=options["zscores"],
                rel_info_format=options["rel_info_format"],
                results_format=options["results_format"], wait=wait, memory_limit=memory_limit)
        _print(report, options["query"], options["summary"])
        return 0
    except Exception as exc:
        if Interrupts.caused(exc):  # stopped by Ctrl-C or SIGTERM: the status says which
            raise KeyboardInterrupt from None
        return _failed(exc, options)


def _failed(exc: Exception, options: dict) -> int:
    """What ``irw trec-eval`` prints and returns when it fails with ``exc``: one line, never
    a traceback (as every irw command)."""
    from .. import api

    if isinstance(exc, IrwError):
        stopped = getattr(exc, "report", None)
        if stopped is not None:  # trec_eval stopped at a topic: what it printed before
            _print(stopped, options["query"], False)
        sys.stderr.write(f"error: {one_line(str(exc))}\n")
        return getattr(exc, "status", 2)
    if isinstance(exc, BrokenPipeError):
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 141
    if type(exc).__module__.split(".")[0] in ("duckdb", "_duckdb"):
        message, status = duckdb_problem(exc, api.memory_limit_text()), 2
    elif isinstance(exc, MemoryError):
        message, status = f"out of memory: {exc}", 2
    elif isinstance(exc, OSError):
        message, status = (f"{exc.filename}: {exc.strerror}" if exc.filename else str(exc)), 2
    else:
        message, status = (f"unexpected {type(exc).__name__}: {exc} (this is a bug in irwarehouse; "
                           "please report it with the command that caused it)"), 1
    sys.stderr.write(f"error: {one_line(message)}\n")
    return status


def _print(report, query: bool, summary: bool) -> None:
    """The report's lines as trec_eval prints them (-q: the topics' lines; the summary)."""
    from .. import output

    lines = (report.topic_lines if query else []) + (report.summary_lines if summary else [])
    sys.stdout.buffer.write(output.trec_eval_lines(lines, report.zscores).encode(report.encoding))
    sys.stdout.flush()


def _show_note(message, category, filename, lineno, file=None, line=None) -> None:
    if issubclass(category, IrwNote):
        sys.stderr.write(one_line(str(message)) + "\n")
