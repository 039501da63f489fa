{# ERR_IA@k, intent-aware expected reciprocal rank (Chapelle et al. 2009), as ndeval computes it, with its collection-independent
   normalization: the sum over ranks i <= k of the intent-aware gain / i, divided by the same
   sum of an ideal ranking covering every intent at every rank (n_intents (1 - alpha)^(i-1) / i);
   at k = 1 the gain itself. #}
{% import '_dialect.sql' as d %}
{% import '_diversity.sql' as dv %}
{% macro aggs(m) -%}
{{ d.fsum() }}({{ d.div(dv.gain(m), m.pos) }}) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_s
{%- endmacro %}
{% macro value(m) -%}
{{ dv.by_ideal_ideal(m, m.id ~ '_s', d.div('1.0', 'i')) }}
{%- endmacro %}
