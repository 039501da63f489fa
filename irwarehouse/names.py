"""What the names users give may be, so that every name can be addressed and none can mean
two things.

Commands address runs by run specs (``--runs all,team:alpha,bm25``: irwarehouse.runsets) and
qrels by lists of names and glob patterns (``--qrels 'trec8-lo-*,trec8'``). A run id that is a
word of the spec grammar (``all``, ``pooled``), starts like one of its items (``team:``,
``deeply-judged``, ``id:``, ``@``) or holds a comma could not be told from it -- ``irw runs
drop pooled`` would drop the pooled runs and keep the run named ``pooled``. So such names
are refused where they enter the warehouse (loads, metadata, plain SQL), with the rule that
was broken. ``id:NAME`` addresses one run by its id whatever it is (a warehouse written by an
older irw may hold such runs).
"""

from __future__ import annotations

import re

from .errors import IrwError, shown

# The words and prefixes of the run spec grammar (irwarehouse.runsets).
SPEC_WORDS = ("all", "pooled")
SPEC_PREFIXES = ("team:", "deeply-judged", "id:", "@")
PATTERN_CHARS = "*?["  # glob patterns in qrels lists
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def _common(name, what: str) -> str | None:
    if name is None or not str(name):
        return f"the {what} is empty"
    text = str(name)
    if text != text.strip():
        return f"the {what} {shown(text)} begins or ends with white space"
    bad = _CONTROL.search(text)
    if bad:
        return f"the {what} {shown(text)} holds the control character 0x{ord(bad.group()):02x}"
    return None


def run_id_problem(run_id) -> str | None:
    """Why ``run_id`` cannot be a run's id (None: it can)."""
    problem = _common(run_id, "run id")
    if problem:
        return problem
    text = str(run_id)
    if text in SPEC_WORDS or any(text.startswith(p) for p in SPEC_PREFIXES):
        return (f"run id {shown(text)} could not be told from the run spec word "
                f"{next(w for w in (*SPEC_WORDS, *SPEC_PREFIXES) if text == w or text.startswith(w))!r} "
                "(run specs: all, pooled, team:NAME, deeply-judged[:M], @FILE, id:RUN): rename the run")
    if "," in text:
        return (f"run id {shown(text)} holds a comma, which separates the items of a run spec: "
                "rename the run")
    return None


def team_problem(team) -> str | None:
    """Why ``team`` cannot be a team's name (None: it can; no team at all is fine)."""
    if team is None or str(team) == "":
        return None
    problem = _common(team, "team name")
    if problem:
        return problem
    if "," in str(team):
        return (f"team name {shown(team)} holds a comma, which separates the items of a run spec "
                "(team:NAME): rename the team")
    return None


def system_problem(system) -> str | None:
    """Why ``system`` cannot be a system's name (None: it can; no system at all is fine: the
    run is its own system)."""
    if system is None or str(system) == "":
        return None
    return _common(system, "system name")


def qrels_problem(name) -> str | None:
    """Why ``name`` cannot be a qrels's name (None: it can)."""
    problem = _common(name, "qrels name")
    if problem:
        return problem
    text = str(name)
    bad = [c for c in ("," + PATTERN_CHARS) if c in text]
    if bad:
        return (f"qrels name {shown(text)} holds {bad[0]!r}, which lists of qrels and their "
                "patterns use (--qrels 'a,b-*'): choose another name")
    return None


def collection_problem(name) -> str | None:
    """Why ``name`` cannot be a test collection's name (None: it can)."""
    return _common(name, "collection name")


def check(problem: str | None) -> None:
    """Raise the problem found (if any) as an IrwError."""
    if problem:
        raise IrwError(problem)


# Measure names people type that are not the catalogue's (irwarehouse.measures): MS MARCO's
# MRR (RR, the mean is the aggregate), the long names, and the words that could mean two
# entries (an error names both). Any spelling of a catalogue name that differs only in
# letter case (ndcg, Recall's R aside) resolves to that name.
MEASURE_SPELLINGS = {
    "mrr": ("RR",),
    "recall": ("R",),
    "precision": ("P",),
    "ndcg_cut": ("nDCG",),
    "hits": ("Success", "NumRelRet"),
}


def measure_spelling(name: str, catalogue) -> tuple[str, ...]:
    """The catalogue names (of ``catalogue``) the measure name ``name`` may stand for: one
    where it is unambiguous, two or more where it could mean either, none if it means none."""
    key = str(name).lower()
    if key in MEASURE_SPELLINGS:
        return MEASURE_SPELLINGS[key]
    return tuple(n for n in catalogue if n.lower() == key)
