{#-
  Standardization factors (SPEC section 4) from the stored per-topic scores: for every
  measure and topic, mu = the mean and sigma = the sample standard deviation (n - 1) of the
  reference runs' scores (runs of the qrels's collection), and n_ref = how many reference scores there were.

  Bound parameters: $qrels (qrels name), $measures (canonical measure names),
  $runs (the reference run ids). Only topics of the qrels's topic set count. The values are
  aggregated in order, so that the factors do not depend on the order the scores are stored
  in (a parallel sum's last bits do).
-#}
SELECT s.measure, s.topic,
       avg(s.value ORDER BY s.value) AS mu,
       stddev_samp(s.value ORDER BY s.value) AS sigma,
       count(*)::INTEGER AS n_ref
FROM scores s
WHERE s.qrels = $qrels AND s.collection = collection_of($qrels) AND s.ties = 'trec_eval'
  AND s.measure IN (SELECT unnest($measures::VARCHAR[]))
  AND s.run_id IN (SELECT unnest($runs::VARCHAR[]))
  AND s.topic IN (SELECT topic FROM topic_sets WHERE qrels = $qrels)
GROUP BY s.measure, s.topic
ORDER BY s.measure, s.topic
