{# prefs_simp_imp: preferences fulfilled over preferences possible, of those with a document retrieved (trec_eval 10.0) #}
{% import '_dialect.sql' as d %}
{% macro jg_aggs(m) -%}
sum(ful_ret + ful_imp) AS {{ m.id }}_f, sum(poss_ret + poss_imp) AS {{ m.id }}_p
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.id }}_p > 0 THEN {{ d.div(m.id ~ '_f', m.id ~ '_p') }} END
{%- endmacro %}
