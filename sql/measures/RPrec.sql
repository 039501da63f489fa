{# RPrec = P@R: relevant documents among the top R, divided by R. #}
{% import '_dialect.sql' as d %}
{% macro aggs(m) -%}
count(*) FILTER (WHERE {{ m.rel }} AND {{ m.pos }} <= {{ m.R }}) AS {{ m.id }}_hits
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.R }} > 0 THEN {{ d.div('coalesce(' ~ m.id ~ '_hits, 0)', m.R) }} ELSE 0 END
{%- endmacro %}
