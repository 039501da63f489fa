{# nDCG@k = DCG@k / IDCG@k, the ideal ranking truncated at k (trec_eval ndcg_cut_k);
   without k the whole run against the whole ideal ranking (trec_eval ndcg).
   The body is enDCG's (sql/_dcg.sql), the ideal ranking cut at k. #}
{% import '_dcg.sql' as dcg %}
{% macro aggs(m) -%}{{ dcg.aggs(m) }}{%- endmacro %}
{% macro expected_aggs(m) -%}{{ dcg.expected_aggs(m) }}{%- endmacro %}
{% macro ideal(m) -%}{{ dcg.ideal(m, m.ideal_within) }}{%- endmacro %}
{% macro value(m) -%}{{ dcg.value(m) }}{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql): the aggregates use only the rows
    of grade >= 1, their rank, grade and running relevant count. -#}
{% set many = 'rows' %}
