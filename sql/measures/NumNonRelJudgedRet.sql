{# NumNonRelJudgedRet@k = judged documents retrieved (within k) below the relevance
   threshold (trec_eval num_nonrel_judged_ret). #}
{% macro aggs(m) -%}
count(*) FILTER (WHERE NOT ({{ m.rel }}) AND {{ m.within }}) AS {{ m.id }}_n
{%- endmacro %}
{% macro value(m) -%}
coalesce({{ m.id }}_n, 0)
{%- endmacro %}
