{# NumRet@k = documents retrieved (within k). #}
{% macro aggs(m) -%}
count(*) AS {{ m.id }}_unused
{%- endmacro %}
{% macro value(m) -%}
{{ m.by_cutoff('least(' ~ m.k ~ ', ' ~ m.n ~ ')', m.n) }}
{%- endmacro %}
{#- Independent of the order: the same aggregates under every tie policy. -#}
{% macro expected_aggs(m) -%}{{ aggs(m) }}{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql): the aggregates use only the rows
    of grade >= 1, their rank, grade and running relevant count. -#}
{% set many = 'rows' %}
