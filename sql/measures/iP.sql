{# Inferred precision at k, as sample_eval computes it (iP10, iP50, iP1000): the estimated
   relevant retrieved at rank min(k, n, 1,000) (est of the last document of the prels
   retrieved there; 0 if none), divided by k. #}
{% import '_dialect.sql' as d %}
{% macro strata_aggs(m) -%}
max_by(est, rank) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_e
{%- endmacro %}
{% macro value(m) -%}
{{ d.div('coalesce(' ~ m.id ~ '_e, 0)', m.k) }}
{%- endmacro %}
