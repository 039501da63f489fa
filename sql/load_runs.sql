{#-
  Move ranked run lines (irw_staging.irw_ranked, with ranking lengths per (run, topic) in
  irw_staged_topics) into the public tables: the warehouse's final transaction of a load.
  Bound: $policy (the ranking policy's name), $collection (the runs' collection).
-#}
INSERT INTO runs
SELECT $collection, run_id, topic, docno, rank, score, given_rank FROM irw_staging.irw_ranked;

INSERT INTO run_topics
SELECT $collection, run_id, topic, n_docs FROM irw_staged_topics;

INSERT INTO run_loads
SELECT $collection, f.run_id, f.source, $policy, t.n_topics, t.n_docs, current_timestamp
FROM (SELECT run_id, string_agg(filename, ' ' ORDER BY filename) AS source
      FROM irw_staged_files GROUP BY run_id) AS f
JOIN (SELECT run_id, count(*)::INTEGER AS n_topics, sum(n_docs) AS n_docs
      FROM irw_staged_topics GROUP BY run_id) AS t USING (run_id);
