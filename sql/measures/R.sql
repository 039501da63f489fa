{# R@k = sum_{i<=k} r_i / R (0 when R = 0). #}
{% import '_dialect.sql' as d %}
{% macro aggs(m) -%}
count(*) FILTER (WHERE {{ m.rel }} AND {{ m.within }}) AS {{ m.id }}_hits
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.R }} > 0 THEN {{ d.div('coalesce(' ~ m.id ~ '_hits, 0)', m.R) }} ELSE 0 END
{%- endmacro %}
