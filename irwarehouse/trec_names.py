"""trec_eval 10.0's measure arguments: what one ``-m`` argument names, as trec_eval parses it,
and the order trec_eval prints its measures in.

The measures themselves are declared once, in irwarehouse.measures.TREC_FAMILIES (each
family's catalogue measure, parameters, aggregate and print format, in trec_eval's order);
this module reads trec_eval's argument syntax (its trec_eval.c and meas_init.c) over that
table:

    name                 the family at its default parameters ('P': P_5 ... P_1000)
    name.params          'P.5,7,3' (integer cut-offs, sorted; > 0, no duplicates),
                         'iprec_at_recall..10,.20' (decimal cut-offs, printed %3.2f),
                         'ndcg.1=3,2=9,4=4.5' (name=value pairs: gains; rbp's p),
                         'utility.2,-1,0,0', 'set_F.0.5', '11pt_avg.0.2,0.5,0.8', 'relstring.20'
    nickname             'official', 'set', 'all_trec': lists of families

Numbers are read as C's atol and atof read them (a leading number, the rest ignored). A
family given several times with parameters takes the first ``-m`` that gave it parameters,
as trec_eval does (:func:`trec_eval_order`). What irw cannot mean exactly is refused with an
IrwError: the measures of preference and judgment-group files, gains for negative grades,
negative gains, gains for rbp, 11pt_avg levels out of order, and parameters outside irw's
ranges (an rbp p outside (0, 1)).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import IrwError, shown
from .measures import (CATALOGUE, MAX_INT, TREC_FAMILIES, TREC_NICKNAMES, TREC_UNSUPPORTED, Measure,
                       TrecFamily, parse)

_FAMILIES = {f.name: f for f in TREC_FAMILIES}
_ORDER = {f.name: i for i, f in enumerate(TREC_FAMILIES)}


@dataclass(frozen=True)
class TrecEvalMeasure:
    """One value trec_eval prints per topic and/or in its ``all`` line."""

    family: str             # trec_eval's measure name: 'P', 'ndcg_cut', 'gm_map', 'runid', ...
    label: str              # the name trec_eval prints: 'P_5', 'iprec_at_recall_0.10',
                            # 'utility_2,-1,0,0', 'ndcg_1=3,2=9,4=4.5', 'relstring_20'
    measure: Measure | None  # the catalogue measure giving the per-topic value; None for
                             # runid, relstring and num_q (the command computes those)
    aggregate: str          # the `all` line: 'mean', 'sum', 'gm' (exp(mean(log(max(x, 1e-5))))),
                            # 'count' (num_q: the topics), 'none' (runid prints the run id)
    value_kind: str         # 'float' (%6.4f), 'long' (%ld), 'string'
    per_query: bool = True  # printed per topic with -q (gm_map, gm_bpref, num_q, runid: not)
    summary: bool = True    # printed in the `all` line (relstring: not)
    params: str | None = None  # the parameter text given ('5,7,3'); None: the defaults
    length: int | None = None  # relstring: the ranks shown


# ---------------------------------------------------------------- C's number reading

_LONG = re.compile(r"\s*([+-]?\d+)")
_DOUBLE = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf(?:inity)?|nan))",
                     re.IGNORECASE)


def atol(text: str) -> int:
    """C's atol: the leading integer of ``text`` (0 if none)."""
    m = _LONG.match(text)
    return int(m.group(1)) if m else 0


def atof(text: str) -> float:
    """C's atof: the leading decimal number of ``text`` (0.0 if none)."""
    m = _DOUBLE.match(text)
    return float(m.group(1)) if m else 0.0


# ---------------------------------------------------------------- the -m argument

def trec_eval_measures(spec: str) -> list[TrecEvalMeasure]:
    """The values one trec_eval ``-m`` argument asks for, in the family's order (its cut-offs
    ascending), as trec_eval 10.0 parses it. An IrwError for a name trec_eval does not know
    ("illegal measure") or irw cannot compute as trec_eval does."""
    text = str(spec)
    name, dot, params = text.partition(".")
    if dot and params == "":
        raise IrwError(f"trec_eval measure {shown(text)}: nothing after the '.' (give parameters, "
                       "e.g. P.5,10, or none)")
    if name in TREC_NICKNAMES:  # a nickname's parameters apply to no measure
        return [m for family in TREC_NICKNAMES[name] for m in _family(_FAMILIES[family], None)]
    if name in TREC_UNSUPPORTED:
        raise IrwError(f"trec_eval measure {shown(name)} {TREC_UNSUPPORTED[name]}")
    if name not in _FAMILIES:
        known = ", ".join([*TREC_NICKNAMES, *_FAMILIES])
        raise IrwError(f"illegal trec_eval measure {shown(text)}; measures: {known}")
    return _family(_FAMILIES[name], params if dot else None)


def trec_eval_order(measures: list[TrecEvalMeasure]) -> list[TrecEvalMeasure]:
    """``measures`` (of several ``-m`` arguments, in the order given) as trec_eval prints
    them: by its measure table; a family given several times once, with the parameters of
    the first argument that gave it parameters (trec_eval reads a family's parameters from
    its first ``-m name.params``), else at its defaults."""
    chosen: dict[str, str | None] = {}
    for m in measures:
        if m.family not in chosen or (chosen[m.family] is None and m.params is not None):
            chosen[m.family] = m.params
    out, seen = [], set()
    for m in sorted(measures, key=lambda m: _ORDER[m.family]):  # stable: a family's own order
        if m.params == chosen[m.family] and (m.family, m.label) not in seen:
            seen.add((m.family, m.label))
            out.append(m)
    return out


def _family(f: TrecFamily, params: str | None) -> list[TrecEvalMeasure]:
    where = f"trec_eval measure {shown(f.name + ('.' + params if params is not None else ''))}"
    fixed = dict(f.fixed)

    def one(label: str, measure: Measure | None, length: int | None = None) -> TrecEvalMeasure:
        return TrecEvalMeasure(f.name, label, measure, f.aggregate, f.value_kind, f.per_query,
                               f.summary, params, length)

    def measure_of(cutoff=None, **values) -> Measure:
        base = Measure(f.measure, (), cutoff).with_params(**fixed)
        return base.with_params(**values) if values else base

    if f.takes == "cutoffs":
        cuts = sorted(atol(p) for p in params.split(",")) if params is not None else list(f.defaults)
        if cuts[0] <= 0:
            raise IrwError(f"{where}: cut-offs must be positive (trec_eval: negative cutoff detected)")
        if len(set(cuts)) < len(cuts):
            raise IrwError(f"{where}: a cut-off is given twice (trec_eval: duplicate cutoffs detected)")
        if cuts[-1] > MAX_INT:
            raise IrwError(f"{where}: cut-offs must be at most {MAX_INT}")
        return [one(f"{f.name}_{k}", measure_of(k)) for k in cuts]
    if f.takes == "levels":
        levels = sorted(atof(p) for p in params.split(",")) if params is not None else list(f.defaults)
        if len(set(levels)) < len(levels):
            raise IrwError(f"{where}: a cut-off is given twice (trec_eval: duplicate cutoffs detected)")
        _finite(levels, where)
        out = []
        for v in levels:
            # below 0 a level means what 0 means: no relevant document is needed
            value = max(v, 0.0)
            measure = (measure_of(**{f.level_param: value}) if f.level_param else measure_of(value))
            out.append(one(f"{f.name}_{_c_double(v)}", measure))
        return out
    label = f.name if params is None else f"{f.name}_{params}"
    if f.takes == "values":
        values = [atof(p) for p in params.split(",")] if params is not None else list(f.defaults)
        _finite(values, where)
        if not f.measure:  # relstring: its length
            return [one(label, None, max(int(values[0]), 0))]
        given: dict[str, object] = {}
        if f.value_params[0].startswith("*"):
            if values != sorted(values):
                raise IrwError(f"{where}: give the levels in increasing order (trec_eval's average "
                               "depends on their order otherwise)")
            if min(values) < 0:
                raise IrwError(f"{where}: levels must be >= 0")
            given[f.value_params[0][1:]] = tuple(values)
        else:
            if len(f.value_params) > 1 and len(values) != len(f.value_params):
                raise IrwError(f"{where}: needs exactly {len(f.value_params)} values "
                               f"({', '.join(f.value_params)}); trec_eval: improper number of coefficients")
            given.update(zip(f.value_params, values))
        return [one(label, _checked(f, given, where))]
    if f.takes == "pairs":
        given = dict(fixed)
        if params is not None:
            gains: dict[int, float] = {}
            for key, value in _pairs(params, where):
                if re.fullmatch(r"[+-]?\d+", key):
                    level = int(key)
                    if level < 0:
                        raise IrwError(f"{where}: irw gives no gain to grades below 0 (unjudged)")
                    if value < 0:
                        raise IrwError(f"{where}: the gain of grade {level} must be >= 0 in irw")
                    gains.setdefault(level, value)  # trec_eval uses the first gain of a grade
                elif key in f.value_params:
                    given[key] = value
            if gains:
                if CATALOGUE[f.measure].param("unlisted") is None:
                    if CATALOGUE[f.measure].param("gains") is not None:
                        raise IrwError(f"{where}: irw reads only p for {f.name} (its gains normalize "
                                       "by the topic's grades)")
                else:
                    if max(gains.values()) <= 0:
                        raise IrwError(f"{where}: at least one gain must be > 0 in irw")
                    given["gains"] = tuple(sorted(gains.items()))
                    given["unlisted"] = "grade"
        return [one(label, _checked(f, given, where))]
    return [one(f.name, measure_of() if f.measure else None)]


def _checked(f: TrecFamily, values: dict, where: str) -> Measure:
    """The family's measure with ``values``, each checked against its declared range."""
    definition = CATALOGUE[f.measure]
    for key, value in values.items():
        param = definition.param(key)
        if param.kind in ("int", "float") and not param.in_range(value):
            raise IrwError(f"{where}: {key} must be {param.valid_range()} in irw, got {value!r}")
    return Measure(f.measure, ()).with_params(**values)


def _finite(values, where: str) -> None:
    if any(v != v or v in (float("inf"), float("-inf")) for v in values):
        raise IrwError(f"{where}: parameters must be finite numbers")


def _pairs(text: str, where: str) -> list[tuple[str, float]]:
    """``name=value,...`` as trec_eval's get_param_pairs reads it (a malformed list is an
    error: two commas, two '=' in a row, or an item without '=')."""
    last = ","
    for ch in text:
        if ch == ",":
            if last == ",":
                break
            last = ","
        elif ch == "=":
            if last == "=":
                last = ","
                break
            last = "="
    if last != "=":
        raise IrwError(f"{where}: malformed pair parameters (want name=value,...)")
    return [(key, atof(value)) for key, _, value in (item.partition("=") for item in text.split(","))]


def _c_double(value: float) -> str:
    """A decimal cut-off as trec_eval prints it in a label (%3.2f)."""
    return f"{value:3.2f}"


def relstring_char(grade: int | None) -> str:
    """The character trec_eval's relstring shows for a retrieved document: its grade 0-9,
    '>' above 9, '-' not in the qrels (None), '.' in the qrels with a grade below 0 (in the
    pool, not assessed: trec_eval reads every negative grade so)."""
    if grade is None:
        return "-"
    if grade < 0:
        return "."
    return ">" if grade > 9 else str(grade)
