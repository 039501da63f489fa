{# enDCG@k = DCG@k / DCG of the whole ideal ranking (expanded normalization).
   The body is nDCG's (sql/_dcg.sql), the ideal ranking uncut. #}
{% import '_dcg.sql' as dcg %}
{% macro aggs(m) -%}{{ dcg.aggs(m) }}{%- endmacro %}
{% macro expected_aggs(m) -%}{{ dcg.expected_aggs(m) }}{%- endmacro %}
{% macro ideal(m) -%}{{ dcg.ideal(m) }}{%- endmacro %}
{% macro value(m) -%}{{ dcg.value(m) }}{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql): the aggregates use only the rows
    of grade >= 1, their rank, grade and running relevant count. -#}
{% set many = 'rows' %}
