{# Utility = a * rel_ret + b * (n - rel_ret) + c * (R - rel_ret) + d * (docs + rel_ret - n - R)
   (trec_eval utility: the contingency table of retrieved and relevant, docs the collection's
   size, trec_eval -N). #}
{% import '_dialect.sql' as d %}
{% import '_expected.sql' as ex %}
{% macro aggs(m) -%}
count(*) FILTER (WHERE {{ m.rel }}) AS {{ m.id }}_hits
{%- endmacro %}
{% macro value(m) -%}
{% set h = 'coalesce(' ~ m.id ~ '_hits, 0)' %}
{{ m.a }} * {{ h }} + {{ m.b }} * ({{ m.n }} - {{ h }}) + {{ m.c }} * ({{ m.R }} - {{ h }})
  + {{ m.d }} * ({{ m.docs }} + {{ h }} - {{ m.n }} - {{ m.R }})
{%- endmacro %}
{% macro expected_aggs(m) -%}
{{ d.fsum() }}({{ ex.rel(m) }}) AS {{ m.id }}_hits
{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql): the aggregates use only the rows
    of grade >= 1, their rank, grade and running relevant count. -#}
{% set many = 'rows' %}
