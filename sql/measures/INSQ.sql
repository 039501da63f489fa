{# INSQ(T) (Moffat, Scholer & Thomas ADCS 2012; cwl_eval's INSQ), a C/W/L measure
   (sql/_cwl.sql): C(i) = ((i + 2T - 1) / (i + 2T))^2, so P(i) = (2T / (i + 2T - 1))^2 and
   the sum of P over ranks 1..N is 4T^2 (psi1(2T) - psi1(N + 2T)). The score is
   sum_i P(i) g_i / that sum. #}
{% import '_dialect.sql' as d %}
{% import '_cwl.sql' as cwl %}
{% macro aggs(m) -%}
{% set x = '(' ~ m.pos ~ ' + 2 * ' ~ m.T ~ ' - 1)' %}
{{ d.fsum() }}({{ d.div(cwl.gain(m), x ~ ' * ' ~ x) }}) FILTER (WHERE grade > 0 AND {{ m.pos }} <= {{ m.max_depth }}) AS {{ m.id }}_s
{%- endmacro %}
{% macro value(m) -%}
{{ d.div('coalesce(' ~ m.id ~ '_s, 0.0)', cwl.trigamma('2 * ' ~ m.T) ~ ' - ' ~ cwl.trigamma(m.max_depth ~ ' + 2 * ' ~ m.T)) }}
{%- endmacro %}
