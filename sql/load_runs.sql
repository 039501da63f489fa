{#-
  Move validated staged run lines (irw_staged, with ranking lengths per (run, topic) in
  irw_staged_topics) into the public tables, ranking each
  (run, topic) under the chosen policy. Context: order (an ORDER BY list from the policy
  table in loader.py), policy (its name, bound as $policy).
-#}
INSERT INTO runs
SELECT run_id, topic, docno,
       row_number() OVER (PARTITION BY run_id, topic ORDER BY {{ order }})::INTEGER AS rank,
       score, given_rank
FROM irw_staged;

INSERT INTO run_topics
SELECT run_id, topic, n_docs FROM irw_staged_topics;

INSERT INTO run_loads
SELECT f.run_id, f.source, $policy, t.n_topics, t.n_docs, current_timestamp
FROM (SELECT run_id, string_agg(filename, ' ' ORDER BY filename) AS source
      FROM (SELECT DISTINCT run_id, filename FROM irw_staged) AS d GROUP BY run_id) AS f
JOIN (SELECT run_id, count(*)::INTEGER AS n_topics, sum(n_docs) AS n_docs
      FROM run_topics GROUP BY run_id) AS t USING (run_id)
WHERE f.run_id IN (SELECT DISTINCT run_id FROM irw_staged);
