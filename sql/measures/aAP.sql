{# aAP@k = SP@k / min(k, R) (abbreviated normalization, Webber et al. 2010). #}
{% macro aggs(m) -%}
sum({{ m.c_rel }} / {{ m.pos }}) FILTER (WHERE {{ m.rel }} AND {{ m.within }}) AS {{ m.id }}_sp
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.R }} > 0 THEN coalesce({{ m.id }}_sp, 0) / {% if m.k %}least({{ m.k }}, {{ m.R }}){% else %}{{ m.R }}{% endif %} ELSE 0 END
{%- endmacro %}
