{#- The look-ups that check an evaluation's inputs, for every engine (macros rendered for the
    engine's dialect; each takes P, the SQL of its bound parameters: P.ids, a list of run
    ids; P.collection; P.q, a qrels). -#}
{% import '_dialect.sql' as d %}

{# The run ids of P.ids that are not runs of collection P.collection. #}
{% macro runs_missing(P) -%}
SELECT r FROM (SELECT DISTINCT {{ d.unnest_list(P.ids) }} AS r) AS s
WHERE r NOT IN (SELECT run_id FROM run_loads WHERE collection = {{ P.collection }})
ORDER BY r
{%- endmacro %}

{# The run ids of P.ids (runs of P.collection) that share no topic with qrels P.q. #}
{% macro runs_sharing_no_topic(P) -%}
SELECT r FROM (SELECT DISTINCT {{ d.unnest_list(P.ids) }} AS r) AS s
WHERE NOT EXISTS (SELECT 1 FROM run_topics AS t
                  WHERE t.collection = {{ P.collection }} AND t.run_id = s.r
                    AND t.topic IN (SELECT topic FROM qrels WHERE qrels = {{ P.q }}))
ORDER BY r
{%- endmacro %}

{# The first topics of the runs P.ids of P.collection, in order. #}
{% macro topics_of_runs(P, limit) -%}
SELECT DISTINCT topic FROM run_topics
WHERE collection = {{ P.collection }} AND {{ d.list_contains(P.ids, 'run_id') }}
ORDER BY topic LIMIT {{ limit }}
{%- endmacro %}

{# The first topics of qrels P.q, in order. #}
{% macro topics_of_qrels(P, limit) -%}
SELECT DISTINCT topic FROM qrels WHERE qrels = {{ P.q }} ORDER BY topic LIMIT {{ limit }}
{%- endmacro %}

{# The largest grade judged in qrels P.q (NULL when it judges nothing). #}
{% macro top_grade(P) -%}
SELECT max(rel) FROM qrels WHERE qrels = {{ P.q }}
{%- endmacro %}
