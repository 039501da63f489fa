{# aAP@k = SP@k / min(k, R) (abbreviated normalization, Webber et al. 2010). #}
{% macro aggs(m) -%}
sum({{ m.c_rel }} / {{ m.pos }}) FILTER (WHERE {{ m.rel }} AND {{ m.within }}) AS {{ m.id }}_sp
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.R }} > 0 THEN coalesce({{ m.id }}_sp, 0) / {{ m.by_cutoff('least(' ~ m.k ~ ', ' ~ m.R ~ ')', m.R) }} ELSE 0 END
{%- endmacro %}
