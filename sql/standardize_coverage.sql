{#-
  Which (run, measure) pairs lack complete stored scores for the topic set of a qrels:
  a pair is complete when its stored topics are exactly the qrels's topic set.

  Bound parameters: $qrels, $measures (canonical names), $runs (run ids of collection
  $collection).
-#}
WITH want AS (
    SELECT topic FROM topic_sets WHERE qrels = $qrels
),
pairs AS (
    SELECT r.run_id, m.measure
    FROM (SELECT DISTINCT unnest($runs::VARCHAR[]) AS run_id) r
    CROSS JOIN (SELECT DISTINCT unnest($measures::VARCHAR[]) AS measure) m
),
have AS (
    SELECT s.run_id, s.measure,
           count(*) AS n_all,
           count(*) FILTER (WHERE s.topic IN (SELECT topic FROM want)) AS n_in
    FROM scores s
    WHERE s.qrels = $qrels AND s.collection = $collection AND s.ties = 'trec_eval'
      AND s.run_id IN (SELECT run_id FROM pairs)
      AND s.measure IN (SELECT measure FROM pairs)
    GROUP BY s.run_id, s.measure
)
SELECT p.run_id, p.measure
FROM pairs p
LEFT JOIN have h ON h.run_id = p.run_id AND h.measure = p.measure
WHERE coalesce(h.n_in, 0) <> (SELECT count(*) FROM want)
   OR coalesce(h.n_all, 0) <> (SELECT count(*) FROM want)
ORDER BY p.run_id, p.measure
