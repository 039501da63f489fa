{#- The catalogue listings of the Python API and the command line (irwarehouse.api): the
    runs, the qrels, the collections and the topic splits. -#}

{# The loaded runs with their metadata, of collection $c (all when NULL). #}
{% macro runs() -%}
SELECT collection, run_id, team, system, kind, pooled, ranking_policy, n_topics, n_docs, source
FROM run_info WHERE $c IS NULL OR collection = $c
ORDER BY collection, run_id
{%- endmacro %}

{# The qrels catalogue with each qrels's topics, judged and relevant documents. #}
{% macro qrels() -%}
SELECT i.qrels, i.collection, i.kind, i.parent, i.topic_qrels, i.params,
       count(DISTINCT q.topic) AS topics, count(q.rel) FILTER (WHERE q.rel >= 0) AS judged,
       count(q.rel) FILTER (WHERE q.rel >= 1) AS relevant, i.source, i.description
FROM qrels_info i LEFT JOIN qrels q USING (qrels)
GROUP BY i.qrels, i.collection, i.kind, i.parent, i.topic_qrels, i.params, i.source,
         i.description, i.created_at
ORDER BY i.created_at, i.qrels
{%- endmacro %}

{# The test collections (view collections), their loaded qrels as one string. #}
{% macro collections() -%}
SELECT collection, coalesce(array_to_string(qrels, ', '), '') AS qrels, derived_qrels, runs,
       topics, judged, relevant
FROM collections ORDER BY collection
{%- endmacro %}

{# The topic splits (qrels of kind 'topics') with the size of their topic sets. #}
{% macro splits() -%}
SELECT i.qrels, i.parent, CAST(count(t.topic) AS INTEGER) AS topics, i.description
FROM qrels_info i LEFT JOIN topic_sets t USING (qrels)
WHERE i.kind = 'topics' GROUP BY i.qrels, i.parent, i.description, i.created_at
ORDER BY i.created_at, i.qrels
{%- endmacro %}

{# Add a qrels to the catalogue (bound by name). #}
{% macro register_qrels() -%}
INSERT INTO qrels_info (qrels, collection, source, parent, kind, params, description, topic_qrels, created_at)
VALUES ($name, $collection, $source, $parent, $kind, $params, $description, $topic_qrels, current_timestamp)
{%- endmacro %}
