{#- Engine-specific constructs, kept in one place so that the templates (measures, the
    engine, the base relation, pools, views) are the same files for every SQL engine.

    `dialect` (a global of the rendering environment, irwarehouse.sql.DIALECTS) chooses:
      duckdb  the warehouse (default)
      spark   Spark SQL 4 (irwarehouse.spark): the same templates over Parquet copies of
              the tables, as temporary views and functions of a SparkSession
    A third engine adds its branch to each macro below. String literals are quoted for the
    dialect by the `literal` filter (irwarehouse.sql.quote_literal). -#}

{# An SQL type, written in DuckDB's names: VARCHAR, VARCHAR[], INTEGER, BIGINT, DOUBLE, REAL,
   BOOLEAN. #}
{% macro sql_type(t) -%}
{% if dialect == 'spark' %}{{ {'VARCHAR': 'STRING', 'VARCHAR[]': 'ARRAY<STRING>'}.get(t, t) }}{% else %}{{ t }}{% endif %}
{%- endmacro %}

{# A cast of the SQL expression `expr` to the type `t` (see sql_type). #}
{% macro cast(expr, t) -%}
{% if dialect == 'spark' %}CAST({{ expr }} AS {{ sql_type(t) }}){% else %}({{ expr }})::{{ t }}{% endif %}
{%- endmacro %}

{# a / b as a DOUBLE, whatever the operands' types: DuckDB divides integers into a DOUBLE;
   Spark divides a DECIMAL (a literal such as 1.0) into a DECIMAL of limited scale, and
   engines such as Postgres and Trino truncate an integer division. #}
{% macro div(a, b) -%}
{% if dialect == 'spark' %}CAST({{ a }} AS DOUBLE) / ({{ b }}){% else %}({{ a }}) / ({{ b }}){% endif %}
{%- endmacro %}

{# The name of the aggregate that sums DOUBLE terms of a score: DuckDB's fsum (compensated,
   Kahan-Babuska summation), whose result does not depend on the order the rows arrive in
   (checked on all of TREC-8: the base computed from the tables and the cached base give
   the same bits, where a plain sum differed in the last bit for 96 of 96,750 scores);
   Spark: sum. #}
{% macro fsum() -%}
{% if dialect == 'spark' %}sum{% else %}fsum{% endif %}
{%- endmacro %}

{# A parameterised relation. `args`: the parameters, each a [name, type] pair (see sql_type);
   `returns`: the columns, [name, type] pairs. DuckDB: a table macro (untyped; an argument
   may also be written as DuckDB text, e.g. 'k := NULL'); Spark: a temporary SQL table
   function of the session. #}
{% macro table_function(name, args, returns=[]) -%}
{% if dialect == 'spark' -%}
CREATE OR REPLACE TEMPORARY FUNCTION {{ name }}({% for a, t in args %}{{ a }} {{ sql_type(t) }}{{ ', ' if not loop.last }}{% endfor %})
RETURNS TABLE ({% for c, t in returns %}{{ c }} {{ sql_type(t) }}{{ ', ' if not loop.last }}{% endfor %}) RETURN
{%- else -%}
CREATE OR REPLACE MACRO {{ name }}({% for a in args %}{{ a if a is string else a[0] }}{{ ', ' if not loop.last }}{% endfor %}) AS TABLE
{%- endif %}
{%- endmacro %}

{# The values of `expr` in a group as a sorted list (an aggregate). #}
{% macro sorted_list(expr) -%}
{% if dialect == 'spark' %}sort_array(collect_list({{ expr }})){% else %}list({{ expr }} ORDER BY {{ expr }}){% endif %}
{%- endmacro %}

{# A scalar function written in SQL: a DuckDB scalar macro; Spark: a temporary SQL function
   of the session (`args` then [name, type] pairs, `returns` its type). #}
{% macro scalar_function(name, args, returns=None) -%}
{% if dialect == 'spark' -%}
CREATE OR REPLACE TEMPORARY FUNCTION {{ name }}({% for a, t in args %}{{ a }} {{ sql_type(t) }}{{ ', ' if not loop.last }}{% endfor %})
RETURNS {{ sql_type(returns) }} RETURN
{%- else -%}
CREATE OR REPLACE MACRO {{ name }}({% for a in args %}{{ a if a is string else a[0] }}{{ ', ' if not loop.last }}{% endfor %}) AS
{%- endif %}
{%- endmacro %}

{# A view (Spark: a temporary view of the session, as the tables are). #}
{% macro create_view(name) -%}
CREATE OR REPLACE {% if dialect == 'spark' %}TEMPORARY {% endif %}VIEW {{ name }} AS
{%- endmacro %}

{# Running total over a (run, topic) ranking (or the partition `by`), counting only rows where
   `cond` holds (Spark has no FILTER clause in window aggregates). #}
{% macro running_count(cond, order='rank', by='run_id, topic') -%}
{% if dialect == 'spark' -%}
sum(CASE WHEN {{ cond }} THEN 1 ELSE 0 END) OVER (PARTITION BY {{ by }} ORDER BY {{ order }} ROWS UNBOUNDED PRECEDING)
{%- else -%}
count(*) FILTER (WHERE {{ cond }}) OVER (PARTITION BY {{ by }} ORDER BY {{ order }} ROWS UNBOUNDED PRECEDING)
{%- endif %}
{%- endmacro %}

{% macro running_sum(expr, order='rank', by='run_id, topic') -%}
sum({{ expr }}) OVER (PARTITION BY {{ by }} ORDER BY {{ order }} ROWS UNBOUNDED PRECEDING)
{%- endmacro %}

{# The same for DOUBLE terms, summed with fsum() (see fsum): the same bits however the engine
   splits the work. #}
{% macro running_fsum(expr, order='rank', by='run_id, topic') -%}
{{ fsum() }}({{ expr }}) OVER (PARTITION BY {{ by }} ORDER BY {{ order }} ROWS UNBOUNDED PRECEDING)
{%- endmacro %}

{# One row per (row of `relation`, column): the `keys` columns, `measure` (the label) and
   `value`, for `columns` = [label, column] pairs, reading the relation once: Spark's
   stack(); in DuckDB two lists unnested side by side (their elements paired in order).
   One query per column joined by UNION ALL would read the relation once per column:
   Spark inlines a common table expression at each reference (the whole plan repeated),
   and DuckDB's optimizer spends time growing with the branches times the plan below them
   (trec_eval's all_trec, 94 columns: 0.9 s of optimizing against 0.03 s). #}
{% macro unpivot(relation, keys, columns) -%}
{% if dialect == 'spark' -%}
SELECT {{ keys | join(', ') }}, stack({{ columns | length }}{% for label, column in columns %}, {{ label | literal }}, {{ column }}{% endfor %}) AS (measure, value)
FROM {{ relation }}
{%- else -%}
SELECT {{ keys | join(', ') }},
       unnest([{% for label, column in columns %}{{ label | literal }}{{ ", " if not loop.last }}{% endfor %}]) AS measure,
       unnest([{% for label, column in columns %}{{ column }}{{ ", " if not loop.last }}{% endfor %}]) AS value
FROM {{ relation }}
{%- endif %}
{%- endmacro %}

{# A bound query parameter. #}
{% macro param(name) -%}
{% if dialect == 'spark' %}:{{ name }}{% else %}${{ name }}{% endif %}
{%- endmacro %}

{# Is `value` an element of the list `list`? #}
{% macro list_contains(list, value) -%}
{% if dialect == 'spark' %}array_contains({{ list }}, {{ value }}){% else %}list_contains({{ list }}, {{ value }}){% endif %}
{%- endmacro %}

{# The elements of a list (by default a bound list of strings; else of the type `t`), one
   row each. #}
{% macro unnest_list(list, t='VARCHAR') -%}
{% if dialect == 'spark' %}explode({{ list }}){% else %}unnest({{ list }}::{{ t }}[]){% endif %}
{%- endmacro %}

{# The integers 1..n (n >= 1, an SQL expression) as a relation of one column, i. #}
{% macro integers(n) -%}
{% if dialect == 'spark' %}SELECT explode(sequence(1, {{ n }})) AS i{% else %}SELECT range + 1 AS i FROM range({{ n }}){% endif %}
{%- endmacro %}

{# A common table expression computed once however often it is referenced (Spark: the
   optimizer decides). #}
{% macro materialized() -%}
{% if dialect != 'spark' %}MATERIALIZED{% endif %}
{%- endmacro %}

{# A common table expression computed where each reference reads it, not stored once (Spark:
   the optimizer decides). #}
{% macro not_materialized() -%}
{% if dialect != 'spark' %}NOT MATERIALIZED {% endif %}
{%- endmacro %}

{# ---- lists (DuckDB's lists, Spark's arrays); `l` an SQL list, `x` a lambda variable ---- #}

{# The number of elements of a list. #}
{% macro list_len(l) -%}
{% if dialect == 'spark' %}size({{ l }}){% else %}len({{ l }}){% endif %}
{%- endmacro %}

{# The element at the 1-based position `i`. #}
{% macro list_at(l, i) -%}
{% if dialect == 'spark' %}element_at({{ l }}, CAST({{ i }} AS INT)){% else %}{{ l }}[{{ i }}]{% endif %}
{%- endmacro %}

{# Each element x of the list mapped to `expr` (SQL in x). #}
{% macro list_transform(l, x, expr) -%}
{% if dialect == 'spark' %}transform({{ l }}, {{ x }} -> {{ expr }}){% else %}list_transform({{ l }}, lambda {{ x }}: {{ expr }}){% endif %}
{%- endmacro %}

{# The elements x for which `cond` (SQL in x) holds, in order. #}
{% macro list_filter(l, x, cond) -%}
{% if dialect == 'spark' %}filter({{ l }}, {{ x }} -> {{ cond }}){% else %}list_filter({{ l }}, lambda {{ x }}: {{ cond }}){% endif %}
{%- endmacro %}

{# The sum of a non-empty list of DOUBLEs, left to right (DuckDB: NULL for an empty list;
   Spark: 0). #}
{% macro list_sum(l) -%}
{% if dialect == 'spark' %}aggregate({{ l }}, CAST(0 AS DOUBLE), (total_, term_) -> total_ + term_){% else %}list_sum({{ l }}){% endif %}
{%- endmacro %}

{# The largest element; the 1-based position of the first element equal to `value`. #}
{% macro list_max(l) -%}
{% if dialect == 'spark' %}array_max({{ l }}){% else %}list_max({{ l }}){% endif %}
{%- endmacro %}

{% macro list_position(l, value) -%}
{% if dialect == 'spark' %}array_position({{ l }}, {{ value }}){% else %}list_position({{ l }}, {{ value }}){% endif %}
{%- endmacro %}

{# `expr` (SQL in `acc`, the value so far) applied `n` times, starting from `init`: a column
   or an expression without aggregates, of expr's type. (DuckDB: a reduction of n + 1
   copies of init -- a fold from an initial value of another type than the list's needs
   DuckDB 1.5 -- with `x` the name of the unused element.) #}
{% macro repeat_apply(n, init, acc, x, expr) -%}
{% if dialect == 'spark' %}aggregate(array_repeat(0, CAST({{ n }} AS INT)), {{ init }}, ({{ acc }}, {{ x }}) -> {{ expr }}){% else %}list_reduce(list_transform(range({{ n }} + 1), lambda {{ x }}: {{ init }}), lambda {{ acc }}, {{ x }}: {{ expr }}){% endif %}
{%- endmacro %}

{# The positions 1..len of a list, as a list. #}
{% macro list_indexes(l) -%}
{% if dialect == 'spark' %}transform({{ l }}, (el_, ix_) -> ix_ + 1){% else %}range(1, len({{ l }}) + 1){% endif %}
{%- endmacro %}

{# The list without its element at the 1-based position `p`. #}
{% macro list_without(l, p) -%}
{% if dialect == 'spark' %}filter({{ l }}, (el_, ix_) -> ix_ <> {{ p }} - 1){% else %}list_concat({{ l }}[:{{ p }} - 1], {{ l }}[{{ p }} + 1:]){% endif %}
{%- endmacro %}

{# Two lists one after the other; a list's distinct elements (in any order). #}
{% macro list_concat(a, b) -%}
{% if dialect == 'spark' %}concat({{ a }}, {{ b }}){% else %}list_concat({{ a }}, {{ b }}){% endif %}
{%- endmacro %}

{% macro list_distinct(l) -%}
{% if dialect == 'spark' %}array_distinct({{ l }}){% else %}list_distinct({{ l }}){% endif %}
{%- endmacro %}

{# A list of n zeros (INTEGER). #}
{% macro zeros(n) -%}
{% if dialect == 'spark' %}array_repeat(0, CAST({{ n }} AS INT)){% else %}list_transform(range({{ n }}), lambda x: 0){% endif %}
{%- endmacro %}

{# A struct of the `fields`, [name, SQL] pairs (its fields read as s.name in both engines). #}
{% macro struct(fields) -%}
{% if dialect == 'spark' %}named_struct({% for n, e in fields %}{{ n | literal }}, {{ e }}{{ ', ' if not loop.last }}{% endfor %}){% else %}{{ '{' }}{% for n, e in fields %}{{ n | literal }}: {{ e }}{{ ', ' if not loop.last }}{% endfor %}{{ '}' }}{% endif %}
{%- endmacro %}

{# The distinct values of `expr` in a group as a list, in any order (an aggregate; DuckDB's
   holds NULL if a value is NULL, Spark's does not). #}
{% macro distinct_list(expr) -%}
{% if dialect == 'spark' %}collect_set({{ expr }}){% else %}list(DISTINCT {{ expr }}){% endif %}
{%- endmacro %}

{# The values of `expr` in a group as a list ordered by `key` (an aggregate; the keys of a
   group distinct). #}
{% macro ordered_list(expr, key, desc=False) -%}
{% if dialect == 'spark' -%}
transform(sort_array(collect_list(named_struct('k', {{ key }}, 'v', {{ expr }})), {{ 'false' if desc else 'true' }}), kv_ -> kv_.v)
{%- else -%}
list({{ expr }} ORDER BY {{ key }}{{ ' DESC' if desc else '' }})
{%- endif %}
{%- endmacro %}

{# The name (with its columns) of a recursive common table expression of WITH RECURSIVE:
   Spark stops a recursion at 100 steps unless told a limit (the templates' recursions end by
   themselves, e.g. the greedy ideal ranking after a step per relevant document). #}
{% macro recursive(name) -%}
{{ name }}{% if dialect == 'spark' %} MAX RECURSION LEVEL 1000000{% endif %}
{%- endmacro %}
