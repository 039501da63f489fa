{# ERR@k (Chapelle et al. 2009) = sum_{r<=k} (1/r) R_r prod_{i<r} (1 - R_i), with
   R_i = (2^g_i - 1) / 2^gmax for the grade g_i (at most gmax) of a judged document and 0
   for an unjudged one; gmax defaults to the top grade of the qrels. The product over the
   documents above is exp of the running sum of ln(1 - R_i) less the row's own term. #}
{% import '_dialect.sql' as d %}
{% macro prob(m) -%}
{% set g = 'coalesce(' ~ m.gmax ~ ', ' ~ m.top_grade ~ ')' %}
{{ d.div('pow(2, least(grade, ' ~ g ~ ')) - 1', 'pow(2, ' ~ g ~ ')') }}
{%- endmacro %}
{% macro running(m) -%}
{{ d.running_fsum('ln(1 - ' ~ prob(m) ~ ')') }}
{%- endmacro %}
{% macro aggs(m) -%}
{{ d.fsum() }}({{ d.div(prob(m), m.pos) }} * exp({{ m.run }} - ln(1 - {{ prob(m) }}))) FILTER (WHERE grade > 0 AND {{ m.within }}) AS {{ m.id }}_s
{%- endmacro %}
{% macro value(m) -%}
coalesce({{ m.id }}_s, 0)
{%- endmacro %}
