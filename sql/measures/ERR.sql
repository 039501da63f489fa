{# ERR@k (Chapelle et al. 2009) = sum_{r<=k} (1/r) R_r prod_{i<r} (1 - R_i), with
   R_i = (2^g_i - 1) / 2^gmax for the grade g_i (at most gmax) of a judged document and 0
   for an unjudged one; gmax defaults to the top grade of the qrels. The product over the
   documents above is exp of the running sum of ln(1 - R_i) less the row's own term. #}
{% import '_dialect.sql' as d %}
{% import '_expected.sql' as ex %}
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
{# Tie policy expected: the product over the documents above a tie is the same in every
   ordering (the largest running sum before one of its documents); within the tie, the
   expectation of R at a place times the product over the tie's documents above it. #}
{% macro tie_aggs(m) -%}
{{ ex.symmetric('list(1 - ' ~ prob(m) ~ ') FILTER (WHERE grade > 0)') }} AS {{ m.id }}_te,
max({{ m.run }} - ln(1 - {{ prob(m) }})) AS {{ m.id }}_ta
{%- endmacro %}
{% macro tie_holds(m) -%}
len({{ m.id }}_te) > 1
{%- endmacro %}
{% macro expected_aggs(m) -%}
{{ d.fsum() }}({{ d.div('exp(' ~ m.id ~ '_ta) * ' ~ ex.weighted_before(m.id ~ '_te'), m.pos) }}) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_s
{%- endmacro %}
