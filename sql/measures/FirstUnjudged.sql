{# FirstUnjudged = rank of the first unjudged document; length + 1 if all are judged.
   Judged rows form an unbroken prefix exactly while rank = condensed rank. #}
{% macro aggs(m) -%}
count(*) FILTER (WHERE rank = crank) AS {{ m.id }}_prefix
{%- endmacro %}
{% macro value(m) -%}
{{ m.by_judged(m.n ~ ' + 1', 'coalesce(' ~ m.id ~ '_prefix, 0) + 1') }}
{%- endmacro %}
