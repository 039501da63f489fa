"""The measure catalogue and the parser for measure names.

Each measure is a small declarative entry -- name, description, parameters with defaults,
whether it takes a cut-off -- and its computation is one SQL file ``sql/measures/<Name>.sql``
of a fixed shape (see ``sql/evaluate.sql``). Names follow the ``ir_measures`` notation::

    Name(param=value,...)@k          e.g.  nDCG(discount=jk)@10, P(rel=2)@5, RBP(p=0.95)

``Name'`` is the condensed (judged-only) form, the same as ``judged_only=True``; trec_eval
names (``map``, ``P_10``, ``ndcg_cut_10``, ...) are accepted as aliases.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import numbers
from .errors import IrwError, shown

DISCOUNTS = ("log2p1", "jk")


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # int | float | bool | choice | gains
    default: object
    help: str
    choices: tuple = ()
    low: float | None = None  # the valid range of a number: [low, high], or open where
    high: float | None = None  # low_open / high_open say so
    low_open: bool = False
    high_open: bool = False
    always_shown: bool = False  # part of the canonical name even at its default
    why: str = ""  # said when a value is out of range
    excludes: str = ""  # the parameter this one sets instead (not both in one name)
    requires: str = ""  # the parameter without which this one means nothing

    def valid_range(self) -> str:
        if self.low is not None and self.high is not None:
            return (f"in {'(' if self.low_open else '['}{format_number(self.low)}, "
                    f"{format_number(self.high)}{')' if self.high_open else ']'}")
        if self.low is not None:
            return f"{'>' if self.low_open else '>='} {format_number(self.low)}"
        return f"{'<' if self.high_open else '<='} {format_number(self.high)}"

    def in_range(self, value: float) -> bool:
        return ((self.low is None or value > self.low or (value == self.low and not self.low_open))
                and (self.high is None or value < self.high
                     or (value == self.high and not self.high_open)))


MAX_INT = numbers.MAX_INT  # grades, thresholds and cut-offs are SQL INTEGERs

REL = Param("rel", "int", None, "relevance threshold: grade >= rel is relevant (default 1, or --rel-level); rel >= 0",
            low=0, why="grades below 0 mark documents in the pool but not assessed")
JUDGED = Param("judged_only", "bool", False, "condensed list: drop unjudged documents first (also Name')")
GAINS = Param("gains", "gains", None, "gain per grade, e.g. {1:1,2:3}; unlisted grades gain 0; grades >= 0, gains >= 0 (default: gain = grade for grade >= 1; binary if rel is given)")
DISCOUNT = Param("discount", "choice", "log2p1", "log2p1: 1/log2(i+1) (trec_eval); jk: 1/log_b(max(b,i)) (Jarvelin & Kekalainen, Sakai)", DISCOUNTS)
BASE = Param("base", "float", 2.0, "logarithm base of the discount; base > 1", low=1.0, low_open=True)
PERSIST = Param("p", "float", 0.8, "persistence phi; 0 < p < 1", low=0.0, high=1.0, low_open=True,
                high_open=True, always_shown=True)
DEPTH = Param("depth", "int", None, "set p by the residual at a depth instead: p = residual^(1/depth), the "
              "persistence whose weight beyond rank depth is residual (depth=10: p = 0.7943); "
              "depth >= 1", low=1, excludes="p")
RESIDUAL = Param("residual", "float", 0.1, "with depth: the weight beyond rank depth; 0 < residual < 1",
                 low=0.0, high=1.0, low_open=True, high_open=True, always_shown=True,
                 requires="depth")
BETA = Param("beta", "float", 1.0, "weight of gain against rank (0 gives AP); beta >= 0", low=0.0)


@dataclass(frozen=True)
class MeasureDef:
    """A measure of the catalogue: what it is and what its SQL (``sql/measures/<name>.sql``)
    needs -- the engine reads these properties and has no branch on a measure's name.

    ``graded``: it sums gains (the ``gains`` map, or grade as gain), not binary relevance;
    ``rel_binarizes``: for a graded measure, an explicit ``rel=t`` makes its gains binary at t
    (Q keeps its gains and uses ``rel`` for C(i) and R instead); ``cumulative_gain``: its SQL
    uses the running gain sums of the ranking and of the ideal ranking (Q's cg and cg_I);
    ``ideal``: it is normalized by the ideal ranking; ``paper``: where it is defined."""

    name: str
    description: str
    params: tuple[Param, ...]
    cutoff: bool = True
    trec_eval: str = ""
    graded: bool = False
    rel_binarizes: bool = True
    cumulative_gain: bool = False
    ideal: bool = False
    paper: str = ""

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    @property
    def takes_rel_level(self) -> bool:
        """Does ``--rel-level`` (trec_eval ``-l``) set its threshold? Binary measures, and
        graded ones whose ``rel`` is not a gain switch (Q); other graded measures keep their
        gains, as trec_eval's ndcg does."""
        return self.param("rel") is not None and (not self.graded or not self.rel_binarizes)


BINARY = (REL, JUDGED)
GRADED = (GAINS, DISCOUNT, BASE, REL, JUDGED)
TREC = "trec_eval"
JK = "Järvelin & Kekäläinen, TOIS 2002"
MOFFAT = "Moffat & Zobel, TOIS 2008"
SAKAI = "Sakai, IPM 2004 (Q); Sakai, SIGIR 2007 (condensed lists)"
WEBBER = "Webber, Moffat & Zobel, EVIA 2010"

CATALOGUE: dict[str, MeasureDef] = {
    m.name: m
    for m in [
        MeasureDef("P", "Precision: relevant retrieved in the top k, divided by k (no k: by the number retrieved)", BINARY, trec_eval="P_k", paper=TREC),
        MeasureDef("R", "Recall: relevant retrieved in the top k, divided by R", BINARY, trec_eval="recall_k", paper=TREC),
        MeasureDef("SP", "Sum of precisions: sum over relevant ranks i <= k of P@i", BINARY, paper=WEBBER),
        MeasureDef("AP", "Average precision, expanded normalization: SP@k / R", BINARY, trec_eval="map, map_cut_k", paper=TREC),
        MeasureDef("aAP", "Average precision, abbreviated normalization: SP@k / min(k, R)", BINARY, paper=WEBBER),
        MeasureDef("RPrec", "R-precision: P@R", BINARY, cutoff=False, trec_eval="Rprec", paper=TREC),
        MeasureDef("RR", "Reciprocal rank of the first relevant document within k (0 if none)", BINARY, trec_eval="recip_rank", paper=TREC),
        MeasureDef("Success", "1 if a relevant document is within the top k, else 0", BINARY, trec_eval="success_k", paper=TREC),
        MeasureDef("DCG", "Discounted cumulative gain: sum of gain x discount over ranks i <= k", GRADED, graded=True, paper=JK),
        MeasureDef("nDCG", "Normalized DCG: DCG@k / ideal DCG@k (ideal ranking truncated at k); no k: whole run and ideal ranking", GRADED, trec_eval="ndcg, ndcg_cut_k", graded=True, ideal=True, paper=JK),
        MeasureDef("enDCG", "DCG@k divided by the DCG of the whole ideal ranking (expanded normalization)", GRADED, graded=True, ideal=True, paper=WEBBER),
        MeasureDef("RBP", "Rank-biased precision (base score): (1-p) sum_{i<=k} (g_i/g_max) p^(i-1)", (PERSIST, DEPTH, RESIDUAL, GAINS, REL, JUDGED), trec_eval="rbp (p=0.9)", graded=True, paper=MOFFAT),
        MeasureDef("RBPres", "RBP residual: weight of unjudged ranks within min(k, n) plus the tail p^min(k, n)", (PERSIST, DEPTH, RESIDUAL, JUDGED), trec_eval="rbp_resid (p=0.9)", paper=MOFFAT),
        MeasureDef("nRBP", "Normalized RBP: RBP@k divided by the RBP@k of the ideal ranking", (PERSIST, DEPTH, RESIDUAL, GAINS, REL, JUDGED), graded=True, ideal=True, paper="Sakai & Kando, IRJ 2008"),
        MeasureDef("Q", "Q-measure: (1/R) sum_{relevant i<=k} (C(i) + beta cg(i)) / (i + beta cg_ideal(i))", (BETA, GAINS, REL, JUDGED), graded=True, rel_binarizes=False, cumulative_gain=True, ideal=True, paper=SAKAI),
        MeasureDef("Bpref", "Bpref: (1/R) sum over relevant retrieved of 1 - min(n_i, R)/min(R, N)", BINARY, trec_eval="bpref", paper="Buckley & Voorhees, SIGIR 2004"),
        MeasureDef("Judged", "Fraction of the top min(k, n) documents that is judged", (JUDGED,), paper=MOFFAT),
        MeasureDef("FirstUnjudged", "Rank of the first unjudged document (length + 1 if all are judged)", (JUDGED,), cutoff=False, paper="Moffat, Scholer & Yang, JDIQ 2018"),
        MeasureDef("NumRet", "Number of documents retrieved (within k)", (JUDGED,), trec_eval="num_ret", paper=TREC),
        MeasureDef("NumRel", "R: number of relevant documents for the topic", (REL,), cutoff=False, trec_eval="num_rel", paper=TREC),
        MeasureDef("NumRelRet", "Number of relevant documents retrieved (within k)", BINARY, trec_eval="num_rel_ret", paper=TREC),
    ]
}

# trec_eval measure names accepted as aliases: pattern -> (name, params, cutoff from group 1?)
_TREC_ALIASES = [
    (r"map", "AP", {}, False),
    (r"map_cut_(\d+)", "AP", {}, True),
    (r"P_(\d+)", "P", {}, True),
    (r"recall_(\d+)", "R", {}, True),
    (r"ndcg", "nDCG", {}, False),
    (r"ndcg_cut_(\d+)", "nDCG", {}, True),
    (r"recip_rank", "RR", {}, False),
    (r"Rprec", "RPrec", {}, False),
    (r"bpref", "Bpref", {}, False),
    (r"success_(\d+)", "Success", {}, True),
    (r"num_ret", "NumRet", {}, False),
    (r"num_rel", "NumRel", {}, False),
    (r"num_rel_ret", "NumRelRet", {}, False),
    (r"rbp", "RBP", {"p": 0.9}, False),
    (r"rbp_resid", "RBPres", {"p": 0.9}, False),
]


@dataclass(frozen=True)
class Measure:
    """A parsed measure: definition, explicit parameter values and cut-off."""

    name: str
    params: tuple = field(default_factory=tuple)  # sorted (name, value) pairs, defaults dropped
    cutoff: int | None = None

    @property
    def definition(self) -> MeasureDef:
        return CATALOGUE[self.name]

    def get(self, name: str):
        for key, value in self.params:
            if key == name:
                return value
        if name == "p" and self.has("depth"):  # RBP's persistence set by its residual at a depth
            return rbp_persistence(self.get("residual"), self.get("depth"))
        param = self.definition.param(name)
        return param.default if param is not None else None

    def has(self, name: str) -> bool:
        return any(key == name for key, _ in self.params)

    @property
    def judged_only(self) -> bool:
        return bool(self.get("judged_only"))

    def with_params(self, **updates) -> "Measure":
        params = dict(self.params)
        for key, value in updates.items():
            param = self.definition.param(key)
            if param is None:
                continue
            if value is None or (value == param.default and not param.always_shown):
                params.pop(key, None)
            else:
                params[key] = value
        return Measure(self.name, tuple(sorted(params.items())), self.cutoff)

    def __str__(self) -> str:
        """Canonical name: Name['](sorted non-default params)[@k]; condensed as Name'."""
        text = self.name + ("'" if self.judged_only else "")
        shown = [(k, v) for k, v in self.params if k != "judged_only"]
        if shown:
            text += "(" + ",".join(f"{k}={format_value(v)}" for k, v in shown) + ")"
        if self.cutoff is not None:
            text += f"@{self.cutoff}"
        return text


def format_value(value) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, tuple):  # gains
        return "{" + ",".join(f"{g}:{format_number(v)}" for g, v in value) + "}"
    return str(value)


def format_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


_integer = numbers.integer
_decimal = numbers.decimal


_NAME_RE = re.compile(
    r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P<prime1>')?(?:\((?P<params>.*)\))?(?P<prime2>')?(?:@(?P<k>[^@]*))?$"
)


def _valid_names() -> str:
    return ", ".join(CATALOGUE)


def parse(text: str) -> Measure:
    """Parse a measure name; raise :class:`IrwError` listing what is valid."""
    raw = str(text).strip()
    for pattern, name, params, has_k in _TREC_ALIASES:
        m = re.fullmatch(pattern, raw)
        if m:
            return parse(name + ("@" + m.group(1) if has_k else "")).with_params(**params)
    whole = shown(raw)
    m = _NAME_RE.match(raw)
    if not m:
        raise IrwError(
            f"cannot parse measure {whole}: expected Name(param=value,...)@k, e.g. "
            f"nDCG(discount=jk)@10; measures: {_valid_names()}"
        )
    name = m.group("name")
    if name not in CATALOGUE:
        lowered = {n.lower(): n for n in CATALOGUE}
        hint = f" (did you mean {lowered[name.lower()]}?)" if name.lower() in lowered else ""
        raise IrwError(f"unknown measure {shown(name)} in {whole}{hint}; measures: {_valid_names()}")
    if m.group("prime1") and m.group("prime2"):
        raise IrwError(f"the condensed mark ' is given twice in {whole}")
    definition = CATALOGUE[name]
    values: dict[str, object] = {}
    for item in _split_params(m.group("params") or "", raw):
        key, _, value = item.partition("=")
        key = key.strip()
        param = definition.param(key)
        if param is None or not _:
            valid = ", ".join(f"{p.name} (default {p.default})" for p in definition.params)
            raise IrwError(f"measure {name} has no parameter {shown(item.strip())} in {whole}; parameters: {valid}")
        if key in values:
            raise IrwError(f"parameter {key} is given twice in {whole}")
        values[key] = _convert(param, value.strip(), raw)
    if m.group("prime1") or m.group("prime2"):
        if "judged_only" in values:
            raise IrwError(f"the condensed form is given twice in {whole} (' and judged_only): "
                           "give one")
        values["judged_only"] = True
    cutoff = None
    if m.group("k") is not None:
        if not definition.cutoff:
            raise IrwError(f"measure {name} takes no cut-off (@k) in {whole}")
        cutoff = _integer(m.group("k"))
        if cutoff is None or not 1 <= cutoff <= MAX_INT:
            raise IrwError(f"cut-off @{shown(m.group('k'), 20)[1:-1]} in {whole} must be an integer from 1 to {MAX_INT}")
    for param in definition.params:
        if param.excludes and param.name in values and param.excludes in values:
            raise IrwError(f"give {param.excludes} or {param.name} in {whole}, not both "
                           f"({param.name} sets {param.excludes})")
        if param.requires and param.name in values and param.requires not in values:
            raise IrwError(f"parameter {param.name} of {whole} means nothing without {param.requires}")
    for param in definition.params:
        excluded = any(other.excludes == param.name and other.name in values
                       for other in definition.params)
        if (param.always_shown and param.name not in values and not excluded
                and (not param.requires or param.requires in values)):
            values[param.name] = param.default
    return Measure(name, (), cutoff).with_params(**values)


def _split_params(text: str, whole: str) -> list[str]:
    items, depth, current = [], 0, []
    for ch in text:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            items.append("".join(current))
            current = []
        else:
            current.append(ch)
    if depth != 0:
        raise IrwError(f"unbalanced braces in {shown(whole)}")
    if "".join(current).strip():
        items.append("".join(current))
    return [i for i in items if i.strip()]


def _convert(param: Param, value: str, whole: str):
    where = f"parameter {param.name} of {shown(whole)}"
    if param.kind in ("int", "float"):
        number = _integer(value) if param.kind == "int" else _decimal(value)
        if number is None:
            kind = "an integer" if param.kind == "int" else "a finite decimal number (e.g. 0.95)"
            raise IrwError(f"{where} must be {kind}, got {shown(value, 30)}")
        if param.kind == "int" and number > MAX_INT:
            raise IrwError(f"{where} must be at most {MAX_INT}, got {shown(value, 30)[1:-1]}")
        if not param.in_range(number):
            why = f" ({param.why})" if param.why else ""
            raise IrwError(f"{where} must be {param.valid_range()}{why}, got {shown(value, 30)[1:-1]}")
        return number
    if param.kind == "bool":
        if value.lower() in ("true", "1", "yes"):
            return True
        if value.lower() in ("false", "0", "no"):
            return False
        raise IrwError(f"{where} must be True or False, got {value!r}")
    if param.kind == "choice":
        if value not in param.choices:
            raise IrwError(f"{where} must be one of {', '.join(param.choices)}, got {value!r}")
        return value
    if param.kind == "gains":
        return _gains(value, where)
    raise AssertionError(param.kind)


def _gains(value: str, where: str) -> tuple:
    """A gain map {grade:gain,...}: grades integers >= 0, gains finite and >= 0, one > 0."""
    body = value.strip()
    if not (body.startswith("{") and body.endswith("}")):
        raise IrwError(f"{where} must look like {{0:0,1:1,2:3}}, got {value!r}")
    gains: dict[int, float] = {}
    for item in body[1:-1].split(","):
        if not item.strip():
            continue
        grade_text, sep, gain_text = item.partition(":")
        grade, gain = _integer(grade_text), _decimal(gain_text)
        if not sep or grade is None or gain is None:
            raise IrwError(f"{where}: bad entry {item.strip()!r} (want grade:gain, an integer "
                           "and a finite number)")
        if not 0 <= grade <= MAX_INT:
            raise IrwError(f"{where}: grade {grade} must be >= 0 (grades below 0 mark documents "
                           "in the pool but not assessed, which gain nothing)")
        if gain < 0:
            raise IrwError(f"{where}: the gain of grade {grade} must be >= 0, got {gain_text.strip()}")
        if grade in gains:
            raise IrwError(f"{where}: grade {grade} is given twice")
        gains[grade] = gain
    if not gains or max(gains.values()) <= 0:
        raise IrwError(f"{where} needs at least one positive gain")
    return tuple(sorted(gains.items()))


def parse_all(texts, rel_level: int | None = None) -> list[Measure]:
    """Parse several names; ``rel_level`` (trec_eval ``-l``) sets ``rel`` where not given.

    Gain-based measures keep graded gains under ``rel_level`` (as trec_eval's ndcg does);
    only an explicit ``rel=`` makes them binary.
    """
    if rel_level is not None and not REL.in_range(rel_level):
        raise IrwError(f"--rel-level must be {REL.valid_range()} ({REL.why}), got {rel_level}")
    out: list[Measure] = []
    for text in texts:
        for piece in _split_cli(text):
            measure = parse(piece)
            if rel_level is not None and not measure.has("rel") and measure.definition.takes_rel_level:
                measure = measure.with_params(rel=rel_level)
            if measure not in out:
                out.append(measure)
    if not out:
        raise IrwError("no measure given: use -m NAME (see `irw measures`)")
    return out


def _split_cli(text: str) -> list[str]:
    """``-m 'AP,P@10'`` is allowed: split on commas outside parentheses."""
    items, depth, current = [], 0, []
    for ch in text:
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        if ch == "," and depth == 0:
            items.append("".join(current))
            current = []
        else:
            current.append(ch)
    items.append("".join(current))
    return [i.strip() for i in items if i.strip()]


def parse_condition(text: str) -> tuple[Measure, str]:
    """A condition of a correlation matrix, ``MEASURE:QRELS`` -- a measure name of the
    grammar above at a qrels, e.g. ``AP@100:trec8-d10`` or ``nDCG(gains={1:1,2:3})@10:trec8``:
    split at the first ``:`` outside parentheses and braces (a measure name has none
    elsewhere; a qrels name may hold one)."""
    raw = str(text).strip()
    depth = 0
    for at, ch in enumerate(raw):
        if ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        elif ch == ":" and depth == 0:
            measure, qrels = raw[:at].strip(), raw[at + 1:].strip()
            if not measure or not qrels:
                break
            return parse(measure), qrels
    raise IrwError(f"cannot read the condition {shown(raw)}: expected MEASURE:QRELS, e.g. "
                   "AP@100:trec8-d10 (a measure at a qrels)")


def rbp_persistence(residual: float, depth: int) -> float:
    """The phi whose tail weight beyond ``depth`` equals ``residual``: phi = r^(1/k)."""
    if not 0 < residual < 1 or depth < 1:
        raise IrwError("residual must be in (0, 1) and depth >= 1")
    return residual ** (1.0 / depth)


LISTING_COLUMNS = ("name", "description", "parameters", "trec_eval", "graded", "ideal", "paper")


def listing_rows() -> list[tuple]:
    """``irw measures``: each measure as it is written (``AP@k``), its description, its
    parameters with their defaults, its trec_eval name, graded, ideal, paper."""
    return [(m.name + ("@k" if m.cutoff else ""), m.description,
             ", ".join(f"{p.name}={format_value(p.default) if p.default is not None else '-'}"
                       for p in m.params),
             m.trec_eval, m.graded, m.ideal, m.paper) for m in CATALOGUE.values()]


CATALOGUE_COLUMNS = ("name", "description", "parameters", "cutoff", "trec_eval", "graded",
                     "ideal", "paper")


def catalogue_rows() -> list[tuple]:
    """The rows of the table ``measures`` (CATALOGUE_COLUMNS), one per catalogue entry."""
    rows = []
    for m in CATALOGUE.values():
        params = "; ".join(f"{p.name}={format_value(p.default) if p.default is not None else '-'}: {p.help}" for p in m.params)
        rows.append((m.name, m.description, params, m.cutoff, m.trec_eval or None, m.graded,
                     m.ideal, m.paper or None))
    return rows
