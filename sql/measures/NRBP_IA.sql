{# NRBP (Clarke, Kolla & Vechtomova 2009) as ndeval computes it: (1 - (1 - alpha) beta) /
   n_intents times the sum over the whole ranking of the intent-aware gain times beta^(i-1). #}
{% import '_dialect.sql' as d %}
{% import '_diversity.sql' as dv %}
{% macro aggs(m) -%}
{{ d.fsum() }}({{ dv.gain(m) }} * pow({{ m.beta }}, {{ m.pos }} - 1)) AS {{ m.id }}_s
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.n_intents }} = 0 THEN 0
     ELSE {{ d.div('(1 - (1 - ' ~ m.alpha ~ ') * ' ~ m.beta ~ ') * coalesce(' ~ m.id ~ '_s, 0)', m.n_intents) }} END
{%- endmacro %}
