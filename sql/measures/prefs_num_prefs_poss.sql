{# prefs_num_prefs_poss: the preferences of the topic's judgment groups, retrieved or not (trec_eval 10.0) #}
{% import '_dialect.sql' as d %}
{% macro jg_aggs(m) -%}
sum(poss_ret + poss_imp + notoccur) AS {{ m.id }}_p
{%- endmacro %}
{% macro value(m) -%}
{{ m.id }}_p
{%- endmacro %}
