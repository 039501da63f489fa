{#- Results an engine wrote as files -- derived qrels, scores with their evaluations (`irw
    spark ...`) -- and storing them in the warehouse (`irw load results`,
    irwarehouse.spark.load_results). `file` is a quoted read_parquet pattern. -#}

{# Per-topic scores in the warehouse's layout: `query` is an engine's scores query. #}
{% macro keyed(query, P) -%}
SELECT {{ P.qrels }} AS qrels, {{ P.collection }} AS collection, run_id, topic, measure, value,
       {{ P.ties }} AS ties
FROM ({{ query }}) AS measured
{%- endmacro %}

{# The judgments of each derived qrels written, with its counts (Spark: for the summary). #}
{% macro counts(table) -%}
SELECT qrels, count(*) FILTER (WHERE rel >= 0), count(*) FILTER (WHERE rel >= 1)
FROM {{ table }} GROUP BY qrels
{%- endmacro %}

{# The columns of a warehouse table, in order. #}
{% macro columns() -%}
SELECT column_name FROM information_schema.columns
WHERE table_name = ? AND table_schema = 'main' AND table_catalog = current_database()
ORDER BY ordinal_position
{%- endmacro %}

{% macro describe(file) -%}
DESCRIBE SELECT * FROM read_parquet({{ file }})
{%- endmacro %}

{# A result file with the columns `columns` (quoted), or none: an empty table like `table`. #}
{% macro read(file, columns, table) -%}
{% if file is none %}(SELECT * FROM {{ table }} WHERE false){% else %}(SELECT {{ columns }} FROM read_parquet({{ file }})){% endif %}
{%- endmacro %}

{# ---------------------------------------------------------------- derived qrels #}

{% macro entries(info) -%}
SELECT qrels, parent, kind, params, description FROM {{ info }} ORDER BY qrels
{%- endmacro %}

{# Judgments of a qrels the catalogue file does not list. #}
{% macro stray(rows) -%}
SELECT DISTINCT qrels FROM {{ rows }} WHERE NOT list_contains($names, qrels) ORDER BY 1 LIMIT 1
{%- endmacro %}

{# A judgment of qrels $name that its parent $parent does not make. #}
{% macro foreign(rows) -%}
SELECT r.topic, r.docno, r.rel FROM {{ rows }} r WHERE r.qrels = $name AND NOT EXISTS (
    SELECT 1 FROM qrels j WHERE j.qrels = $parent AND j.topic = r.topic AND j.docno = r.docno
    AND j.rel = r.rel) LIMIT 1
{%- endmacro %}

{# The judgments of qrels $source in the file (a derived qrels's query). #}
{% macro judgments(rows) -%}
SELECT topic, docno, rel FROM {{ rows }} WHERE qrels = $source
{%- endmacro %}

{# ---------------------------------------------------------------- scores #}

{# What would make the scores wrong: the first offending value of each check, in order. #}
{% macro unknown_qrels(scores) -%}
SELECT qrels FROM {{ scores }} WHERE qrels NOT IN (SELECT qrels FROM qrels_info) LIMIT 1
{%- endmacro %}

{% macro unknown_run(scores) -%}
SELECT run_id FROM {{ scores }} s WHERE NOT EXISTS (SELECT 1 FROM run_loads l
    WHERE l.collection = s.collection AND l.run_id = s.run_id) LIMIT 1
{%- endmacro %}

{% macro incomplete(scores) -%}
SELECT topic FROM {{ scores }} WHERE qrels IS NULL OR collection IS NULL OR run_id IS NULL
    OR topic IS NULL OR measure IS NULL LIMIT 1
{%- endmacro %}

{% macro twice(scores) -%}
SELECT qrels || ' ' || run_id || ' ' || topic || ' ' || measure FROM {{ scores }}
GROUP BY qrels, run_id, topic, measure HAVING count(*) > 1 LIMIT 1
{%- endmacro %}

{% macro labels(scores) -%}
SELECT DISTINCT measure FROM {{ scores }} ORDER BY 1
{%- endmacro %}

{% macro logged(evaluations) -%}
SELECT qrels, measure FROM {{ evaluations }}
{%- endmacro %}

{% macro pairs(scores) -%}
SELECT DISTINCT qrels, measure FROM {{ scores }} ORDER BY 1, 2
{%- endmacro %}

{# Replace the stored scores of the same qrels, runs and measures by those of `scores`, and
   log their evaluations. #}
{% macro store(scores, evaluations) -%}
CREATE OR REPLACE TEMP TABLE irw_loaded_scores AS SELECT * FROM {{ scores }};
DELETE FROM scores WHERE EXISTS (
    SELECT 1 FROM (SELECT DISTINCT qrels, collection, run_id, measure, coalesce(ties, 'trec_eval') AS ties
                   FROM irw_loaded_scores) n
    WHERE n.qrels = scores.qrels AND n.collection = scores.collection AND n.run_id = scores.run_id
      AND n.measure = scores.measure AND n.ties = scores.ties);
INSERT INTO scores SELECT qrels, collection, run_id, topic, measure, value, coalesce(ties, 'trec_eval')
FROM irw_loaded_scores;
INSERT INTO evaluations (evaluated_at, qrels, collection, measure, n_runs, topics, max_docs, rel_level, ranking_policy, ties)
SELECT evaluated_at, qrels, collection, measure, n_runs, topics, max_docs, rel_level, ranking_policy,
       coalesce(ties, 'trec_eval') FROM {{ evaluations }};
{%- endmacro %}

{% macro stored() -%}
SELECT count(*) FROM irw_loaded_scores
{%- endmacro %}
