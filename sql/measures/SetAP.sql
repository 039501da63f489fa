{# SetAP = NumRelRet^2 / (NumRet * R): set precision times set recall (trec_eval set_map),
   0 when nothing is retrieved or R = 0. #}
{% import '_dialect.sql' as d %}
{% import '_expected.sql' as ex %}
{% macro aggs(m) -%}
count(*) FILTER (WHERE {{ m.rel }}) AS {{ m.id }}_hits
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.n }} > 0 AND {{ m.R }} > 0
     THEN {{ d.div(d.cast('coalesce(' ~ m.id ~ '_hits, 0)', 'DOUBLE') ~ ' * coalesce(' ~ m.id ~ '_hits, 0)', d.cast(m.n, 'DOUBLE') ~ ' * ' ~ m.R) }}
     ELSE 0 END
{%- endmacro %}
{% macro expected_aggs(m) -%}
{{ d.fsum() }}({{ ex.rel(m) }}) AS {{ m.id }}_hits
{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql): the aggregates use only the rows
    of grade >= 1, their rank, grade and running relevant count. -#}
{% set many = 'rows' %}
