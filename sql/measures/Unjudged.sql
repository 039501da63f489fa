{# Unjudged@k = unjudged documents in the top min(k, n) divided by k (trec_eval unj_k: a
   run shorter than k is filled with judged documents); without k, divided by n; 0 when
   nothing is retrieved. #}
{% import '_dialect.sql' as d %}
{% import '_expected.sql' as ex %}
{% macro aggs(m) -%}
count(*) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_j
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.n }} > 0
     THEN {{ d.div(m.by_cutoff('least(' ~ m.k ~ ', ' ~ m.n ~ ')', m.n) ~ ' - coalesce(' ~ m.id ~ '_j, 0)', m.by_cutoff(m.k, m.n)) }}
     ELSE 0 END
{%- endmacro %}
{# The judged fraction is not 0 at a tie's places without relevant documents. #}
{% set expected_every_position = true %}
{% macro expected_aggs(m) -%}
{{ d.fsum() }}({{ ex.judged() }}) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_j
{%- endmacro %}
