{#- trec_eval's relstring: the grades of the first ranks of each ranking as one string, one
    character per document (irwarehouse.trec_names.relstring_char): its grade 0-9, '>' above
    9, '-' not in the qrels, '.' listed with a grade below 0 (pooled, not assessed). Bound:
    $qrels, $collection, $runs, $length (ranks shown), $max_docs (trec_eval -M: the ranks
    that count; NULL all), $judged_only (trec_eval -J: unjudged documents dropped first).
    Rankings of the runs' topics only; a run with no document for a topic has none.
    Read from the ranked rows of judged documents and the ranking lengths (run_topics) only,
    so that files in, scores out, which keeps no other row (files_in.sql), gives it too: the
    first ranks of a ranking are the positions 1 to its length, each the grade of the judged
    document ranked there or '-'; with -J, the judged documents (grade 0 or more) in rank
    order. -#}
{% macro relstrings() -%}
SELECT run_id, topic,
       string_agg(CASE WHEN rel IS NULL THEN '-' WHEN rel < 0 THEN '.' WHEN rel > 9 THEN '>'
                       ELSE CAST(rel AS VARCHAR) END, '' ORDER BY pos) AS relstring
FROM (SELECT t.run_id, t.topic, p.pos, j.rel
      FROM run_topics AS t,
           LATERAL (SELECT unnest(range(1, least(t.n_docs, coalesce($max_docs, t.n_docs), $length) + 1)) AS pos) AS p
      LEFT JOIN (SELECT r.run_id, r.topic, r.rank, q.rel
                 FROM runs AS r JOIN qrels AS q ON q.qrels = $qrels AND q.topic = r.topic AND q.docno = r.docno
                 WHERE r.collection = $collection AND list_contains($runs, r.run_id)) AS j
             ON j.run_id = t.run_id AND j.topic = t.topic AND j.rank = p.pos
      WHERE NOT $judged_only AND t.collection = $collection AND list_contains($runs, t.run_id)
      UNION ALL
      SELECT run_id, topic, pos, rel
      FROM (SELECT r.run_id, r.topic, q.rel, row_number() OVER (PARTITION BY r.run_id, r.topic ORDER BY r.rank) AS pos
            FROM runs AS r JOIN qrels AS q ON q.qrels = $qrels AND q.topic = r.topic AND q.docno = r.docno
            WHERE $judged_only AND r.collection = $collection AND list_contains($runs, r.run_id)
              AND ($max_docs IS NULL OR r.rank <= $max_docs) AND q.rel >= 0) AS judged) AS ranked
WHERE pos <= $length
GROUP BY run_id, topic
{%- endmacro %}
