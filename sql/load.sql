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

{# The staged lines of a qrels file of a judgment kind (irwarehouse.judgment_kinds): its
   kept fields (`columns`: name, field, SQL type or None for text, syntax). #}
{% macro staged_qrels(columns) -%}
CREATE OR REPLACE TEMP TABLE irw_staged_qrels (file INTEGER, nf INTEGER
{%- for name, index, cast, syntax in columns %}, {{ name }} {{ cast or 'VARCHAR' }}{% endfor %})
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

{# The staged judgments of `kind` (a judgment_kinds.JudgmentKind) checked in one query: the
   file of a malformed line (or NULL), the file of a judgment given twice -- the same values
   of the kind's key (or NULL), and how many lines there are. #}
{% macro check_qrels(kind) -%}
SELECT (SELECT file FROM irw_staged_qrels WHERE nf <> {{ kind.fields | length }}
{%- for name, index, cast, syntax in kind.staged if cast %} OR {{ name }} IS NULL{% endfor %} LIMIT 1),
       (SELECT any_value(file) FROM irw_staged_qrels GROUP BY {{ kind.key | join(', ') }} HAVING count(*) > 1 LIMIT 1),
       (SELECT count(*) FROM irw_staged_qrels)
{%- endmacro %}

{% macro qrels_entry() -%}
SELECT kind, collection FROM qrels_info WHERE qrels = $name
{%- endmacro %}

{# The judgment kind a qrels was loaded as (qrels_info.judgments). #}
{% macro set_judgments() -%}
UPDATE qrels_info SET judgments = $kind WHERE qrels = $name
{%- endmacro %}

{# A loaded qrels: its topics, graded judgments, relevant ones, and the lines its detail
   table holds (NULL when its kind keeps none). #}
{% macro qrels_summary(kind) -%}
SELECT (SELECT count(DISTINCT topic) FROM {{ kind.detail or 'qrels' }} WHERE qrels = $name),
       count(*), count(*) FILTER (WHERE rel >= 1),
       {% if kind.detail %}(SELECT count(*) FROM {{ kind.detail }} WHERE qrels = $name){% else %}NULL{% endif %} AS lines
FROM qrels WHERE qrels = $name
{%- endmacro %}

{# Remove qrels $name: its judgments (graded rows and the lines kept in the detail tables
   `details`) and catalogue entry (and scores). #}
{% macro delete_qrels(scores, details) -%}
DELETE FROM qrels WHERE qrels = $name;
{% for table in details %}
DELETE FROM {{ table }} WHERE qrels = $name;
{% endfor %}
{% if scores %}
DELETE FROM scores WHERE qrels = $name;
{% endif %}
DELETE FROM qrels_info WHERE qrels = $name;
{%- endmacro %}

{# The staged lines of `kind` into the warehouse: its graded rows (the kind's aggregate over
   the lines of a document; a kind of one line per document, its rel, in the file's order;
   none when it gives none) and its lines into its detail table. #}
{% macro insert_qrels(kind) -%}
{% if kind.graded %}
INSERT INTO qrels {{ graded_rows(kind, '$name') }};
{% endif %}
{% if kind.detail %}
INSERT INTO {{ kind.detail }} (qrels, {{ kind.detail_columns | join(', ') }})
{{ detail_rows(kind, '$name') }};
{% endif %}
{%- endmacro %}

{# The graded rows (qrels, topic, docno, rel) of the staged lines of `kind` (which gives
   some: kind.graded), `name` the qrels's name as SQL (a parameter or a quoted literal). #}
{% macro graded_rows(kind, name) -%}
{% if kind.key | list == ['topic', 'docno'] %}
SELECT {{ name }} AS qrels, topic, docno, rel FROM irw_staged_qrels
{%- else %}
SELECT {{ name }} AS qrels, topic, docno, {{ kind.graded }} AS rel FROM irw_staged_qrels GROUP BY topic, docno
{%- endif %}
{%- endmacro %}

{# The staged lines of `kind` as the rows of its detail table (qrels, then the table's
   columns; a column the kind does not give is NULL), `name` as for graded_rows. #}
{% macro detail_rows(kind, name) -%}
SELECT {{ name }} AS qrels, {% for c in kind.detail_columns %}{{ c if c in kind.kept else 'NULL::VARCHAR' }} AS {{ c }}{{ ', ' if not loop.last }}{% endfor %} FROM irw_staged_qrels
{%- endmacro %}
