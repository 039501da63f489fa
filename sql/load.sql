{#- Loading runs and qrels (irwarehouse.engine.loading): the staging tables of a load and
    the statements that check them and move them into the warehouse. The reading itself is
    sql/stage_*.sql, the ranking sql/rank_runs*.sql, the final insert sql/load_runs.sql.
    Bound: $c (the collection), $ids (run ids), $name (a qrels). -#}

{# ------------------------------------------------------------------ staging #}

{# The database of a load's ranked rows (loading._attach_staging): a file, or ':memory:'. #}
{% macro attach_staging(path) -%}
ATTACH {{ path | literal }} AS irw_staging
{%- endmacro %}

{% macro staging_path() -%}
SELECT path FROM duckdb_databases() WHERE database_name = 'irw_staging'
{%- endmacro %}

{% macro detach_staging() -%}
DETACH irw_staging
{%- endmacro %}

{% macro staged_runs() -%}
CREATE OR REPLACE TEMP TABLE irw_staged (file INTEGER, nf INTEGER, topic VARCHAR, docno VARCHAR,
                                         run_id VARCHAR, given_rank BIGINT, score DOUBLE)
{%- endmacro %}

{% macro staged_qrels() -%}
CREATE OR REPLACE TEMP TABLE irw_staged_qrels (file INTEGER, nf INTEGER, topic VARCHAR, docno VARCHAR,
                                               rel INTEGER)
{%- endmacro %}

{# A comment line (README, "Input files"): its first field -- after any leading whitespace --
   begins with '#', as trec_eval 10.0 reads runs. A '#' elsewhere (docnos such as
   msmarco_v2.1_doc_00_880019750#4_1633802806) is text. The readers (stage_*.sql) mark a
   comment line nf = 0, and drop_comments removes them after counting them. #}
{% macro comment(first_field) -%}
starts_with({{ first_field }}, '#')
{%- endmacro %}

{% macro drop_comments(table) -%}
DELETE FROM {{ table }} WHERE nf = 0
{%- endmacro %}

{# Did the fast reader leave a line it could not split (nf < 0) in `table`? #}
{% macro unsplit(table) -%}
SELECT 1 FROM {{ table }} WHERE nf < 0 LIMIT 1
{%- endmacro %}

{% macro clear(table) -%}
DELETE FROM {{ table }}
{%- endmacro %}

{% macro count(table) -%}
SELECT count(*) FROM {{ table }}
{%- endmacro %}

{# ------------------------------------------------------------------ checking runs #}

{# The file of the first malformed run line of a batch. #}
{% macro bad_run_line(extra_fields) -%}
SELECT file FROM irw_staged WHERE {% if extra_fields %}nf < 6{% else %}nf <> 6{% endif %}
  OR given_rank IS NULL OR score IS NULL OR isnan(score) OR isinf(score) LIMIT 1
{%- endmacro %}

{# A batch's ranking lengths, and the distinct documents of each (run, topic). #}
{% macro batch_topics() -%}
CREATE OR REPLACE TEMP TABLE irw_batch_topics AS
SELECT run_id, topic, count(*)::INTEGER AS n_docs, count(DISTINCT docno)::INTEGER AS n_distinct,
       any_value(file) AS file
FROM irw_staged GROUP BY run_id, topic
{%- endmacro %}

{# How many (judged, retrieved) pairs of documents ranking the judged documents of a batch
   by counting would compare (at most: a topic's judgments each against its rankings), and
   the batch's lines. `judged`: a relation of (topic, docno). #}
{% macro pairs_to_count(judged) -%}
SELECT coalesce(sum(least(q.n, t.n_docs)::BIGINT * t.n_docs), 0), coalesce(sum(t.n_docs), 0)
FROM irw_batch_topics AS t
JOIN (SELECT topic, count(*) AS n FROM {{ judged }} GROUP BY topic) AS q USING (topic)
{%- endmacro %}

{% macro docno_twice_in_batch() -%}
SELECT file FROM irw_batch_topics WHERE n_docs <> n_distinct LIMIT 1
{%- endmacro %}

{# Runs whose lines are in files of several batches. #}
{% macro runs_across_batches() -%}
SELECT run_id FROM irw_staged_files GROUP BY run_id HAVING count(DISTINCT batch) > 1 ORDER BY run_id
{%- endmacro %}

{% macro docno_twice_across() -%}
SELECT 1 FROM irw_staging.irw_ranked WHERE list_contains($ids, run_id)
GROUP BY run_id, topic HAVING count(*) <> count(DISTINCT docno) LIMIT 1
{%- endmacro %}

{% macro staged_run_ids() -%}
SELECT DISTINCT run_id FROM irw_staged_topics ORDER BY run_id
{%- endmacro %}

{% macro staged_lines() -%}
SELECT sum(lines) FROM irw_staged_files
{%- endmacro %}

{# Each of the runs $ids with the files of this load it is in. #}
{% macro files_of_runs() -%}
SELECT run_id, string_agg(DISTINCT filename, ', ' ORDER BY filename) FROM irw_staged_files
WHERE list_contains($ids, run_id) GROUP BY run_id ORDER BY run_id
{%- endmacro %}

{# ------------------------------------------------------------------ the staged runs as tables #}

{# The rows of runs, run_topics and run_loads that a load's staged tables stand for, in
   collection `c` under ranking policy `policy` (SQL expressions): what the final transaction
   inserts (load_runs.sql), and what files in, scores out reads as views (files_in.sql). #}
{% macro runs_rows(c) -%}
SELECT {{ c }} AS collection, run_id, topic, docno, rank, score, given_rank FROM irw_staging.irw_ranked
{%- endmacro %}

{% macro run_topics_rows(c) -%}
SELECT {{ c }} AS collection, run_id, topic, n_docs FROM irw_staged_topics
{%- endmacro %}

{% macro run_loads_rows(c, policy) -%}
SELECT {{ c }} AS collection, f.run_id, f.source, {{ policy }} AS ranking_policy, t.n_topics, t.n_docs,
       current_timestamp::TIMESTAMP AS loaded_at
FROM (SELECT run_id, string_agg(filename, ' ' ORDER BY filename) AS source
      FROM irw_staged_files GROUP BY run_id) AS f
JOIN (SELECT run_id, count(*)::INTEGER AS n_topics, sum(n_docs)::BIGINT AS n_docs
      FROM irw_staged_topics GROUP BY run_id) AS t USING (run_id)
{%- endmacro %}

{# ------------------------------------------------------------------ the warehouse's runs #}

{% macro loaded_among() -%}
SELECT run_id FROM run_loads WHERE collection = $c AND list_contains($ids, run_id) ORDER BY run_id
{%- endmacro %}

{# Remove the runs $ids of collection $c: their rankings and loads (and scores). #}
{% macro delete_runs(scores) -%}
{% for table in ['runs', 'run_topics', 'run_loads'] + (['scores'] if scores else []) %}
DELETE FROM {{ table }} WHERE collection = $c AND list_contains($ids, run_id);
{% endfor %}
{%- endmacro %}

{# Run metadata: the columns named change, the others stay (lists bound as $c, $r, $t, $k, $p, $s). #}
{% macro upsert_meta(named) -%}
INSERT INTO run_meta (collection, run_id, team, kind, pooled, system)
SELECT unnest($c), unnest($r), unnest($t::VARCHAR[]), unnest($k::VARCHAR[]), unnest($p::BOOLEAN[]),
       unnest($s::VARCHAR[])
ON CONFLICT (collection, run_id) DO
{%- if named %} UPDATE SET {% for c in named %}{{ c }} = excluded.{{ c }}{{ ", " if not loop.last }}{% endfor %}
{% else %} NOTHING
{% endif %}
{%- endmacro %}

{# ------------------------------------------------------------------ qrels #}

{# The staged judgments checked in one query: the file of a malformed line (or NULL), the
   file of a document judged twice for a topic (or NULL), and how many lines there are. #}
{% macro check_qrels() -%}
SELECT (SELECT file FROM irw_staged_qrels WHERE nf <> 4 OR rel IS NULL LIMIT 1),
       (SELECT any_value(file) FROM irw_staged_qrels GROUP BY topic, docno HAVING count(*) > 1 LIMIT 1),
       (SELECT count(*) FROM irw_staged_qrels)
{%- endmacro %}

{% macro qrels_entry() -%}
SELECT kind, collection FROM qrels_info WHERE qrels = $name
{%- endmacro %}

{% macro qrels_summary() -%}
SELECT count(DISTINCT topic), count(*), count(*) FILTER (WHERE rel >= 1) FROM qrels WHERE qrels = $name
{%- endmacro %}

{# Remove qrels $name: its judgments and catalogue entry (and scores). #}
{% macro delete_qrels(scores) -%}
DELETE FROM qrels WHERE qrels = $name;
{% if scores %}
DELETE FROM scores WHERE qrels = $name;
{% endif %}
DELETE FROM qrels_info WHERE qrels = $name;
{%- endmacro %}

{% macro insert_qrels() -%}
INSERT INTO qrels SELECT $name, topic, docno, rel FROM irw_staged_qrels
{%- endmacro %}
