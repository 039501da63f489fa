{# NumRelRet@k = relevant documents retrieved (within k). #}
{% macro aggs(m) -%}
count(*) FILTER (WHERE {{ m.rel }} AND {{ m.within }}) AS {{ m.id }}_hits
{%- endmacro %}
{% macro value(m) -%}
coalesce({{ m.id }}_hits, 0)
{%- endmacro %}
