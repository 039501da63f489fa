{# BPM(T)@k, the static Bejeweled Player Model (Zhang et al. SIGIR 2017; cwl_eval's BPM with
   cost 1 a document), a C/W/L measure (sql/_cwl.sql): C(i) = 1 while the gain of ranks 1..i
   is below T and i < k, then 0. The user reads ranks 1..s, s = min(k, N, the first rank whose
   running gain reaches T), each with weight 1/s: the score is the gain of ranks 1..s over s. #}
{% import '_dialect.sql' as d %}
{% import '_cwl.sql' as cwl %}
{% macro prepare(m) -%}
{{ cwl.prepare(m, ['g', 'cg']) }}
{%- endmacro %}
{% macro aggs(m) -%}
{% set reached = m.id ~ '_cg >= ' ~ m.T ~ ' AND ' ~ m.pos ~ ' <= ' ~ cwl.depth(m) %}
min({{ m.pos }}) FILTER (WHERE {{ reached }}) AS {{ m.id }}_s,
min({{ m.id }}_cg) FILTER (WHERE {{ reached }}) AS {{ m.id }}_gs,
{{ d.fsum() }}({{ m.id }}_g) FILTER (WHERE {{ m.pos }} <= {{ cwl.depth(m) }}) AS {{ m.id }}_gk
{%- endmacro %}
{% macro value(m) -%}
{{ d.div('coalesce(' ~ m.id ~ '_gs, ' ~ m.id ~ '_gk, 0.0)', 'coalesce(' ~ m.id ~ '_s, ' ~ cwl.depth(m) ~ ')') }}
{%- endmacro %}
