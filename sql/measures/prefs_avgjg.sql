{# prefs_avgjg: a group's preferences fulfilled over possible, averaged over the groups (a group without preferences adds 0) (trec_eval 10.0) #}
{% import '_dialect.sql' as d %}
{% macro jg_aggs(m) -%}
{{ d.fsum() }}(CASE WHEN poss_ret + poss_imp + notoccur > 0 THEN {{ d.div('ful_ret + ful_imp', 'poss_ret + poss_imp + notoccur') }} ELSE 0 END) AS {{ m.id }}_s
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.id }}_s > 0 THEN {{ d.div(m.id ~ '_s', 'n_jgs') }} END
{%- endmacro %}
