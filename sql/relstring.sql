{#- trec_eval's relstring: the grades of the first ranks of each ranking as one string, one
    character per document (irwarehouse.trec_names.relstring_char): its grade 0-9, '>' above
    9, '-' not in the qrels, '.' listed with a grade below 0 (pooled, not assessed). Bound:
    $qrels, $collection, $runs, $length (ranks shown), $max_docs (trec_eval -M: the ranks
    that count; NULL all), $judged_only (trec_eval -J: unjudged documents dropped first).
    Rankings of the runs' topics only; a run with no document for a topic has none. -#}
{% macro relstrings() -%}
SELECT run_id, topic,
       string_agg(CASE WHEN rel IS NULL THEN '-' WHEN rel < 0 THEN '.' WHEN rel > 9 THEN '>'
                       ELSE CAST(rel AS VARCHAR) END, '' ORDER BY pos) AS relstring
FROM (SELECT r.run_id, r.topic, q.rel,
             row_number() OVER (PARTITION BY r.run_id, r.topic ORDER BY r.rank) AS pos
      FROM runs AS r
      LEFT JOIN qrels AS q ON q.qrels = $qrels AND q.topic = r.topic AND q.docno = r.docno
      WHERE r.collection = $collection AND list_contains($runs, r.run_id)
        AND ($max_docs IS NULL OR r.rank <= $max_docs)
        AND (NOT $judged_only OR q.rel >= 0)) AS ranked
WHERE pos <= $length
GROUP BY run_id, topic
{%- endmacro %}
