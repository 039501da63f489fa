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

from .. import __version__
from ..errors import IrwError, IrwNote, duckdb_problem, one_line

SHORT = "hvqm:cl:nD:JN:M:R:T:oZ:"
LONG = ["help", "version", "query_eval_wanted", "measure=", "complete_rel_info_wanted",
        "level_for_rel=", "nosummary", "Debug_level=", "Judged_docs_only",
        "Number_docs_in_coll=", "Max_retrieved_per_topic=", "Rel_info_format=", "Results_format=",
        "Output_old_results_format=", "Zscore="]
# long options as their short ones
_SHORT_OF = {"--help": "-h", "--version": "-v", "--query_eval_wanted": "-q", "--measure": "-m",
             "--complete_rel_info_wanted": "-c", "--level_for_rel": "-l", "--nosummary": "-n",
             "--Debug_level": "-D", "--Judged_docs_only": "-J", "--Number_docs_in_coll": "-N",
             "--Max_retrieved_per_topic": "-M", "--Rel_info_format": "-R",
             "--Results_format": "-T", "--Output_old_results_format": "-o", "--Zscore": "-Z"}

USAGE = """\
Usage: irw trec-eval [-h] [-v] [-q] [-n] [-c] [-J] [-m measure[.params]]... [-l num] [-M num]
       [-N num] [-Z zscores_file] [-R qrels] [-T trec_results] qrels_file results_file
"""

HELP = USAGE + """
Evaluate the run results_file (- reads it from standard input) against the qrels
qrels_file as trec_eval 10.0 does, and print what it prints: the same lines, in the same
order and format. The measures are irw's catalogue measures (irw measures names the
trec_eval name of each); the files are read as irw load reads them (fields after the run
id are ignored; '#' comment lines are skipped; the documents are ranked by score, compared
at full precision, ties by docno descending, as trec_eval 10.0 ranks them).

  -q        also print each topic's values
  -m M      the measures: a name (P, map, ndcg_cut, ...), a name with parameters
            (P.5,10  ndcg.1=3,2=9  utility.2,-1,0,0) or a nickname: official (the default),
            all_trec, set; repeatable
  -c        average over every topic of the qrels, a topic the run lacks counting as a
            ranking of nothing (trec_eval's -c)
  -n        no summary lines
  -l num    the lowest grade that is relevant (default 1)
  -M num    only the first num documents of each ranking count
  -N num    the number of documents in the collection (utility)
  -J        only judged documents count (condensed lists)
  -Z file   print z-scores against the means and deviations of file (qid measure mean
            std_dev lines)
  -R qrels, -T trec_results   the input formats (the only ones irw reads)
  -h        this help, and the measures named with -m; -v the version

One difference from trec_eval 10.0: when the run lacks a topic of the qrels and -c is not
given, trec_eval 10.0 stops with status 4 ("result qid ... not found in qrels"); irw
evaluates the topics both have, as trec_eval 9 does, and names the others on stderr.
Exit statuses are trec_eval's: 1 usage or measure, 2 input file, 7 no topic to evaluate.
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
    options = {"measures": [], "complete": False, "max_docs": None, "rel_level": None,
               "judged_only": False, "zscores": None, "rel_info_format": "qrels",
               "results_format": "trec_results", "query": False, "summary": True, "help": False,
               "version": False, "num_docs": None}
    for option, value in pairs:
        option = _SHORT_OF.get(option, option)
        if option == "-h":
            options["help"] = True
        elif option == "-v":
            options["version"] = True
        elif option == "-q":
            options["query"] = True
        elif option == "-m":
            options["measures"].append(value)
        elif option == "-c":
            options["complete"] = True
        elif option == "-l":
            options["rel_level"] = _integer("-l", value, 0)
        elif option == "-n":
            options["summary"] = False
        elif option == "-D":
            if value.strip() not in ("0", ""):
                raise _Usage("-D: irw trec-eval prints no debugging output (give -D 0, or leave it out)")
        elif option == "-J":
            options["judged_only"] = True
        elif option == "-N":
            options["num_docs"] = _integer("-N", value, 0)
        elif option == "-M":
            options["max_docs"] = _integer("-M", value, 1)
        elif option == "-R":
            options["rel_info_format"] = value
        elif option == "-T":
            options["results_format"] = value
        elif option == "-Z":
            options["zscores"] = value
        # -o: trec_eval's old output format, which it no longer has: ignored as it ignores it
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

    from .. import api, output

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
                qrels, sys.stdin.buffer if run_file == "-" else run_file, options["measures"],
                complete=options["complete"], max_docs=options["max_docs"],
                rel_level=options["rel_level"], judged_only=options["judged_only"],
                num_docs=options["num_docs"], zscores=options["zscores"],
                rel_info_format=options["rel_info_format"],
                results_format=options["results_format"], wait=wait, memory_limit=memory_limit)
        lines = (report.topic_lines if options["query"] else []) + \
            (report.summary_lines if options["summary"] else [])
        sys.stdout.buffer.write(output.trec_eval_lines(lines, report.zscores).encode("utf-8"))
        sys.stdout.flush()
        return 0
    except IrwError as exc:
        sys.stderr.write(f"error: {one_line(str(exc))}\n")
        return getattr(exc, "status", 2)
    except BrokenPipeError:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 141
    except Exception as exc:  # one line, never a traceback (as every irw command)
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


def _show_note(message, category, filename, lineno, file=None, line=None) -> None:
    if issubclass(category, IrwNote):
        sys.stderr.write(one_line(str(message)) + "\n")
