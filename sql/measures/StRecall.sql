{# Subtopic recall S-recall@k (Zhai, Cohen & Lafferty 2003) as ndeval computes it: the intents
   a document within the top k is relevant to, over n_intents. An intent is first covered at
   the document whose count for it is 0. #}
{% import '_dialect.sql' as d %}
{% macro aggs(m) -%}
sum({{ d.list_len(d.list_filter(m.intent_counts, 'c', 'c = 0')) }}) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_c
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.n_intents }} = 0 THEN 0 ELSE {{ d.div('coalesce(' ~ m.id ~ '_c, 0)', m.n_intents) }} END
{%- endmacro %}
