"""Naming a bad line: the checks of sql/load.sql found something wrong, and the files are
read again in Python to name the file, the line and the problem."""

from __future__ import annotations

from ...judgment_kinds import GRADED, KINDS
from .frames import Frame, _frames
from .reading import _INTEGER, _lines, _number_problem, looks_like_qrels

# Runs

def _run_line_problem(fields: list[str], extra_ok: bool) -> str | None:
    if len(fields) < 6 or (len(fields) > 6 and not extra_ok):
        return (f"expected 6 fields (topic Q0 docno rank score run_id), found {len(fields)}"
                + ("" if len(fields) < 6 else "; use --ignore-extra-fields to ignore trailing text as trec_eval does"))
    return (_number_problem(fields[3], "rank", 4, "BIGINT")
            or _number_problem(fields[4], "score", 5, "DOUBLE"))


def _locate_problem(files: list[str], line_problem, key, twice, encoding: str = "utf-8",
                    hint=None) -> str:
    """The first bad line of ``files``: ``line_problem(fields)`` names what is wrong with a
    line; a repeated ``key(fields)`` is reported by ``twice(fields)``. Empty if none found.
    A DataFrame names its own first bad row (:meth:`Frame.problem`). ``hint(path, fields)``:
    what to add to a bad line's problem ('' for nothing)."""
    for frame in _frames(files):
        found = frame.problem()
        if found:
            return found
    files = [f for f in files if not isinstance(f, Frame)]
    seen: dict[tuple, tuple[str, int]] = {}
    for path in files:
        for number, fields in _lines(path, encoding):
            problem = line_problem(fields)
            if problem:
                return f"{path}, line {number}: {problem}" + (hint(path, fields) if hint else "")
            k = key(fields)
            if k in seen:
                first_path, first_line = seen[k]
                return f"{path}, line {number}: {twice(fields)} (first at {first_path}, line {first_line})"
            seen[k] = (path, number)
    return ""


def _locate_run_problem(files: list[str], extra_ok: bool, encoding: str = "utf-8") -> str:
    return _locate_problem(
        files, lambda f: _run_line_problem(f, extra_ok), lambda f: (f[5], f[0], f[2]),
        lambda f: f"document {f[2]} appears twice for run {f[5]}, topic {f[0]}", encoding,
        lambda path, f: (f": {path} looks like a qrels file ({QRELS_FIELDS}); load it with irw load qrels"
                         if len(f) == 4 and looks_like_qrels(path, encoding) else ""))


QRELS_FIELDS = "4 fields: topic, iteration, docno, grade"


# Qrels

def _qrels_line_problem(fields: list[str], kind=KINDS[GRADED]) -> str | None:
    """What is wrong with a line of a qrels file of judgment kind ``kind`` (None: nothing)."""
    if len(fields) != len(kind.fields):
        return f"expected {len(kind.fields)} fields ({kind.layout}), found {len(fields)}"
    for index, field in kind.numbers:
        value = fields[index - 1]
        problem = _number_problem(value, field.what, index, field.type)
        prefix = _INTEGER.match(value)
        if (problem and field.type == "INTEGER" and prefix and not _INTEGER.fullmatch(value)
                and len(prefix.group()) <= 25):
            problem += f" (trec_eval would read it as {int(prefix.group())})"
        if problem:
            return problem
    return None


def _locate_qrels_problem(files: list[str], encoding: str = "utf-8", kind=KINDS[GRADED]) -> str:
    at = {f.name: i for i, f in enumerate(kind.fields) if f.name}
    key = [at[name] for name in kind.key]
    named = [name for name in kind.key if name not in ("topic", "docno")]

    def twice(f: list[str]) -> str:
        within = "".join(f", {name} {f[at[name]]}" for name in named)
        return f"document {f[at['docno']]} is judged twice for topic {f[at['topic']]}{within}"

    return _locate_problem(files, lambda f: _qrels_line_problem(f, kind),
                           lambda f: tuple(f[i] for i in key), twice, encoding)
