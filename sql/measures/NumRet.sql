{# NumRet@k = documents retrieved (within k). #}
{% macro aggs(m) -%}
count(*) AS {{ m.id }}_unused
{%- endmacro %}
{% macro value(m) -%}
{{ m.by_cutoff('least(' ~ m.k ~ ', ' ~ m.n ~ ')', m.n) }}
{%- endmacro %}
