{# IDCG@k: the DCG of the ideal ranking (the judged documents by gain, descending), truncated
   at k; without k the whole ideal ranking (trec_eval ideal_dcg). #}
{% import '_dialect.sql' as d %}
{% macro aggs(m) -%}
count(*) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_n
{%- endmacro %}
{% macro ideal(m) -%}
{{ d.fsum() }}(gain * {{ m.disc('irank') }}) FILTER (WHERE {{ m.ideal_within }}) AS {{ m.id }}_idcg
{%- endmacro %}
{% macro value(m) -%}
coalesce({{ m.id }}_idcg, 0)
{%- endmacro %}
{#- Independent of the order: the same aggregates under every tie policy. -#}
{% macro expected_aggs(m) -%}{{ aggs(m) }}{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql): the aggregates use only the rows
    of grade >= 1, their rank, grade and running relevant count. -#}
{% set many = 'rows' %}
