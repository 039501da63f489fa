-- irwarehouse schema: the stored tables. Views and macros are in views.sql.
-- Every statement is idempotent; the package runs this file when it opens a warehouse.

CREATE TABLE IF NOT EXISTS irw_meta (
    key   VARCHAR PRIMARY KEY,
    value VARCHAR
);

-- Counts the rows written to runs: every row any client inserts or updates (irw or plain
-- SQL, an INSERT, UPDATE, MERGE, COPY or appender) draws a number from it, through the
-- check of runs below, which names every column so that an UPDATE of any column runs it. A
-- number drawn is never drawn again, so the number last drawn, with the count of rows (a
-- DELETE draws none), tells whether runs changed since irw last recorded them, without
-- reading them (irw_runs_fp in state.sql). Writing to runs therefore needs the warehouse as
-- the current database (`USE` it after ATTACH): DuckDB looks the sequence up there.
CREATE SEQUENCE IF NOT EXISTS irw_runs_writes;

-- A run belongs to a test collection and is identified by (collection, run_id): the same
-- run id may exist in several collections. A warehouse loaded without --collection has one
-- collection, 'default'. Every table naming runs carries the collection before run_id.

-- One row per retrieved document. rank is the 1-based position under the run's ranking
-- policy (run_info.ranking_policy), computed when the run is loaded.
CREATE TABLE IF NOT EXISTS runs (
    collection VARCHAR NOT NULL,
    run_id     VARCHAR NOT NULL,
    topic      VARCHAR NOT NULL,
    docno      VARCHAR NOT NULL,
    rank       INTEGER NOT NULL,
    score      DOUBLE  NOT NULL,
    given_rank BIGINT  NOT NULL,
    CHECK (nextval('irw_runs_writes') > 0 OR collection IS NULL OR run_id IS NULL OR topic IS NULL
           OR docno IS NULL OR rank IS NULL OR score IS NULL OR given_rank IS NULL)
);

-- Ranking length per run and topic (filled at load; a topic a run did not answer has no row).
CREATE TABLE IF NOT EXISTS run_topics (
    collection VARCHAR NOT NULL,
    run_id VARCHAR NOT NULL,
    topic  VARCHAR NOT NULL,
    n_docs INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS run_loads (
    collection     VARCHAR NOT NULL,
    run_id         VARCHAR NOT NULL,
    source         VARCHAR NOT NULL,
    ranking_policy VARCHAR NOT NULL,
    n_topics       INTEGER NOT NULL,
    n_docs         BIGINT  NOT NULL,
    loaded_at      TIMESTAMP NOT NULL,
    PRIMARY KEY (collection, run_id)
);

-- Optional run metadata; may be loaded before or after the runs it describes. system: the
-- system a run is one of (a seed, a fold, a prompt variant); a run without one is its own.
CREATE TABLE IF NOT EXISTS run_meta (
    collection VARCHAR NOT NULL,
    run_id VARCHAR NOT NULL,
    team   VARCHAR,
    kind   VARCHAR,
    pooled BOOLEAN,
    system VARCHAR,
    PRIMARY KEY (collection, run_id)
);

-- Judgments of every qrels, side by side. rel < 0: in the pool but not assessed (unjudged).
CREATE TABLE IF NOT EXISTS qrels (
    qrels VARCHAR NOT NULL,
    topic VARCHAR NOT NULL,
    docno VARCHAR NOT NULL,
    rel   INTEGER NOT NULL
);

-- The qrels catalogue. topic_qrels names the qrels whose topics define the topic set:
-- the qrels itself when loaded from a file, its root ancestor when derived. Qrels names are
-- unique in the warehouse; a qrels belongs to a collection (a derived one to its parent's),
-- whose runs the commands over it use by default.
CREATE TABLE IF NOT EXISTS qrels_info (
    qrels       VARCHAR PRIMARY KEY,
    collection  VARCHAR NOT NULL,
    source      VARCHAR,
    parent      VARCHAR,
    kind        VARCHAR NOT NULL,
    params      VARCHAR,
    description VARCHAR,
    topic_qrels VARCHAR NOT NULL,
    created_at  TIMESTAMP NOT NULL,
    judgments   VARCHAR DEFAULT 'trec'  -- the judgment kind it was loaded as (--format)
);

-- Per-topic scores computed by `irw eval` (the latest evaluation of a qrels, run, measure
-- and tie policy). collection is the run's (usually the qrels's own); ties the tie policy
-- (irwarehouse.options.TIE_POLICIES) that ranked the run's ties.
CREATE TABLE IF NOT EXISTS scores (
    qrels   VARCHAR NOT NULL,
    collection VARCHAR NOT NULL,
    run_id  VARCHAR NOT NULL,
    topic   VARCHAR NOT NULL,
    measure VARCHAR NOT NULL,
    value   DOUBLE,
    ties    VARCHAR DEFAULT 'trec_eval'
);

-- What each `irw eval` computed, and how.
-- (collection: the runs'; rel_level: the relevance threshold of the topic set, eval
-- --rel-level, NULL meaning 1; ranking_policy: the ranking orders of the runs scored,
-- run_loads.ranking_policy, comma-separated when they differ; ties: the tie policy)
CREATE TABLE IF NOT EXISTS evaluations (
    evaluated_at TIMESTAMP NOT NULL,
    qrels        VARCHAR NOT NULL,
    collection   VARCHAR NOT NULL,
    measure      VARCHAR NOT NULL,
    n_runs       INTEGER NOT NULL,
    topics       VARCHAR NOT NULL,
    max_docs     INTEGER,
    rel_level    INTEGER,
    ranking_policy VARCHAR,
    ties         VARCHAR DEFAULT 'trec_eval'
);

-- The measure catalogue (written anew from the package whenever the schema is set up):
-- trec_eval and ir_measures name the measure there; graded measures sum gains; ideal ones
-- are normalized by the ideal ranking; paper names where the measure is defined.
CREATE OR REPLACE TABLE measures (
    name        VARCHAR PRIMARY KEY,
    description VARCHAR,
    parameters  VARCHAR,
    cutoff      BOOLEAN,
    trec_eval   VARCHAR,
    ir_measures VARCHAR,
    graded      BOOLEAN,
    ideal       BOOLEAN,
    paper       VARCHAR,
    example     VARCHAR,  -- a setting of the measure, e.g. IPrec@0.5
    example_arguments VARCHAR,  -- its measure macro's arguments after the qrels, e.g. k := 0.5
    judgments   VARCHAR,  -- the kind of judgments it reads (irw load qrels --format)
    reference   VARCHAR   -- the reference implementation of that kind's measures
);

-- Cache: the base relation (judged retrieved documents with running sums) per loaded qrels,
-- over the runs of the qrels's collection. The
-- document is identified by its judgment id (irw_judgment_ids), an integer; judged
-- non-relevant documents so far are crank - c_rel. tie_a, tie_n: where irw_base_ties_built
-- lists the qrels, the first rank and the size of the tie (documents of equal score) the
-- document is in; NULL when it is alone.
CREATE TABLE IF NOT EXISTS irw_base (
    qrels    VARCHAR NOT NULL,
    run_id   VARCHAR NOT NULL,
    topic    VARCHAR NOT NULL,
    rank     INTEGER NOT NULL,
    jid      INTEGER NOT NULL,
    crank    INTEGER NOT NULL,
    grade    INTEGER NOT NULL,
    c_rel    INTEGER NOT NULL,
    cg       DOUBLE  NOT NULL,
    tie_a    INTEGER,
    tie_n    INTEGER
);

-- The qrels whose base is materialized, with the fingerprints of the runs and of the qrels it
-- was built from (irw_runs_fp(), irw_qrels_fp(q)): the base is used only while they match.
CREATE TABLE IF NOT EXISTS irw_base_built (
    qrels    VARCHAR PRIMARY KEY,
    built_at TIMESTAMP NOT NULL,
    runs_fp  UBIGINT NOT NULL,
    qrels_fp UBIGINT NOT NULL
);

-- The qrels whose base records its documents' ties (irw_base.tie_a, tie_n): filled the first
-- time an evaluation that stores scores reads them (tie policies expected, optimistic,
-- pessimistic), forgotten whenever the base's rows change.
CREATE TABLE IF NOT EXISTS irw_base_ties_built (
    qrels    VARCHAR PRIMARY KEY
);

-- What a derived qrels lacks of its root (the loaded qrels it descends from), recorded when
-- irw records the qrels (irwarehouse.state.record_qrels), if it is a subset of the root with
-- the same grades: the root's judgments it lacks (by judgment id in the root,
-- irw_judgment_ids), and the fingerprints of both then (irw_qrels_fp). Many derived qrels are
-- evaluated in one pass from these (irwarehouse.engine.many) while both fingerprints hold.
CREATE TABLE IF NOT EXISTS irw_derived_built (
    qrels    VARCHAR PRIMARY KEY,
    root     VARCHAR NOT NULL,
    qrels_fp UBIGINT NOT NULL,
    root_fp  UBIGINT NOT NULL
);
CREATE TABLE IF NOT EXISTS irw_derived_removed (
    qrels VARCHAR NOT NULL,
    jid   INTEGER NOT NULL,
    topic VARCHAR NOT NULL,
    grade INTEGER NOT NULL
);

-- Saved results of `irw discpower --save NAME` (one row per measure) with their parameters.
CREATE TABLE IF NOT EXISTS discpower_results (
    name                        VARCHAR NOT NULL,
    created_at                  TIMESTAMP NOT NULL,
    params                      VARCHAR,
    qrels                       VARCHAR,
    collection                  VARCHAR,
    measure                     VARCHAR,
    test                        VARCHAR,
    correction                  VARCHAR,
    alpha                       DOUBLE,
    "B"                         INTEGER,
    runs                        INTEGER,
    topics                      INTEGER,
    pairs                       INTEGER,
    significant                 INTEGER,
    not_significant             INTEGER,
    undefined                   INTEGER,
    discriminative_power        DOUBLE,
    estimated_difference_max    DOUBLE,
    estimated_difference_median DOUBLE,
    reference_qrels             VARCHAR,
    reference_measure           VARCHAR,
    misses                      INTEGER,
    false_alarms                INTEGER,
    tp                          INTEGER,
    fp                          INTEGER,
    fn                          INTEGER,
    tn                          INTEGER,
    systems                     INTEGER,
    residual_variance           DOUBLE,
    smallest_significant_diff   DOUBLE,
    median_effect_size          DOUBLE
);

-- Saved results of `irw pvalues --save NAME` (and the pairs behind `irw discpower --save
-- NAME`): every run pair with its p-values, the interval of its difference and its effect
-- sizes; pairs of systems (--by system) name them in system_a, system_b (run_a, run_b NULL),
-- with their numbers of runs.
CREATE TABLE IF NOT EXISTS pair_tests (
    name       VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL,
    params     VARCHAR,
    qrels      VARCHAR,
    collection VARCHAR,
    measure    VARCHAR,
    test       VARCHAR,
    run_a      VARCHAR,
    run_b      VARCHAR,
    mean_a     DOUBLE,
    mean_b     DOUBLE,
    diff       DOUBLE,
    statistic  DOUBLE,
    p_value    DOUBLE,
    p_adjusted DOUBLE,
    significant BOOLEAN,
    system_a   VARCHAR,
    system_b   VARCHAR,
    runs_a     INTEGER,
    runs_b     INTEGER,
    within_spread BOOLEAN,
    ci_low     DOUBLE,
    ci_high    DOUBLE,
    effect_size DOUBLE,
    effect_low DOUBLE,
    effect_high DOUBLE,
    effect_size_residual DOUBLE
);

-- Saved results of `irw correlate --matrix --save NAME`: one row per cell (condition a =
-- measure_a on qrels_a, the row and tau_AP's reference; condition b, the column) and statistic.
CREATE TABLE IF NOT EXISTS correlation_matrices (
    name       VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL,
    params     VARCHAR,
    "of"       VARCHAR,
    measure_a  VARCHAR,
    qrels_a    VARCHAR,
    measure_b  VARCHAR,
    qrels_b    VARCHAR,
    statistic  VARCHAR,
    value      DOUBLE,
    topics     INTEGER,
    items      INTEGER
);

-- Tables written by `irw experiment ...`: each is a table exp_<experiment>_<name>.
CREATE TABLE IF NOT EXISTS experiment_tables (
    experiment VARCHAR NOT NULL,
    table_name VARCHAR NOT NULL,
    n_rows     BIGINT,
    params     VARCHAR,
    created_at TIMESTAMP NOT NULL
);

-- Saved results of `irw repro --save NAME` (irwarehouse.repro): an original run against its
-- reproductions (same qrels) or replications (reproduced_qrels another qrels), per measure
-- and role (advanced: the original run; baseline: its baseline) -- the means, RMSE of the
-- per-topic scores, the p-value of `test`, and on advanced rows the effect ratio and ΔRI.
CREATE TABLE IF NOT EXISTS repro_effects (
    name             VARCHAR NOT NULL,
    created_at       TIMESTAMP NOT NULL,
    params           VARCHAR,
    collection       VARCHAR,
    kind             VARCHAR,
    role             VARCHAR,
    original         VARCHAR,
    reproduced       VARCHAR,
    qrels            VARCHAR,
    reproduced_qrels VARCHAR,
    measure          VARCHAR,
    topics           INTEGER,
    mean_original    DOUBLE,
    mean_reproduced  DOUBLE,
    rmse             DOUBLE,
    test             VARCHAR,
    p_value          DOUBLE,
    er               DOUBLE,
    delta_ri         DOUBLE
);

-- The order of documents of `irw repro --save NAME`: per role, reproduction, cut-off and
-- topic (and topic 'all': the mean over the topics), repro_eval's Kendall's tau Union (ktu),
-- Kendall's tau of the documents' ranks over the union (ktu_ranks) and repro_eval's RBO.
CREATE TABLE IF NOT EXISTS repro_order (
    name       VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL,
    params     VARCHAR,
    collection VARCHAR,
    role       VARCHAR,
    original   VARCHAR,
    reproduced VARCHAR,
    cutoff     INTEGER,
    topic      VARCHAR,
    ktu        DOUBLE,
    ktu_ranks  DOUBLE,
    rbo        DOUBLE
);

-- The lines of qrels loaded in the other kinds of judgments (irwarehouse.judgment_kinds),
-- kept as their files give them; each such qrels also has its graded rows in qrels where its
-- kind gives some. Diversity (ndeval's topic subtopic docno rel): a judgment per intent.
CREATE TABLE IF NOT EXISTS qrels_intents (
    qrels  VARCHAR NOT NULL,
    topic  VARCHAR NOT NULL,
    intent VARCHAR NOT NULL,
    docno  VARCHAR NOT NULL,
    rel    INTEGER NOT NULL
);

-- Sampled judgments (sample_eval's topic 0 docno stratum rel): the stratum a document was
-- sampled from; rel -1: in the pool, not sampled.
CREATE TABLE IF NOT EXISTS qrels_strata (
    qrels   VARCHAR NOT NULL,
    topic   VARCHAR NOT NULL,
    docno   VARCHAR NOT NULL,
    stratum INTEGER NOT NULL,
    rel     INTEGER NOT NULL
);

-- Preferences (trec_eval's -R prefs: topic jg jsg docno rel, rel a preference level within
-- the judgment sub-group jsg) and judgment groups (-R qrels_jg: topic jg docno rel, jsg NULL).
CREATE TABLE IF NOT EXISTS qrels_prefs (
    qrels VARCHAR NOT NULL,
    topic VARCHAR NOT NULL,
    jg    VARCHAR NOT NULL,
    jsg   VARCHAR,
    docno VARCHAR NOT NULL,
    rel   DOUBLE NOT NULL
);
