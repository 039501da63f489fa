{# RBPres(p)@k = (1 - p) * sum_{i<=n', i unjudged} p^(i-1) + p^n', n' = min(k, n).
   The weight of all ranks 1..n' is 1 - p^n', so this equals 1 - (1 - p) * the sum of
   p^(i-1) over the judged ranks i <= n': only judged rows are needed. #}
{% import '_dialect.sql' as d %}
{% macro aggs(m) -%}
{{ d.fsum() }}(pow({{ m.p }}, {{ m.pos }} - 1)) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_j
{%- endmacro %}
{% macro value(m) -%}
1 - (1 - {{ m.p }}) * coalesce({{ m.id }}_j, 0)
{%- endmacro %}
