{#- Two rankings of one collection side by side, for the order statistics of `irw repro`
    (irwarehouse.repro): P holds the SQL of the bound parameters (collection, run_a, run_b,
    depth). Every document ranked within `depth` by either run, on the topics both runs
    answered, with its rank in each (NULL where that run does not rank it within `depth`). -#}

{% macro side(P, run) -%}
SELECT topic, docno, rank FROM runs
WHERE collection = {{ P.collection }} AND run_id = {{ P[run] }} AND rank <= {{ P.depth }}
{%- endmacro %}

{% macro pair(P) -%}
WITH a AS ({{ side(P, 'run_a') }}),
     b AS ({{ side(P, 'run_b') }}),
     both_topics AS (SELECT DISTINCT topic FROM a INTERSECT SELECT DISTINCT topic FROM b)
SELECT coalesce(a.topic, b.topic) AS topic, coalesce(a.docno, b.docno) AS docno,
       a.rank AS rank_a, b.rank AS rank_b
FROM a FULL OUTER JOIN b ON a.topic = b.topic AND a.docno = b.docno
WHERE coalesce(a.topic, b.topic) IN (SELECT topic FROM both_topics)
ORDER BY topic, docno
{%- endmacro %}
