{# P-IA@k (Agrawal et al. 2009) as ndeval computes it: the (document, intent) pairs judged
   relevant within the top k, divided by k n_intents. #}
{% import '_dialect.sql' as d %}
{% macro aggs(m) -%}
sum({{ d.list_len(m.intent_counts) }}) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_h
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.n_intents }} = 0 THEN 0 ELSE {{ d.div('coalesce(' ~ m.id ~ '_h, 0)', m.k ~ ' * ' ~ m.n_intents) }} END
{%- endmacro %}
