{# RR@k = 1 / rank of the first relevant document within k, 0 if none. #}
{% import '_dialect.sql' as d %}
{% import '_expected.sql' as ex %}
{# The first relevant document is the relevant one whose running relevant count is 1; its
   1 / rank is a sum of one term, so that the expectation under ties is the same aggregate. #}
{% macro aggs(m) -%}
{{ d.fsum() }}({{ d.div('1', m.pos) }}) FILTER (WHERE {{ m.rel }} AND {{ m.c_rel }} = 1 AND {{ m.within }}) AS {{ m.id }}_e
{%- endmacro %}
{% macro value(m) -%}
coalesce({{ m.id }}_e, 0)
{%- endmacro %}
{% macro expected_aggs(m) -%}
{{ d.fsum() }}({{ d.div(ex.first(m), m.pos) }}) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_e
{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql): the aggregates use only the rows
    of grade >= 1, their rank, grade and running relevant count. -#}
{% set many = 'rows' %}
