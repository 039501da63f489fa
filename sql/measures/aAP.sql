{# aAP@k = SP@k / min(k, R) (abbreviated normalization, Webber et al. 2010). #}
{% import '_dialect.sql' as d %}
{% macro aggs(m) -%}
{{ d.fsum() }}({{ d.div(m.c_rel, m.pos) }}) FILTER (WHERE {{ m.rel }} AND {{ m.within }}) AS {{ m.id }}_sp
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.R }} > 0 THEN {{ d.div('coalesce(' ~ m.id ~ '_sp, 0)', m.by_cutoff('least(' ~ m.k ~ ', ' ~ m.R ~ ')', m.R)) }} ELSE 0 END
{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql): the aggregates use only the rows
    of grade >= 1, their rank, grade and running relevant count. -#}
{% set many = 'rows' %}
