{# prefs_pair: over the pairs of documents some group orders, the share of the groups preferring the one ranked higher (0 when neither is retrieved), averaged (trec_eval 10.0) #}
{% import '_dialect.sql' as d %}
{% macro pair_aggs(m) -%}
{{ d.fsum() }}(CASE WHEN ret > 0 THEN {{ d.div('fwd', 'fwd + back') }} ELSE 0 END) AS {{ m.id }}_s, count(*) AS {{ m.id }}_n
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.id }}_n > 0 THEN {{ d.div(m.id ~ '_s', m.id ~ '_n') }} END
{%- endmacro %}
