{#- The ties of runs (irwarehouse.ties): per run of $runs of collection $collection, its tie
    groups (two or more documents of one ranking that its order does not tell apart:
    _expected.sql's tie_extents, the one definition of a run's ties), the documents in them
    and the topics that have one. -#}
{% import '_expected.sql' as ex %}
{% macro counts() -%}
SELECT s.run_id, count(t.n) AS tie_groups, coalesce(sum(t.n), 0) AS tied_docs,
       count(DISTINCT t.topic) AS topics_with_ties
FROM (SELECT DISTINCT unnest($runs::VARCHAR[]) AS run_id) AS s
LEFT JOIN ({{ ex.tie_extents('r.collection = $collection AND list_contains($runs, r.run_id)') }}) AS t
  ON t.run_id = s.run_id
GROUP BY s.run_id ORDER BY s.run_id
{%- endmacro %}
