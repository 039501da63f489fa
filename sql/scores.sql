{#- The stored scores (table scores) and the log of evaluations (table evaluations): the
    statements that keep them. Bound: $qrels, $collection, $runs (run ids), $labels (the
    measures' canonical names), $ties (the tie policy of the scores). -#}

{# Forget the stored scores an evaluation is about to replace. #}
{% macro delete() -%}
DELETE FROM scores WHERE qrels = $qrels AND collection = $collection
  AND list_contains($runs, run_id) AND list_contains($labels, measure) AND ties = $ties
{%- endmacro %}

{# Store the scores (run_id, topic, measure, value) of the relation `table` where `where`. #}
{% macro insert(table, where='TRUE') -%}
INSERT INTO scores SELECT $qrels, $collection, run_id, topic, measure, value, $ties FROM {{ table }} WHERE {{ where }}
{%- endmacro %}

{# Do the stored scores of the runs $runs and measures $labels equal the rows of the relation
   `table` where `where` (run_id, topic, measure, value), row for row and bit for bit? #}
{% macro same_scores(table, where='TRUE') -%}
SELECT NOT EXISTS (
  SELECT 1
  FROM (SELECT run_id, topic, measure, value, TRUE AS stored FROM scores
        WHERE qrels = $qrels AND collection = $collection AND list_contains($runs, run_id)
          AND list_contains($labels, measure) AND ties = $ties) AS s
  FULL JOIN (SELECT run_id, topic, measure, value, TRUE AS new FROM {{ table }} WHERE {{ where }}) AS n
    USING (run_id, topic, measure)
  WHERE s.stored IS NULL OR n.new IS NULL OR s.value IS DISTINCT FROM n.value)
{%- endmacro %}

{# The latest logged evaluation of each of the measures $labels (of the scores of $qrels,
   $collection and $ties), as a row of log() but its time: (qrels, collection, measure, n_runs,
   topics, max_docs, rel_level, ranking_policy, ties). #}
{% macro latest_log() -%}
SELECT qrels, collection, measure, n_runs, topics, max_docs, rel_level, ranking_policy, ties
FROM ({{ latest_evaluations() }}) AS e
WHERE qrels = $qrels AND collection = $collection AND list_contains($labels, measure) AND ties = $ties
{%- endmacro %}

{# The latest logged evaluation of each qrels, collection, measure and tie policy: how its
   stored scores were computed (what latest_log compares and stale recomputes). #}
{% macro latest_evaluations() -%}
SELECT * FROM evaluations
QUALIFY row_number() OVER (PARTITION BY qrels, collection, measure, ties ORDER BY evaluated_at DESC) = 1
{%- endmacro %}

{# Log an evaluation: one row per measure (bound by position). #}
{% macro log() -%}
INSERT INTO evaluations (evaluated_at, qrels, collection, measure, n_runs, topics, max_docs, rel_level, ranking_policy, ties)
VALUES (current_timestamp, ?, ?, ?, ?, ?, ?, ?, ?, ?)
{%- endmacro %}

{# The ranking orders (run_loads.ranking_policy) of the runs $runs of collection $collection:
   (run_id, ranking_policy), in order. #}
{% macro orders() -%}
{% import '_dialect.sql' as d %}
SELECT run_id, ranking_policy FROM run_loads
WHERE collection = {{ d.param('collection') }} AND {{ d.list_contains(d.param('runs'), 'run_id') }}
ORDER BY run_id
{%- endmacro %}

{# The scores of `table` in their order. #}
{% macro ordered(table) -%}
SELECT * FROM {{ table }} ORDER BY run_id, topic, measure
{%- endmacro %}

{# The stored evaluations to recompute after runs or judgments changed: per qrels,
   collection, measure and tie policy, the runs scored and the settings of the latest
   evaluation.
   `by_qrels` restricts them to qrels $q, `by_runs` to the runs $ids of collection $c. #}
{% macro stale(by_qrels, by_runs) -%}
SELECT s.qrels, s.collection, s.measure, list(DISTINCT s.run_id ORDER BY s.run_id) AS runs,
       any_value(e.topics), any_value(e.max_docs), any_value(e.rel_level), s.ties
FROM scores s
LEFT JOIN ({{ latest_evaluations() }}) e
  ON e.qrels = s.qrels AND e.collection = s.collection AND e.measure = s.measure AND e.ties = s.ties
WHERE s.qrels IN (SELECT qrels FROM qrels_info)
{% if by_qrels %}  AND s.qrels = $q
{% endif %}
{% if by_runs %}  AND s.collection = $c AND list_contains($ids, s.run_id)
{% endif %}
GROUP BY s.qrels, s.collection, s.measure, s.ties ORDER BY s.qrels, s.collection, s.measure, s.ties
{%- endmacro %}

{# Keep the scores of `source` in the temporary table `table` (files in, scores out in
   batches: engine.files_in): made anew from them when `first`, else appended to. #}
{% macro keep(table, source, first) -%}
{% if first %}CREATE OR REPLACE TEMP TABLE {{ table }} AS SELECT * FROM {{ source }}
{%- else %}INSERT INTO {{ table }} SELECT * FROM {{ source }}{% endif %}
{%- endmacro %}
