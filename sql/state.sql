{% import '_state.sql' as st %}
{#- What the caches were built from, and the macros that tell whether they still stand for
    the tables. Changes made outside irw (plain SQL, a BI tool, a script) are seen by
    comparing fingerprints with those recorded when irw last wrote: of the runs tables, a
    version that every write to them changes and that is taken without reading `runs`
    (irw_runs_fp); of a qrels, a hash of its judgments. -#}
-- The fingerprints irw recorded after its own last write: of every qrels ('qrels:<name>')
-- and of the runs tables ('runs', irw_runs_fp()).
CREATE TABLE IF NOT EXISTS irw_state (
    name VARCHAR PRIMARY KEY,
    fp   UBIGINT NOT NULL
);

-- What irw last wrote of each run: its rows in `runs` (count and sum of row hashes), in
-- run_topics (likewise) and its run_loads entry (a hash). When the runs tables are not as
-- irw recorded them, a writer compares these with the tables to find the runs that changed
-- (irwarehouse.schema.reconcile); a load computes its runs' parts from what it stages.
CREATE TABLE IF NOT EXISTS irw_run_state (
    collection VARCHAR NOT NULL,
    run_id     VARCHAR NOT NULL,
    n_rows     BIGINT NOT NULL,
    rows_sum   HUGEINT NOT NULL,
    n_topics   BIGINT NOT NULL,
    topics_sum HUGEINT NOT NULL,
    load_hash  UBIGINT NOT NULL,
    PRIMARY KEY (collection, run_id)
);

-- Does runs still count its writes: its check draws from irw_runs_writes and names every
-- column (schema.sql)? A table put in its place (CREATE OR REPLACE TABLE runs AS ...) has no
-- such check.
CREATE OR REPLACE MACRO irw_runs_counted() AS {{ st.runs_counted() }};

-- The version of runs, run_topics and run_loads as they are now, read without reading
-- `runs`: the number irw_runs_writes last drew (every row inserted or updated in runs draws
-- one, and a number is never drawn twice), the count of rows of runs (a DELETE draws none),
-- and a hash of the rows of run_topics and run_loads (small tables). NULL -- equal to no
-- recorded version -- when runs no longer counts its writes or the sequence is gone.
CREATE OR REPLACE MACRO irw_runs_fp() AS (
    SELECT CASE WHEN irw_runs_counted() AND drawn IS NOT NULL THEN hash(
               drawn,
               (SELECT count(*) FROM runs),
               (SELECT hash(count(*), coalesce(sum({{ st.topic_hash() }}), 0)) FROM run_topics),
               (SELECT hash(count(*), coalesce(sum({{ st.load_hash() }}::HUGEINT), 0)) FROM run_loads)) END
    FROM (SELECT (SELECT coalesce(max(last_value), 0) FROM duckdb_sequences()
                  WHERE database_name = current_database() AND schema_name = 'main'
                    AND sequence_name = 'irw_runs_writes'
                  HAVING count(*) = 1) AS drawn) AS w);

-- ... and as irw recorded it after its last write.
CREATE OR REPLACE MACRO irw_recorded_runs_fp() AS (SELECT fp FROM irw_state WHERE name = 'runs');

-- Each run's rows now (to find the runs changed outside irw).
CREATE OR REPLACE MACRO irw_run_rows() AS TABLE
{{ st.row_sums('runs') }};

CREATE OR REPLACE MACRO irw_qrels_fp(q) AS (
    SELECT {{ st.judgments_fp('qj') }} FROM qrels AS qj WHERE qj.qrels = q);

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
    WHERE dj.qrels = q AND q <> root AND dj.rel >= 0 AND NOT EXISTS (
        SELECT 1 FROM qrels AS rj
        WHERE rj.qrels = root AND rj.topic = dj.topic AND rj.docno = dj.docno AND rj.rel = dj.rel));

-- Is the materialized base of the loaded qrels q built from the tables as they are, the runs
-- tables' version being rfp (irw_runs_fp(), or the value a connection checked once)?
CREATE OR REPLACE MACRO irw_base_current(q, rfp) AS coalesce(
    rfp = irw_recorded_runs_fp()
    AND (SELECT bb.runs_fp = rfp AND bb.qrels_fp = irw_qrels_fp(q)
         FROM irw_base_built AS bb WHERE bb.qrels = q), false);

-- Where the base rows of qrels q for the runs of collection c come from (see base_rows in
-- _base.sql): 'rerank' when the runs tables are not as irw last wrote them, 'cache' when q's
-- own base is current, 'subset' when q is derived, its root's base current and its
-- judgments a subset of the root's, 'fresh' otherwise (and for another collection's runs: a
-- base holds the runs of its qrels's collection). The one decision, for the engine and the
-- measure macros.
CREATE OR REPLACE MACRO irw_base_source(q, c, rfp) AS (
    SELECT CASE WHEN NOT runs_ok THEN 'rerank'
                WHEN base_ok AND root = q THEN 'cache'
                WHEN base_ok AND irw_subset_ok(q, root) THEN 'subset'
                ELSE 'fresh' END
    FROM (SELECT root, runs_ok,
                 runs_ok AND irw_base_current(root, rfp) AND c IS NOT DISTINCT FROM collection_of(root) AS base_ok
          FROM (SELECT irw_root_qrels(q) AS root,
                       coalesce(rfp = irw_recorded_runs_fp(), false) AS runs_ok) AS r) AS s);

-- The qrels whose judgments are not as irw last recorded them (recorded NULL: never).
CREATE OR REPLACE MACRO irw_qrels_changes() AS TABLE
SELECT i.qrels, s.fp AS recorded
FROM qrels_info AS i LEFT JOIN irw_state AS s ON s.name = 'qrels:' || i.qrels
WHERE s.fp IS DISTINCT FROM irw_qrels_fp(i.qrels);
