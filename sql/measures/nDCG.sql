{# nDCG@k = DCG@k / IDCG@k, the ideal ranking truncated at k (trec_eval ndcg_cut_k);
   without k the whole run against the whole ideal ranking (trec_eval ndcg). #}
{% import '_dialect.sql' as d %}
{% macro aggs(m) -%}
{{ d.fsum() }}(({{ m.gain }}) * {{ m.disc(m.pos) }}) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_dcg
{%- endmacro %}
{% macro ideal(m) -%}
{{ d.fsum() }}(gain * {{ m.disc('irank') }}) FILTER (WHERE {{ m.ideal_within }}) AS {{ m.id }}_idcg
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN coalesce({{ m.id }}_idcg, 0) > 0 THEN {{ d.div('coalesce(' ~ m.id ~ '_dcg, 0)', m.id ~ '_idcg') }} ELSE 0 END
{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql): the aggregates use only the rows
    of grade >= 1, their rank, grade and running relevant count. -#}
{% set many = 'rows' %}
