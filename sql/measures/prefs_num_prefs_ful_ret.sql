{# prefs_num_prefs_ful_ret: preferences a > b fulfilled with both retrieved, a above b (trec_eval 10.0) #}
{% import '_dialect.sql' as d %}
{% macro jg_aggs(m) -%}
sum(ful_ret) AS {{ m.id }}_f
{%- endmacro %}
{% macro value(m) -%}
{{ m.id }}_f
{%- endmacro %}
