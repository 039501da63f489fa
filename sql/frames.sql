{#- DataFrames of runs or qrels written as TREC files, which the loader then reads as any
    file (irwarehouse.api: Warehouse.load_runs / load_qrels). The frame is registered as
    `frame`; its columns are named by the caller (identifiers, quoted here). -#}

{# The first row (0-based) whose `column` is missing (NULL or NaN); NULL when none is. #}
{% macro missing(column) -%}
SELECT min(i) FROM (SELECT row_number() OVER () - 1 AS i, {{ column | ident }} AS v FROM frame) AS f
WHERE v IS NULL OR isnan(v::DOUBLE)
{%- endmacro %}

{# The first row (0-based) whose topic would make its line a comment line (load.sql,
   comment), and that topic; no row when none would. #}
{% macro comment_topic(column) -%}
{% import 'load.sql' as load %}
SELECT i, t FROM (SELECT row_number() OVER () - 1 AS i, CAST({{ column | ident }} AS VARCHAR) AS t
                  FROM frame) AS f
WHERE {{ load.comment('ltrim(t)') }} ORDER BY i LIMIT 1
{%- endmacro %}

{# Run lines: topic Q0 docno rank score run_id. Without a rank column, the ranks are the
   order of the scores; without a run column, the run id is bound (?). #}
{% macro run_lines(topic, docno, score, rank=None, run=None) -%}
{% set run_sql = (run | ident) if run else '?' %}
SELECT CAST({{ topic | ident }} AS VARCHAR), 'Q0', CAST({{ docno | ident }} AS VARCHAR),
       {% if rank %}{{ rank | ident }}{% else %}row_number() OVER (PARTITION BY {{ topic | ident }}, {{ run_sql }} ORDER BY {{ score | ident }} DESC){% endif %},
       {{ score | ident }}, CAST({{ run_sql }} AS VARCHAR)
FROM frame
{%- endmacro %}

{# Qrels lines: topic 0 docno rel. #}
{% macro qrels_lines(topic, docno, rel) -%}
SELECT CAST({{ topic | ident }} AS VARCHAR), '0', CAST({{ docno | ident }} AS VARCHAR), {{ rel | ident }} FROM frame
{%- endmacro %}

{# Write the lines of `select` to `path`, space separated, unquoted. #}
{% macro write(select, path) -%}
COPY ({{ select }}) TO {{ path | literal }} (FORMAT csv, DELIMITER ' ', HEADER false, QUOTE '')
{%- endmacro %}
