{% import '_dialect.sql' as d %}
{% import '_base.sql' as b %}
-- Public views and table macros. They use nothing but SQL, so they work from a plain
-- DuckDB connection (DuckDB CLI, notebooks, BI tools) without this package.

-- One row per loaded run: where it came from, how it is ranked, and its metadata.
CREATE OR REPLACE VIEW run_info AS
SELECT l.collection, l.run_id, m.team, m.kind, m.pooled, l.source, l.ranking_policy,
       l.n_topics, l.n_docs, l.loaded_at
FROM run_loads l LEFT JOIN run_meta m USING (collection, run_id);

-- The test collections: their loaded qrels (and how many qrels are derived from them),
-- runs, and the topics, judged documents (rel >= 0) and relevant ones (rel >= 1) of their
-- loaded qrels.
CREATE OR REPLACE VIEW collections AS
SELECT n.collection,
       (SELECT list(i.qrels ORDER BY i.qrels) FROM qrels_info i
        WHERE i.collection = n.collection AND i.parent IS NULL) AS qrels,
       (SELECT count(*) FROM qrels_info i
        WHERE i.collection = n.collection AND i.parent IS NOT NULL)::INTEGER AS derived_qrels,
       (SELECT count(*) FROM run_loads l WHERE l.collection = n.collection)::INTEGER AS runs,
       (SELECT count(DISTINCT j.topic) FROM qrels j JOIN qrels_info i ON i.qrels = j.qrels
        WHERE i.collection = n.collection AND i.parent IS NULL)::INTEGER AS topics,
       (SELECT count(*) FILTER (WHERE j.rel >= 0) FROM qrels j JOIN qrels_info i ON i.qrels = j.qrels
        WHERE i.collection = n.collection AND i.parent IS NULL)::BIGINT AS judged,
       (SELECT count(*) FILTER (WHERE j.rel >= 1) FROM qrels j JOIN qrels_info i ON i.qrels = j.qrels
        WHERE i.collection = n.collection AND i.parent IS NULL)::BIGINT AS relevant
FROM (SELECT collection FROM qrels_info UNION SELECT collection FROM run_loads) AS n;

-- Per qrels and topic: how many documents are judged, relevant (rel >= 1), judged
-- non-relevant (rel = 0) and in the pool but unassessed (rel < 0).
CREATE OR REPLACE VIEW topics AS
SELECT qrels, topic,
       count(*) FILTER (WHERE rel >= 0)::INTEGER AS judged,
       count(*) FILTER (WHERE rel >= 1)::INTEGER AS relevant,
       count(*) FILTER (WHERE rel = 0)::INTEGER  AS nonrelevant,
       count(*) FILTER (WHERE rel < 0)::INTEGER  AS unassessed,
       max(rel) AS max_grade
FROM qrels GROUP BY qrels, topic;

-- The default topic set of every qrels: the topics of its topic_qrels (itself, or the root
-- it was derived from) with at least one relevant document (rel >= 1).
CREATE OR REPLACE VIEW topic_sets AS
SELECT i.qrels, t.topic
FROM qrels_info i JOIN topics t ON t.qrels = i.topic_qrels
WHERE t.relevant >= 1;

-- Mean of the stored per-topic scores.
CREATE OR REPLACE VIEW score_means AS
SELECT qrels, collection, run_id, measure, avg(value) AS mean, count(*)::INTEGER AS n_topics
FROM scores GROUP BY qrels, collection, run_id, measure;

-- ranking(q): every retrieved document of every run of q's collection with its grade under
-- qrels q (grade NULL when the document is not judged in q).
{{ d.table_function('ranking', ['q']) }}
SELECT r.collection, r.run_id, r.topic, r.rank, r.docno, r.score, j.rel AS grade
FROM runs r
LEFT JOIN (SELECT topic, docno, rel FROM qrels WHERE qrels = q AND rel >= 0) j
       ON j.topic = r.topic AND j.docno = r.docno
WHERE r.collection = collection_of(q);

-- judged_ranking(q): the base relation of the measure engine -- the judged retrieved
-- documents of every run of q's collection under qrels q, with their condensed rank
-- (position among judged documents) and the running sums the measures need (relevance
-- threshold 1, gain = grade).
{{ d.table_function('judged_ranking', ['q']) }}
SELECT q AS qrels, collection_of(q) AS collection, run_id, topic, rank, docno, crank, grade,
       c_rel, crank - c_rel AS c_nonrel, cg
FROM ({{ b.running_sums(b.judged_rows('q', 'collection_of(q)')) }}) AS base;

-- Internal: the judgments (rel >= 0) of qrels q numbered 1.. in (topic, docno) order, and the
-- rows of the materialized base (irw_base), which identify documents by that number.
{{ d.table_function('irw_judgment_ids', ['q']) }}
SELECT topic, docno, rel, row_number() OVER (ORDER BY topic, docno)::INTEGER AS jid
FROM qrels WHERE qrels = q AND rel >= 0;

{{ d.table_function('irw_base_rows', ['q']) }}
SELECT q AS qrels, run_id, topic, rank, jid, crank, grade, c_rel, cg
FROM ({{ b.running_sums(b.judged_ids('q'), key='jid') }}) AS base;
