{# The estimated number of relevant documents retrieved, as sample_eval computes it
   (inum_rel_ret): est at the last document of the prels retrieved within min(k, 1,000)
   (0 if none). #}
{% macro strata_aggs(m) -%}
max_by(est, rank) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_e
{%- endmacro %}
{% macro value(m) -%}
coalesce({{ m.id }}_e, 0)
{%- endmacro %}
