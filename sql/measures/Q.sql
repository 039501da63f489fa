{# Q(beta)@k = (1/R) * sum_{relevant i<=k} (C(i) + beta*cg(i)) / (i + beta*cg_I(i)),
   cg_I the cumulative gain of the ideal ranking at i (its total beyond its length). #}
{% import '_dialect.sql' as d %}
{% macro rowjoin(m) -%}
LEFT JOIN ideal_{{ m.gkey }} AS {{ m.id }}_i ON {{ m.id }}_i.topic = b.topic AND {{ m.id }}_i.irank = {{ m.pos_in('b') }}
    LEFT JOIN itot_{{ m.gkey }} AS {{ m.id }}_t ON {{ m.id }}_t.topic = b.topic
{%- endmacro %}
{% macro rowcols(m) -%}
coalesce({{ m.id }}_i.cgi, {{ m.id }}_t.total_{{ m.gkey }}, 0) AS {{ m.id }}_cgi
{%- endmacro %}
{% macro aggs(m) -%}
{{ d.fsum() }}({{ d.div(m.c_rel ~ ' + ' ~ m.beta ~ ' * ' ~ m.cg, m.pos ~ ' + ' ~ m.beta ~ ' * ' ~ m.id ~ '_cgi') }}) FILTER (WHERE {{ m.rel }} AND {{ m.within }}) AS {{ m.id }}_s
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.R }} > 0 THEN {{ d.div('coalesce(' ~ m.id ~ '_s, 0)', m.R) }} ELSE 0 END
{%- endmacro %}
