{#- Bringing the warehouse in line after changes made outside irw (irwarehouse.schema.reconcile):
    what changed, whether the tables hold what a load would accept, and ranking changed runs
    again. Bound: $collection, $ids (run ids), $name (a qrels). -#}
{% import '_state.sql' as st %}

{# Whether anything is to be done: the runs tables' version now (NULL: runs does not count
   its writes), whether it is as recorded, and whether every qrels is registered and
   unchanged. #}
{% macro status() -%}
SELECT fp, fp = irw_recorded_runs_fp(),
       NOT EXISTS (SELECT 1 FROM qrels WHERE qrels NOT IN (SELECT qrels FROM qrels_info))
       AND NOT EXISTS (SELECT 1 FROM irw_qrels_changes())
FROM (SELECT irw_runs_fp() AS fp)
{%- endmacro %}

{% macro qrels_changes() -%}
SELECT qrels, recorded FROM irw_qrels_changes() ORDER BY qrels
{%- endmacro %}

{# The qrels whose topic set is that of $name (their stored scores depend on its judgments). #}
{% macro dependents() -%}
SELECT qrels FROM qrels_info WHERE topic_qrels = $name OR qrels = $name ORDER BY qrels
{%- endmacro %}

{# A document judged twice for a topic, in a changed or unregistered qrels. #}
{% macro judged_twice() -%}
SELECT qrels, topic, docno FROM qrels
WHERE qrels IN (SELECT qrels FROM irw_qrels_changes()) OR qrels NOT IN (SELECT qrels FROM qrels_info)
GROUP BY qrels, topic, docno HAVING count(*) > 1 ORDER BY ALL LIMIT 1
{%- endmacro %}

{% macro unregistered_qrels() -%}
SELECT DISTINCT qrels FROM qrels WHERE qrels NOT IN (SELECT qrels FROM qrels_info) ORDER BY qrels
{%- endmacro %}

{# Each run's rows as recorded (irw_run_state) and as they are (irw_run_rows()). #}
{% macro run_rows(source) -%}
SELECT collection, run_id, n_rows, rows_sum FROM {{ source }}
{%- endmacro %}

{% macro loaded_runs() -%}
SELECT collection, run_id FROM run_loads
{%- endmacro %}

{# Runs whose ranking policy (run_loads) is not the one irw recorded: their rows are ranked
   again under it. #}
{% macro changed_policies() -%}
SELECT l.collection, l.run_id
FROM (SELECT collection, run_id, {{ st.load_hash() }} AS load_hash FROM run_loads) AS l
JOIN irw_run_state AS s ON s.collection = l.collection AND s.run_id = l.run_id
WHERE l.load_hash <> s.load_hash
{%- endmacro %}

{# Runs whose ranking lengths (run_topics) are not those of their rows. #}
{% macro wrong_lengths() -%}
SELECT coalesce(c.collection, t.collection), coalesce(c.run_id, t.run_id) FROM
    (SELECT collection, run_id, topic, count(*) AS n FROM runs GROUP BY ALL) AS c
FULL OUTER JOIN run_topics t ON t.collection = c.collection AND t.run_id = c.run_id AND t.topic = c.topic
WHERE c.n IS DISTINCT FROM t.n_docs
{%- endmacro %}

{% macro selected() -%}
collection = $collection AND list_contains($ids, run_id)
{%- endmacro %}

{% macro docno_twice() -%}
SELECT run_id, topic, docno FROM runs WHERE {{ selected() }}
GROUP BY run_id, topic, docno HAVING count(*) > 1 ORDER BY ALL LIMIT 1
{%- endmacro %}

{% macro not_finite() -%}
SELECT run_id, topic, docno, score FROM runs WHERE {{ selected() }} AND (isnan(score) OR isinf(score)) ORDER BY ALL LIMIT 1
{%- endmacro %}

{% macro new_runs() -%}
SELECT DISTINCT run_id FROM runs WHERE {{ selected() }}
  AND run_id NOT IN (SELECT run_id FROM run_loads WHERE collection = $collection)
{%- endmacro %}

{# Rank the runs $ids again under their policies, with their ranking lengths and loads. #}
{% macro rerank(reranked) -%}
CREATE OR REPLACE TEMP TABLE irw_reranked AS
SELECT collection, run_id, topic, docno, rank, score, given_rank FROM {{ reranked }};
DELETE FROM runs WHERE {{ selected() }};
DELETE FROM run_topics WHERE {{ selected() }};
INSERT INTO runs SELECT collection, run_id, topic, docno, rank, score, given_rank FROM irw_reranked;
INSERT INTO run_topics SELECT collection, run_id, topic, count(*)::INTEGER FROM irw_reranked
GROUP BY collection, run_id, topic;
DROP TABLE irw_reranked;
INSERT INTO run_loads
SELECT $collection, run_id, '(inserted with SQL)', 'trec_eval', 0, 0, current_timestamp
FROM (SELECT DISTINCT run_id FROM run_topics WHERE {{ selected() }}) AS n
WHERE run_id NOT IN (SELECT run_id FROM run_loads WHERE collection = $collection);
UPDATE run_loads SET n_topics = t.n_topics, n_docs = t.n_docs
FROM (SELECT run_id, count(*)::INTEGER AS n_topics, sum(n_docs) AS n_docs FROM run_topics
      WHERE {{ selected() }} GROUP BY run_id) AS t
WHERE run_loads.collection = $collection AND run_loads.run_id = t.run_id;
{%- endmacro %}

{# Forget the runs $ids removed outside irw: their lengths, loads and scores. #}
{% macro forget_runs() -%}
DELETE FROM run_topics WHERE {{ selected() }};
DELETE FROM run_loads WHERE {{ selected() }};
DELETE FROM scores WHERE {{ selected() }};
{%- endmacro %}
