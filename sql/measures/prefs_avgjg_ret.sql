{# prefs_avgjg_ret: prefs_avgjg of the preferences with both documents retrieved (trec_eval 10.0) #}
{% import '_dialect.sql' as d %}
{% macro jg_aggs(m) -%}
{{ d.fsum() }}(CASE WHEN poss_ret > 0 THEN {{ d.div('ful_ret', 'poss_ret') }} ELSE 0 END) AS {{ m.id }}_s
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.id }}_s > 0 THEN {{ d.div(m.id ~ '_s', 'n_jgs') }} END
{%- endmacro %}
