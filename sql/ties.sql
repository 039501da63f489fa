{#- The ties of runs (irwarehouse.ties): per run of $runs of collection $collection, its tie
    groups (two or more documents of one ranking that its order does not tell apart:
    _ranking.sql's tie_value), the documents in them and the topics that have one. -#}
{% import '_ranking.sql' as rk %}
{% macro counts() -%}
SELECT g.run_id,
       count(*) FILTER (WHERE g.n > 1) AS tie_groups,
       coalesce(sum(g.n) FILTER (WHERE g.n > 1), 0) AS tied_docs,
       count(DISTINCT g.topic) FILTER (WHERE g.n > 1) AS topics_with_ties
FROM (SELECT r.run_id, r.topic, count(*) AS n
      FROM (SELECT r.run_id, r.topic,
                   {{ rk.tie_value("coalesce(l.ranking_policy, 'trec_eval')", 'r') | indent(19) }} AS tie
            FROM runs AS r
            LEFT JOIN run_loads AS l ON l.collection = r.collection AND l.run_id = r.run_id
            WHERE r.collection = $collection AND list_contains($runs, r.run_id)) AS r
      GROUP BY r.run_id, r.topic, r.tie) AS g
GROUP BY g.run_id ORDER BY g.run_id
{%- endmacro %}
