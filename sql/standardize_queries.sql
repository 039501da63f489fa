{#- The statements of score standardization (irwarehouse.standardize) over the tables of
    standardize_schema.sql: reading, storing and exporting factor sets and their factors, and
    the judgments of topic splits. -#}

{# Per measure of factor set ? : topics, reference runs, mean mu and sigma, zero sigmas. #}
{% macro summary() -%}
SELECT factors, measure, CAST(count(*) AS INTEGER) AS topics, min(n_ref) AS n_ref,
       avg(mu) AS mean_mu, avg(sigma) AS mean_sigma,
       CAST(count(*) FILTER (WHERE sigma = 0) AS INTEGER) AS zero_sigma
FROM std_factors WHERE factors = ? GROUP BY factors, measure ORDER BY measure
{%- endmacro %}

{# The catalogue row of factor set ?. #}
{% macro info() -%}
SELECT factors, qrels, measures, reference, n_ref, description, source
FROM std_factor_sets WHERE factors = ?
{%- endmacro %}

{# Every factor set, with the number of topics it has factors for. #}
{% macro factor_sets() -%}
SELECT s.factors, s.qrels, s.measures, s.reference, s.n_ref,
       count(DISTINCT f.topic)::INTEGER AS topics, s.source, s.description, s.created_at
FROM std_factor_sets s LEFT JOIN std_factors f USING (factors)
GROUP BY ALL ORDER BY s.factors
{%- endmacro %}

{# The factors of set $f, of measure $m (NULL: of every measure). #}
{% macro factors() -%}
SELECT measure, topic, mu, sigma, n_ref FROM std_factors
WHERE factors = $f AND ($m IS NULL OR measure = $m) ORDER BY measure, topic
{%- endmacro %}

{# Standardized scores (view std_scores) of factor set $f for qrels $q: of the measures
   $labels and the runs $runs, on the topics of $q's topic set. #}
{% macro scores() -%}
SELECT run_id, measure, topic, value, mu, sigma, z, phi, in_reference FROM std_scores
WHERE factors = $f AND collection = collection_of($q)
  AND measure IN (SELECT unnest($labels::VARCHAR[]))
  AND run_id IN (SELECT unnest($runs::VARCHAR[]))
  AND topic IN (SELECT topic FROM topic_sets WHERE qrels = $q)
ORDER BY run_id, measure, topic
{%- endmacro %}

{# ---------------------------------------------------------------- storing factor sets #}

{# Delete factor set $f: its factors, reference runs and catalogue row. #}
{% macro delete_set() -%}
DELETE FROM std_factors WHERE factors = $f;
DELETE FROM std_reference_runs WHERE factors = $f;
DELETE FROM std_factor_sets WHERE factors = $f;
{%- endmacro %}

{# The catalogue row of a factor set, bound by position: factors, qrels, measures, reference,
   n_ref, description and source (computed = true: the source is 'computed', not bound). #}
{% macro insert_set(computed) -%}
INSERT INTO std_factor_sets VALUES (?, ?, ?, ?, ?, ?, {{ "'computed'" if computed else "?" }}, current_timestamp)
{%- endmacro %}

{# A reference run of a computed set: factors, run_id bound by position. #}
{% macro insert_reference_run() -%}
INSERT INTO std_reference_runs VALUES (?, ?)
{%- endmacro %}

{# The factors of set ? for qrels ?: the rows (measure, topic, mu, sigma, n_ref) of the
   registered relation irw_std_new. #}
{% macro insert_factors() -%}
INSERT INTO std_factors SELECT ?, ?, measure, CAST(topic AS VARCHAR),
       CAST(mu AS DOUBLE), CAST(sigma AS DOUBLE), CAST(n_ref AS INTEGER)
FROM irw_std_new
{%- endmacro %}

{# Write factor set $f, one row per (measure, topic), to `file` as `fmt` ('parquet' or 'csv'
   with a header). #}
{% macro export(file, fmt) -%}
COPY (SELECT f.factors, f.qrels, f.measure, f.topic, f.mu, f.sigma, f.n_ref, s.reference, s.description
      FROM std_factors f JOIN std_factor_sets s USING (factors)
      WHERE f.factors = $f ORDER BY f.measure, f.topic)
TO {{ file | literal }} ({% if fmt == "parquet" %}FORMAT parquet{% else %}FORMAT csv, HEADER{% endif %})
{%- endmacro %}

{# ---------------------------------------------------------------- topic splits #}

{# A collection of chosen topics: the judgments of qrels ? (the new one's name) are those
   of its parent ? for the topics ? (a list). #}
{% macro split_judgments() -%}
INSERT INTO qrels SELECT ?, topic, docno, rel FROM qrels
WHERE qrels = ? AND topic IN (SELECT unnest(?::VARCHAR[]))
{%- endmacro %}
