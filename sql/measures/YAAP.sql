{# YAAP@k = ln((1 + SP@k) / (1 + R - SP@k)), SP@k the sum of the precisions at the relevant
   ranks i <= k (trec_eval yaap; 0 when R = 0). #}
{% import '_dialect.sql' as d %}
{% macro aggs(m) -%}
{{ d.fsum() }}({{ d.div(m.c_rel, m.pos) }}) FILTER (WHERE {{ m.rel }} AND {{ m.within }}) AS {{ m.id }}_sp
{%- endmacro %}
{% macro value(m) -%}
ln({{ d.div('1 + coalesce(' ~ m.id ~ '_sp, 0)', '1 + ' ~ m.R ~ ' - coalesce(' ~ m.id ~ '_sp, 0)') }})
{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql): the aggregates use only the rows
    of grade >= 1, their rank, grade and running relevant count. -#}
{% set many = 'rows' %}
