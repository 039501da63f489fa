{# G (trec_eval, experimental): the sum over the ranking of g_i / log2(2 + cost(i) - cg(i)),
   divided by the ideal ranking's total gain; cg(i) the gain retrieved up to i and cost(i)
   the sum up to i of max(ideal gain at j, 1) -- 1 for each rank beyond the ideal's end. #}
{% import '_dialect.sql' as d %}
{% macro ideal_rows(m) -%}
SELECT topic, irank, {{ d.running_fsum('greatest(gain, 1)', 'irank', 'topic') }} AS v
FROM {{ m.ideal_ranking }}
{%- endmacro %}
{% macro aggs(m) -%}
{% set cost = '(coalesce(' ~ m.iv ~ ', 0) + ' ~ m.pos ~ ' - coalesce(' ~ m.ipos ~ ', 0))' %}
{{ d.fsum() }}({{ d.div(m.gain, 'log2(2 + ' ~ cost ~ ' - ' ~ m.cg ~ ')') }}) FILTER (WHERE ({{ m.gain }}) <> 0) AS {{ m.id }}_s
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN coalesce(total_{{ m.gkey }}, 0) > 0 THEN {{ d.div('coalesce(' ~ m.id ~ '_s, 0)', 'total_' ~ m.gkey) }} ELSE 0 END
{%- endmacro %}
