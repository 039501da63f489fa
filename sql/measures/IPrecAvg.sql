{# IPrecAvg(recalls) = the mean of IPrec@r over the levels r of `recalls` (trec_eval 11pt_avg
   at its default 0, 0.1, ..., 1). running(m) is the best precision at or below each row
   (the largest C(i)/i over the relevant rows from it down); a level needing c relevant
   documents takes it at the c-th relevant row, so the sum over the levels is, over the
   relevant rows, that value times the number of levels that need that row. #}
{% import '_dialect.sql' as d %}
{% import 'measures/IPrec.sql' as ip %}
{% macro running(m) -%}
max(CASE WHEN {{ m.rel }} THEN {{ d.div(m.c_rel, m.pos) }} END) OVER (PARTITION BY run_id, topic ORDER BY rank DESC ROWS UNBOUNDED PRECEDING)
{%- endmacro %}
{% macro aggs(m) -%}
{{ d.fsum() }}({{ m.run }} * {{ m.list_count('recalls', ip.needed('{x}', m.R) ~ ' = ' ~ m.c_rel) }}) FILTER (WHERE {{ m.rel }}) AS {{ m.id }}_s
{%- endmacro %}
{% macro value(m) -%}
{{ d.div('coalesce(' ~ m.id ~ '_s, 0)', m.list_length('recalls')) }}
{%- endmacro %}
