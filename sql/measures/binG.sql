{# binG = (1/R) * sum over relevant retrieved i of 1 / log2(2 + i - C(i)), i - C(i) the
   documents above i that are not relevant (judged or not); trec_eval's binG. #}
{% import '_dialect.sql' as d %}
{% macro aggs(m) -%}
{{ d.fsum() }}({{ d.div('1', 'log2(2 + ' ~ m.pos ~ ' - ' ~ m.c_rel ~ ')') }}) FILTER (WHERE {{ m.rel }}) AS {{ m.id }}_s
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.R }} > 0 THEN {{ d.div('coalesce(' ~ m.id ~ '_s, 0)', m.R) }} ELSE 0 END
{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql): the aggregates use only the rows
    of grade >= 1, their rank, grade and running relevant count. -#}
{% set many = 'rows' %}
