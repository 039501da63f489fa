{#- The base source inside SQL (a measure macro): irw_base_source (state.sql), the decision
  the engine takes too, on the runs tables' version (irw_runs_fp, read without reading
  `runs`) taken once per call.
  guard_ctes(P, checks) defines the CTEs `irw_st` and `irw_flags` (computed once; `checks`,
  pairs of a condition and the error raised when it holds, validate the macro's parameters);
  `guards` gives, per source, the condition under which it is the one used (and `ranked`:
  run_topics and the stored ranks are current). -#}
{% import '_dialect.sql' as d %}
{# Does the table runs of the current database count its writes: a check that draws from the
   sequence irw_runs_writes and names every column (schema.sql)? (irw_runs_counted in
   state.sql; the schema's upgrade asks it of a warehouse that may not have that macro yet.) #}
{% macro runs_counted() -%}
EXISTS (SELECT 1 FROM duckdb_constraints()
        WHERE database_name = current_database() AND schema_name = 'main' AND table_name = 'runs'
          AND constraint_type = 'CHECK' AND contains(expression, 'nextval(''irw_runs_writes'')')
          AND list_sort(constraint_column_names)
              = ['collection', 'docno', 'given_rank', 'rank', 'run_id', 'score', 'topic'])
{%- endmacro %}

{# The hashes of the rows of runs, run_topics and run_loads: summed per run in irw_run_state
   and irw_run_rows(), and over run_topics and run_loads in irw_runs_fp (state.sql). #}
{% macro row_hash() %}hash(collection, run_id, topic, docno, rank, score, given_rank)::HUGEINT{% endmacro %}
{% macro topic_hash() %}hash(collection, run_id, topic, n_docs)::HUGEINT{% endmacro %}
{% macro load_hash() %}hash(collection, run_id, ranking_policy){% endmacro %}

{# A qrels's fingerprint: a hash of its judgments (rows `qj` of qrels), an aggregate
   (irw_qrels_fp in state.sql). #}
{% macro judgments_fp(qj) %}hash(count(*), coalesce(sum(hash({{ qj }}.topic, {{ qj }}.docno, {{ qj }}.rel)::HUGEINT), 0)){% endmacro %}

{# Per run: (collection, run_id, n_rows, rows_sum) of the rows `rows` (like runs) with
   condition `where`. #}
{% macro row_sums(rows, where='TRUE') -%}
SELECT collection, run_id, count(*) AS n_rows, sum({{ row_hash() }}) AS rows_sum
FROM {{ rows }} WHERE {{ where }} GROUP BY collection, run_id
{%- endmacro %}

{# Per run: (collection, run_id, n_rows, rows_sum, n_topics, topics_sum, load_hash) of the
   runs $ids of collection $collection in the tables `rows` (like runs), `topics` (like
   run_topics) and `loads` (like run_loads). `sums`: the rows' part (row_sums) computed
   beforehand, a relation used instead of `rows`. #}
{% macro run_parts(rows='runs', topics='run_topics', loads='run_loads', sums=None) -%}
SELECT r.collection, r.run_id, r.n_rows, r.rows_sum, t.n_topics, t.topics_sum, {{ load_hash() }} AS load_hash
FROM ({{ sums or row_sums(rows, 'collection = $collection AND list_contains($ids, run_id)') }}) AS r
JOIN (SELECT collection, run_id, count(*) AS n_topics, sum({{ topic_hash() }}) AS topics_sum
      FROM {{ topics }} WHERE collection = $collection AND list_contains($ids, run_id)
      GROUP BY collection, run_id) AS t USING (collection, run_id)
JOIN {{ loads }} AS l USING (collection, run_id)
{%- endmacro %}

{% macro guard_ctes(P, checks) -%}
irw_st AS {{ d.materialized() }} (
    SELECT irw_runs_fp() AS runs_fp, irw_root_qrels({{ P.qrels }}) AS root,
           {% if checks %}CASE {% for cond, message in checks %}WHEN {{ cond }} THEN error({{ message | literal }}) {% endfor %}ELSE true END{% else %}true{% endif %} AS ok
),
irw_flags AS {{ d.materialized() }} (
    SELECT irw_base_source({{ P.qrels }}, {{ P.collection }}, st.runs_fp) AS src, st.root
    FROM irw_st st WHERE st.ok
)
{%- endmacro %}

{% set guards = {'cache': "(SELECT src = 'cache' FROM irw_flags)",
                 'subset': "(SELECT src = 'subset' FROM irw_flags)",
                 'fresh': "(SELECT src = 'fresh' FROM irw_flags)",
                 'rerank': "(SELECT src = 'rerank' FROM irw_flags)",
                 'ranked': "(SELECT src <> 'rerank' FROM irw_flags)"} %}
