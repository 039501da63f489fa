{# DCG@k = sum_{i<=k} g_i * disc(i). #}
{% import '_dialect.sql' as d %}
{% import '_expected.sql' as ex %}
{% macro aggs(m) -%}
{{ d.fsum() }}(({{ m.gain }}) * {{ m.disc(m.pos) }}) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_dcg
{%- endmacro %}
{% macro value(m) -%}
coalesce({{ m.id }}_dcg, 0)
{%- endmacro %}
{% macro expected_aggs(m) -%}
{{ d.fsum() }}({{ ex.gain(m) }} * {{ m.disc(m.pos) }}) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_dcg
{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql): the aggregates use only the rows
    of grade >= 1, their rank, grade and running relevant count. -#}
{% set many = 'rows' %}
