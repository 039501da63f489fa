"""The SQL dialects: the measure, pool, base and view templates are the same files for every
engine, and every engine-specific construct sits in the macros of ``sql/_dialect.sql``.

Two checks, both able to fail: the templates' own text (outside ``_dialect.sql``) holds no
DuckDB-only construct, and what they render for Spark holds none either (the Python-built
fragments included). The numbers Spark gives are compared with DuckDB's in test_spark.py.
"""

from __future__ import annotations

import re

import pytest

from irwarehouse import measures
from irwarehouse import sql as irw_sql
from irwarehouse.engine import pools, rendering
from irwarehouse.judgment_kinds import GRADED
from test_sql_product import CASES

# The templates both engines run: the measure engines (graded judgments and preferences) and
# the base relation, every measure (MeasureDef.on_spark) and the diversity family's shared
# pieces, the ranking policies, pools and derived qrels, and the public views.
PORTABLE = ["evaluate.sql", "evaluate_prefs.sql", "_base.sql", "_diversity.sql", "_ranking.sql",
            "base_relation.sql", "pools.sql", "derived_qrels.sql", "views.sql", "qrels_compare.sql",
            *[f"measures/{n}.sql" for n, m in measures.CATALOGUE.items() if m.on_spark]]
# Every catalogue measure at its example settings: those of test_sql_product (graded
# judgments) and those of the other kinds' families.
EVERY_CASE = [name for name, _, _ in CASES] + list(dict.fromkeys(
    e for m in measures.CATALOGUE.values() if m.reads != GRADED for e in m.examples))


def test_spark_computes_every_measure():
    """No measure is DuckDB's alone: a new measure that is not portable is a choice to make
    here, not an accident."""
    assert [n for n, m in measures.CATALOGUE.items() if not m.on_spark] == []

# DuckDB-only constructs (pattern, what it is).
DUCKDB_ONLY = [
    (r"::", "a :: cast (d.cast)"),
    (r"\$[A-Za-z_]", "a $name parameter (d.param)"),
    (r"(?<![.\w])(list|map)_\w+\s*\(", "a list or map function (d.list_contains)"),
    (r"\bunnest\s*\(", "unnest (d.unnest_list)"),
    (r"\bMACRO\b", "a macro (d.table_function, d.scalar_function)"),
    (r"\bMATERIALIZED\b", "MATERIALIZED (d.materialized)"),
    (r"\bGROUP BY ALL\b|\bORDER BY ALL\b", "GROUP/ORDER BY ALL"),
    (r"\bQUALIFY\b", "QUALIFY"),
    (r"FILTER\s*\(WHERE[^()]*(\([^()]*\)[^()]*)*\)\s*OVER\b", "FILTER in a window (d.running_count)"),
]


# ... and in a template's own text, where a view is d.create_view (Spark's are temporary).
SOURCE_ONLY = [(r"CREATE\s+(OR\s+REPLACE\s+)?(TEMP\w*\s+)?(VIEW|TABLE)", "a view or table (d.create_view)")]


def _strip(text: str) -> str:
    """A template's text without Jinja comments and statements ({% ... %}) and SQL line
    comments (the SQL it writes, and the Jinja expressions that write SQL, are kept)."""
    text = re.sub(r"\{#.*?#\}|\{%.*?%\}", " ", text, flags=re.S)
    return re.sub(r"--[^\n]*", "", text)


def findings(text: str, patterns=DUCKDB_ONLY) -> list[str]:
    return [what for pattern, what in patterns if re.search(pattern, text, flags=re.I)]


def raw_divisions(text: str) -> list[str]:
    """Divisions written outside Jinja tags (a division is d.div: a DOUBLE in every engine)."""
    outside = re.sub(r"\{\{.*?\}\}", " ", _strip(text), flags=re.S)
    return [line.strip() for line in outside.splitlines() if "/" in line]


def test_the_checks_find_what_they_look_for():
    """Each pattern catches its construct (so the tests below can fail)."""
    samples = ["x::INTEGER", "WHERE run_id = $qrels", "list_contains(l, x)", "unnest(l)",
               "CREATE OR REPLACE MACRO f(a) AS TABLE", "a AS MATERIALIZED (", "GROUP BY ALL",
               "QUALIFY rank = 1", "?::VARCHAR[]",
               "count(*) FILTER (WHERE grade >= 1) OVER (PARTITION BY run_id)",
               "count(*) FILTER (WHERE least(a, b) > 1) OVER (ORDER BY rank)"]
    for sample in samples:
        assert findings(sample), sample
    assert findings("CREATE OR REPLACE VIEW v AS", SOURCE_ONLY)
    assert not findings("count(*) FILTER (WHERE grade >= 1) AS hits, sum(x) OVER (ORDER BY rank)")
    assert raw_divisions("{{ d.div('a', 'b') }} AS x, c / d AS y") == ["AS x, c / d AS y"]
    assert raw_divisions("{# a / b #} -- c / d\n{{ d.div('a', 'b') }}") == []


@pytest.mark.parametrize("template", PORTABLE)
def test_portable_templates_hold_no_duckdb_only_construct(template):
    text = _strip((irw_sql.sql_dir() / template).read_text())
    assert findings(text, DUCKDB_ONLY + SOURCE_ONLY) == [], f"{template}: use the macros of _dialect.sql"
    assert raw_divisions((irw_sql.sql_dir() / template).read_text()) == [], \
        f"{template}: divide with d.div (a DOUBLE in every engine)"


def _spark_sql_problems(sql: str) -> list[str]:
    sql = re.sub(r"--[^\n]*", "", sql)
    problems = findings(sql)
    if re.search(r"'[^']*''[^']*'", sql):  # Spark reads 'a''b' as two literals: 'ab'
        problems.append("a '' escape in a string literal")
    return problems


@pytest.mark.parametrize("name", EVERY_CASE)
def test_rendered_spark_sql_is_spark_sql(name):
    """Every catalogue measure at every parameter setting of test_sql_product (the other
    kinds' measures at their examples), rendered for Spark with every topic policy and -M,
    holds no DuckDB-only construct."""
    parsed = measures.parse_all([name])
    for topics in rendering.TOPIC_POLICIES:
        sql = rendering.render_sql(parsed, topics=topics, max_docs=100, rel_level=2,
                                  base_source="fresh", dialect="spark")
        assert _spark_sql_problems(sql) == [], (name, topics)
        assert ":qrels" in sql and ":runs" in sql


def test_rendered_spark_schema_pools_and_comparisons_are_spark_sql():
    for template in ("views.sql", "pools.sql"):
        for statement in irw_sql.split_statements(irw_sql.render(template, "spark")):
            assert _spark_sql_problems(statement) == [], statement
    for kind in pools.KINDS:
        assert _spark_sql_problems(pools.select_sql(kind, "spark")) == [], kind
    for what in ("topics", "multiplicity", "teams", "unique"):
        assert _spark_sql_problems(pools.stats_sql(what, "spark")) == [], what
    P = {name: irw_sql.param(name, "spark") for name in ("a", "b")}
    for name, args in (("cells", ()), ("only", ("a",)), ("only", ("b",))):
        rendered = irw_sql.statement("qrels_compare.sql", name, P, *args, dialect="spark")
        assert _spark_sql_problems(rendered) == [] and ":a" in rendered and ":b" in rendered, name


def test_spark_string_literals():
    """A label with a quote (condensed measures: AP') is one Spark literal; the DuckDB
    rendering keeps the standard escape."""
    sql = rendering.render_sql(measures.parse_all(["AP'@10"]), base_source="fresh", dialect="spark")
    assert "stack(1, 'AP\\'@10', m0)" in sql
    assert irw_sql.quote_literal("a'b\\c", "spark") == "'a\\'b\\\\c'"
    assert irw_sql.quote_literal("a'b\\c") == "'a''b\\c'"
    duck = rendering.render_sql(measures.parse_all(["AP'@10"]), base_source="fresh")
    assert "unnest(['AP''@10']) AS measure" in duck and "$qrels" in duck


def test_unknown_dialect():
    with pytest.raises(ValueError, match="unknown SQL dialect 'trino'"):
        irw_sql.render("evaluate.sql", "trino")
