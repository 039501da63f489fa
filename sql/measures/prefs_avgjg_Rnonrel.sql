{# prefs_avgjg_Rnonrel: prefs_avgjg with each group's non-relevant documents (level 0) counted
   as R, its relevant ones (trec_eval 10.0): with N <= R non-relevant, R - N more are taken as
   ranked below every relevant one retrieved (n_rel_ret (R - N) fulfilled, R (R - N) possible);
   with N > R, only the first R of them count (jgs.cut_ful, cut_poss). A group whose count of
   possible preferences is 0 makes the value 0, as trec_eval's 0/0 does. #}
{% import '_dialect.sql' as d %}
{% macro jg_aggs(m) -%}
{% set f %}CASE WHEN n_rel >= n_nonrel THEN ful_ret + ful_imp + n_rel_ret * (n_rel - n_nonrel) ELSE cut_ful END{% endset %}
{% set p %}CASE WHEN n_rel >= n_nonrel THEN poss_ret + poss_imp + notoccur + n_rel * (n_rel - n_nonrel) ELSE cut_poss END{% endset %}
{{ d.fsum() }}(CASE WHEN {{ p }} > 0 THEN {{ d.div(f, p) }} ELSE 0 END) AS {{ m.id }}_s,
count(*) FILTER (WHERE {{ p }} = 0) AS {{ m.id }}_z
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.id }}_z = 0 AND {{ m.id }}_s > 0 THEN {{ d.div(m.id ~ '_s', 'n_jgs') }} END
{%- endmacro %}
