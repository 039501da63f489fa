{# prefs_avgjg_imp: prefs_avgjg of the preferences with a document retrieved (trec_eval 10.0) #}
{% import '_dialect.sql' as d %}
{% macro jg_aggs(m) -%}
{{ d.fsum() }}(CASE WHEN poss_ret + poss_imp > 0 THEN {{ d.div('ful_ret + ful_imp', 'poss_ret + poss_imp') }} ELSE 0 END) AS {{ m.id }}_s
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.id }}_s > 0 THEN {{ d.div(m.id ~ '_s', 'n_jgs') }} END
{%- endmacro %}
