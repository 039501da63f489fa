{# cwlRBP(p), rank-biased precision in C/W/L form (Moffat & Zobel TOIS 2008; cwl_eval's
   RBP, RBPCWLMetric with theta = p), a C/W/L measure (sql/_cwl.sql): C(i) = p, so
   P(i) = p^(i-1) and S = (1 - p^N) / (1 - p). The score is (1 - p) sum_{i<=N} p^(i-1) g_i
   over 1 - p^N: RBP's base score of the gains, over the weight of the first N ranks. #}
{% import '_dialect.sql' as d %}
{% import '_cwl.sql' as cwl %}
{% macro aggs(m) -%}
{{ d.fsum() }}({{ cwl.gain(m) }} * pow({{ m.p }}, {{ m.pos }} - 1)) FILTER (WHERE grade > 0 AND {{ m.pos }} <= {{ m.max_depth }}) AS {{ m.id }}_s
{%- endmacro %}
{% macro value(m) -%}
{{ d.div('(1 - ' ~ m.p ~ ') * coalesce(' ~ m.id ~ '_s, 0.0)', '1 - pow(' ~ m.p ~ ', ' ~ m.max_depth ~ ')') }}
{%- endmacro %}
