{# RBP(p)@k = (1 - p) * sum_{i<=k} (g_i / g_max) * p^(i-1): the base score. #}
{% import '_dialect.sql' as d %}
{% import '_expected.sql' as ex %}
{% macro aggs(m) -%}
{{ d.fsum() }}(({{ m.gain }}) * pow({{ m.p }}, {{ m.pos }} - 1)) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_s
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.gain_max }} > 0 THEN {{ d.div('(1 - ' ~ m.p ~ ') * coalesce(' ~ m.id ~ '_s, 0)', m.gain_max) }} ELSE 0 END
{%- endmacro %}
{% macro expected_aggs(m) -%}
{{ d.fsum() }}({{ ex.gain(m) }} * pow({{ m.p }}, {{ m.pos }} - 1)) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_s
{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql): the aggregates use only the rows
    of grade >= 1, their rank, grade and running relevant count. -#}
{% set many = 'rows' %}
