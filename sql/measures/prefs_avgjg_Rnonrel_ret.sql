{# prefs_avgjg_Rnonrel_ret: prefs_avgjg_Rnonrel of the retrieved documents (trec_eval 10.0):
   R and N the relevant and non-relevant documents retrieved; with N <= R, n_rel_ret (R - N)
   fulfilled and n_rel (R - N) possible preferences are added (the group's relevant documents,
   retrieved or not, as trec_eval counts); with N > R, only the first R non-relevant retrieved
   count (jgs.cut_ful_ret, cut_poss_ret). A group whose count of possible preferences is 0
   makes the value 0, as trec_eval's 0/0 does. #}
{% import '_dialect.sql' as d %}
{% macro jg_aggs(m) -%}
{% set f %}CASE WHEN n_rel_ret >= n_nonrel_ret THEN ful_ret + n_rel_ret * (n_rel_ret - n_nonrel_ret) ELSE cut_ful_ret END{% endset %}
{% set p %}CASE WHEN n_rel_ret >= n_nonrel_ret THEN poss_ret + n_rel * (n_rel_ret - n_nonrel_ret) ELSE cut_poss_ret END{% endset %}
{{ d.fsum() }}(CASE WHEN {{ p }} > 0 THEN {{ d.div(f, p) }} ELSE 0 END) AS {{ m.id }}_s,
count(*) FILTER (WHERE {{ p }} = 0) AS {{ m.id }}_z
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.id }}_z = 0 AND {{ m.id }}_s > 0 THEN {{ d.div(m.id ~ '_s', 'n_jgs') }} END
{%- endmacro %}
