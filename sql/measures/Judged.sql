{# Judged@k = judged documents in the top min(k, n) / min(k, n); 0 if nothing retrieved. #}
{% import '_dialect.sql' as d %}
{% import '_expected.sql' as ex %}
{% macro aggs(m) -%}
count(*) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_j
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ m.n }} > 0 THEN {{ d.div('coalesce(' ~ m.id ~ '_j, 0)', m.by_cutoff('least(' ~ m.k ~ ', ' ~ m.n ~ ')', m.n)) }} ELSE 0 END
{%- endmacro %}
{# The judged fraction is not 0 at a tie's places without relevant documents. #}
{% set expected_every_position = true %}
{% macro expected_aggs(m) -%}
{{ d.fsum() }}({{ ex.judged() }}) FILTER (WHERE {{ m.within }}) AS {{ m.id }}_j
{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql): a derived qrels judges the root's
  judged documents less its removed ones, so its count is the root's less the removed rows
  within the cut-off. -#}
{% set many = 'delta' %}
{% macro many_aggs(m) -%}
SELECT ts.qid, ts.rid, coalesce(h.j, 0) - coalesce(o.j, 0) AS {{ m.id }}_j
FROM topicset AS ts
LEFT JOIN (SELECT rid, count(*) AS j FROM rbase WHERE {{ m.within }} GROUP BY rid) AS h
  ON h.rid = ts.rid
LEFT JOIN (SELECT qid, rid, count(*) AS j FROM rem_rows WHERE {{ m.within }} GROUP BY qid, rid) AS o
  ON o.qid = ts.qid AND o.rid = ts.rid
WHERE ts.rid IS NOT NULL
{%- endmacro %}
