{# AP-IA (MAP-IA in ndeval; Agrawal et al. 2009): the AP of each intent with a relevant
   document (its relevant documents retrieved: (count above + 1) / rank, summed, over the
   intent's relevant documents), averaged over n_intents; the whole ranking. #}
{% import '_dialect.sql' as d %}
{% macro aggs(m) -%}
{{ d.fsum() }}({{ d.div(m.intent_ap, m.pos) }}) AS {{ m.id }}_s
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.n_intents }} = 0 THEN 0 ELSE {{ d.div('coalesce(' ~ m.id ~ '_s, 0)', m.n_intents) }} END
{%- endmacro %}
