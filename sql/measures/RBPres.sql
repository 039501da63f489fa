{# RBPres(p)@k = (1 - p) * sum_{i<=n', i unjudged} p^(i-1) + p^n', n' = min(k, n).
   The weight of all ranks 1..n' is 1 - p^n', so this equals 1 - (1 - p) * the sum of
   p^(i-1) over the judged ranks i <= n': only judged rows are needed.
   With zero_if_judged (trec_eval's rbp_resid) it is 0 when every document within
   min(k, n) is judged. #}
{% import '_dialect.sql' as d %}
{% macro aggs(m) -%}
{{ d.fsum() }}(pow({{ m.p }}, {{ m.pos }} - 1)) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_j,
    count(*) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_nj
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.zero_if_judged }} AND coalesce({{ m.id }}_nj, 0) >= {{ m.by_cutoff('least(' ~ m.k ~ ', ' ~ m.n ~ ')', m.n) }} THEN 0
     ELSE 1 - (1 - {{ m.p }}) * coalesce({{ m.id }}_j, 0) END
{%- endmacro %}
