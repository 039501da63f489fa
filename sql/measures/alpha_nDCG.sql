{# alpha-nDCG@k (Clarke et al. 2008), as ndeval computes it: the sum over ranks i <= k of the
   intent-aware gain times log 2 / log(i + 1), over the same sum of ndeval's greedy ideal
   ranking (sql/evaluate.sql, intent_ideal); 0 when the run's sum is 0. #}
{% import '_dialect.sql' as d %}
{% import '_diversity.sql' as dv %}
{% macro aggs(m) -%}
{{ d.fsum() }}({{ dv.gain(m) }} * {{ dv.disc(m.pos) }}) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_s
{%- endmacro %}
{% macro ideal_depth(m) -%}{{ m.k }}{%- endmacro %}
{% macro intent_ideal(m) -%}
{{ d.fsum() }}({{ m.ideal_gain }} * {{ dv.disc('irank') }}) FILTER (WHERE {{ m.ideal_within }}) AS {{ m.id }}_is
{%- endmacro %}
{% macro value(m) -%}
{{ dv.by_ideal(m.id ~ '_s', m.id ~ '_is') }}
{%- endmacro %}
