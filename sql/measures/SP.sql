{# SP@k = sum_{relevant i<=k} P@i = sum of C(i)/i over relevant ranks i <= k. #}
{% import '_dialect.sql' as d %}
{% import '_expected.sql' as ex %}
{% macro aggs(m) -%}
{{ d.fsum() }}({{ d.div(m.c_rel, m.pos) }}) FILTER (WHERE {{ m.rel }} AND {{ m.within }}) AS {{ m.id }}_sp
{%- endmacro %}
{% macro value(m) -%}
coalesce({{ m.id }}_sp, 0)
{%- endmacro %}
{% macro expected_aggs(m) -%}
{{ d.fsum() }}({{ d.div(ex.rel_count(m), m.pos) }}) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_sp
{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql): the aggregates use only the rows
    of grade >= 1, their rank, grade and running relevant count. -#}
{% set many = 'rows' %}
