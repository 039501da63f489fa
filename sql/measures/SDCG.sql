{# SDCG@k, scaled DCG (cwl_eval's NDCG-k, ir_measures' SDCG), a C/W/L measure
   (sql/_cwl.sql): C(i) = log2(i + 1) / log2(i + 2) for i < k, 0 from k on, so
   P(i) = 1 / log2(i + 1) for i <= K = min(k, N): DCG@k of the gains divided by the DCG of
   K documents of gain 1. #}
{% import '_dialect.sql' as d %}
{% import '_cwl.sql' as cwl %}
{% macro aggs(m) -%}
{{ d.fsum() }}({{ d.div(cwl.gain(m), 'log2(' ~ m.pos ~ ' + 1)') }}) FILTER (WHERE grade > 0 AND {{ m.pos }} <= {{ cwl.depth(m) }}) AS {{ m.id }}_s
{%- endmacro %}
{% macro value(m) -%}
{{ d.div('coalesce(' ~ m.id ~ '_s, 0.0)', '(SELECT ' ~ d.fsum() ~ '(' ~ d.div('1', 'log2(i + 1)') ~ ') FROM (' ~ d.integers(cwl.depth(m)) ~ ') AS ks)') }}
{%- endmacro %}
