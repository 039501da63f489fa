{# Judged@k = judged documents in the top min(k, n) / min(k, n); 0 if nothing retrieved. #}
{% import '_dialect.sql' as d %}
{% macro aggs(m) -%}
count(*) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_j
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.n }} > 0 THEN {{ d.div('coalesce(' ~ m.id ~ '_j, 0)', m.by_cutoff('least(' ~ m.k ~ ', ' ~ m.n ~ ')', m.n)) }} ELSE 0 END
{%- endmacro %}
