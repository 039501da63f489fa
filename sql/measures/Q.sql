{# Q(beta)@k = (1/R) * sum_{relevant i<=k} (C(i) + beta*cg(i)) / (i + beta*cg_I(i)),
   cg_I the cumulative gain of the ideal ranking at i (its total beyond its length). #}
{% import '_dialect.sql' as d %}
{% macro ideal_rows(m) -%}
SELECT topic, irank, cgi AS v FROM {{ m.ideal_ranking }}
{%- endmacro %}
{% macro aggs(m) -%}
{{ d.fsum() }}({{ d.div(m.c_rel ~ ' + ' ~ m.beta ~ ' * ' ~ m.cg, m.pos ~ ' + ' ~ m.beta ~ ' * coalesce(' ~ m.iv ~ ', 0)') }}) FILTER (WHERE {{ m.rel }} AND {{ m.within }}) AS {{ m.id }}_s
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.R }} > 0 THEN {{ d.div('coalesce(' ~ m.id ~ '_s, 0)', m.R) }} ELSE 0 END
{%- endmacro %}
