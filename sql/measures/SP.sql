{# SP@k = sum_{relevant i<=k} P@i = sum of C(i)/i over relevant ranks i <= k. #}
{% macro aggs(m) -%}
sum({{ m.c_rel }} / {{ m.pos }}) FILTER (WHERE {{ m.rel }} AND {{ m.within }}) AS {{ m.id }}_sp
{%- endmacro %}
{% macro value(m) -%}
coalesce({{ m.id }}_sp, 0)
{%- endmacro %}
