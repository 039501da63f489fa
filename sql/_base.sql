{#- The base relation of the measure engine, defined once.

  running_sums(rows, key): `rows` is a query yielding the judged retrieved documents
  (run_id, topic, rank, <key>, grade >= 0), `key` naming the column that identifies the
  document (docno, or jid in the materialized cache). The result adds, per (run, topic) in
  rank order:
    crank     condensed rank: position among the judged documents
    c_rel     relevant documents (grade >= 1) so far, this one included
    cg        cumulative gain so far under the default gain map (gain = grade for grade >= 1)
  The judged non-relevant documents so far are crank - c_rel (the `c_nonrel` columns).
  Unjudged documents are absent: they add nothing to any running sum, and the measures that
  need them (RBPres, Judged, FirstUnjudged, NumRet) get them from ranks and ranking lengths.
-#}
{% import '_dialect.sql' as d %}
{% import '_ranking.sql' as rk %}
{% macro running_sums(rows, key='docno') -%}
SELECT run_id, topic, rank, {{ key }}, grade,
       {{ d.cast('row_number() OVER (PARTITION BY run_id, topic ORDER BY rank)', 'INTEGER') }} AS crank,
       {{ d.cast(d.running_count('grade >= 1'), 'INTEGER') }} AS c_rel,
       {{ d.running_sum('CASE WHEN grade >= 1 THEN grade ELSE 0 END') }} AS cg
FROM ({{ rows }}) AS judged_rows
{%- endmacro %}

{# Judged retrieved documents of every run of collection `c` under qrels `q` (SQL
   expressions). `ranked`: the rankings to use -- `runs` itself, or a query re-ranking it
   (reranked_runs). #}
{% macro judged_rows(q, c, ranked='runs', where='TRUE') -%}
SELECT r.run_id, r.topic, r.rank, r.docno, j.rel AS grade
FROM {{ ranked }} r
JOIN (SELECT qj.topic, qj.docno, qj.rel FROM qrels AS qj WHERE qj.qrels = {{ q }} AND qj.rel >= 0) AS j
  ON j.topic = r.topic AND j.docno = r.docno
WHERE r.collection = {{ c }} AND {{ where }}
{%- endmacro %}

{# The same for the runs of q's collection, the document identified by its judgment id (see
   irw_judgment_ids). #}
{% macro judged_ids(q) -%}
SELECT r.run_id, r.topic, r.rank, j.jid, j.rel AS grade
FROM runs r
JOIN irw_judgment_ids({{ q }}) AS j ON j.topic = r.topic AND j.docno = r.docno
WHERE r.collection = collection_of({{ q }})
{%- endmacro %}

{# Every run ranked afresh under its own ranking policy (run_loads; trec_eval for rows of a
   run irw did not load), from the score, given rank and docno columns: what loading the runs
   as they now stand would store. Used when `runs` was changed outside irw. #}
{% macro reranked_runs(where='TRUE') -%}
(SELECT rp.collection, rp.run_id, rp.topic, rp.docno, rp.score, rp.given_rank,
        {{ d.cast('row_number() OVER (PARTITION BY rp.collection, rp.run_id, rp.topic
                           ORDER BY ' ~ rk.order_by(None, 'policy') | indent(27) ~ ')', 'INTEGER') }} AS rank
 FROM (SELECT r.collection, r.run_id, r.topic, r.docno, r.score, r.given_rank,
              coalesce(l.ranking_policy, 'trec_eval') AS policy
       FROM runs r LEFT JOIN run_loads l ON l.collection = r.collection AND l.run_id = r.run_id
       WHERE {{ where }}) AS rp)
{%- endmacro %}

{# The runs in `sel` (of collection P.collection) with each tie ranked by the tie policy
   `ties` (its sort keys `within`, and `rerank`: the runs are ranked afresh first, see
   reranked_runs): _ranking.sql's tie_ranked under qrels P.qrels. #}
{% macro tied_runs(P, sel, ties) -%}
{% set chosen = 'r.collection = ' ~ P.collection ~ ' AND r.run_id IN (SELECT run_id FROM ' ~ sel ~ ')' %}
{{ rk.tie_ranked(reranked_runs(chosen) if ties.rerank else 'runs', ties.within, P.qrels, chosen) }}
{%- endmacro %}

{# The retrieved documents (run_id, topic, rank) of the runs in `sel` (of collection
   P.collection) that qrels P.qrels lists with a grade below 0 (in the pool, not assessed);
   ranked afresh with `reranked` (see reranked_runs), or each tie ranked by the tie policy
   `ties` (tied_runs). #}
{% macro unassessed_rows(P, sel, reranked=False, where='TRUE', ties=None) -%}
SELECT r.run_id, r.topic, r.rank
FROM {{ tied_runs(P, sel, ties) if ties else reranked_runs('r.collection = ' ~ P.collection ~ ' AND r.run_id IN (SELECT run_id FROM ' ~ sel ~ ')') if reranked else 'runs' }} r
JOIN qrels AS qj ON qj.topic = r.topic AND qj.docno = r.docno
WHERE qj.qrels = {{ P.qrels }} AND qj.rel < 0 AND r.collection = {{ P.collection }}
  AND r.run_id IN (SELECT run_id FROM {{ sel }}) AND {{ where }}
{%- endmacro %}

{# The retrieved documents' intents (run_id, topic, rank, intent) of the runs in `sel` (of
   collection P.collection): each intent of the topic that qrels P.qrels (of kind diversity:
   table qrels_intents) judges the document relevant to (grade >= 1, as ndeval); ranked
   afresh with `reranked` (see reranked_runs). #}
{% macro intent_rows(P, sel, reranked=False, where='TRUE') -%}
SELECT r.run_id, r.topic, r.rank, qi.intent
FROM {{ reranked_runs('r.collection = ' ~ P.collection ~ ' AND r.run_id IN (SELECT run_id FROM ' ~ sel ~ ')') if reranked else 'runs' }} r
JOIN qrels_intents AS qi ON qi.topic = r.topic AND qi.docno = r.docno
WHERE qi.qrels = {{ P.qrels }} AND qi.rel >= 1 AND r.collection = {{ P.collection }}
  AND r.run_id IN (SELECT run_id FROM {{ sel }}) AND {{ where }}
{%- endmacro %}

{# The retrieved documents (run_id, topic, rank, stratum, grade) of the runs in `sel` (of
   collection P.collection) that the sampled judgments of qrels P.qrels (table qrels_strata)
   list, sampled or not, at ranks <= `depth`; ranked afresh with `reranked`. #}
{% macro sampled_rows(P, sel, depth, reranked=False, where='TRUE') -%}
SELECT r.run_id, r.topic, r.rank, qs.stratum, qs.rel AS grade
FROM {{ reranked_runs('r.collection = ' ~ P.collection ~ ' AND r.run_id IN (SELECT run_id FROM ' ~ sel ~ ')') if reranked else 'runs' }} r
JOIN qrels_strata AS qs ON qs.topic = r.topic AND qs.docno = r.docno
WHERE qs.qrels = {{ P.qrels }} AND r.collection = {{ P.collection }} AND r.rank <= {{ depth }}
  AND r.run_id IN (SELECT run_id FROM {{ sel }}) AND {{ where }}
{%- endmacro %}

{# Ranking lengths per (run, topic) of the runs of collection `c`: run_topics, or counted
   from `runs` when `counted`. #}
{% macro ranking_lengths(c, counted=False, where='TRUE') -%}
{% if counted %}
SELECT rl.run_id, rl.topic, {{ d.cast('count(*)', 'INTEGER') }} AS n_docs FROM runs AS rl
WHERE rl.collection = {{ c }} AND {{ where }} GROUP BY rl.run_id, rl.topic
{%- else %}
SELECT rl.run_id, rl.topic, rl.n_docs FROM run_topics AS rl WHERE rl.collection = {{ c }} AND {{ where }}
{%- endif %}
{%- endmacro %}

{#
  base_rows(source, P, sel): the base rows (run_id, topic, rank, crank, grade, c_rel, cg) of
  qrels P.qrels for the runs of collection P.collection in the relation `sel` (a CTE with a
  run_id column). The cache and subset sources hold the runs of the root qrels's collection
  (irw_base_source chooses them only for that collection).
    cache   the qrels's materialized base (irw_base)
    subset  a derived qrels: the base of its root P.base_qrels restricted to its judgments
            (by judgment id), running sums recomputed
    fresh   computed from `runs` (the base is not materialized, or not current)
    rerank  computed from `runs` ranked afresh (`runs` was changed outside irw)
    ties    computed from `runs` with each tie ranked by the tie policy `ties` (tied_runs); or,
            with `ties.cached`, from the materialized base and the ties it records
            (_ranking.sql's tie_ranked_base: a policy ordering ties by gain alone)
  `where` (a dict source -> SQL condition) guards each branch; with several sources their
  union is taken, and the guards must make exactly one of them non-empty. `tie_columns`: the
  cache's rows carry their ties too (tie_a, tie_n; see irw_base).
#}
{% macro base_rows(sources, P, sel, where={}, ties=None, tie_columns=False) -%}
{% for source in sources %}
{% set guard = where.get(source, 'TRUE') %}
{% if source == 'cache' %}
SELECT run_id, topic, rank, crank, grade, c_rel, cg{% if tie_columns %}, tie_a, tie_n{% endif %}

FROM irw_base
WHERE qrels = {{ P.qrels }} AND run_id IN (SELECT run_id FROM {{ sel }}) AND {{ guard }}
{% elif source == 'subset' %}
SELECT run_id, topic, rank, crank, grade, c_rel, cg
FROM ({{ running_sums("SELECT c.run_id, c.topic, c.rank, c.jid, c.grade
      FROM irw_base c
      WHERE c.qrels = " ~ P.base_qrels ~ " AND c.run_id IN (SELECT run_id FROM " ~ sel ~ ") AND " ~ guard ~ "
        AND c.jid IN (SELECT r.jid FROM irw_judgment_ids(" ~ P.base_qrels ~ ") r
                      JOIN (SELECT qj.topic, qj.docno FROM qrels AS qj WHERE qj.qrels = " ~ P.qrels ~ " AND qj.rel >= 0) AS j
                        ON j.topic = r.topic AND j.docno = r.docno)", key='jid') }}) AS derived
{% elif source == 'fresh' %}
SELECT run_id, topic, rank, crank, grade, c_rel, cg
FROM ({{ running_sums(judged_rows(P.qrels, P.collection, where='r.run_id IN (SELECT run_id FROM ' ~ sel ~ ') AND ' ~ guard)) }}) AS fresh
{% elif source == 'rerank' %}
SELECT run_id, topic, rank, crank, grade, c_rel, cg
FROM ({{ running_sums(judged_rows(P.qrels, P.collection, ranked=reranked_runs('r.collection = ' ~ P.collection ~ ' AND r.run_id IN (SELECT run_id FROM ' ~ sel ~ ') AND ' ~ guard))) }}) AS reranked
{% elif source == 'ties' and ties.cached %}
SELECT run_id, topic, rank, crank, grade, c_rel, cg
FROM ({{ rk.tie_ranked_base("(SELECT run_id, topic, rank, crank, grade, c_rel, cg, tie_a, tie_n FROM irw_base
      WHERE qrels = " ~ P.qrels ~ " AND run_id IN (SELECT run_id FROM " ~ sel ~ ") AND " ~ guard ~ ")", ties.within) }}) AS tied
{% elif source == 'ties' %}
SELECT run_id, topic, rank, crank, grade, c_rel, cg
FROM ({{ running_sums(judged_rows(P.qrels, P.collection, ranked=tied_runs(P, sel, ties), where=guard)) }}) AS tied
{% endif %}
{% if not loop.last %}
UNION ALL
{% endif %}
{% endfor %}
{%- endmacro %}

{# The base rows a measure macro (schema `measure`) reads: base_rows of every source in
   `sources`, each guarded by `src` (the one irw_base_source chose for the macro's call), of
   qrels `q` for the runs `ids` (a list) of collection `c`; `root`: q's root qrels. One
   table macro, irw_measure_base, that every measure macro calls (measure_macros.sql), so
   that each holds only its own part and the warehouse's catalogue stays small. #}
{% macro measure_base(sources) -%}
{{ d.table_function('irw_measure_base', ['q', 'c', 'ids', 'src', 'root']) }}
WITH sel AS (SELECT {{ d.unnest_list('ids') }} AS run_id)
{{ base_rows(sources, {'qrels': 'q', 'collection': 'c', 'base_qrels': 'root'}, 'sel',
             {'cache': "src = 'cache'", 'subset': "src = 'subset'", 'fresh': "src = 'fresh'",
              'rerank': "src = 'rerank'"}) }}
{%- endmacro %}

{# The per-(run, topic) context both engines (evaluate.sql, evaluate_many.sql) give the
   measures' value(m), as the CTEs `ctx0` and `ctx` over `topicset` (a row per evaluated
   (run, topic), with the key columns `by` and `keys`) and `rt` (ranking lengths): `n`, the
   ranking length (at most max_docs); the aggregates the caller joins (`caller()`: LEFT JOINs
   onto ctx0); the ideal totals itot_<g> of every gain set; and the topic's normalizers (R
   and N of each threshold, gmax_g) from `tstats` and `gstats`, 0 where a topic has none.
   `by` names the columns that, with the topic, key the per-topic relations (evaluate_many:
   qid, the qrels). #}
{% macro topic_context(max_docs, thresholds, gainsets, by=[], keys=[]) -%}
ctx0 AS (
    SELECT {% for k in by + keys %}ts.{{ k }}, {% endfor %}ts.run_id, ts.topic,
           {% if max_docs %}least(coalesce(rt.n_docs, 0), {{ max_docs | num }}){% else %}coalesce(rt.n_docs, 0){% endif %} AS n
    FROM topicset ts
    LEFT JOIN rt ON rt.run_id = ts.run_id AND rt.topic = ts.topic
),
ctx AS (
    SELECT c.*
{% for t in thresholds %}
         , coalesce(tstats.{{ t.R }}, 0) AS {{ t.R }}, coalesce(tstats.{{ t.N }}, 0) AS {{ t.N }}
{% endfor %}
         , coalesce(gstats.gmax_g, 0) AS gmax_g
    FROM (
        SELECT * FROM ctx0
{{ caller() }}
{% for g in gainsets %}
        LEFT JOIN itot_{{ g.key }} USING ({{ (by + ['topic']) | join(', ') }})
{% endfor %}
    ) AS c
    LEFT JOIN tstats ON {% for k in by %}tstats.{{ k }} = c.{{ k }} AND {% endfor %}tstats.topic = c.topic
    LEFT JOIN gstats ON {% for k in by %}gstats.{{ k }} = c.{{ k }} AND {% endfor %}gstats.topic = c.topic
)
{%- endmacro %}
