{# NumRel = R, the relevant documents of the topic. #}
{% macro aggs(m) -%}
count(*) AS {{ m.id }}_unused
{%- endmacro %}
{% macro value(m) -%}
{{ m.R }}
{%- endmacro %}
