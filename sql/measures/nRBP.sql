{# nRBP(p)@k = RBP@k / RBP@k of the ideal ranking ((1 - p) and g_max cancel). #}
{% import '_dialect.sql' as d %}
{% import '_expected.sql' as ex %}
{% macro aggs(m) -%}
{{ d.fsum() }}(({{ m.gain }}) * pow({{ m.p }}, {{ m.pos }} - 1)) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_s
{%- endmacro %}
{% macro ideal(m) -%}
{{ d.fsum() }}(gain * pow({{ m.p }}, irank - 1)) FILTER (WHERE {{ m.ideal_within }}) AS {{ m.id }}_is
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN coalesce({{ m.id }}_is, 0) > 0 THEN {{ d.div('coalesce(' ~ m.id ~ '_s, 0)', m.id ~ '_is') }} ELSE 0 END
{%- endmacro %}
{% macro expected_aggs(m) -%}
{{ d.fsum() }}({{ ex.gain(m) }} * pow({{ m.p }}, {{ m.pos }} - 1)) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_s
{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql): the aggregates use only the rows
    of grade >= 1, their rank, grade and running relevant count. -#}
{% set many = 'rows' %}
