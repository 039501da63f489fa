{# NumRet@k = documents retrieved (within k). #}
{% macro aggs(m) -%}
count(*) AS {{ m.id }}_unused
{%- endmacro %}
{% macro value(m) -%}
{% if m.k %}least({{ m.k }}, {{ m.n }}){% else %}{{ m.n }}{% endif %}
{%- endmacro %}
