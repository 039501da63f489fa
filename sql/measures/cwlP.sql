{# cwlP@k, precision in C/W/L form (cwl_eval's P@k, PrecisionCWLMetric), a C/W/L measure
   (sql/_cwl.sql): C(i) = 1 for i < k, 0 from k on, so P(i) = 1 for i <= K = min(k, N): the
   gain of ranks 1..K over K (graded precision; binary gains give P@k). cwl_eval refuses a
   k above N + 1. #}
{% import '_dialect.sql' as d %}
{% import '_cwl.sql' as cwl %}
{% macro aggs(m) -%}
{{ d.fsum() }}({{ cwl.gain(m) }}) FILTER (WHERE grade > 0 AND {{ m.pos }} <= {{ cwl.depth(m) }}) AS {{ m.id }}_s
{%- endmacro %}
{% macro value(m) -%}
{{ d.div('coalesce(' ~ m.id ~ '_s, 0.0)', cwl.depth(m)) }}
{%- endmacro %}
