{% import '_dialect.sql' as d %}
-- Pools, team contributions and unique contributions (SPEC section 3) as table macros.
-- Arguments: q a qrels name, run_list a list of run ids of q's collection (e.g. ['a', 'b'],
-- or (SELECT list(run_id) FROM run_info WHERE pooled AND collection = collection_of(q))),
-- depth the pool depth d. A run's team is run_info.team, or the run itself when it has no team.

-- pool_of(collection, run_list, depth): pool(S, d) -- the documents at ranks 1..d of the runs
-- in S of the collection.
{{ d.table_function('pool_of', [['collection', 'VARCHAR'], ['run_list', 'VARCHAR[]'], ['depth', 'INTEGER']],
                     [['topic', 'VARCHAR'], ['docno', 'VARCHAR']]) }}
SELECT DISTINCT r.topic, r.docno
FROM runs AS r
WHERE r.collection = collection AND {{ d.list_contains('run_list', 'r.run_id') }} AND r.rank <= depth;

-- pooled_qrels(q, run_list, depth): J ∩ pool(S, d) -- the judgments of q whose document is
-- in the pool (everything else becomes unjudged).
{{ d.table_function('pooled_qrels', [['q', 'VARCHAR'], ['run_list', 'VARCHAR[]'], ['depth', 'INTEGER']],
                     [['topic', 'VARCHAR'], ['docno', 'VARCHAR'], ['rel', 'INTEGER']]) }}
SELECT j.topic, j.docno, j.rel
FROM qrels j
JOIN pool_of(collection_of(q), run_list, depth) AS p ON p.topic = j.topic AND p.docno = j.docno
WHERE j.qrels = q;

-- pool_multiplicity(q, run_list, depth): every pooled document with the number of runs in S
-- that have it in their top d, and its grade in q (NULL: not judged).
{{ d.table_function('pool_multiplicity', [['q', 'VARCHAR'], ['run_list', 'VARCHAR[]'], ['depth', 'INTEGER']],
                     [['topic', 'VARCHAR'], ['docno', 'VARCHAR'], ['multiplicity', 'BIGINT'], ['rel', 'INTEGER']]) }}
SELECT p.topic, p.docno, p.multiplicity, j.rel
FROM (SELECT topic, docno, count(DISTINCT run_id) AS multiplicity
      FROM runs
      WHERE collection = collection_of(q) AND {{ d.list_contains('run_list', 'run_id') }} AND rank <= depth
      GROUP BY topic, docno) AS p
LEFT JOIN qrels AS j ON j.qrels = q AND j.topic = p.topic AND j.docno = p.docno;

-- multiplicity_bands(q, run_list, depth): pooled documents per multiplicity band
-- (1, 2, 3-4, 5-8, 9-16, 17-32, 33+) with the fraction that is relevant (rel >= 1).
{{ d.table_function('multiplicity_bands', [['q', 'VARCHAR'], ['run_list', 'VARCHAR[]'], ['depth', 'INTEGER']],
                     [['band', 'VARCHAR'], ['band_order', 'INTEGER'], ['documents', 'BIGINT'], ['judged', 'BIGINT'],
                      ['relevant', 'BIGINT'], ['fraction_relevant', 'DOUBLE']]) }}
SELECT band, min(lo) AS band_order, count(*) AS documents,
       count(*) FILTER (WHERE rel >= 0) AS judged,
       count(*) FILTER (WHERE rel >= 1) AS relevant,
       {{ d.div('count(*) FILTER (WHERE rel >= 1)', 'count(*)') }} AS fraction_relevant
FROM (SELECT rel,
             CASE WHEN multiplicity = 1 THEN '1' WHEN multiplicity = 2 THEN '2'
                  WHEN multiplicity <= 4 THEN '3-4' WHEN multiplicity <= 8 THEN '5-8'
                  WHEN multiplicity <= 16 THEN '9-16' WHEN multiplicity <= 32 THEN '17-32'
                  ELSE '33+' END AS band,
             CASE WHEN multiplicity = 1 THEN 1 WHEN multiplicity = 2 THEN 2
                  WHEN multiplicity <= 4 THEN 3 WHEN multiplicity <= 8 THEN 5
                  WHEN multiplicity <= 16 THEN 9 WHEN multiplicity <= 32 THEN 17
                  ELSE 33 END AS lo
      FROM pool_multiplicity(q, run_list, depth)) AS banded
GROUP BY band;

-- team_contributions(q, run_list, depth): D_t -- the pool of each team's runs in S, with the
-- grade in q (D_t^rel: rel >= 1).
{{ d.table_function('team_contributions', [['q', 'VARCHAR'], ['run_list', 'VARCHAR[]'], ['depth', 'INTEGER']],
                     [['team', 'VARCHAR'], ['topic', 'VARCHAR'], ['docno', 'VARCHAR'], ['rel', 'INTEGER']]) }}
SELECT t.team, t.topic, t.docno, j.rel
FROM (SELECT DISTINCT coalesce(m.team, r.run_id) AS team, r.topic, r.docno
      FROM runs r LEFT JOIN run_meta m ON m.collection = r.collection AND m.run_id = r.run_id
      WHERE r.collection = collection_of(q) AND {{ d.list_contains('run_list', 'r.run_id') }} AND r.rank <= depth) AS t
LEFT JOIN qrels AS j ON j.qrels = q AND j.topic = t.topic AND j.docno = t.docno;

-- unique_contributions(q, run_list, depth): U_t = D_t minus every other team's D_t'
-- (U_t^rel: rel >= 1). The sets of different teams are disjoint.
{{ d.table_function('unique_contributions', [['q', 'VARCHAR'], ['run_list', 'VARCHAR[]'], ['depth', 'INTEGER']],
                     [['team', 'VARCHAR'], ['topic', 'VARCHAR'], ['docno', 'VARCHAR'], ['rel', 'INTEGER']]) }}
SELECT c.team, c.topic, c.docno, c.rel
FROM team_contributions(q, run_list, depth) AS c
JOIN (SELECT topic, docno FROM team_contributions(q, run_list, depth)
      GROUP BY topic, docno HAVING count(*) = 1) AS u
  ON u.topic = c.topic AND u.docno = c.docno;

-- pool_topic_stats(q, run_list, depth): per topic the pool size, and how much of it q judges.
{{ d.table_function('pool_topic_stats', [['q', 'VARCHAR'], ['run_list', 'VARCHAR[]'], ['depth', 'INTEGER']],
                     [['topic', 'VARCHAR'], ['pool_size', 'BIGINT'], ['judged', 'BIGINT'], ['relevant', 'BIGINT'],
                      ['unjudged', 'BIGINT']]) }}
SELECT topic, count(*) AS pool_size,
       count(*) FILTER (WHERE rel >= 0) AS judged,
       count(*) FILTER (WHERE rel >= 1) AS relevant,
       count(*) FILTER (WHERE rel IS NULL OR rel < 0) AS unjudged
FROM pool_multiplicity(q, run_list, depth)
GROUP BY topic;

-- team_unique_stats(q, run_list, depth): per team, the mean per topic (over the topics of the
-- pool) of |D_t|, |D_t^rel|, |U_t| and |U_t^rel|.
{{ d.table_function('team_unique_stats', [['q', 'VARCHAR'], ['run_list', 'VARCHAR[]'], ['depth', 'INTEGER']],
                     [['team', 'VARCHAR'], ['mean_contributed', 'DOUBLE'], ['mean_contributed_relevant', 'DOUBLE'],
                      ['mean_unique', 'DOUBLE'], ['mean_unique_relevant', 'DOUBLE']]) }}
SELECT c.team,
       {{ d.div('count(*) FILTER (WHERE NOT c.is_unique)', 'n.topics') }} AS mean_contributed,
       {{ d.div('count(*) FILTER (WHERE NOT c.is_unique AND c.rel >= 1)', 'n.topics') }} AS mean_contributed_relevant,
       {{ d.div('count(*) FILTER (WHERE c.is_unique)', 'n.topics') }} AS mean_unique,
       {{ d.div('count(*) FILTER (WHERE c.is_unique AND c.rel >= 1)', 'n.topics') }} AS mean_unique_relevant
FROM (SELECT team, rel, false AS is_unique FROM team_contributions(q, run_list, depth)
      UNION ALL
      SELECT team, rel, true AS is_unique FROM unique_contributions(q, run_list, depth)) AS c
CROSS JOIN (SELECT count(DISTINCT topic) AS topics FROM pool_of(collection_of(q), run_list, depth)) AS n
GROUP BY c.team, n.topics;

-- deeply_judged_runs(q, m): runs of q's collection with at least m documents for every topic
-- of q, all of their top m judged in q (Moffat, Scholer and Yang 2018).
{{ d.table_function('deeply_judged_runs', [['q', 'VARCHAR'], ['m', 'INTEGER']], [['run_id', 'VARCHAR']]) }}
SELECT r.run_id
FROM (SELECT run_id, topic, judged_top = m AS deep
      FROM (SELECT run_id, topic, count(*) FILTER (WHERE top_judged) AS judged_top
            FROM (SELECT run_id, topic, rank <= m AND grade IS NOT NULL AS top_judged FROM ranking(q)) AS g
            GROUP BY run_id, topic) AS c) AS r
JOIN (SELECT DISTINCT topic FROM qrels WHERE qrels = q) AS t ON t.topic = r.topic
CROSS JOIN (SELECT count(DISTINCT topic) AS topics FROM qrels WHERE qrels = q) AS n
GROUP BY r.run_id, n.topics
HAVING count(*) FILTER (WHERE r.deep) = n.topics;

-- Per qrels: the mean number of judged and relevant documents per topic.
{{ d.create_view('qrels_stats') }}
SELECT qrels, count(*) AS topics, avg(judged) AS mean_judged, avg(relevant) AS mean_relevant,
       sum(judged) AS judged, sum(relevant) AS relevant
FROM topics GROUP BY qrels;
