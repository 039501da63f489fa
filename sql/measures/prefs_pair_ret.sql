{# prefs_pair_ret: prefs_pair over the pairs with both documents retrieved (trec_eval 10.0) #}
{% import '_dialect.sql' as d %}
{% macro pair_aggs(m) -%}
{{ d.fsum() }}(CASE WHEN ret = 2 THEN {{ d.div('fwd', 'fwd + back') }} ELSE 0 END) AS {{ m.id }}_s, count(*) FILTER (WHERE ret = 2) AS {{ m.id }}_n
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.id }}_n > 0 THEN {{ d.div(m.id ~ '_s', m.id ~ '_n') }} END
{%- endmacro %}
