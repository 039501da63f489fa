{# Success@k = 1 if a relevant document is within the top k. #}
{% import '_dialect.sql' as d %}
{% import '_expected.sql' as ex %}
{% macro aggs(m) -%}
count(*) FILTER (WHERE {{ m.rel }} AND {{ m.within }}) AS {{ m.id }}_hits
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN coalesce({{ m.id }}_hits, 0) > 0 THEN 1 ELSE 0 END
{%- endmacro %}
{% macro expected_aggs(m) -%}
{{ d.fsum() }}({{ ex.first(m) }}) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_hits
{%- endmacro %}
{# Expected: the probability that the first relevant document is within k. #}
{% macro expected_value(m) -%}
coalesce({{ m.id }}_hits, 0)
{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql): the aggregates use only the rows
    of grade >= 1, their rank, grade and running relevant count. -#}
{% set many = 'rows' %}
