{# FirstUnjudged = rank of the first unjudged document; length + 1 if all are judged.
   Judged rows form an unbroken prefix exactly while rank = condensed rank. #}
{% macro aggs(m) -%}
count(*) FILTER (WHERE rank = crank) AS {{ m.id }}_prefix
{%- endmacro %}
{% macro value(m) -%}
{{ m.by_judged(m.n ~ ' + 1', 'coalesce(' ~ m.id ~ '_prefix, 0) + 1') }}
{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql): ranks 1..P are judged by the root
  (P its judged prefix); a derived qrels lacks the removed ones, so its prefix ends before
  the first removed row, or at P: least(P, first removed rank - 1). -#}
{% set many = 'delta' %}
{% macro many_aggs(m) -%}
SELECT ts.qid, ts.rid,
       least(coalesce(p.prefix, 0), coalesce(o.first_out - 1, {{ 2147483647 | num }})) AS {{ m.id }}_prefix
FROM topicset AS ts
LEFT JOIN (SELECT rid, count(*) AS prefix FROM rbase WHERE rank = crank GROUP BY rid) AS p
  ON p.rid = ts.rid
LEFT JOIN (SELECT qid, rid, min(rank) AS first_out FROM rem_rows GROUP BY qid, rid) AS o
  ON o.qid = ts.qid AND o.rid = ts.rid
WHERE ts.rid IS NOT NULL
{%- endmacro %}
