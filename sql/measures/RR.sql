{# RR@k = 1 / rank of the first relevant document within k, 0 if none. #}
{% import '_dialect.sql' as d %}
{% import '_expected.sql' as ex %}
{% macro aggs(m) -%}
min({{ m.pos }}) FILTER (WHERE {{ m.rel }} AND {{ m.within }}) AS {{ m.id }}_first
{%- endmacro %}
{% macro value(m) -%}
coalesce({{ d.div('1', m.id ~ '_first') }}, 0)
{%- endmacro %}
{% macro expected_aggs(m) -%}
{{ d.fsum() }}({{ d.div(ex.first(m), m.pos) }}) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_e
{%- endmacro %}
{% macro expected_value(m) -%}
coalesce({{ m.id }}_e, 0)
{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql): the aggregates use only the rows
    of grade >= 1, their rank, grade and running relevant count. -#}
{% set many = 'rows' %}
