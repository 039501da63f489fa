{#- The choice of base source inside SQL (a measure macro), from the warehouse's state:
    cache   q is a loaded qrels whose materialized base is current
    subset  q is derived, its root's base is current and q's judgments are a subset of root's
    fresh   otherwise, while `runs` is as irw last ranked it
    rerank  `runs` was changed outside irw: rankings are recomputed from scores
  guard_ctes(P, checks) defines the CTEs `irw_st` and `irw_flags` (computed once; `checks`, pairs of a condition and the error raised when it holds,
  validate the macro's parameters); `guards` gives, per
  source, the condition under which it is the one used (and `ranked`: run_topics and the
  stored ranks are current). -#}
{% import '_dialect.sql' as d %}
{# The hashes the fingerprints of runs, run_topics and run_loads sum (state.sql). #}
{% macro row_hash() %}hash(run_id, topic, docno, rank, score, given_rank)::HUGEINT{% endmacro %}
{% macro topic_hash() %}hash(run_id, topic, n_docs)::HUGEINT{% endmacro %}
{% macro load_hash() %}hash(run_id, ranking_policy){% endmacro %}

{# Per run: (run_id, n_rows, rows_sum, n_topics, topics_sum, load_hash) of the runs $ids in
   the tables `rows` (like runs), `topics` (like run_topics) and `loads` (like run_loads). #}
{% macro run_parts(rows='runs', topics='run_topics', loads='run_loads') -%}
SELECT r.run_id, r.n_rows, r.rows_sum, t.n_topics, t.topics_sum, {{ load_hash() }} AS load_hash
FROM (SELECT run_id, count(*) AS n_rows, sum({{ row_hash() }}) AS rows_sum
      FROM {{ rows }} WHERE list_contains($ids, run_id) GROUP BY run_id) AS r
JOIN (SELECT run_id, count(*) AS n_topics, sum({{ topic_hash() }}) AS topics_sum
      FROM {{ topics }} WHERE list_contains($ids, run_id) GROUP BY run_id) AS t USING (run_id)
JOIN {{ loads }} AS l USING (run_id)
{%- endmacro %}

{% macro guard_ctes(P, checks) -%}
irw_st AS {{ d.materialized() }} (
    SELECT irw_runs_fp() AS runs_fp, irw_root_qrels({{ P.qrels }}) AS root,
           {% if checks %}CASE {% for cond, message in checks %}WHEN {{ cond }} THEN error({{ message | literal }}) {% endfor %}ELSE true END{% else %}true{% endif %} AS ok
),
irw_flags AS {{ d.materialized() }} (
    SELECT c_runs,
           c_runs AND root = {{ P.qrels }} AND base_ok AS c_cache,
           c_runs AND root <> {{ P.qrels }} AND base_ok AND irw_subset_ok({{ P.qrels }}, root) AS c_subset
    FROM (SELECT st.root,
                 coalesce(st.runs_fp = irw_recorded_runs_fp(), false) AS c_runs,
                 coalesce((SELECT bb.runs_fp = st.runs_fp AND bb.qrels_fp = irw_qrels_fp(st.root)
                           FROM irw_base_built bb WHERE bb.qrels = st.root), false) AS base_ok
          FROM irw_st st WHERE st.ok) AS f
)
{%- endmacro %}

{% set guards = {'cache': '(SELECT c_cache FROM irw_flags)',
                 'subset': '(SELECT c_subset FROM irw_flags)',
                 'fresh': '(SELECT c_runs AND NOT c_cache AND NOT c_subset FROM irw_flags)',
                 'rerank': '(SELECT NOT c_runs FROM irw_flags)',
                 'ranked': '(SELECT c_runs FROM irw_flags)'} %}
