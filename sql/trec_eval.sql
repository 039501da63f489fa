{#- What `irw trec-eval` (irwarehouse.trec_eval) reads from its two files, staged as files in,
    scores out stages them (files_in.sql: views named as the warehouse's tables), beside the
    measures' scores: the run, the topics, the -c stand-in. Bound: $qrels (the qrels's
    name), $collection, $run (the run id). -#}

{# The run ids of the collection (a run file of trec_eval holds one run). #}
{% macro run_ids() -%}
SELECT run_id FROM run_loads WHERE collection = $collection ORDER BY run_id
{%- endmacro %}

{# Every topic of the qrels (judged or not: trec_eval reads every line) and whether the run
   has it; `table`: where its lines are (qrels, or the detail table of a kind without graded
   rows: judgment_kinds.KINDS). #}
{% macro topics(table='qrels') -%}
SELECT q.topic, r.topic IS NOT NULL AS in_run
FROM (SELECT DISTINCT topic FROM {{ table }} WHERE qrels = $qrels) AS q
LEFT JOIN (SELECT topic FROM run_topics WHERE collection = $collection AND run_id = $run) AS r
       ON r.topic = q.topic
ORDER BY q.topic
{%- endmacro %}

{# -c: trec_eval evaluates a topic the run lacks as a ranking of one document that is in no
   qrels. Unjudged documents enter the measures through ranking lengths alone (files in,
   scores out keeps the ranked rows of judged documents: files_in.sql), so the stand-in is a
   ranking of length 1 with no ranked row, added to the staged ranking lengths that
   run_topics reads for the topics $topics. #}
{% macro stand_in() -%}
INSERT INTO irw_staged_topics (run_id, topic, n_docs)
SELECT $run, topic, 1 FROM (SELECT unnest($topics) AS topic) AS t
{%- endmacro %}

{# How many judgments of the qrels grade a document above 0: trec_eval's num_rel over
   every topic under -c, whatever the relevance level (-l). #}
{% macro graded_above_zero() -%}
SELECT count(*) FROM qrels WHERE qrels = $qrels AND rel > 0
{%- endmacro %}
