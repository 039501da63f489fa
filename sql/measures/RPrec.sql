{# RPrec = P@R: relevant documents among the top R, divided by R. With mult, trec_eval's
   Rprec_mult: P@c at c = floor(mult * R + 0.9) (relevant among the top c, divided by c; a
   run shorter than c is filled with non-relevant documents), 0 when c = 0. At mult = 1,
   c = R. #}
{% import '_dialect.sql' as d %}
{% import '_expected.sql' as ex %}
{# The cut-off c for a topic with R relevant documents (an SQL expression). #}
{% macro cut(m, R) -%}
{{ d.cast('floor(' ~ m.mult ~ ' * ' ~ R ~ ' + ' ~ (0.9 | num) ~ ')', 'BIGINT') }}
{%- endmacro %}
{% macro aggs(m) -%}
count(*) FILTER (WHERE {{ m.rel }} AND {{ m.pos }} <= {{ cut(m, m.R) }}) AS {{ m.id }}_hits
{%- endmacro %}
{% macro value(m) -%}
CASE WHEN {{ cut(m, m.R) }} > 0 THEN {{ d.div('coalesce(' ~ m.id ~ '_hits, 0)', cut(m, m.R)) }} ELSE 0 END
{%- endmacro %}
{% macro expected_aggs(m) -%}
{{ d.fsum() }}({{ ex.rel(m) }}) FILTER (WHERE {{ m.pos }} <= {{ cut(m, m.R) }}) AS {{ m.id }}_hits
{%- endmacro %}

{#- Many derived qrels in one pass (sql/evaluate_many.sql), binary threshold 1, full rankings:
  the root's relevant rows ranked within c (from the qrels's R) minus the removed ones. -#}
{% set many = 'delta' %}
{% macro many_aggs(m) -%}
WITH rp_at AS (
    SELECT ts.qid, ts.rid, {{ cut(m, 'coalesce(t.' ~ m.R ~ ', 0)') }} AS x
    FROM topicset AS ts LEFT JOIN tstats AS t ON t.qid = ts.qid AND t.topic = ts.topic
    WHERE ts.rid IS NOT NULL
),
rp_hits AS (
    SELECT p.rid, p.x, count(rb.rank) AS h
    FROM (SELECT DISTINCT rid, x FROM rp_at) AS p
    LEFT JOIN rbase AS rb ON rb.rid = p.rid AND rb.grade >= 1 AND rb.rank <= p.x
    GROUP BY p.rid, p.x
),
rp_out AS (
    SELECT a.qid, a.rid, count(*) AS k
    FROM rp_at AS a
    JOIN rem_rows AS r ON r.qid = a.qid AND r.rid = a.rid AND r.grade >= 1 AND r.rank <= a.x
    GROUP BY a.qid, a.rid
)
SELECT a.qid, a.rid, h.h - coalesce(o.k, 0) AS {{ m.id }}_hits
FROM rp_at AS a
JOIN rp_hits AS h ON h.rid = a.rid AND h.x = a.x
LEFT JOIN rp_out AS o ON o.qid = a.qid AND o.rid = a.rid
{%- endmacro %}
