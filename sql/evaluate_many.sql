{#-
  The measure engine over many derived qrels of one root in one pass (irwarehouse.engine.many.evaluate_many).

  Every qrels of P.qrels is derived from the loaded qrels P.root, whose materialized base is
  current; a qrels whose judgments are a subset of the root's with the same grades has as
  base rows the root's minus those of its REMOVED judgments (the root's judgments it lacks).
  The scores equal those of sql/evaluate.sql run once per qrels; the per-topic context (R, N,
  ideal rankings, topic set) is computed per qrels from its judgments, the per-ranking
  aggregates from the root's base and the removed rows, as each measure file declares:

    many = 'rows'   the measure's aggregates use only the rows of grade >= 1 (relevant or of
                    positive gain), their rank, grade and running relevant count: a ranking
                    that lost no such row keeps the root's aggregates; the others are
                    aggregated afresh (same aggs(m)) from the root's rows of grade >= 1, cut
                    into segments by the removed ones (a running count is the root's minus
                    the removed rows above).
    many = 'delta'  the measure's file defines many_aggs(m): its aggregates per (qid, rid), in
                    closed form from the root's base, the removed rows and R, N.

  Python (irwarehouse.engine.rendering.many_kind) chooses which measures and settings take this route; the
  others are evaluated per qrels. Three queries (`part`), run in turn:
    judgments  every qrels's judgments with their id in the root (NULL: the qrels is not a
               subset of the root; it is evaluated per qrels), into the table `judgments`
    removed    (qid, jid): the root's judgments each qrels lacks, into the table `removed`
    scores     qrels, run_id, topic, measure, value of the subset qrels
  or, when irw recorded what each qrels lacks of the root (irw_derived_removed; used while
  both qrels are as recorded: caches.sql, recorded_subsets), two, which never read the
  derived qrels's judgments:
    recorded_removed  the table `removed` from the records, with each judgment's topic and
                      grade
    recorded_scores   the scores, each qrels's counts being the root's minus the removed
                      judgments
  Context as for evaluate.sql (measures, thresholds, gainsets, topics, topic_threshold,
  max_docs); P: root, qrels (a list), collection, runs.

  Relations the measures' many_aggs macros may use, keyed by integers (qid numbers the
  qrels, rid the rankings (run, topic) of the selected runs):
    rbase      the root's base rows of the selected runs (rid, topic, rank, jid, crank, grade,
               c_rel), rank <= max_docs
    rem_rows   the same rows of the removed judgments, per qrels (qid, rid, ...)
    tstats     R and N per (qid, topic)
    topicset   the (qid, rid, topic) evaluated (rid NULL: the run retrieved nothing for it)
-#}
{% import '_dialect.sql' as d %}
{% import '_base.sql' as b %}
{% import 'many.sql' as many %}
{% set rows_measures = measures | selectattr('many', 'equalto', 'rows') | list %}
{% set delta_measures = measures | selectattr('many', 'equalto', 'delta') | list %}
{% set by = 'qid, rid' %}
{% set recorded = part.startswith('recorded') %}
{# R and N of every threshold, counted over rows of `grade`. #}
{% macro counts() -%}
{% for t in thresholds %}, count(*) FILTER (WHERE grade >= {{ t.value }}) AS {{ t.R }}, count(*) FILTER (WHERE grade < {{ t.value }}) AS {{ t.N }}{% endfor %}
{%- endmacro %}
{% if part == 'judgments' %}
{#- The judgments of every qrels (qid numbers them: many.qrels_numbers), each with its
    judgment id in the root (jid; NULL where the root lacks the judgment with that grade: then
    the qrels is not a subset of the root, and is evaluated per qrels); a qrels without
    judgments has one row, its topic NULL. Numbers, not names: the table is large. -#}
SELECT ql.qid, qj.topic, qj.rel AS grade, j.jid
FROM ({{ many.qrels_numbers(P.qrels) }}) AS ql
LEFT JOIN qrels AS qj ON qj.qrels = ql.qrels AND qj.rel >= 0
LEFT JOIN irw_judgment_ids({{ P.root }}) AS j ON j.topic = qj.topic AND j.docno = qj.docno AND j.rel = qj.rel
{% elif part == 'removed' %}
{#- The root's judgments each qrels lacks (qid, jid), from `judgments` (the table above). -#}
WITH nq AS (
    SELECT count(DISTINCT qid) AS n FROM {{ judgments }}
),
partial AS (
    -- the root's judgments some qrels lacks
    SELECT j.jid
    FROM irw_judgment_ids({{ P.root }}) AS j
    LEFT JOIN (SELECT jid, count(*) AS n FROM {{ judgments }} WHERE jid IS NOT NULL GROUP BY jid) AS c ON c.jid = j.jid
    WHERE coalesce(c.n, 0) < (SELECT n FROM nq)
),
holders AS (
    SELECT k.qid, k.jid FROM {{ judgments }} AS k WHERE k.jid IN (SELECT jid FROM partial)
)
SELECT ql.qid, p.jid
FROM partial AS p CROSS JOIN (SELECT DISTINCT qid FROM {{ judgments }}) AS ql
WHERE NOT EXISTS (SELECT 1 FROM holders AS h WHERE h.jid = p.jid AND h.qid = ql.qid)
{% elif part == 'recorded_removed' %}
{#- The same, with topic and grade, from what irw recorded when it wrote each qrels. -#}
SELECT ql.qid, r.jid, r.topic, r.grade
FROM ({{ many.qrels_numbers(P.qrels) }}) AS ql
JOIN irw_derived_removed AS r ON r.qrels = ql.qrels
{% else %}
WITH
rt AS (
    {{ b.ranking_lengths(P.collection) | indent(4) }}
),
sel AS (
    SELECT DISTINCT {{ d.unnest_list(P.runs) }} AS run_id
),
rids AS {{ d.materialized() }} (
    SELECT run_id, topic, row_number() OVER (ORDER BY run_id, topic) AS rid
    FROM rt WHERE run_id IN (SELECT run_id FROM sel)
),
{% if recorded %}
ql AS {{ d.materialized() }} (
    {{ many.qrels_numbers(P.qrels) | indent(4) }}
),
root_judg AS {{ d.materialized() }} (
    SELECT jid, topic, rel AS grade FROM irw_judgment_ids({{ P.root }})
),
-- the judgments of grade >= 1 (those of positive gain: rendering.many_kind), for the ideal
-- rankings: the root's less the removed
judg AS (
    SELECT ql.qid, rj.topic, rj.grade
    FROM ql CROSS JOIN (SELECT * FROM root_judg WHERE grade >= 1) AS rj
    WHERE NOT EXISTS (SELECT 1 FROM {{ removed }} AS x WHERE x.qid = ql.qid AND x.jid = rj.jid)
),
-- R and N: the root's less those of the removed judgments; a topic left without judgments
-- is not the qrels's
tstats AS {{ d.materialized() }} (
    SELECT ql.qid, rt.topic
{% for t in thresholds %}
         , rt.{{ t.R }} - coalesce(xt.{{ t.R }}, 0) AS {{ t.R }}
         , rt.{{ t.N }} - coalesce(xt.{{ t.N }}, 0) AS {{ t.N }}
{% endfor %}
    FROM ql
    CROSS JOIN (SELECT topic, count(*) AS n{{ counts() }} FROM root_judg GROUP BY topic) AS rt
    LEFT JOIN (SELECT qid, topic, count(*) AS n{{ counts() }} FROM {{ removed }} GROUP BY qid, topic) AS xt
      ON xt.qid = ql.qid AND xt.topic = rt.topic
    WHERE rt.n > coalesce(xt.n, 0)
),
{% else %}
ql AS {{ d.materialized() }} (
    {{ many.subsets(P.qrels, judgments) | indent(4) }}
),
judg AS (
    SELECT qid, topic, grade FROM {{ judgments }} WHERE topic IS NOT NULL AND qid IN (SELECT qid FROM ql)
),
tstats AS {{ d.materialized() }} (
    SELECT qid, topic{{ counts() }}
    FROM judg GROUP BY qid, topic
),
{% endif %}
gstats AS (
    SELECT ql.qid, g.topic, g.gmax_g
    FROM ql JOIN (SELECT qj.qrels, qj.topic, greatest(max(qj.rel), 0) AS gmax_g FROM qrels AS qj
                  WHERE qj.qrels IN (SELECT topic_qrels FROM ql) AND qj.rel >= 0
                  GROUP BY qj.qrels, qj.topic) AS g ON g.qrels = ql.topic_qrels
),
{% for g in gainsets %}
ideal_{{ g.key }} AS (
    SELECT qid, topic, gain, irank,
           sum(gain) OVER (PARTITION BY qid, topic ORDER BY irank ROWS UNBOUNDED PRECEDING) AS cgi
    FROM (SELECT qid, topic, gain,
                 row_number() OVER (PARTITION BY qid, topic ORDER BY gain DESC) AS irank
          FROM (SELECT qid, topic, {{ g.expr }} AS gain FROM judg) AS gj
          WHERE gain > 0) AS ranked
),
itot_{{ g.key }} AS (
    SELECT qid, topic, max(cgi) AS total_{{ g.key }}
{% for m in measures if m.gkey == g.key %}
{% if m.module.ideal is defined %}
         , {{ m.module.ideal(m) | indent(9) }}
{% endif %}
{% endfor %}
    FROM ideal_{{ g.key }} GROUP BY qid, topic
),
{% endfor %}
topicset AS {{ d.materialized() }} (
    SELECT ts.qid, r.rid, ts.run_id, ts.topic
    FROM (
{% if topics == 'qrels' %}
    SELECT ql.qid, s.run_id, t.topic
    FROM ql
    JOIN (SELECT qj.qrels AS tq, qj.topic FROM qrels AS qj
          WHERE qj.qrels IN (SELECT topic_qrels FROM ql) AND qj.rel >= 0
          GROUP BY qj.qrels, qj.topic HAVING count(*) FILTER (WHERE qj.rel >= {{ topic_threshold | num }}) >= 1) AS t
      ON t.tq = ql.topic_qrels
    CROSS JOIN sel s
{% elif topics == 'all' %}
    SELECT ql.qid, s.run_id, t.topic
    FROM ql
    JOIN (SELECT DISTINCT qj.qrels AS tq, qj.topic FROM qrels AS qj WHERE qj.qrels IN (SELECT topic_qrels FROM ql)) AS t
      ON t.tq = ql.topic_qrels
    CROSS JOIN sel s
{% else %}
    SELECT ql.qid, rt.run_id, rt.topic
    FROM ql
    JOIN (SELECT DISTINCT qj.qrels AS tq, qj.topic FROM qrels AS qj WHERE qj.qrels IN (SELECT topic_qrels FROM ql)) AS t
      ON t.tq = ql.topic_qrels
    JOIN rt ON rt.topic = t.topic
    WHERE rt.run_id IN (SELECT run_id FROM sel)
{% endif %}
    ) AS ts
    LEFT JOIN rids AS r ON r.run_id = ts.run_id AND r.topic = ts.topic
),
removed AS (
    SELECT qid, jid FROM {{ removed }} WHERE qid IN (SELECT qid FROM ql)
),
rbase AS {{ d.materialized() }} (
    SELECT r.rid, b.topic, b.rank, b.jid, b.crank, b.grade, b.c_rel
    FROM irw_base AS b JOIN rids AS r ON r.run_id = b.run_id AND r.topic = b.topic
    WHERE b.qrels = {{ P.root }}{% if max_docs %} AND b.rank <= {{ max_docs | num }}{% endif %}

),
rem_rows AS {{ d.materialized() }} (
    SELECT r.qid, rb.*
    FROM rbase AS rb JOIN removed AS r ON r.jid = rb.jid
),
{% if rows_measures %}
-- the root's rows of grade >= 1, with the running relevant counts of every threshold
rsup AS {{ d.materialized() }} (
    SELECT rb.rid, rb.rank, rb.grade, rb.c_rel
{% for t in thresholds if t.window %}
         , {{ d.running_count('grade >= ' ~ t.value, by='rid') }} AS {{ t.c_rel }}
{% endfor %}
    FROM rbase AS rb WHERE rb.grade >= 1
),
-- the rankings that lost a row of grade >= 1, cut into segments by the removed rows of
-- grade >= 1; within a segment, a running count is the root's minus the removed rows above
changed_seg AS {{ d.materialized() }} (
    SELECT qid, rid, rank AS lo_rank,
           coalesce(lead(rank) OVER (PARTITION BY qid, rid ORDER BY rank), {{ 2147483647 | num }}) AS hi_rank,
           {{ d.running_count('grade >= 1', by=by) }} AS out_rel
{% for t in thresholds if t.window %}
         , {{ d.running_count('grade >= ' ~ t.value, by=by) }} AS out_{{ t.key }}
{% endfor %}
    FROM (SELECT qid, rid, 0 AS rank, 0 AS grade FROM (SELECT DISTINCT qid, rid FROM rem_rows WHERE grade >= 1) AS c
          UNION ALL
          SELECT qid, rid, rank, grade FROM rem_rows WHERE grade >= 1) AS cuts
),
root_agg AS (
    SELECT rid
{% for m in rows_measures %}
         , {{ m.module.aggs(m) }}
{% endfor %}
    FROM rsup GROUP BY rid
),
changed_agg AS (
    SELECT qid, rid
{% for m in rows_measures %}
         , {{ m.module.aggs(m) }}
{% endfor %}
    FROM (SELECT s.qid, r.rid, r.rank, r.grade, r.c_rel - s.out_rel AS c_rel
{% for t in thresholds if t.window %}
               , r.{{ t.c_rel }} - s.out_{{ t.key }} AS {{ t.c_rel }}
{% endfor %}
          FROM rsup AS r
          JOIN changed_seg AS s ON s.rid = r.rid AND r.rank > s.lo_rank AND r.rank < s.hi_rank) AS changed_rows
    GROUP BY qid, rid
),
agg AS (
    SELECT * FROM changed_agg
    UNION ALL
    SELECT ql.qid, ra.*
    FROM root_agg AS ra CROSS JOIN ql
    WHERE NOT EXISTS (SELECT 1 FROM changed_seg AS c WHERE c.qid = ql.qid AND c.rid = ra.rid)
),
{% endif %}
{% call b.topic_context(max_docs, thresholds, gainsets, by=['qid'], keys=['rid']) %}
{% if rows_measures %}
        LEFT JOIN agg USING (qid, rid)
{% endif %}
{% for m in delta_measures %}
        LEFT JOIN ({{ m.module.many_aggs(m) | indent(8) }}) AS {{ m.id }}_many USING (qid, rid)
{% endfor %}
{%- endcall %},
wide AS (
    SELECT ql.qrels, ctx.run_id, ctx.topic
{% for m in measures %}
         , {{ d.cast(m.module.value(m), 'DOUBLE') }} AS {{ m.id }}
{% endfor %}
    FROM ctx JOIN ql ON ql.qid = ctx.qid
)
{% set columns = [] %}
{% for m in measures %}{% set _ = columns.append([m.label, m.id]) %}{% endfor %}
{{ d.unpivot('wide', ['qrels', 'run_id', 'topic'], columns) }}
{% endif %}
