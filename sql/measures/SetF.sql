{# SetF(beta) = (1 + beta) P R / (beta P + R), P = NumRelRet / NumRet, R = NumRelRet / R
   (trec_eval set_F, beta its parameter); 0 when no relevant document is retrieved. #}
{% import '_dialect.sql' as d %}
{% import '_expected.sql' as ex %}
{% macro aggs(m) -%}
count(*) FILTER (WHERE {{ m.rel }}) AS {{ m.id }}_hits
{%- endmacro %}
{% macro value(m) -%}
{% set P = d.div('coalesce(' ~ m.id ~ '_hits, 0)', m.n) %}
{% set R = d.div('coalesce(' ~ m.id ~ '_hits, 0)', m.R) %}
CASE WHEN coalesce({{ m.id }}_hits, 0) > 0
     THEN {{ d.div('(' ~ m.beta ~ ' + 1.0) * ' ~ P ~ ' * ' ~ R, m.beta ~ ' * ' ~ P ~ ' + ' ~ R) }}
     ELSE 0 END
{%- endmacro %}
{% macro expected_aggs(m) -%}
{{ d.fsum() }}({{ ex.rel(m) }}) AS {{ m.id }}_hits
{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql): the aggregates use only the rows
    of grade >= 1, their rank, grade and running relevant count. -#}
{% set many = 'rows' %}
