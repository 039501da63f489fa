{#- DuckDB-specific constructs, kept in one place so that another SQL engine is a set of
    overrides of these macros rather than a rewrite of the templates. -#}

{# A parameterised relation: a DuckDB table macro. #}
{% macro table_function(name, args) -%}
CREATE OR REPLACE MACRO {{ name }}({{ args | join(', ') }}) AS TABLE
{%- endmacro %}

{# A scalar function written in SQL: a DuckDB scalar macro. #}
{% macro scalar_function(name, args) -%}
CREATE OR REPLACE MACRO {{ name }}({{ args | join(', ') }}) AS
{%- endmacro %}

{# Running total over a (run, topic) ranking, counting only rows where `cond` holds. #}
{% macro running_count(cond, order='rank') -%}
count(*) FILTER (WHERE {{ cond }}) OVER (PARTITION BY run_id, topic ORDER BY {{ order }} ROWS UNBOUNDED PRECEDING)
{%- endmacro %}

{% macro running_sum(expr, order='rank') -%}
sum({{ expr }}) OVER (PARTITION BY run_id, topic ORDER BY {{ order }} ROWS UNBOUNDED PRECEDING)
{%- endmacro %}

{# A bound query parameter. #}
{% macro param(name) -%}
${{ name }}
{%- endmacro %}

{# Is `value` an element of the list `list`? #}
{% macro list_contains(list, value) -%}
list_contains({{ list }}, {{ value }})
{%- endmacro %}

{# The elements of a bound list of strings, one row each. #}
{% macro unnest_list(list) -%}
unnest({{ list }}::VARCHAR[])
{%- endmacro %}

{# A common table expression computed once however often it is referenced. #}
{% macro materialized() -%}
MATERIALIZED
{%- endmacro %}
