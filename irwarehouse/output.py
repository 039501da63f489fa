"""Printing results: ``--format table|csv|json|trec``, the same convention for every command.

``json`` prints one JSON array of flat objects and nothing else on stdout; ``csv`` has a
header row; ``table`` is aligned text for people; ``trec`` is trec_eval's
``measure<TAB>topic<TAB>value`` lines (commands with per-topic scores only); ``markdown``
and ``latex`` (commands that offer them) print the table for people as a GitHub markdown
table or a booktabs tabular.

What is printed is a pandas DataFrame or a list of dicts (one per row, the columns in the
order of the first row's keys): commands that have no frame print without importing pandas.
"""

from __future__ import annotations

import datetime
import decimal
import json
import math
import sys
from typing import TYPE_CHECKING, Union

from .errors import IrwError, inline

if TYPE_CHECKING:
    import pandas as pd

Rows = Union["pd.DataFrame", list]

FORMATS = ("table", "csv", "json", "trec", "markdown", "latex")


def _clean(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):  # numpy scalar
        return _clean(value.item())
    if isinstance(value, (datetime.date, datetime.time)):  # also pandas.Timestamp
        return value.isoformat()
    return value


def _plain(data):
    """A Result (irwarehouse.result) as its records, with its columns even when empty."""
    if hasattr(type(data), "records") and not hasattr(type(data), "to_dict"):  # not a DataFrame
        records = data.records()
        return records if records else _Empty(data.columns)
    return data


class _Empty(list):
    """No rows, but columns (for a CSV header)."""

    def __init__(self, columns):
        super().__init__()
        self.names = list(columns)


def say(message: str) -> None:
    """Print a message for people -- progress, a summary, a note -- on stderr (stdout stays
    machine-readable), as one printable line: whatever names it quotes (a run id, a qrels
    name, a file or directory name), a newline, a tab or another control character in them is
    written as an escape (errors.inline), as in error messages, so that a name can neither
    break the message in two nor drive the terminal. The one door of every message."""
    sys.stderr.write(inline(message) + "\n")
    sys.stderr.flush()


def no_rows(columns) -> list:
    """An empty table with ``columns`` (printed as "(no rows)", or a CSV header)."""
    return _Empty(columns)


def _records(data: Rows) -> list[dict]:
    return data if isinstance(data, list) else data.to_dict(orient="records")


def _columns(data: Rows) -> list[str]:
    if isinstance(data, _Empty):
        return data.names
    if isinstance(data, list):
        return list(data[0]) if data else []
    return [str(c) for c in data.columns]


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) or (hasattr(value, "dtype") and value.dtype.kind in "biuf")


def _numeric(data: Rows) -> list[bool]:
    """Which columns are numeric (right-aligned in a table)."""
    if not isinstance(data, list):
        from pandas.api.types import is_numeric_dtype

        return [is_numeric_dtype(data[c]) for c in data.columns]
    numeric = []
    for c in _columns(data):
        values = [row[c] for row in data if row[c] is not None]
        numeric.append(bool(values) and all(_is_number(v) for v in values))
    return numeric


def to_json(data: Rows) -> str:
    records = [{k: _clean(v) for k, v in row.items()} for row in _records(data)]
    return json.dumps(records, indent=1, default=str)


def to_csv(data: Rows, out) -> None:
    if not isinstance(data, list):
        data.to_csv(out, index=False)
        return
    import csv

    writer = csv.writer(out, lineterminator="\n")
    columns = _columns(data)
    writer.writerow(columns)
    for row in data:
        writer.writerow(["" if _clean(row[c]) is None else row[c] for c in columns])


def _cell(value, digits: int) -> str:
    """A table cell: floats to ``digits`` decimals, control characters escaped (a run id or
    docno holding an ESC byte must not drive the terminal), on one line (a newline, carriage
    return or tab written as ``\\n``, ``\\r``, ``\\t``: a row is one line, its columns aligned)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return inline(str(value))


def to_table(data: Rows, digits: int = 4) -> str:
    if len(data) == 0:
        return "(no rows)"
    columns = _columns(data)
    if isinstance(data, list):
        rows = [[_cell(row[c], digits) for c in columns] for row in data]
    else:
        rows = [[_cell(v, digits) for v in row] for row in data.itertuples(index=False, name=None)]
    numeric = _numeric(data)
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(columns)]

    def line(cells):
        return "  ".join(c.rjust(w) if num else c.ljust(w)
                         for c, w, num in zip(cells, widths, numeric)).rstrip()

    columns = [inline(c) for c in columns]
    widths = [max(len(c), w) for c, w in zip(columns, widths)]
    out = [line(columns), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in rows)
    return "\n".join(out)


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}", "|": r"\textbar{}", "<": r"\textless{}",
                  ">": r"\textgreater{}", "α": r"$\alpha$", "–": "--", "φ": r"$\varphi$"}


def latex_text(text: str, keep_math: bool = False) -> str:
    """Text for LaTeX; with ``keep_math`` the ``$...$`` spans are kept as they are."""
    if keep_math:
        pieces = text.split("$")
        return "$".join(p if k % 2 else latex_text(p) for k, p in enumerate(pieces))
    return "".join(_LATEX_SPECIAL.get(c, c) for c in text)


def markdown_text(text: str) -> str:
    """Text for a markdown table cell: markdown's special characters escaped."""
    return "".join("\\" + c if c in "\\`*_[]<>|#" else c for c in text)


def _wide(data: Rows, digits: int) -> tuple[list[str], list[list[str]], list[bool]]:
    """Columns, cells (as :func:`to_table` writes them) and which columns are numeric."""
    columns = _columns(data)
    if isinstance(data, list):
        rows = [[_cell(row[c], digits) for c in columns] for row in data]
    else:
        rows = [[_cell(v, digits) for v in row] for row in data.itertuples(index=False, name=None)]
    return columns, rows, _numeric(data)


def to_markdown(data: Rows, digits: int = 4) -> str:
    """A GitHub markdown table; numeric columns right-aligned."""
    columns, rows, numeric = _wide(data, digits)
    lines = ["| " + " | ".join(markdown_text(c) for c in columns) + " |",
             "|" + "|".join(" ---: " if num else " --- " for num in numeric) + "|"]
    lines += ["| " + " | ".join(c if num else markdown_text(c) for c, num in zip(row, numeric)) + " |"
              for row in rows]
    return "\n".join(lines)


def to_latex(data: Rows, digits: int = 4) -> str:
    """A booktabs tabular (``\\usepackage{booktabs}``); numeric columns right-aligned."""
    columns, rows, numeric = _wide(data, digits)
    lines = ["\\begin{tabular}{" + "".join("r" if num else "l" for num in numeric) + "}", "\\toprule",
             " & ".join(latex_text(c) for c in columns) + " \\\\", "\\midrule"]
    lines += [" & ".join(c if num else latex_text(c) for c, num in zip(row, numeric)) + " \\\\"
              for row in rows]
    return "\n".join(lines + ["\\bottomrule", "\\end{tabular}"])


def stream(batches, fmt: str, digits: int = 4) -> None:
    """Print a streamed result (irwarehouse.result.Batches: ``columns``, and batches of
    row tuples) as ``fmt`` -- ``table``, ``csv`` or ``json`` -- batch by batch as it comes,
    holding one batch: the same text :func:`emit` prints for the whole result. A table's
    column widths and alignment are those of the first batch (all of a result that fits
    in one): a longer value further down widens its row only."""
    columns = list(batches.columns)
    writers = {"json": _stream_json, "csv": _stream_csv,
               "table": lambda b, c: _stream_table(b, c, digits)}
    if fmt not in writers:
        raise IrwError(f"a streamed result prints as table, csv or json, not {fmt!r}")
    try:
        writers[fmt](batches, columns)
    finally:  # stopped early (a closed pipe): the rows not read are dropped at once
        batches.close()


def _stream_json(batches, columns: list[str]) -> None:
    """One JSON array, as :func:`to_json` writes it (``indent=1``), a batch at a time: a
    record's scalar values encoded one by one by the encoder json's C code uses, its lines
    joined as ``indent=1`` lays them out (json's indented encoder, pure Python, takes about
    25 times longer); a record holding a list or a structure, or columns with repeated
    names, as json lays it out."""
    out = sys.stdout
    first = True
    keys = [_json_scalar(c) + ": " for c in columns]
    fast = bool(columns) and len(set(columns)) == len(columns)
    for batch in batches:
        parts = []
        for row in batch:
            record = _json_record(keys, row) if fast else None
            if record is None:
                text = json.dumps({c: _clean(v) for c, v in zip(columns, row)}, indent=1, default=str)
                record = "\n".join(" " + line for line in text.split("\n"))
            parts.append(("[\n" if first else ",\n") + record)
            first = False
        out.write("".join(parts))
    out.write("[]\n" if first else "\n]\n")


_json_scalar = json.JSONEncoder(default=str).encode  # a value without indentation


def _json_float(value: float) -> str:
    if value != value:  # NaN: null, as _clean makes it
        return "null"
    return _json_scalar(value)


def _json_other(value) -> str | None:
    """A value's JSON as json.dumps(..., indent=1, default=str) gives it inside a record;
    None for a list or a structure (laid out over lines)."""
    value = _clean(value)
    if isinstance(value, (list, tuple, dict)):
        return None
    return _json_scalar(value)


_JSON_VALUES = {str: json.encoder.encode_basestring_ascii, int: int.__repr__, float: _json_float,
                bool: lambda v: "true" if v else "false", type(None): lambda v: "null",
                decimal.Decimal: lambda v: json.encoder.encode_basestring_ascii(str(v))}


def _json_record(keys: list[str], row) -> str | None:
    """A record laid out as json.dumps(record, indent=1) lays it out inside the array (each
    line indented by one more space); None when a value is a list or a structure."""
    values = []
    for key, value in zip(keys, row):
        text = _JSON_VALUES.get(type(value), _json_other)(value)
        if text is None:
            return None
        values.append(key + text)
    return " {\n  " + ",\n  ".join(values) + "\n }"


def _stream_csv(batches, columns: list[str]) -> None:
    import csv

    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(columns)
    for batch in batches:
        writer.writerows(["" if _clean(v) is None else v for v in row] for row in batch)


def _stream_table(batches, columns: list[str], digits: int) -> None:
    out = sys.stdout
    line = None
    for batch in batches:
        cells = [[_cell(v, digits) for v in row] for row in batch]
        if line is None:
            numeric = [bool(values) and all(_is_number(v) for v in values)
                       for values in ([row[i] for row in batch if row[i] is not None]
                                      for i in range(len(columns)))]
            shown = [inline(c) for c in columns]
            widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(shown)]

            def line(cells, widths=widths, numeric=numeric):
                return "  ".join(c.rjust(w) if num else c.ljust(w)
                                 for c, w, num in zip(cells, widths, numeric)).rstrip()

            out.write(line(shown) + "\n" + "  ".join("-" * w for w in widths) + "\n")
        out.write("".join(line(r) + "\n" for r in cells))
    if line is None:
        out.write("(no rows)\n")


def with_ranking(records: list[dict], info: dict) -> list[dict]:
    """Scores' records (with a ``run_id``) each with the ranking order of its run and the tie
    policy that produced it (``info``: ``ranking_policy``, a dict run -> order, and
    ``ties``, as irwarehouse.api.Warehouse.eval gives them); others as they are."""
    if "ties" not in info:
        return records
    orders = info.get("ranking_policy", {})
    return [{**r, "ranking_policy": orders.get(r["run_id"]), "ties": info["ties"]} if "run_id" in r else r
            for r in records]


def emit(frame: Rows, fmt: str, table: Rows | None = None, digits: int = 4) -> None:
    """Print ``frame`` (flat records: a Result, a DataFrame or a list of dicts) as ``fmt``;
    ``table`` is an optional wider view for people (``table``, ``markdown``, ``latex``)."""
    frame = _plain(frame)
    table = None if table is None else _plain(table)
    shown_table = table if table is not None else frame
    if fmt == "json":
        sys.stdout.write(to_json(frame) + "\n")
    elif fmt == "csv":
        to_csv(frame, sys.stdout)
    elif fmt == "table":
        sys.stdout.write(to_table(shown_table, digits) + "\n")
    elif fmt == "markdown":
        sys.stdout.write(to_markdown(shown_table, digits) + "\n")
    elif fmt == "latex":
        sys.stdout.write(to_latex(shown_table, digits) + "\n")
    elif fmt == "trec":
        raise IrwError("--format trec is only available for `irw eval`")
    else:
        raise IrwError(f"unknown format {fmt!r}; valid: {', '.join(FORMATS)}")


# The pair tables of ``irw compare`` and ``irw pvalues`` for people (``--format table``):
# effect_size headed as what it is, and a footer saying what the columns that do not explain
# themselves hold. CSV and JSON keep the public column names, with no footer.
PAIR_LABELS = {"effect_size": "effect_size(d_z)"}
# (the columns a line explains, the line): a line is printed when its first column is shown;
# {level}, {rbp_p}, {judged_k} are the command's settings (--help: the options), {effect} the
# effect size column as the table heads it (--help: its name).
PAIR_FOOTER = (
    (("diff", "ci_low", "ci_high"), "diff: mean_a - mean_b; ci_low, ci_high: its {level} interval (the test's)"),
    (("effect_size", "effect_low", "effect_high"),
     "{effect}: Cohen's d_z, the mean per-topic difference over its standard deviation; "
     "effect_low, effect_high: its exact {level} interval"),
    (("effect_size_residual",),
     "effect_size_residual: Sakai's effect size, diff over the residual standard deviation of all "
     "runs x topics"),
    (("runs_a", "runs_b"), "runs_a, runs_b: the number of runs of each system"),
    (("within_spread",), "within_spread: |diff| is below the spread of a system's runs' means"),
    (("topics",), "topics: the number of topics compared"),
    (("statistic", "p_value", "p_adjusted", "significant"),
     "statistic, p_value: the test's; p_adjusted: under --correction; significant: p_adjusted < --alpha"),
    (("p_*",), "{tests}"),
    (("residual_a", "residual_b"),
     "residual_a, residual_b: RBP's residual at p = {rbp_p}, what unjudged documents could still add"),
    (("judged_a", "judged_b"), "judged_a, judged_b: Judged@{judged_k}, the judged fraction of the top {judged_k}"),
)


def pair_footer(columns, level: float = 0.95, rbp_p: float = 0.8, judged_k: int = 10) -> str:
    """The footer of a pair table with ``columns``: a line per column group shown (PAIR_FOOTER;
    ``p_*`` stands for compare's p-value of each test, ``p_t``, ``p_wilcoxon``...)."""
    tests = [c for c in columns if c.startswith("p_") and c not in ("p_value", "p_adjusted")]
    shown = set(columns) | ({"p_*"} if tests else set())
    level_text = f"{100 * level:g}%"
    tests_text = (f"{tests[0]}: the {tests[0][2:]} test's p-value" if len(tests) == 1 else
                  f"{', '.join(tests)}: the p-value of each test")
    return "\n".join(text.format(level=level_text, rbp_p=f"{rbp_p:g}", judged_k=judged_k, tests=tests_text,
                                  effect=PAIR_LABELS["effect_size"])
                     for group, text in PAIR_FOOTER if group[0] in shown)


def pair_help(columns, by_system=()) -> str:
    """What ``--help`` says of a pair table's ``columns`` (``p_*``: a p-value per test): the
    footer's lines (PAIR_FOOTER) with the options that set them in place of their values;
    those of ``by_system`` are said to come with --by system."""
    lines = []
    for group, text in PAIR_FOOTER:
        if group[0] in columns:
            line = text.format(level="--level", rbp_p="--rbp-p", judged_k="k (--judged-k)",
                               tests="p_t, p_wilcoxon...: the p-value of each --test",
                               effect="effect_size")
            lines.append(("with --by system: " if group[0] in by_system else "") + line)
    return "\n".join(lines)


def emit_pairs(frame: Rows, fmt: str, level: float = 0.95, rbp_p: float = 0.8,
               judged_k: int = 10) -> None:
    """Print a pair table (``irw compare``, ``irw pvalues``) as ``fmt``: in ``table``, the
    columns labelled for people (PAIR_LABELS) with a footer explaining them (:func:`pair_footer`);
    in the other formats, as :func:`emit` prints it."""
    frame = _plain(frame)
    if fmt != "table" or len(frame) == 0:
        emit(frame, fmt)
        return
    columns = _columns(frame)
    records = _records(frame)
    labelled = [{PAIR_LABELS.get(c, c): row[c] for c in columns} for row in records]
    sys.stdout.write(to_table(labelled) + "\n\n" + pair_footer(columns, level, rbp_p, judged_k) + "\n")


def _by_qrels(rows: list[tuple], several: bool):
    """Rows grouped by their first column (the qrels) in order of appearance, or one group."""
    if not several:
        yield None, rows
        return
    groups: dict[str, list] = {}
    for row in rows:
        groups.setdefault(row[0], []).append(row[1:])
    yield from groups.items()


def wide_means(means: list[tuple], labels: list[str], several: bool = False) -> list[dict]:
    """``irw eval``'s table of means: a row per run (per qrels when ``several``, a first
    column saying which) with n_topics and a column per measure of ``labels``. ``means``:
    ([qrels,] run_id, measure, value, n_topics) tuples."""
    out = []
    for qrels, rows in _by_qrels(means, several):
        n_topics: dict[str, int] = {}
        for run_id, _measure, _value, n in rows:
            n_topics[run_id] = max(n, n_topics.get(run_id, 0))
        for row in pivot([r[:3] for r in rows], ["run_id"], labels):
            wide = {"run_id": row["run_id"], "n_topics": n_topics[row["run_id"]],
                    **{k: v for k, v in row.items() if k != "run_id"}}
            out.append({"qrels": qrels, **wide} if several else wide)
    return out


def wide_scores(per: list[tuple], labels: list[str], several: bool = False,
                key: str = "run_id") -> list[dict]:
    """``irw eval --per-topic``'s table: a row per run (``key`` system: per system) and topic
    (per qrels when ``several``), a column per measure of ``labels``."""
    out = []
    for qrels, rows in _by_qrels(per, several):
        for row in pivot(rows, [key, "topic"], labels):
            out.append({"qrels": qrels, **row} if several else row)
    return out


def measure_listing(definitions, format_value=str) -> str:
    """``irw measures`` for people: each measure with its description, trec_eval and
    ir_measures names, paper and parameters (with their defaults and help)."""
    lines = []
    for m in definitions:
        names = [f"trec_eval: {m.trec_eval}"] if m.trec_eval else []
        names += [f"ir_measures: {m.ir_measures}"] if m.ir_measures else []
        lines.append(m.written + (f"    ({'; '.join(names)})" if names else ""))
        lines.append(f"    {m.description}" + (f" [{m.paper}]" if m.paper else ""))
        lines.append(f"    reads {m.reads} judgments" + (f"; equal to {m.reference}" if m.reference else ""))
        for p in m.params:
            default = format_value(p.default) if p.default is not None else "-"
            lines.append(f"    {p.name} = {default}: {p.help}")
    lines.append("Condensed (judged-only) forms: Name' or judged_only=True, e.g. AP', nDCG'@10.")
    return "\n".join(lines) + "\n"


def matrix_layout(cells: Rows) -> list[dict]:
    """``irw correlate --matrix``'s cells (statistic, measure_a, qrels_a, measure_b, qrels_b,
    value) as matrices for people: a row per statistic and row condition (numbered ``#`` and
    named), a column per column condition, headed by its number. A condition is named by its
    measure when there is one qrels, by its qrels when there is one measure, else
    ``measure | qrels``."""
    records = _records(_plain(cells))
    one_qrels = len({r["qrels_a"] for r in records}) == 1
    one_measure = len({r["measure_a"] for r in records}) == 1
    number = {c: k for k, c in enumerate(dict.fromkeys((r["measure_a"], r["qrels_a"]) for r in records), 1)}
    rows: dict[tuple, dict] = {}
    for r in records:
        ma, qa = r["measure_a"], r["qrels_a"]
        name = ma if one_qrels else qa if one_measure else f"{ma} | {qa}"
        row = rows.setdefault((r["statistic"], ma, qa),
                              {"statistic": r["statistic"], "#": number[(ma, qa)], "condition": name})
        row[str(number[(r["measure_b"], r["qrels_b"])])] = r["value"]
    statistics = {s: k for k, s in enumerate(dict.fromkeys(r["statistic"] for r in records))}
    return [rows[key] for key in sorted(rows, key=lambda k: (statistics[k[0]], number[k[1:]]))]


def lower_triangle(cells: Rows) -> list[dict]:
    """``irw correlate --matrix``'s cells in the layout of a paper's table: a row per
    condition but the first and a column per condition but the last, both in the order of
    the conditions and named as in :func:`matrix_layout`; the cell of row a and column b
    holds the statistic of a against b (a is tau_AP's reference) below the diagonal, and the
    diagonal and the upper triangle are blank (None). With several statistics, a first
    column says which, and each has its triangle."""
    records = _records(_plain(cells))
    conditions = list(dict.fromkeys((r["measure_a"], r["qrels_a"]) for r in records))
    one_qrels = len({q for _, q in conditions}) == 1
    one_measure = len({m for m, _ in conditions}) == 1
    name = {c: c[0] if one_qrels else c[1] if one_measure else f"{c[0]} | {c[1]}" for c in conditions}
    value = {(r["statistic"], r["measure_a"], r["qrels_a"], r["measure_b"], r["qrels_b"]): r["value"]
             for r in records}
    statistics = list(dict.fromkeys(r["statistic"] for r in records))
    out = []
    for statistic in statistics:
        for a, row_condition in enumerate(conditions[1:], 1):
            row = {"statistic": statistic} if len(statistics) > 1 else {}
            row["condition"] = name[row_condition]
            for b, column_condition in enumerate(conditions[:-1]):
                row[name[column_condition]] = (value[(statistic, *row_condition, *column_condition)]
                                               if b < a else None)
            out.append(row)
    return out


def pivot(per: list[tuple], index: list[str], labels: list[str]) -> list[dict]:
    """Wide rows from (*index, measure, value) tuples: one per distinct index (sorted), a
    column per measure of ``labels`` that occurs (in that order); a missing value is None."""
    rows: dict[tuple, dict] = {}
    for *key, measure, value in per:
        rows.setdefault(tuple(key), {})[measure] = value
    present = {m for values in rows.values() for m in values}
    columns = [m for m in labels if m in present]
    return [{**dict(zip(index, key)), **{m: values.get(m) for m in columns}}
            for key, values in sorted(rows.items())]


def trec_lines(per_topic: list[tuple], means: list[tuple], measure_order: list[str],
               include_topics: bool) -> str:
    """trec_eval's output: per topic (with -q) then ``all``; a ``runid`` line per run.
    ``per_topic``: (run_id, topic, measure, value); ``means``: (run_id, measure, value, n)."""
    order = {m: i for i, m in enumerate(measure_order)}
    topics: dict[str, dict[str, list]] = {}
    for run_id, topic, measure, value in per_topic:
        topics.setdefault(run_id, {}).setdefault(topic, []).append((measure, value))
    alls: dict[str, list] = {}
    for run_id, measure, value, _n in means:
        alls.setdefault(run_id, []).append((measure, value))
    out = []
    for run_id, run_means in alls.items():
        out.append(f"{'runid':<22}\tall\t{run_id}")
        if include_topics:
            for topic, values in sorted(topics.get(run_id, {}).items()):
                for measure, value in sorted(values, key=lambda r: order[r[0]]):
                    out.append(f"{measure:<22}\t{topic}\t{value:.4f}")
        for measure, value in sorted(run_means, key=lambda r: order[r[0]]):
            out.append(f"{measure:<22}\tall\t{value:.4f}")
    return "\n".join(out) + "\n"


def trec_eval_lines(lines, zscores: bool = False) -> str:
    """Lines as trec_eval prints them: ``(label, topic, kind, value)``, the label padded to
    22 characters and a tab before topic and value; a float as ``%6.4f``, a long as ``%ld``
    (truncated), a string as it is, ``quoted`` between single quotes (relstring). With
    ``zscores`` (-Z) the numbers are z-scores: their labels get a ``Z`` and every number is
    printed ``%6.4f``."""
    out = []
    for label, topic, kind, value in lines:
        if kind == "string":
            out.append(f"{label:<22}\t{topic}\t{value}\n")
        elif kind == "quoted":
            out.append(f"{label:<22}\t{topic}\t'{value}'\n")
        elif kind == "long" and not zscores:
            out.append(f"{label:<22}\t{topic}\t{int(value)}\n")
        else:
            out.append(f"{'Z' if zscores else ''}{label:<22}\t{topic}\t{_c_float(value)}\n")
    return "".join(out)


def _c_float(value: float) -> str:
    """``printf("%6.4f", value)`` as C prints it (Python's digits are the same; C writes
    infinities and NaN as inf, -inf, nan, -nan)."""
    if math.isnan(value):
        return f"{'-nan' if math.copysign(1.0, value) < 0 else 'nan':>6}"
    return f"{value:6.4f}"


class ProgressBar:
    """A progress bar on stderr: ``update(n)`` advances it by n steps of ``length``;
    ``label`` may change as the work goes through its phases. Use :func:`progress_bar`,
    which gives one only on a terminal."""

    WIDTH = 30

    def __init__(self, length: int, label: str):
        self.length, self.label, self.pos = max(length, 1), label, 0
        self._shown = ""

    def __enter__(self) -> "ProgressBar":
        self._draw()
        return self

    def __exit__(self, *exc) -> None:
        if self._shown:
            sys.stderr.write("\n")
            sys.stderr.flush()

    def update(self, n: int = 1) -> None:
        self.pos = min(self.pos + n, self.length)
        self._draw()

    def _draw(self) -> None:
        done = self.WIDTH * self.pos // self.length
        text = (f"\r{self.label}  [{'#' * done}{'-' * (self.WIDTH - done)}]"
                f"  {100 * self.pos // self.length:3d}%")
        if text != self._shown:
            sys.stderr.write(text.ljust(len(self._shown)))
            sys.stderr.flush()
            self._shown = text


def progress_bar(length: int, label: str):
    """A :class:`ProgressBar` as a context manager when stderr is a terminal and there is more
    than one step, else a context giving None."""
    import contextlib

    if length < 2 or not sys.stderr.isatty():
        return contextlib.nullcontext(None)
    return ProgressBar(length, label)


def iterate(items, label: str):
    """``items``, with a progress bar on a terminal."""
    items = list(items)
    with progress_bar(len(items), label) as bar:
        for item in items:
            yield item
            if bar is not None:
                bar.update(1)


class progress_callback:
    """A context giving a ``progress(done, total)`` callback that draws a bar on a terminal
    (None when not on one), for work that reports how far it is."""

    def __init__(self, label: str):
        self.label, self.bar = label, None

    def __enter__(self):
        if not sys.stderr.isatty():
            return None
        return self._update

    def _update(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = ProgressBar(total, self.label).__enter__()
        self.bar.update(done - self.bar.pos)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)
