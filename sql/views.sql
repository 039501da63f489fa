{% import '_dialect.sql' as d %}
{% import '_base.sql' as b %}
-- Public views and table macros. They use nothing but SQL, so they work from a plain
-- DuckDB connection (DuckDB CLI, notebooks, BI tools) without this package.

-- collection_of(q): the collection of qrels q, whose runs the commands over q use by default.
{{ d.scalar_function('collection_of', [['q', 'VARCHAR']], 'VARCHAR') }}
    (SELECT max(qi.collection) FROM qrels_info AS qi WHERE qi.qrels = q);

-- One row per loaded run: where it came from, how it is ranked, and its metadata.
{{ d.create_view('run_info') }}
SELECT l.collection, l.run_id, m.team, m.system, m.kind, m.pooled, l.source, l.ranking_policy,
       l.n_topics, l.n_docs, l.loaded_at
FROM run_loads l LEFT JOIN run_meta m USING (collection, run_id);

-- The test collections: their loaded qrels (and how many qrels are derived from them),
-- runs, and the topics, judged documents (rel >= 0) and relevant ones (rel >= 1) of their
-- loaded qrels.
{{ d.create_view('collections') }}
SELECT n.collection,
       (SELECT {{ d.sorted_list('i.qrels') }} FROM qrels_info i
        WHERE i.collection = n.collection AND i.parent IS NULL) AS qrels,
       (SELECT count(*) FROM qrels_info i
        WHERE i.collection = n.collection AND i.parent IS NOT NULL) AS derived_qrels,
       (SELECT count(*) FROM run_loads l WHERE l.collection = n.collection) AS runs,
       (SELECT count(DISTINCT j.topic) FROM qrels j JOIN qrels_info i ON i.qrels = j.qrels
        WHERE i.collection = n.collection AND i.parent IS NULL) AS topics,
       (SELECT count(*) FILTER (WHERE j.rel >= 0) FROM qrels j JOIN qrels_info i ON i.qrels = j.qrels
        WHERE i.collection = n.collection AND i.parent IS NULL) AS judged,
       (SELECT count(*) FILTER (WHERE j.rel >= 1) FROM qrels j JOIN qrels_info i ON i.qrels = j.qrels
        WHERE i.collection = n.collection AND i.parent IS NULL) AS relevant
FROM (SELECT collection FROM qrels_info UNION SELECT collection FROM run_loads) AS n;

-- Per qrels and topic: how many documents are judged, relevant (rel >= 1), judged
-- non-relevant (rel = 0) and in the pool but unassessed (rel < 0).
{{ d.create_view('topics') }}
SELECT qrels, topic,
       {{ d.cast('count(*) FILTER (WHERE rel >= 0)', 'INTEGER') }} AS judged,
       {{ d.cast('count(*) FILTER (WHERE rel >= 1)', 'INTEGER') }} AS relevant,
       {{ d.cast('count(*) FILTER (WHERE rel = 0)', 'INTEGER') }}  AS nonrelevant,
       {{ d.cast('count(*) FILTER (WHERE rel < 0)', 'INTEGER') }}  AS unassessed,
       max(rel) AS max_grade
FROM qrels GROUP BY qrels, topic;

-- The default topic set of every qrels: the topics of its topic_qrels (itself, or the root
-- it was derived from) with at least one relevant document (rel >= 1).
{{ d.create_view('topic_sets') }}
SELECT i.qrels, t.topic
FROM qrels_info i JOIN topics t ON t.qrels = i.topic_qrels
WHERE t.relevant >= 1;

-- Mean of the stored per-topic scores (per tie policy: ties).
{{ d.create_view('score_means') }}
SELECT qrels, collection, run_id, measure, avg(value) AS mean, {{ d.cast('count(*)', 'INTEGER') }} AS n_topics, ties
FROM scores GROUP BY qrels, collection, run_id, measure, ties;

-- ranking(q): every retrieved document of every run of q's collection with its grade under
-- qrels q (grade NULL when the document is not judged in q).
{{ d.table_function('ranking', [['q', 'VARCHAR']], [['collection', 'VARCHAR'], ['run_id', 'VARCHAR'], ['topic', 'VARCHAR'], ['rank', 'INTEGER'], ['docno', 'VARCHAR'], ['score', 'DOUBLE'], ['grade', 'INTEGER']]) }}
SELECT r.collection, r.run_id, r.topic, r.rank, r.docno, r.score, j.rel AS grade
FROM runs r
LEFT JOIN qrels j ON j.qrels = q AND j.rel >= 0 AND j.topic = r.topic AND j.docno = r.docno
WHERE r.collection = collection_of(q);

-- judged_ranking(q): the base relation of the measure engine -- the judged retrieved
-- documents of every run of q's collection under qrels q, with their condensed rank
-- (position among judged documents) and the running sums the measures need (relevance
-- threshold 1, gain = grade).
{{ d.table_function('judged_ranking', [['q', 'VARCHAR']], [['qrels', 'VARCHAR'], ['collection', 'VARCHAR'], ['run_id', 'VARCHAR'], ['topic', 'VARCHAR'], ['rank', 'INTEGER'], ['docno', 'VARCHAR'], ['crank', 'INTEGER'], ['grade', 'INTEGER'], ['c_rel', 'INTEGER'], ['c_nonrel', 'INTEGER'], ['cg', 'BIGINT']]) }}
SELECT q AS qrels, collection_of(q) AS collection, run_id, topic, rank, docno, crank, grade,
       c_rel, crank - c_rel AS c_nonrel, cg
FROM ({{ b.running_sums(b.judged_rows('q', 'collection_of(q)')) }}) AS base;

-- Internal: the judgments (rel >= 0) of qrels q numbered 1.. in (topic, docno) order, and the
-- rows of the materialized base (irw_base), which identify documents by that number.
{{ d.table_function('irw_judgment_ids', [['q', 'VARCHAR']], [['topic', 'VARCHAR'], ['docno', 'VARCHAR'], ['rel', 'INTEGER'], ['jid', 'INTEGER']]) }}
SELECT topic, docno, rel, {{ d.cast('row_number() OVER (ORDER BY topic, docno)', 'INTEGER') }} AS jid
FROM qrels WHERE qrels = q AND rel >= 0;

{{ d.table_function('irw_base_rows', [['q', 'VARCHAR']], [['qrels', 'VARCHAR'], ['run_id', 'VARCHAR'], ['topic', 'VARCHAR'], ['rank', 'INTEGER'], ['jid', 'INTEGER'], ['crank', 'INTEGER'], ['grade', 'INTEGER'], ['c_rel', 'INTEGER'], ['cg', 'BIGINT']]) }}
SELECT q AS qrels, run_id, topic, rank, jid, crank, grade, c_rel, cg
FROM ({{ b.running_sums(b.judged_ids('q'), key='jid') }}) AS base;
