"""The measures' SQL: the context each ``sql/measures/<Name>.sql`` file sees as ``m``, and
the engine's queries rendered from it.

Python only builds the template context -- SQL fragments derived from validated measure
parameters (numbers and fixed keywords, never user text) and from the properties the
measure declares in the catalogue (irwarehouse.measures: graded, rel_binarizes,
cumulative_gain, needs); no branch here depends on a measure's name. Every parameter the
engine does not interpret itself (measures.ENGINE_PARAMS) reaches the SQL as ``m.<name>``,
built from its declaration. The same context, written over a table macro's parameters
(:class:`_MacroContext`), renders the measure macros of the schema ``measure``, whose
arguments are the declared parameters: one definition of every measure for the engine and
for SQL users. The values and hooks a measure's SQL may use are listed in sql/evaluate.sql.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import sql
from ..errors import IrwError
from ..measure_def import DUCKDB_ONLY
from ..measures import CATALOGUE, Measure, macro_arguments  # noqa: F401 (the macros' arguments)
from ..options import TiePolicy

TOPIC_POLICIES = ("qrels", "run", "all")
# The engine of the measures that read another kind of judgments than the graded rows of table
# qrels (MeasureDef.reads): a template of its own, whose named hooks it documents.
KIND_ENGINES = {"prefs": "evaluate_prefs.sql"}


def _key(value: int) -> str:
    return str(value).replace("-", "m")


@dataclass
class _Threshold:
    value: str  # SQL: the relevance threshold (a number, or an expression in a macro)
    window: bool
    key: str

    @property
    def R(self):
        return f"R_{self.key}"

    @property
    def N(self):
        return f"N_{self.key}"

    @property
    def c_rel(self):
        return f"c_rel_{self.key}" if self.window else "c_rel"

    @property
    def c_nonrel(self):
        return f"c_nonrel_{self.key}" if self.window else "c_nonrel"


def _threshold(value: int) -> _Threshold:
    return _Threshold(sql.sql_number(value), window=value != 1, key="t" + _key(value))


@dataclass
class _GainSet:
    key: str
    expr: str
    gmax: str  # SQL: the largest gain of the map (per topic for the default map)
    window: bool = False

    @property
    def cg(self):
        return "cg" if self.key == "g" else f"cg_{self.key}"


DISCOUNT_SQL = {  # the rank discount at position `pos` for log base `b` (SQL expressions)
    "log2p1": "(ln({b}) / ln({pos} + 1))",
    "jk": "(ln({b}) / ln(greatest({b}, {pos})))",
}


class _MeasureContext:
    """What a measure's SQL file sees as ``m``: SQL fragments for one measure. The engine
    renders them from a parsed measure's values; a measure macro (:class:`_MacroContext`)
    from the macro's parameters."""

    def __init__(self, index: int, measure: Measure, threshold: _Threshold, gainset: _GainSet | None,
                 dialect: str = "duckdb"):
        self.id = f"m{index}"
        self.label = str(measure)
        self.name = measure.name
        self.module = sql.module(f"measures/{measure.name}.sql", dialect)
        self.judged_only = measure.judged_only
        self.pos = "crank" if self.judged_only else "rank"
        self.n = "coalesce(n_judged, 0)" if self.judged_only else "n"
        k = measure.cutoff
        self.k = sql.sql_number(k) if k is not None else None
        ranked = k is not None and measure.definition.cutoff_kind == "rank"  # not a recall level
        self.within = f"{self.pos} <= {self.k}" if ranked else "TRUE"
        self.ideal_within = f"irank <= {self.k}" if ranked else "TRUE"
        self._set_threshold(threshold)
        definition = measure.definition
        for param in definition.own_params:  # m.<name>: the parameter's value in SQL
            setattr(self, param.name, _sql_value(param, measure.get(param.name)))
        self._lists = {p.name: measure.get(p.name) for p in definition.own_params if p.kind == "floats"}
        self._discount = measure.get("discount") if definition.param("discount") else None
        self._base = float(measure.get("base")) if definition.param("base") else 2.0
        self._set_gains(gainset)
        self._set_hooks(definition)
        self.pool_unjudged = "0" if self.judged_only else "coalesce(c_pu, 0)"

    def _set_threshold(self, threshold: _Threshold) -> None:
        self.tkey = threshold.key
        self.rel = f"grade >= {threshold.value}"
        self.R, self.N = threshold.R, threshold.N
        self.c_rel, self.c_nonrel = threshold.c_rel, threshold.c_nonrel

    def _set_gains(self, gainset: _GainSet | None) -> None:
        if gainset is not None:
            self.gkey, self.gain, self.cg = gainset.key, gainset.expr, gainset.cg
            self.gain_max = gainset.gmax
            self.ideal_ranking = f"ideal_{gainset.key}"
            self.ideal_len = f"coalesce(len_{gainset.key}, 0)"
        else:
            self.gkey = self.gain = self.cg = self.gain_max = self.ideal_ranking = self.ideal_len = None

    def _set_hooks(self, definition) -> None:
        """The names of the values the hooks of sql/evaluate.sql give the measure."""
        self.needs = set(definition.needs)
        self.top_grade = "(SELECT top_grade FROM qtop)"
        self.grade_above = "coalesce(c_above, 0)"
        self.run = f"{self.id}_run"      # running(m), per row
        self.iv = f"{self.id}_iv"        # ideal_rows(m) at the row's position (or the ideal's end)
        self.ipos = f"{self.id}_ipos"    # that position: least(pos, length of the ideal ranking)
        self.intent_counts, self.intent_ap = "ia_counts", "ia_ap"  # intents, per row
        self.n_intents = "coalesce(n_intents, 0)"  # intents, per topic
        self.ideal_gain = f"{self.id}_ig"  # intent_ideal: the gain at irank of its ideal ranking

    def list_count(self, name: str, condition: str) -> str:
        """SQL: how many numbers of the list parameter ``name`` satisfy ``condition``, a
        template in which ``{x}`` stands for the number."""
        values = self._lists[name]
        return "(" + " + ".join(f"(CASE WHEN {condition.format(x=sql.sql_number(float(v)))} THEN 1 ELSE 0 END)"
                                for v in values) + ")"

    def list_length(self, name: str) -> str:
        """SQL: the length of the list parameter ``name``."""
        return sql.sql_number(len(self._lists[name]))

    def pos_in(self, alias: str) -> str:
        """The position column of the relation ``alias``."""
        return f"{alias}.{self.pos}"

    def by_cutoff(self, at_k: str, whole: str) -> str:
        """``at_k`` when the measure has a cut-off, ``whole`` when it has none."""
        return at_k if self.k is not None else whole

    def by_judged(self, condensed: str, full: str) -> str:
        """``condensed`` for the judged-only form, ``full`` otherwise."""
        return condensed if self.judged_only else full

    def disc(self, pos: str) -> str:
        """The rank discount 1/log_b(i + 1) (log2p1) or 1/log_b(max(b, i)) (jk)."""
        if self._discount != "jk" and self._base == 2.0:
            return f"(1.0 / log2({pos} + 1))"
        return DISCOUNT_SQL[self._discount or "log2p1"].format(b=sql.sql_number(self._base), pos=pos)


def _sql_value(param, value) -> str:
    """A validated parameter value as SQL: a number, a keyword of its choices, a boolean,
    NULL for no value; a list parameter is read through list_count / list_length."""
    if value is None:
        return "NULL"
    if param.kind == "float":
        return sql.sql_number(float(value))
    if param.kind == "int":
        return sql.sql_number(int(value))
    if param.kind == "bool":
        return "true" if value else "false"
    if param.kind == "choice":
        return sql.quote_literal(str(value))
    return ""  # floats: list_count, list_length


def _gain_of(measure: Measure, threshold: int) -> _GainSet:
    """The gain a gain-based measure uses: an explicit map, binary (``rel`` given) or the
    default gain = grade for grades >= 1 (whose g_max is the topic's largest grade)."""
    gains = measure.get("gains")
    if gains:
        cases = " ".join(f"WHEN {sql.sql_number(g)} THEN {sql.sql_number(float(v))}" for g, v in gains)
        key = "m" + "_".join(f"{_key(g)}x{str(v).replace('.', 'p')}" for g, v in gains)
        rest = "0.0"
        if measure.get("unlisted") == "grade":  # the grades not listed keep gain = grade
            key, rest = key + "_u", f"({DEFAULT_GAIN})"
        return _GainSet(key, f"CASE grade {cases} ELSE {rest} END",
                        sql.sql_number(float(max(v for _, v in gains))))
    if measure.has("rel") and measure.definition.rel_binarizes:
        return _GainSet("b" + _key(threshold),
                        f"CASE WHEN grade >= {sql.sql_number(threshold)} THEN 1.0 ELSE 0.0 END", "1")
    return _GainSet("g", DEFAULT_GAIN, "gmax_g")


DEFAULT_GAIN = "CASE WHEN grade >= 1 THEN grade ELSE 0 END"


# Where the base rows come from (see base_rows in sql/_base.sql).
BASE_SOURCES = ("cache", "subset", "fresh", "rerank")


def _engine_inputs(dialect: str = "duckdb") -> dict:
    """The inputs of evaluate.sql as bound parameters (the engine)."""
    return {**{name: sql.param(name, dialect)
               for name in ("qrels", "topic_qrels", "base_qrels", "collection", "runs")},
            "all_runs": False}


def render_sql(measures: list[Measure], topics: str = "qrels", max_docs: int | None = None,
               rel_level: int | None = None, base_source: str = "cache",
               dialect: str = "duckdb", ties: TiePolicy | None = None,
               ties_cached: bool = False) -> str:
    """The SQL that computes ``measures`` (bind qrels, topic_qrels, collection, runs, and
    base_qrels when ``base_source`` is 'subset') in the SQL engine ``dialect`` (sql.DIALECTS;
    other engines than DuckDB compute the base 'fresh' from their tables). ``ties``: a tie
    policy that ranks ties otherwise than the stored ranking computes the base from the runs
    with each tie so ranked (source 'ties'; ranked afresh first where ``base_source`` is
    'rerank'). ``ties_cached``: the base (source 'cache') records its documents' ties
    (irw_base.tie_a, tie_n), which tie policy expected and those ordering ties by gain alone
    read instead of the runs."""
    if topics not in TOPIC_POLICIES:
        raise IrwError(f"unknown topic policy {topics!r}; valid: {', '.join(TOPIC_POLICIES)}")
    if max_docs is not None and not 1 <= max_docs <= 2**31 - 1:
        raise IrwError("--max-docs must be from 1 to 2147483647")
    if base_source not in BASE_SOURCES:
        raise ValueError(base_source)
    for measure in measures:
        unsupported = [n for n in measure.definition.needs if n in DUCKDB_ONLY and dialect != "duckdb"]
        if unsupported:
            raise IrwError(f"measure {measure} is computed by DuckDB only: its hook "
                           f"{unsupported[0]} uses {DUCKDB_ONLY[unsupported[0]]}")
    kinds = sorted({m.definition.reads for m in measures})
    if len(kinds) > 1 and set(kinds) & set(KIND_ENGINES):
        raise IrwError(f"measures reading {' and '.join(kinds)} judgments are evaluated apart: "
                       "one qrels serves one of them")
    if kinds and kinds[0] in KIND_ENGINES:
        if ties is not None and ties.reranks:
            raise IrwError(f"measures reading {kinds[0]} judgments are evaluated on the stored "
                           f"ranking only: tie policy {ties.name} does not apply to them")
        contexts = _contexts(measures, dialect)[0]
        return sql.render(KIND_ENGINES[kinds[0]], dialect, measures=contexts, topics=topics,
                          max_docs=max_docs, P=_engine_inputs(dialect), shared=False)

    tied = None
    if ties is not None and ties.expected:
        _check_expected(measures, dialect, max_docs)
        tied = {"expected": True, "rerank": base_source == "rerank", "cached": ties_cached}
    elif ties is not None and ties.reranks:
        tied = {"within": [list(key) for key in ties.within], "rerank": base_source == "rerank",
                "cached": ties_cached and ties.by_gain}
        base_source = "ties"

    def render() -> str:
        contexts, thresholds, gainsets = _contexts(measures, dialect)
        return sql.render("evaluate.sql", dialect, measures=contexts, thresholds=thresholds,
                          gainsets=gainsets, topics=topics, max_docs=max_docs,
                          topic_threshold=rel_level if rel_level is not None else 1,
                          sources=[base_source], P=_engine_inputs(dialect), checks=[], window_guard=None,
                          ties=tied)

    # kept between processes (sql.kept) by the parsed measures: name, parameters, cut-off
    return sql.kept(("evaluate.sql", [repr(m) for m in measures], topics, max_docs, rel_level,
                     base_source, dialect, tied), render)


def _check_expected(measures: list[Measure], dialect: str, max_docs: int | None) -> None:
    """Refuse, in one line, what tie policy expected has no exact computation for: a
    measure whose template has no expected_aggs (or one for the whole ranking only, given a
    cut-off), the judged-only forms, another engine than DuckDB, and a --max-docs."""
    if dialect != "duckdb":
        raise IrwError(f"tie policy expected is computed by DuckDB only (irw eval), not in {dialect}")
    if max_docs is not None:
        raise IrwError("tie policy expected takes the whole ranking: --max-docs does not apply to it")
    refused = [str(m) for m in measures if not has_expectation(m)]
    if refused:
        exact = ", ".join(sorted(expected_measures(), key=str.lower))
        raise IrwError(f"no exact expectation over the ties is built for {', '.join(refused)} "
                       f"(tie policy expected computes {exact}; not their judged-only forms)")


def has_expectation(measure: Measure) -> bool:
    """Whether tie policy expected computes ``measure``: its template has expected_aggs,
    for a cut-off unless it says otherwise (expected_cutoff), and it is not a judged-only
    form."""
    module = sql.module(f"measures/{measure.name}.sql")
    has = getattr(module, "expected_aggs", None) is not None
    whole_only = getattr(module, "expected_cutoff", True) is False and measure.cutoff is not None
    return has and not measure.judged_only and not whole_only


def expected_measures() -> list[str]:
    """The measures whose template computes tie policy expected (an expected_aggs), those
    for the whole ranking only so marked."""
    names = []
    for name in CATALOGUE:
        module = sql.module(f"measures/{name}.sql")
        if getattr(module, "expected_aggs", None) is not None:
            whole = getattr(module, "expected_cutoff", True) is False and CATALOGUE[name].cutoff
            names.append(f"{name} (without a cut-off)" if whole else name)
    return names


def _contexts(measures: list[Measure], dialect: str = "duckdb"):
    """The measure contexts of ``measures`` (ids m0, m1, ... in order), with the relevance
    thresholds and gain maps they use."""
    thresholds: dict[int, _Threshold] = {}
    gainsets: dict[str, _GainSet] = {}
    contexts = []
    for index, measure in enumerate(measures):
        t = measure.get("rel") if measure.definition.param("rel") else None
        t = int(t) if t is not None else 1
        threshold = thresholds.setdefault(t, _threshold(t))
        gainset = None
        if measure.definition.graded:
            candidate = _gain_of(measure, t)
            gainset = gainsets.setdefault(candidate.key, candidate)
            if measure.definition.cumulative_gain and gainset.key != "g":
                gainset.window = True  # the running gain sums of another gain map
        contexts.append(_MeasureContext(index, measure, threshold, gainset, dialect))
    return contexts, list(thresholds.values()), list(gainsets.values())


class _MacroContext(_MeasureContext):
    """``m`` in a measure macro: the same fragments written over the macro's parameters
    (k, rel, gains, discount, base, judged_only and the measure's own, each by its declared
    name), so the choices the engine makes when rendering are made in SQL."""

    def __init__(self, definition):  # noqa: D107 - deliberately not calling the parent
        has = definition.param
        self.id = "m0"
        self.label = definition.name
        self.name = definition.name
        self.module = sql.module(f"measures/{definition.name}.sql")
        self.pos = "(CASE WHEN judged_only THEN crank ELSE rank END)" if has("judged_only") else "rank"
        self.n = "(CASE WHEN judged_only THEN coalesce(n_judged, 0) ELSE n END)" if has("judged_only") else "n"
        if definition.cutoff and definition.cutoff_kind == "rank":
            self.k = "k"
            self.within = f"(k IS NULL OR {self.pos} <= k)"
            self.ideal_within = "(k IS NULL OR irank <= k)"
        else:  # no cut-off, or a recall level (not a rank)
            self.k = "(k::DOUBLE)" if definition.cutoff else None
            self.within = self.ideal_within = "TRUE"
        self.threshold = (_Threshold("coalesce(rel, 1)", window=True, key="t") if has("rel")
                          else _threshold(1))
        self._set_threshold(self.threshold)
        for param in definition.own_params:
            setattr(self, param.name, _macro_value(definition, param.name))
        self._has_discount = bool(has("discount"))
        self.gainset = None
        if definition.graded:
            binary = ("WHEN rel IS NOT NULL THEN CASE WHEN grade >= rel THEN 1.0 ELSE 0.0 END "
                      if definition.rel_binarizes else "")
            rest = (f"(CASE WHEN unlisted = 'grade' THEN {DEFAULT_GAIN} ELSE 0 END)"
                    if has("unlisted") else "0")
            self.gainset = _GainSet(
                "d", f"(CASE WHEN gains IS NOT NULL THEN coalesce(gains[grade], {rest})::DOUBLE {binary}"
                     f"ELSE {DEFAULT_GAIN} END)",
                "(CASE WHEN gains IS NOT NULL THEN list_max(map_values(gains))::DOUBLE "
                + ("WHEN rel IS NOT NULL THEN 1 " if binary else "") + "ELSE gmax_g END)",
                window=definition.cumulative_gain)  # only these sum gains (cg)
        self._set_gains(self.gainset)
        self._set_hooks(definition)
        self.pool_unjudged = self.by_judged("0", "coalesce(c_pu, 0)") if has("judged_only") else "coalesce(c_pu, 0)"
        guards = (["coalesce(rel, 1) <> 1"] if has("rel") else []) + (
            ["gains IS NOT NULL"] if definition.cumulative_gain else [])
        self.window_guard = f"({' OR '.join(guards)})" if guards else None
        self.args = ["q"] + (["k := NULL"] if definition.cutoff else []) + [
            f"{p.name} := {_macro_default(definition, p)}" for p in definition.params] + [
            "runs := NULL", "run_collection := NULL"]
        self.checks = _macro_checks(definition)

    def pos_in(self, alias: str) -> str:
        return f"(CASE WHEN judged_only THEN {alias}.crank ELSE {alias}.rank END)"

    def by_cutoff(self, at_k: str, whole: str) -> str:
        return whole if self.k is None else f"(CASE WHEN k IS NULL THEN {whole} ELSE {at_k} END)"

    def by_judged(self, condensed: str, full: str) -> str:
        return f"(CASE WHEN judged_only THEN {condensed} ELSE {full} END)"

    def disc(self, pos: str) -> str:
        if not self._has_discount:
            return f"(1.0 / log2({pos} + 1))"
        b = "(base::DOUBLE)"
        return (f"(CASE WHEN discount = 'jk' THEN {DISCOUNT_SQL['jk'].format(b=b, pos=pos)} "
                f"ELSE {DISCOUNT_SQL['log2p1'].format(b=b, pos=pos)} END)")

    def list_count(self, name: str, condition: str) -> str:
        return f"len(list_filter({name}, lambda x: {condition.format(x='x')}))"

    def list_length(self, name: str) -> str:
        return f"len({name})"


def _paired(definition, param) -> bool:
    """Does ``param`` exclude, or is it excluded by or needed by, another parameter
    (RBP's p, depth and residual)? Its macro default is then NULL, so that a value given
    can be told from the default, which :func:`_macro_value` applies."""
    return bool(param.excludes or param.requires) or any(
        other.excludes == param.name or other.requires == param.name for other in definition.params)


def _macro_value(definition, name: str) -> str:
    """The SQL value of the parameter ``name`` in a measure macro: the parameter, its default
    when NULL, or the value another parameter given sets (measures.Setting: RBP's depth sets
    p);
    a decimal parameter as a DOUBLE."""
    param = definition.param(name)
    value = f"coalesce({name}, {_default_sql(param)})" if _paired(definition, param) else name
    setter = next((o for o in definition.params if o.excludes == name and o.sets is not None), None)
    if setter is not None:  # set by another parameter when given (measures.Setting)
        inputs = {i: setter.name if i == setter.name else _macro_value(definition, i)
                  for i in setter.sets.inputs}
        value = f"CASE WHEN {setter.name} IS NOT NULL THEN {setter.sets.sql.format(**inputs)} ELSE {value} END"
    return f"({value})::DOUBLE" if param.kind == "float" else f"({value})"


def _macro_default(definition, param) -> str:
    return "NULL" if _paired(definition, param) else _default_sql(param)


def _default_sql(param) -> str:
    if param.default is None:
        return "NULL"
    if isinstance(param.default, bool):
        return "true" if param.default else "false"
    if isinstance(param.default, str):
        return sql.quote_literal(param.default)
    if isinstance(param.default, tuple):  # a list of numbers
        return "[" + ", ".join(f"{float(v)!r}" for v in param.default) + "]::DOUBLE[]"
    return repr(param.default)


def _macro_checks(definition) -> list[tuple[str, str]]:
    """(condition, message): a measure macro raises the message when the condition holds --
    the ranges the catalogue declares for its parameters (measures.Param), in SQL."""
    name = definition.name
    checks = [("NOT EXISTS (SELECT 1 FROM qrels_info WHERE qrels = q)",
               f"measure.{name}: no such qrels (see SELECT qrels FROM qrels_info)"),
              ("run_collection IS NOT NULL AND NOT EXISTS (SELECT 1 FROM run_loads AS cl "
               "WHERE cl.collection = run_collection)",
               f"measure.{name}: no runs in that collection (see SELECT * FROM collections)")]
    if definition.cutoff and definition.cutoff_kind == "recall":
        checks.append(("k IS NULL OR k < 0", f"measure.{name}: k must be a recall level >= 0"))
    elif definition.cutoff:
        checks.append(("k IS NOT NULL AND k < 1", f"measure.{name}: k must be a positive integer"))
    for p in definition.params:
        required = p.default is not None and not _paired(definition, p)
        if p.kind in ("int", "float", "floats"):
            bad = []
            x = "list_min({})".format(p.name) if p.kind == "floats" else p.name
            if p.low is not None:
                bad.append(f"{x} {'<=' if p.low_open else '<'} {p.low!r}")
            if p.high is not None:
                bad.append(f"{x} {'>=' if p.high_open else '>'} {p.high!r}")
            if p.kind == "floats":
                bad.append(f"len({p.name}) = 0")
            if required:
                condition = " OR ".join([f"{p.name} IS NULL", *bad])
            elif bad:
                condition = f"{p.name} IS NOT NULL AND ({' OR '.join(bad)})"
            else:
                continue
            what = p.valid_range() if p.low is not None or p.high is not None else "a number"
            checks.append((condition, f"measure.{name}: {p.name} must be {what}"))
        if p.excludes:
            checks.append((f"{p.name} IS NOT NULL AND {p.excludes} IS NOT NULL",
                           f"measure.{name}: give {p.excludes} or {p.name}, not both "
                           f"({p.name} sets {p.excludes})"))
        if p.requires:
            checks.append((f"{p.name} IS NOT NULL AND {p.requires} IS NULL",
                           f"measure.{name}: {p.name} means nothing without {p.requires}"))
        if p.kind == "choice":
            listed = ", ".join(sql.quote_literal(c) for c in p.choices)
            missing = f"{p.name} IS NULL OR" if required else f"{p.name} IS NOT NULL AND"
            checks.append((f"{missing} {p.name} NOT IN ({listed})",
                           f"measure.{name}: {p.name} must be {' or '.join(p.choices)}"))
        elif p.kind == "gains":
            checks.append((f"{p.name} IS NOT NULL AND (list_min(map_values({p.name})) < 0 "
                           f"OR list_max(map_values({p.name})) <= 0)",
                           f"measure.{name}: {p.name} must be >= 0 with at least one > 0"))
    return checks


# the topic policy of the measure macros (and of the table macros the preference ones share)
MACRO_TOPICS = "qrels"


def _macro_inputs() -> dict:
    """The inputs of evaluate.sql as the parameters of a measure macro."""
    return {"qrels": "q", "topic_qrels": "(SELECT topic_qrels FROM qrels_info WHERE qrels = q)",
            "base_qrels": "(SELECT root FROM irw_st)",
            "collection": "coalesce(run_collection, collection_of(q))", "runs": "runs", "all_runs": True}


def macro_definitions() -> list[dict]:
    """Every catalogue measure as a table macro: name, parameter list and body (evaluate.sql
    rendered over the macro's parameters)."""
    out = []
    for definition in CATALOGUE.values():
        m = _MacroContext(definition)
        if definition.reads in KIND_ENGINES:  # the engine of its kind of judgments
            body = sql.render(KIND_ENGINES[definition.reads], measures=[m], topics=MACRO_TOPICS,
                              max_docs=None, P=_macro_inputs(), shared=True)
        else:
            body = sql.render("evaluate.sql", measures=[m], thresholds=[m.threshold],
                              gainsets=[m.gainset] if m.gainset else [], topics=MACRO_TOPICS,
                              max_docs=None, topic_threshold=1, sources=list(BASE_SOURCES),
                              P=_macro_inputs(), checks=m.checks, window_guard=m.window_guard, ties=None)
        out.append({"name": definition.name, "args": m.args,
                    "body": f"SELECT {_macro_inputs()['collection']} AS collection, run_id, topic, value "
                            f"FROM ({body.rstrip()}) AS measured"})
    return out


def many_kind(measure: Measure) -> str | None:
    """How :func:`evaluate_many` computes ``measure`` for many derived qrels of one root in one
    pass (sql/evaluate_many.sql): 'rows' or 'delta' as its measure file declares (``many``),
    when the setting allows it; None: evaluated per qrels (condensed forms, a relevance
    threshold below 1 or other than 1 for a 'delta' measure, a gain map giving grades below 1
    a positive gain, and the measures declaring nothing)."""
    kind = getattr(sql.module(f"measures/{measure.name}.sql"), "many", None)
    if kind is None or measure.judged_only:
        return None
    threshold = measure.get("rel") if measure.definition.param("rel") else None
    threshold = int(threshold) if threshold is not None else 1
    if threshold < 1 or (kind == "delta" and threshold != 1):
        return None
    gains = measure.get("gains") if measure.definition.param("gains") else None
    if gains and any(g < 1 and float(v) > 0 for g, v in gains):
        return None
    return kind


def render_many_sql(measures: list[Measure], topics: str = "qrels", max_docs: int | None = None,
                    rel_level: int | None = None) -> dict[str, str]:
    """The queries computing ``measures`` (each with a :func:`many_kind`) for the qrels
    $qrels (a list) derived from the loaded qrels $root whose base is current, for the runs
    $runs of $collection (sql/evaluate_many.sql): 'judgments' (into the temporary table
    irw_many_judgments: which of them are subsets of the root), 'removed' (into
    irw_many_removed), 'scores' (columns qrels, run_id, topic, measure, value; the qrels
    that are subsets of the root); or, for qrels whose removed judgments irw recorded
    (state.recorded_subsets), 'recorded_removed' and 'recorded_scores'."""
    if topics not in TOPIC_POLICIES:
        raise IrwError(f"unknown topic policy {topics!r}; valid: {', '.join(TOPIC_POLICIES)}")
    if max_docs is not None and not 1 <= max_docs <= 2**31 - 1:
        raise IrwError("--max-docs must be from 1 to 2147483647")
    contexts, thresholds, gainsets = _contexts(measures)
    for context, measure in zip(contexts, measures):
        context.many = many_kind(measure)
        if context.many is None:
            raise ValueError(f"{measure} is evaluated per qrels")
    return {part: sql.render("evaluate_many.sql", part=part, judgments="irw_many_judgments",
                            removed="irw_many_removed", measures=contexts, thresholds=thresholds,
                            gainsets=gainsets, topics=topics, max_docs=max_docs,
                            topic_threshold=rel_level if rel_level is not None else 1,
                            P={name: sql.param(name) for name in ("root", "qrels", "collection", "runs")})
            for part in MANY_PARTS}


MANY_PARTS = ("judgments", "removed", "scores", "recorded_removed", "recorded_scores")
