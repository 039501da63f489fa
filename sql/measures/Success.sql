{# Success@k = 1 if a relevant document is within the top k. #}
{% import '_dialect.sql' as d %}
{% import '_expected.sql' as ex %}
{# 1 if the first relevant document (the relevant one whose running relevant count is 1) is
   within k: a count of one row, so that the expectation under ties (the probability that the
   first relevant document is within k) is the same aggregate. #}
{% macro aggs(m) -%}
count(*) FILTER (WHERE {{ m.rel }} AND {{ m.c_rel }} = 1 AND {{ m.within }}) AS {{ m.id }}_hits
{%- endmacro %}
{% macro value(m) -%}
coalesce({{ m.id }}_hits, 0)
{%- endmacro %}
{% macro expected_aggs(m) -%}
{{ d.fsum() }}({{ ex.first(m) }}) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_hits
{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql): the aggregates use only the rows
    of grade >= 1, their rank, grade and running relevant count. -#}
{% set many = 'rows' %}
