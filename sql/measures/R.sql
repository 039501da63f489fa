{# R@k = sum_{i<=k} r_i / R (0 when R = 0). #}
{% import '_dialect.sql' as d %}
{% import '_expected.sql' as ex %}
{% macro aggs(m) -%}
count(*) FILTER (WHERE {{ m.rel }} AND {{ m.within }}) AS {{ m.id }}_hits
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.R }} > 0 THEN {{ d.div('coalesce(' ~ m.id ~ '_hits, 0)', m.R) }} ELSE 0 END
{%- endmacro %}
{% macro expected_aggs(m) -%}
{{ d.fsum() }}({{ ex.rel(m) }}) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_hits
{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql): the aggregates use only the rows
    of grade >= 1, their rank, grade and running relevant count. -#}
{% set many = 'rows' %}
