{# prefs_num_prefs_ful: preferences a > b fulfilled, a ranked above b or a retrieved and b not (trec_eval 10.0) #}
{% import '_dialect.sql' as d %}
{% macro jg_aggs(m) -%}
sum(ful_ret + ful_imp) AS {{ m.id }}_f
{%- endmacro %}
{% macro value(m) -%}
{{ m.id }}_f
{%- endmacro %}
