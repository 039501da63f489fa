{# nNRBP: NRBP over the NRBP of ndeval's greedy ideal ranking (its collection-dependent
   normalization; 0 for a topic without intents). #}
{% import '_dialect.sql' as d %}
{% import '_diversity.sql' as dv %}
{% macro aggs(m) -%}
{{ d.fsum() }}({{ dv.gain(m) }} * pow({{ m.beta }}, {{ m.pos }} - 1)) AS {{ m.id }}_s
{%- endmacro %}
{% macro intent_ideal(m) -%}
{{ d.fsum() }}({{ m.ideal_gain }} * pow({{ m.beta }}, irank - 1)) AS {{ m.id }}_is
{%- endmacro %}
{% macro value(m) -%}
{{ dv.by_ideal(m.id ~ '_s', m.id ~ '_is') }}
{%- endmacro %}
