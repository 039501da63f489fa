{#-
  Files in, scores out (irwarehouse.engine.files_in): the relations an evaluation reads, as
  views over what loading the files staged in this in-memory database -- no schema, no
  catalogue tables, nothing copied. The qrels `name` (its judgments: irw_staged_qrels) and
  the runs of `collection` ranked under `policy` (irw_staging.irw_ranked, which holds the
  ranked rows of judged documents when the runs were read in one batch: engine.loading,
  rank_runs.sql) take the names and columns of the warehouse's tables (schema.sql,
  views.sql), so that the engine, the catalogue's look-ups and run specs read them as they
  read a warehouse. views(name, collection, policy, kind): validated values, quoted; `kind`
  the qrels file's judgment kind (judgment_kinds.JudgmentKind.sql_context): its graded rows
  are the view `qrels`, its lines the view of its detail table, as a load would write them
  (load.sql).
-#}
{% import 'load.sql' as load %}
{#- files of little text are evaluated on one thread (files_in.ONE_THREAD_TEXT) -#}
{% macro one_thread() %}SET threads = 1{% endmacro %}

{% macro views(name, collection, policy, kind) %}
CREATE TEMP VIEW qrels AS
{% if kind.graded %}
{{ load.graded_rows(kind, name | literal) }};
{% else %}
SELECT {{ name | literal }} AS qrels, topic, docno, NULL::INTEGER AS rel FROM irw_staged_qrels WHERE FALSE;
{% endif %}
{% if kind.detail %}

CREATE TEMP VIEW {{ kind.detail }} AS
{{ load.detail_rows(kind, name | literal) }};
{% endif %}

CREATE TEMP VIEW qrels_info AS
SELECT {{ name | literal }} AS qrels, {{ collection | literal }} AS collection, NULL::VARCHAR AS source,
       NULL::VARCHAR AS parent, 'file' AS kind, NULL::VARCHAR AS params, NULL::VARCHAR AS description,
       {{ name | literal }} AS topic_qrels, current_timestamp::TIMESTAMP AS created_at,
       {{ kind.name | literal }} AS judgments;

CREATE TEMP VIEW runs AS
{{ load.runs_rows(collection | literal) }};

CREATE TEMP VIEW run_topics AS
{{ load.run_topics_rows(collection | literal) }};

CREATE TEMP VIEW run_loads AS
{{ load.run_loads_rows(collection | literal, policy | literal) }};

CREATE TEMP VIEW run_info AS
SELECT collection, run_id, NULL::VARCHAR AS team, NULL::VARCHAR AS system, NULL::VARCHAR AS kind, NULL::BOOLEAN AS pooled,
       source, ranking_policy, n_topics, n_docs, loaded_at
FROM run_loads;
{% endmacro %}
