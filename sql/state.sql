{#- What the caches were built from, and the macros that tell whether they still stand for
    the tables. Changes made outside irw (plain SQL, a BI tool, a script) are seen by
    comparing fingerprints -- a hash of the rows -- with those recorded when irw last wrote. -#}
-- The fingerprints irw recorded after its own last write: name 'runs' (the tables runs,
-- run_topics and run_loads together) and 'qrels:<name>' for every qrels.
CREATE TABLE IF NOT EXISTS irw_state (
    name VARCHAR PRIMARY KEY,
    fp   UBIGINT NOT NULL
);

-- The fingerprint of each run's rows in `runs` when irw last ranked it.
CREATE TABLE IF NOT EXISTS irw_run_state (
    run_id VARCHAR PRIMARY KEY,
    fp     UBIGINT NOT NULL
);

-- Fingerprints of the tables as they are now.
CREATE OR REPLACE MACRO irw_runs_fp() AS hash(
    (SELECT hash(count(*), coalesce(sum(hash(run_id, topic, docno, rank, score, given_rank)::HUGEINT), 0)) FROM runs),
    (SELECT hash(count(*), coalesce(sum(hash(run_id, topic, n_docs)::HUGEINT), 0)) FROM run_topics),
    (SELECT hash(count(*), coalesce(sum(hash(run_id, ranking_policy)::HUGEINT), 0)) FROM run_loads));

CREATE OR REPLACE MACRO irw_run_fps() AS TABLE
SELECT run_id, hash(count(*), sum(hash(topic, docno, rank, score, given_rank)::HUGEINT)) AS fp
FROM runs GROUP BY run_id;

CREATE OR REPLACE MACRO irw_qrels_fp(q) AS (
    SELECT hash(count(*), coalesce(sum(hash(qj.topic, qj.docno, qj.rel)::HUGEINT), 0))
    FROM qrels AS qj WHERE qj.qrels = q);

-- The loaded qrels a derived qrels descends from (itself for a loaded one).
CREATE OR REPLACE MACRO irw_root_qrels(q) AS coalesce((
    WITH RECURSIVE chain(name, parent, depth) AS (
        SELECT qrels, parent, 0 FROM qrels_info WHERE qrels = q
        UNION ALL
        SELECT i.qrels, i.parent, c.depth + 1 FROM qrels_info i JOIN chain c ON i.qrels = c.parent
        WHERE c.depth < 100)
    SELECT max(name) FILTER (WHERE parent IS NULL) FROM chain), q);

-- Does every judgment of qrels q appear, with the same grade, in qrels root? (Then q's base
-- is root's base restricted to q's judgments.)
CREATE OR REPLACE MACRO irw_subset_ok(q, root) AS NOT EXISTS (
    SELECT 1 FROM qrels AS dj
    WHERE dj.qrels = q AND dj.rel >= 0 AND NOT EXISTS (
        SELECT 1 FROM qrels AS rj
        WHERE rj.qrels = root AND rj.topic = dj.topic AND rj.docno = dj.docno AND rj.rel = dj.rel));
